#!/usr/bin/env python3
"""The reference RICA solver, written apart from rotor (docs/rica.md, "Measurements").

As the original RICA paper did (Le, Karpenko, Ngiam, Ng, NIPS 2011), L-BFGS (scipy's L-BFGS-B
without bounds) on the smoothed objective

    F_eps(W) = sum_i 1/2 |W'W x_i - x_i|^2 + lambda sum_ij sqrt(eps + (W x_i)_j^2),

the smooth part through C = X'X like rotor's (f = 1/2 tr(A C A), A = W'W - I, gradient
W (A C + C A)), the L1 part over the data (Y = X W', gradient (Y / sqrt(eps + Y^2))' X). The
initial W is rotor's (N(0, 1/l) entries are drawn by numpy here: the same distribution, not the
same numbers). After every iteration it prints one line "<seconds> <F(W)>" with F the NON-smooth
objective of eq. 15 (what rotor minimises), so that the two are compared on the same value.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/rica/reference.py --data X.tsv \
        --components 128 --lambda 0.1 --iterations 500
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="observations, TSV or CSV, one per row")
    ap.add_argument("--components", type=int, required=True)
    ap.add_argument("--lambda", dest="lam", type=float, required=True)
    ap.add_argument("--eps", type=float, default=1e-6, help="smoothing of |.|")
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write the final W as a rotor-rica-model file (for pictures)")
    ap.add_argument("--target", type=float, default=None,
                    help="stop once F(W) <= this (the non-smooth objective)")
    a = ap.parse_args(argv)
    sep = "," if "," in open(a.data).readline() else "\t"
    x = np.loadtxt(a.data, delimiter=sep, ndmin=2)
    n, p = x.shape
    l = a.components
    c = x.T @ x
    rng = np.random.default_rng(a.seed)
    w0 = rng.standard_normal((l, p)) / np.sqrt(l)
    eye = np.eye(p)

    def parts(w: np.ndarray):
        a_ = w.T @ w - eye
        ac = a_ @ c
        return 0.5 * np.sum(ac * a_), ac, x @ w.T

    def fun(flat: np.ndarray):
        w = flat.reshape(l, p)
        smooth, ac, y = parts(w)
        r = np.sqrt(a.eps + y * y)
        g = w @ (ac + ac.T) + a.lam * (y / r).T @ x
        return smooth + a.lam * r.sum(), g.ravel()

    start = time.perf_counter()

    class Done(Exception):
        pass

    def report(flat: np.ndarray) -> None:
        w = flat.reshape(l, p)
        smooth, _, y = parts(w)
        f = smooth + a.lam * np.abs(y).sum()
        print(f"{time.perf_counter() - start:.4f} {f:.10g}", flush=True)
        if a.target is not None and f <= a.target:
            raise Done

    last = [w0.ravel()]

    def keep(flat: np.ndarray) -> None:
        last[0] = flat.copy()
        report(flat)

    try:
        minimize(fun, w0.ravel(), jac=True, method="L-BFGS-B", callback=keep,
                 options={"maxiter": a.iterations, "maxcor": 10, "gtol": 0, "ftol": 0})
    except Done:
        pass
    if a.out:
        w = last[0].reshape(l, p)
        lines = ["rotor-rica-model 1", f"components {l}", f"dimension {p}", f"lambda {a.lam!r}",
                 "iterations 0", "objective 0", "time_s 0", "metric"]
        lines += ["\t".join(repr(float(v)) for v in row) for row in w]
        with open(a.out, "w") as f:  # no crc32 line: for tools/plot_rica_filters only
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
