#!/usr/bin/python3
"""A plain numpy/scipy implicit-feedback ALS with conjugate-gradient solves, written apart from
rotor (from Hu, Koren and Volinsky, ICDM 2008, and Takács, Pilászy and Tikk, RecSys 2011) to
measure rotor's `mf train --implicit` against (docs/mf.md, "Implicit feedback").

Every (user, item) pair counts: p_ui = 1 when r_ui > 0, c_ui = 1 + α r_ui (1 when unobserved);

    f = Σ_(u,i) c_ui (p_ui − x_u·y_i)² + λ (Σ_u ‖x_u‖² + Σ_i ‖y_i‖²)

One iteration solves every user with Y fixed, then every item with X fixed: row u's system is
(YᵀY + λI + Σ_(i∈Ω_u) (c_ui − 1) y_i y_iᵀ) x_u = Σ_(i∈Ω_u) c_ui p_ui y_i, by `cg_steps` CG
steps warm-started from the current x_u (a row stops once ‖r‖² < 1e-20). YᵀY is one BLAS
product per half-step; the CG runs for all the rows of a chunk at once: the YᵀY part as a dense
product, the observed part with a gather of the rows' items (einsum) and a sparse product. All
float32, as the usual CPU implementations.

Metrics (the definitions of core/mf/ranking.h): each test user's top k items by x_u·y_j among
those not in its training items (ties to the lower index), against its held-out items:
precision@k = hits / k, AP@k = Σ_(hit at rank n) hits_so_far / n / min(k, |T_u|), NDCG@k with
1/log2(n + 1) gains, averaged over the test users known to the model.

Input: rotor's ratings text (``user item value``, blank- or comma-separated, ids indexed by first
appearance, as rotor indexes them). Output: one JSON line per iteration (``iter``,
``iteration_s``, ``time_s``) and a last one with the metrics, on stdout.

    ials_reference.py --train T --test V [--rank 64] [--lambda 10] [--alpha 5]
                      [--iterations 15] [--cg-steps 3] [--k 10] [--seed 1] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def read_ratings(path, users=None, items=None):
    """(rows, cols, values, users, items); with maps given, pairs with an unknown id are dropped."""
    import numpy as np

    grow = users is None
    users = {} if users is None else users
    items = {} if items is None else items
    rows, cols, vals = [], [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            parts = s.replace(",", " ").split()
            try:
                v = float(parts[2])
            except ValueError:  # a header
                continue
            if grow:
                u = users.setdefault(parts[0], len(users))
                i = items.setdefault(parts[1], len(items))
            else:
                u, i = users.get(parts[0]), items.get(parts[1])
                if u is None or i is None:
                    continue
            rows.append(u)
            cols.append(i)
            vals.append(v)
    return (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
            np.array(vals, dtype=np.float32), users, items)


def half_step(a, x, y, lam, alpha, cg_steps, chunk_floats=1 << 25):
    """Updates x (rows of a) in place with y fixed: a is CSR (rows of x) x (rows of y)."""
    import numpy as np
    import scipy.sparse as sp

    k = x.shape[1]
    g = (y.T @ y).astype(np.float32)
    g[np.diag_indices(k)] += np.float32(lam)
    indptr = a.indptr
    n = x.shape[0]
    u0 = 0
    while u0 < n:
        # Rows up to ~chunk_floats gathered floats.
        u1 = u0 + 1
        limit = indptr[u0] + max(1, chunk_floats // k)
        u1 = max(u1, int(np.searchsorted(indptr, limit, side="right")) - 1)
        u1 = min(max(u1, u0 + 1), n)
        lo, hi = indptr[u0], indptr[u1]
        ptr = (indptr[u0:u1 + 1] - lo).astype(np.int64)
        idx = a.indices[lo:hi]
        val = a.data[lo:hi]
        local = np.repeat(np.arange(u1 - u0), np.diff(ptr))
        yi = y[idx]
        cm1 = (alpha * val).astype(np.float32)
        target = np.where(val > 0, 1 + cm1, 0).astype(np.float32)
        shape = (u1 - u0, y.shape[0])
        xc = x[u0:u1]
        d = np.einsum("ij,ij->i", yi, xc[local])
        r = sp.csr_matrix((target - cm1 * d, idx, ptr), shape=shape) @ y - xc @ g
        p = r.copy()
        rs = np.einsum("ij,ij->i", r, r)
        active = rs >= 1e-20
        for _ in range(cg_steps):
            if not active.any():
                break
            d = np.einsum("ij,ij->i", yi, p[local])
            ap = p @ g + sp.csr_matrix((cm1 * d, idx, ptr), shape=shape) @ y
            pap = np.einsum("ij,ij->i", p, ap)
            ok = active & (pap > 0)
            step = np.where(ok, rs / np.where(ok, pap, 1), 0).astype(np.float32)
            xc += step[:, None] * p
            r -= step[:, None] * ap
            rs_new = np.einsum("ij,ij->i", r, r)
            active = ok & (rs_new >= 1e-20)
            beta = np.where(active, rs_new / np.where(active, rs, 1), 0).astype(np.float32)
            p = np.where(active[:, None], r + beta[:, None] * p, p)
            rs = np.where(active, rs_new, rs)
        x[u0:u1] = xc
        u0 = u1


def ranking(x, y, train, test, k):
    """Mean precision@k, MAP@k, NDCG@k and the users ranked (see the module comment)."""
    import numpy as np

    precision = ap = ndcg = 0.0
    users = 0
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    test_users = np.flatnonzero(np.diff(test.indptr))
    for b in range(0, len(test_users), 1024):
        us = test_users[b:b + 1024]
        scores = x[us] @ y.T
        for row, u in enumerate(us):
            s = scores[row]
            s[train.indices[train.indptr[u]:train.indptr[u + 1]]] = -np.inf
            cand = np.argpartition(-s, min(k, len(s) - 1))[:k + 1] if len(s) > k else np.arange(len(s))
            order = sorted(cand.tolist(), key=lambda j: (-s[j], j))[:k]
            held = set(test.indices[test.indptr[u]:test.indptr[u + 1]].tolist())
            hits = np.array([j in held for j in order], dtype=bool)
            nh = np.cumsum(hits)
            ideal = min(k, len(held))
            precision += hits.sum() / k
            ap += float((nh / np.arange(1, len(order) + 1))[hits].sum()) / ideal
            ndcg += float(discount[:len(order)][hits].sum()) / float(discount[:ideal].sum())
            users += 1
    return precision / users, ap / users, ndcg / users, users


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--rank", type=int, default=64)
    ap.add_argument("--lambda", dest="lam", type=float, default=10.0)
    ap.add_argument("--alpha", type=float, default=5.0)
    ap.add_argument("--iterations", type=int, default=15)
    ap.add_argument("--cg-steps", type=int, default=3)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (set before numpy loads)")
    args = ap.parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import numpy as np
    import scipy.sparse as sp

    rows, cols, vals, users, items = read_ratings(args.train)
    n, m = len(users), len(items)
    a = sp.csr_matrix((vals, (rows, cols)), shape=(n, m), dtype=np.float32)
    a.sort_indices()
    at = a.T.tocsr()
    at.sort_indices()
    trows, tcols, tvals, _, _ = read_ratings(args.test, users, items)
    test = sp.csr_matrix((np.ones_like(tvals), (trows, tcols)), shape=(n, m))
    test.sort_indices()
    rng = np.random.default_rng(args.seed)
    x = (rng.random((n, args.rank), dtype=np.float32) * 0.01).astype(np.float32)
    y = (rng.random((m, args.rank), dtype=np.float32) * 0.01).astype(np.float32)
    total = 0.0
    for it in range(1, args.iterations + 1):
        t0 = time.perf_counter()
        half_step(a, x, y, args.lam, args.alpha, args.cg_steps)
        half_step(at, y, x, args.lam, args.alpha, args.cg_steps)
        dt = time.perf_counter() - t0
        total += dt
        print(json.dumps({"iter": it, "iteration_s": dt, "time_s": total}), flush=True)
    p, mp, nd, u = ranking(x, y, a, test, args.k)
    print(json.dumps({"k": args.k, "precision_at_k": p, "map_at_k": mp, "ndcg_at_k": nd,
                      "ranked_users": u}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
