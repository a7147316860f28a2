#!/usr/bin/env python3
"""Build a correlated design for the Lasso schedulers: groups of nearly collinear columns.

n samples x p columns in groups of g: column j = f_{j // g} + s * u_j, f and u uniform in
[-1, 1) (f shared by the group), so columns of a group correlate at about 1 / (1 + s^2); y =
the sum of every third column plus noise 0.1 * u. Shotgun's parallel updates of correlated
columns overshoot and diverge (Bradley et al., ICML 2011); STRADS's correlation check keeps one
column per group in a round (Lee et al., NIPS 2014). Written dense, as LIBSVM (every entry).

    make_lasso_correlated.py --out FILE [--samples 1000] [--features 256] [--group 8]
        [--spread 0.3] [--seed 1]

--sparse: the large sparse form (the issue's generator "scaled to 10^6 features"), written
as LIBSVM a chunk of rows at a time (memory O(chunk + features)):

    make_lasso_correlated.py --sparse --out FILE [--samples 200000] [--features 1000000]
        [--group 4] [--per-row 16] [--zipf 1.1] [--keep 0.8] [--spread 0.3] [--planted 2000]
        [--noise 0.5] [--seed 1]

Each row draws Poisson(--per-row) groups of --group columns, group k with probability
proportional to (k + 1)^-zipf (power-law column densities: group 0 is in a large share of the
rows, the tail in a few); each column of a drawn group is stored with probability --keep, with
value f + spread * u (f shared by the group in that row, f and u uniform in [-1, 1)), so the
columns of a group are correlated where they co-occur. y = x . beta + noise * u, beta planted on
--planted columns (evenly spaced over the first 10% of the groups and the rest, +-[0.5, 1.5)).
Needs numpy; the same arguments give the same bytes.

Standard library only for the dense form; the same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path


def write_sparse(a) -> None:
    """The --sparse form (see the module docstring)."""
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first
    import numpy as np  # pylint: disable=import-outside-toplevel

    rng = np.random.default_rng(a.seed)
    groups = (a.features + a.group - 1) // a.group
    weight = (np.arange(groups, dtype=np.float64) + 1) ** -a.zipf
    cdf = np.cumsum(weight / weight.sum())
    beta = np.zeros(a.features)
    head = max(1, groups // 10) * a.group
    half = a.planted // 2
    planted = np.concatenate([np.linspace(0, min(head, a.features) - 1, half),
                              np.linspace(head, a.features - 1, a.planted - half)]).astype(int)
    beta[planted] = rng.choice([-1.0, 1.0], planted.size) * rng.uniform(0.5, 1.5, planted.size)
    entries = 0
    chunk = 4096
    with open(a.out, "w", encoding="ascii") as out:
        for start in range(0, a.samples, chunk):
            rows = min(chunk, a.samples - start)
            lines = []
            for _ in range(rows):
                k = max(1, rng.poisson(a.per_row))
                g = np.unique(np.minimum(np.searchsorted(cdf, rng.random(k)), groups - 1))
                f = rng.uniform(-1, 1, g.size)
                cols = (g[:, None] * a.group + np.arange(a.group)).ravel()
                vals = (np.repeat(f, a.group) + a.spread * rng.uniform(-1, 1, cols.size))
                keep = (rng.random(cols.size) < a.keep) & (cols < a.features)
                cols, vals = cols[keep], vals[keep]
                y = vals @ beta[cols] + a.noise * rng.uniform(-1, 1)
                entries += cols.size
                lines.append(f"{y:.9g} " + " ".join(
                    f"{c}:{v:.6g}" for c, v in zip((cols + 1).tolist(), vals.tolist())) + "\n")
            out.write("".join(lines))
    print(f"{a.out}: {a.samples} x {a.features}, {entries} entries, groups of {a.group}, "
          f"{a.planted} planted")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--spread", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sparse", action="store_true")
    ap.add_argument("--per-row", type=float, default=16)
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--keep", type=float, default=0.8)
    ap.add_argument("--planted", type=int, default=2000)
    ap.add_argument("--noise", type=float, default=0.5)
    a = ap.parse_args()
    if a.sparse:
        write_sparse(a)
        return
    rng = random.Random(a.seed)
    groups = (a.features + a.group - 1) // a.group
    with open(a.out, "w", encoding="ascii") as out:
        for _ in range(a.samples):
            f = [rng.uniform(-1, 1) for _ in range(groups)]
            x = [f[j // a.group] + a.spread * rng.uniform(-1, 1) for j in range(a.features)]
            y = sum(x[j] for j in range(0, a.features, 3)) + 0.1 * rng.uniform(-1, 1)
            out.write(f"{y:.17g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(x))
                      + "\n")
    print(f"{a.out}: {a.samples} x {a.features}, groups of {a.group}, spread {a.spread}")


if __name__ == "__main__":
    main()
