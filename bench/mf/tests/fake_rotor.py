#!/usr/bin/env python3
"""A stand-in for `rotor mf train` in the tests of mf_bench.py: it checks the flags the driver
passes and writes plausible metrics (epoch time 0.01 K / (threads x ranks), test RMSE 0.87 +
0.3 / iter + (λ - 0.1)²), or refuses --max-memory 1 with rotor's message. Not a model of
anything."""

import argparse
import json
import os
import sys


def main() -> int:
    if sys.argv[1:3] != ["mf", "train"]:
        print("fake rotor: expected `mf train`", file=sys.stderr)
        return 2
    p = argparse.ArgumentParser()
    for flag in ("--train", "--test", "--solver", "--out", "--metrics", "--lambda",
                 "--max-memory"):
        p.add_argument(flag)
    for flag in ("--rank", "--threads", "--iterations", "--seed"):
        p.add_argument(flag, type=int, required=True)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--overwrite", action="store_true")
    a = p.parse_args(sys.argv[3:])
    assert a.solver in ("ccd", "sgd") and os.path.exists(a.train)
    ranks = int(os.environ.get("FAKE_RANKS", "1"))
    if a.max_memory == "1":
        print(f"rotor: error: --max-memory: this run needs about {a.rank / 10:.1f} MiB but the "
              "limit is 1 B; use ...", file=sys.stderr)
        return 3
    if not a.quiet:
        print(f"rotor: mf train: 3 users x 2 items, 5 ratings; solver {a.solver}, rank {a.rank}, "
              f"{a.threads} threads; memory plan {a.rank / 5:.1f} MiB")
    epoch = 0.01 * a.rank / (a.threads * ranks)
    with open(a.metrics, "w") as f:
        for it in range(1, a.iterations + 1):
            rec = {"iter": it, "time_s": epoch * it, "iteration_s": epoch,
                   "ratings_per_s": 1000 / epoch, "train_rmse": 0.5,
                   "effective_ratio": 0.99, "objective": 100.0 / it}
            if a.test:
                rec["test_rmse"] = 0.87 + 0.3 / it + (float(a.__dict__["lambda"] or 0.1) - 0.1) ** 2
            f.write(json.dumps(rec) + "\n")
    os.makedirs(a.out, exist_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
