#!/usr/bin/env python3
"""Synthetic sparse classification data for L1 logistic regression, streamed as svmlight.

Each example has about --per-row features drawn from a power law over the --features keys
(feature k, 1-based, has probability proportional to k^-alpha: a few very common features and
a long tail, as words or click features), values 1. A planted sparse w (--support nonzero
weights, N(0, 1) scaled by --scale, on features spread over the frequency range) gives
P(y = +1 | x) = 1 / (1 + exp(-x.w)); labels are drawn from it. Examples are written as they are
made (memory O(features)), keys increasing along a line:

    <+1|-1> <key>:1 <key>:1 ...

    make_logreg_synthetic.py --preset small|medium|large|huge --out FILE [--seed 1]
    make_logreg_synthetic.py --examples N --features D [--per-row 20] [--alpha 1.1] --out FILE

Presets (examples x features): small 10^4 x 10^4, medium 10^5 x 10^5, large 10^6 x 10^6,
huge 10^7 x 10^6 (the issue's scale; about 1.3 GB of text at 20 features a row). The planted
weights go to FILE.truth ("<key>\\t<w>" lines). Standard library only; the same arguments and
seed give the same bytes.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import math
import random
import sys

PRESETS = {
    "small": (10_000, 10_000),
    "medium": (100_000, 100_000),
    "large": (1_000_000, 1_000_000),
    "huge": (10_000_000, 1_000_000),
}


def power_law_cdf(features: int, alpha: float) -> list[float]:
    """Cumulative probabilities of features 1..D under p(k) ~ k^-alpha."""
    return list(itertools.accumulate(k ** -alpha for k in range(1, features + 1)))


def planted_weights(features: int, support: int, scale: float, rng: random.Random
                    ) -> dict[int, float]:
    """`support` nonzero weights on keys spread over ranks 1..D (log-uniform ranks)."""
    w: dict[int, float] = {}
    while len(w) < min(support, features):
        k = int(math.exp(rng.uniform(0, math.log(features))))
        k = min(max(k, 1), features)
        w.setdefault(k, rng.gauss(0, 1) * scale)
    return w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--examples", type=int)
    ap.add_argument("--features", type=int)
    ap.add_argument("--per-row", type=int, default=20)
    ap.add_argument("--alpha", type=float, default=1.1)
    ap.add_argument("--support", type=int, default=0, help="nonzero planted weights "
                    "(default: features / 100, at least 10)")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.preset:
        a.examples, a.features = PRESETS[a.preset]
    if not a.examples or not a.features or a.examples < 1 or a.features < 1:
        ap.error("give --preset or --examples and --features (>= 1)")
    support = a.support or max(10, a.features // 100)
    rng = random.Random(a.seed)
    cdf = power_law_cdf(a.features, a.alpha)
    total = cdf[-1]
    w = planted_weights(a.features, support, a.scale, rng)
    with open(a.out + ".truth", "w", encoding="ascii") as t:
        for k in sorted(w):
            t.write(f"{k}\t{w[k]!r}\n")
    per_row = min(a.per_row, a.features)
    with open(a.out, "w", encoding="ascii", buffering=1 << 22) as o:
        for i in range(a.examples):
            keys = set()
            while len(keys) < per_row:
                keys.add(bisect.bisect_left(cdf, rng.random() * total) + 1)
            keys_sorted = sorted(min(k, a.features) for k in keys)
            margin = sum(w.get(k, 0.0) for k in keys_sorted)
            p = 1.0 / (1.0 + math.exp(-max(min(margin, 700.0), -700.0)))
            label = "+1" if rng.random() < p else "-1"
            o.write(label + " " + " ".join(f"{k}:1" for k in keys_sorted) + "\n")
            if a.examples >= 1_000_000 and (i + 1) % 1_000_000 == 0:
                print(f"{a.out}: {i + 1} examples", file=sys.stderr)
    print(f"{a.out}: {a.examples} examples x {a.features} features, {support} planted weights")


if __name__ == "__main__":
    main()
