#!/usr/bin/python3
"""A plain reference ALS for rotor's matrix-factorization objective (numpy + scipy.sparse).

The model and objective of docs/mf.md ("The model and its objective"):

    â_ij = μ + b_i + c_j + w_i·h_j,   μ = the mean of the training ratings (fixed)
    f = Σ_Ω (a_ij − â_ij)² + λ (Σ_i ρ_i ‖w_i‖² + Σ_j ρ_j ‖h_j‖²) + λ_b (Σ_i ρ_i b_i² + Σ_j ρ_j c_j²)

with ρ_i = |Ω_i| (weighted λ, rotor's default; ALS-WR of Zhou et al. 2008) or 1 (--lambda-form
plain). One iteration solves every user's (w_i, b_i) exactly with H and c fixed, then every
item's (h_j, c_j) with W and b fixed: each is a (K+1) x (K+1) ridge system

    (Zᵀ Z + ρ diag(λ, ..., λ, λ_b)) x = Zᵀ r,   Z rows = (h_j, 1),  r = a_ij − μ − c_j

so f never increases. Normal matrices of many light rows are built at once (outer products,
summed per row with reduceat, in chunks of bounded memory) and solved as one batch.

Input: the ratings files rotor reads (``user item rating`` per line; CSV or blank-separated;
plain or gzip; an optional header; further fields ignored; ids are strings, indexed in order of
first appearance). A test id absent from training predicts as rotor does: a zero factor and a
zero bias for the unknown side.

Output: one JSON line per iteration on stdout (and in --metrics if given)
``{"iter", "time_s", "train_rmse", "test_rmse", "objective"}``; time_s is the training time
so far on this script's own clock (reading the files and evaluating excluded).

    als_numpy.py --train T [--test V] [--rank 20] [--lambda 0.1] [--lambda-bias L]
                 [--lambda-form weighted|plain] [--iterations 10] [--seed 1] [--threads N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from pathlib import Path

_NUMBER = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
CHUNK_ELEMENTS = 4_000_000  # doubles of outer products held at once (32 MB)


def set_threads(n: int | None) -> None:
    """Caps BLAS threads; must run before numpy is imported."""
    if n:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(n)


def read_triples(path: Path, users: dict | None = None, items: dict | None = None):
    """(user indices, item indices, values, users map, items map) of a ratings file.

    With maps given (a test file), known ids keep their index and unknown ids get -1.
    """
    grow = users is None
    users = {} if users is None else users
    items = {} if items is None else items
    u_idx, i_idx, vals = [], [], []
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    csv = None
    with opener(path, "rt", encoding="utf-8-sig") as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            if csv is None:
                csv = "," in s
                fields = [x.strip() for x in s.split(",")] if csv else s.split()
                if not any(_NUMBER.match(x) for x in fields[:3]):
                    continue  # the header
            fields = s.split(",") if csv else s.split()
            u, i = fields[0].strip(), fields[1].strip()
            if grow:
                u_idx.append(users.setdefault(u, len(users)))
                i_idx.append(items.setdefault(i, len(items)))
            else:
                u_idx.append(users.get(u, -1))
                i_idx.append(items.get(i, -1))
            vals.append(float(fields[2]))
    return u_idx, i_idx, vals, users, items


class Ratings:
    """The training ratings by row (CSR) and by column (CSC), values as double."""

    def __init__(self, np, sparse, u, i, v, n_users: int, n_items: int):
        self.n_users, self.n_items = n_users, n_items
        m = sparse.coo_matrix((v, (u, i)), shape=(n_users, n_items)).tocsr()
        m.sum_duplicates()
        self.by_user = m
        self.by_item = m.tocsc()
        self.nnz = m.nnz
        self.mean = float(m.data.mean()) if m.nnz else 0.0
        self.user_count = np.diff(m.indptr)
        self.item_count = np.diff(self.by_item.indptr)


def chunks_of(np, indptr, budget_rows: int):
    """Row ranges [a, b) whose ratings number at most budget_rows (a heavier row alone)."""
    n = len(indptr) - 1
    a = 0
    while a < n:
        limit = indptr[a] + budget_rows
        b = int(np.searchsorted(indptr, limit, side="right")) - 1
        b = max(b, a + 1)
        yield a, min(b, n)
        a = min(b, n)


def solve_side(np, indptr, idx, vals, other_f, other_bias, mu, rho, lam, lam_b, bias: bool):
    """New (factors, biases) of every row of one side, the other side fixed.

    indptr/idx/vals: this side's compressed rows; other_f (M x K), other_bias (M).
    """
    n = len(indptr) - 1
    k = other_f.shape[1]
    kk = k + 1 if bias else k
    z_all = np.hstack([other_f, np.ones((other_f.shape[0], 1))]) if bias else other_f
    reg = np.full(kk, lam)
    if bias:
        reg[-1] = lam_b
    out = np.zeros((n, kk))
    budget = max(1, CHUNK_ELEMENTS // (kk * kk))
    for a, b in chunks_of(np, indptr, budget):
        lo, hi = indptr[a], indptr[b]
        if hi == lo:
            continue
        z = z_all[idx[lo:hi]]
        r = vals[lo:hi] - mu - (other_bias[idx[lo:hi]] if bias else 0.0)
        starts = indptr[a:b] - lo
        nonempty = np.flatnonzero(np.diff(indptr[a:b + 1]) > 0)
        if b - a == 1:
            gram = (z.T @ z)[None]
            rhs = (z.T @ r)[None]
        else:
            gram = np.add.reduceat(np.einsum("nk,nl->nkl", z, z), starts[nonempty], axis=0)
            rhs = np.add.reduceat(z * r[:, None], starts[nonempty], axis=0)
        rows = a + nonempty if b - a > 1 else np.array([a])
        gram += rho[rows][:, None, None] * np.diag(reg)[None]
        out[rows] = np.linalg.solve(gram, rhs[..., None])[..., 0]
    if bias:
        return out[:, :k], out[:, k]
    return out, np.zeros(n)


class Als:
    def __init__(self, np, data: Ratings, rank: int, lam: float, lam_b: float, weighted: bool,
                 bias: bool, seed: int):
        self.np, self.d = np, data
        self.lam, self.lam_b, self.bias = lam, lam_b, bias
        self.mu = data.mean if bias else 0.0
        rng = np.random.default_rng(seed)
        self.w = np.zeros((data.n_users, rank))
        self.h = rng.uniform(0.0, 1.0 / np.sqrt(rank), size=(data.n_items, rank))
        self.b = np.zeros(data.n_users)
        self.c = np.zeros(data.n_items)
        ones_u, ones_i = np.ones(data.n_users), np.ones(data.n_items)
        self.rho_u = data.user_count.astype(float) if weighted else ones_u
        self.rho_i = data.item_count.astype(float) if weighted else ones_i

    def iterate(self) -> None:
        np, d = self.np, self.d
        u = d.by_user
        self.w, self.b = solve_side(np, u.indptr, u.indices, u.data, self.h, self.c, self.mu,
                                    self.rho_u, self.lam, self.lam_b, self.bias)
        i = d.by_item
        self.h, self.c = solve_side(np, i.indptr, i.indices, i.data, self.w, self.b, self.mu,
                                    self.rho_i, self.lam, self.lam_b, self.bias)

    def predict(self, uu, ii):
        """Predictions for index arrays; index -1 (an id unseen in training) counts as zero."""
        np = self.np
        ku, ki = uu >= 0, ii >= 0
        uc, ic = np.where(ku, uu, 0), np.where(ki, ii, 0)
        p = np.full(len(uu), self.mu)
        p += np.where(ku, self.b[uc], 0.0) + np.where(ki, self.c[ic], 0.0)
        both = ku & ki
        p[both] += np.einsum("nk,nk->n", self.w[uc[both]], self.h[ic[both]])
        return p

    def train_loss(self) -> float:
        np, u = self.np, self.d.by_user.tocoo()
        return float(np.sum((u.data - self.predict(u.row, u.col)) ** 2))

    def objective(self, loss: float) -> float:
        np = self.np
        reg = self.lam * (np.dot(self.rho_u, np.sum(self.w ** 2, axis=1)) +
                          np.dot(self.rho_i, np.sum(self.h ** 2, axis=1)))
        if self.bias:
            reg += self.lam_b * (np.dot(self.rho_u, self.b ** 2) + np.dot(self.rho_i, self.c ** 2))
        return float(loss + reg)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", type=Path, required=True)
    p.add_argument("--test", type=Path)
    p.add_argument("--rank", type=int, default=20)
    p.add_argument("--lambda", dest="lam", type=float, default=0.1)
    p.add_argument("--lambda-bias", type=float, help="λ_b (default: --lambda)")
    p.add_argument("--lambda-form", choices=("weighted", "plain"), default="weighted")
    p.add_argument("--no-bias", action="store_true", help="μ = b = c = 0 (the STRADS objective)")
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, help="BLAS threads (default: the library's)")
    p.add_argument("--metrics", type=Path, help="also write the JSON lines here")
    p.add_argument("--quiet", action="store_true", help="no JSON on stdout")
    args = p.parse_args(argv)
    if args.rank < 1 or args.iterations < 0 or args.lam < 0:
        p.error("--rank >= 1, --iterations >= 0, --lambda >= 0")
    if args.lambda_bias is None:
        args.lambda_bias = args.lam
    return args


def run(args) -> list[dict]:
    set_threads(args.threads)
    import numpy as np
    from scipy import sparse

    u, i, v, users, items = read_triples(args.train)
    data = Ratings(np, sparse, np.array(u, dtype=np.int64), np.array(i, dtype=np.int64),
                   np.array(v), len(users), len(items))
    test = None
    if args.test is not None:
        tu, ti, tv, _, _ = read_triples(args.test, users, items)
        test = (np.array(tu, dtype=np.int64), np.array(ti, dtype=np.int64), np.array(tv))
    model = Als(np, data, args.rank, args.lam, args.lambda_bias, args.lambda_form == "weighted",
                not args.no_bias, args.seed)
    records = []
    out = open(args.metrics, "w") if args.metrics else None
    elapsed = 0.0
    try:
        for it in range(1, args.iterations + 1):
            t0 = time.perf_counter()
            model.iterate()
            elapsed += time.perf_counter() - t0
            loss = model.train_loss()
            rec = {"iter": it, "time_s": round(elapsed, 6),
                   "train_rmse": (loss / max(data.nnz, 1)) ** 0.5}
            if test is not None:
                err = test[2] - model.predict(test[0], test[1])
                rec["test_rmse"] = float(np.sqrt(np.mean(err ** 2))) if len(err) else 0.0
            rec["objective"] = model.objective(loss)
            records.append(rec)
            line = json.dumps(rec)
            if not args.quiet:
                print(line, flush=True)
            if out:
                out.write(line + "\n")
                out.flush()
    finally:
        if out:
            out.close()
    return records


def main(argv=None) -> int:
    run(parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
