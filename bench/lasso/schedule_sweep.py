#!/usr/bin/python3
"""Updates and seconds to a relative duality gap per schedule and STRADS setting.

For one data set and lambda (a fraction of lambda_max, which rotor prints), runs `rotor lasso
train` for each configuration (name=flags; --configs), --repeats times, and prints a Markdown
table: iterations, coordinate updates, seconds (training + convergence checks, the median run),
of them the convergence checks', the final relative gap, the rollbacks of diverged iterations
with the L they left (docs/lasso.md, "Parallel updates that cannot diverge"), and whether it
converged or diverged. Used to choose strads' defaults (docs/lasso.md, "STRADS defaults").

    schedule_sweep.py --rotor build/ci/apps/rotor --data FILE [--target age] --lambda-frac 0.05
        [--tol 1e-6] [--max-iterations 500] [--repeats 3]
        --configs 'cyclic=--schedule cyclic' 'shotgun16=--schedule shotgun -L 16' ...
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
from pathlib import Path


def lambda_max(a) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [a.rotor, "lasso", "train", "--data", a.data, "--lambda", "1e300", "--out",
               os.path.join(tmp, "model.txt"), "--max-iterations", "1", "--threads", "1",
               *a.data_flags]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"lambda_max ([0-9.eE+-]+)", out).group(1))


def run(a, lam: float, flags: list[str], work: Path):
    metrics = work / "m.jsonl"
    cmd = [a.rotor, "lasso", "train", "-q", "--data", a.data, "--lambda", repr(lam), "--tol",
           repr(a.tol), "--max-iterations", str(a.max_iterations), "--threads", str(a.threads),
           "--out", str(work / "model.txt"), "--overwrite", "--metrics", str(metrics), *a.data_flags, *flags]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    last = records[-1]
    rollbacks = sum(1 for x in records if x.get("rollback") == 1)
    return (last["iter"], int(last["updates_total"]), last["time_s"] + last.get("eval_s", 0),
            last["relative_gap"], last.get("rejected"), last.get("objective"),
            (rollbacks, last.get("parallel")), last.get("eval_s", 0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--target", help="CSV/TSV target column")
    ap.add_argument("--lambda-frac", type=float, default=0.05)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iterations", type=int, default=500)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--configs", nargs="+", required=True)
    a = ap.parse_args()
    a.data_flags = ["--target", a.target] if a.target else []
    lam = a.lambda_frac * lambda_max(a)
    print(f"{a.data}: lambda = {a.lambda_frac} lambda_max = {lam:.6g}, tol {a.tol:g}, "
          f"{a.threads} thread(s), median of {a.repeats}")
    print("| config | flags | iterations | updates | s | of which checks | relative gap | "
          "rollbacks (L at the end) | outcome |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for config in a.configs:
            name, _, flags = config.partition("=")
            runs = [run(a, lam, flags.split(), Path(tmp)) for _ in range(a.repeats)]
            if any(r is None for r in runs):
                print(f"| {name} | `{flags}` | – | – | – | – | – | – | diverged |")
                continue
            it, updates, _, gap, _, _, (rollbacks, parallel), _ = runs[0]
            secs = statistics.median(r[2] for r in runs)
            checks = statistics.median(r[7] for r in runs)
            outcome = "converged" if gap < a.tol else "not converged"
            rolled = f"{rollbacks} ({parallel})" if parallel is not None else "–"
            print(f"| {name} | `{flags}` | {it} | {updates:,} | {secs:.3f} | {checks:.3f} | "
                  f"{gap:.2g} | {rolled} | {outcome} |", flush=True)


if __name__ == "__main__":
    main()
