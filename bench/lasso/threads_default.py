#!/usr/bin/python3
"""The default thread count of `rotor lasso train` against 1 and 2 threads (issue 37, item 6).

For each data set, `--threads 1`, `--threads 2` and the default (`--threads 0`: chosen from the
cost of a round, docs/lasso.md "The default thread count") run interleaved --repeats times; the
table shows the median seconds of training plus convergence checks (the last metrics record's
time_s + eval_s) and of the whole command, what the default chose (its start line), and the
default's time over the better of 1 and 2 threads. The model files must be byte-identical
(checked).

    threads_default.py --rotor build/ci/apps/rotor --out DIR \\
        --set sotu-year:/tmp/sy/sotu-year.train.svm:0.05:cyclic \\
        --set debian-size:/tmp/ds.bin:0.01:cyclic \\
        --set debian-size:/tmp/ds.bin:0.01:shotgun:-L=4096 [--repeats 3] [--tol 1e-6]

A set is NAME:FILE:LAMBDA_FRAC:SCHEDULE[:ARGS], ARGS extra flags, `=` for a space.
Standard library only (runs scaling.py's `run`). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scaling  # noqa: E402  (the runner of bench/lasso/scaling.py)

CONFIGS = (("1 thread", 1), ("2 threads", 2), ("default", 0))


def choice(a, s, schedule: str) -> str:
    """What the default chose, from its start line."""
    r = subprocess.run([str(a.rotor), "lasso", "train", "--data", str(s.data), "--lambda",
                        repr(s.lam), "--schedule", schedule, "--max-iterations", "1",
                        "--overwrite", "--out", str(a.out / "choice.model")] + s.args.split(),
                       capture_output=True, text=True, check=True)
    line = r.stdout.splitlines()[0]  # "...; schedule S, N threads (automatic: ...); lambda_max"
    return line.split("; schedule ", 1)[1].split(", ", 1)[1].split("; lambda_max", 1)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--set", action="append", required=True, dest="sets")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iterations", type=int, default=1000)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    print("| set | flags | default's choice | 1 thread s | 2 threads s | default s | "
          "default / better | wall s (1, 2, default) |\n|---|---|---|---|---|---|---|---|")
    for spec in a.sets:
        name, data, frac, schedule, *rest = spec.split(":")
        args = rest[0].replace("=", " ") if rest else ""
        s = SimpleNamespace(rotor=a.rotor, data=Path(data), out=a.out, lambda_frac=float(frac),
                            tol=a.tol, max_iterations=a.max_iterations, args=args)
        s.lam = scaling.lambda_of(s)
        runs = {label: [] for label, _ in CONFIGS}
        for k in range(a.repeats):
            for label, threads in CONFIGS:
                runs[label].append(scaling.run(s, 1, threads, schedule, a.out,
                                               f"{name}-{threads}-{k}"))
        med = {label: statistics.median(r["train_s"] for r in rs) for label, rs in runs.items()}
        wall = {label: statistics.median(r["wall_s"] for r in rs) for label, rs in runs.items()}
        same = len({r["model"] for rs in runs.values() for r in rs}) == 1
        best = min(med["1 thread"], med["2 threads"])
        print(f"| {name} | --schedule {schedule} {args}, λ = {frac} λ_max | "
              f"{choice(a, s, schedule)} | {med['1 thread']:.3f} | {med['2 threads']:.3f} | "
              f"{med['default']:.3f} | **{med['default'] / best:.2f}** | "
              f"{wall['1 thread']:.2f}, {wall['2 threads']:.2f}, {wall['default']:.2f} |"
              + ("" if same else " models differ!"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
