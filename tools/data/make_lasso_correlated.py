#!/usr/bin/env python3
"""Build a correlated design for the Lasso schedulers: groups of nearly collinear columns.

n samples x p columns in groups of g: column j = f_{j // g} + s * u_j, f and u uniform in
[-1, 1) (f shared by the group), so columns of a group correlate at about 1 / (1 + s^2); y =
the sum of every third column plus noise 0.1 * u. Shotgun's parallel updates of correlated
columns overshoot and diverge (Bradley et al., ICML 2011); STRADS's correlation check keeps one
column per group in a round (Lee et al., NIPS 2014). Written dense, as LIBSVM (every entry).

    make_lasso_correlated.py --out FILE [--samples 1000] [--features 256] [--group 8]
        [--spread 0.3] [--seed 1]

Standard library only; the same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--spread", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
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
