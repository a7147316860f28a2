#!/usr/bin/env python3
"""Bytes sent by `rotor logreg train` with its filters stacked one by one, to the same objective.

Runs `mpiexec -n 4 rotor logreg train --servers 2` (ranks 0-1 servers, 2-3 workers) on one data
set with the stacks none -> keycache -> +zstd -> +kkt -> +sigmod -> +skip. "The same objective":
F* comes from one long run without filters (--reference-iterations); each stack then runs with
--iterations growing by 1.25x from --start until its objective (rotor's, printed after the final
exact pull, so it is the objective of the model written) is within --rel of F*; the bytes of that
run are reported, read from `--stats` (servers: pull answers and clocks; workers: pushes, pull
requests, done and stop messages). Prints a Markdown table with the reduction factors against
no filters.

    filter_bytes.py --rotor build/ci/apps/rotor --data sotu-party.train.svm
        [--lambda 1] [--blocks 4] [--rel 1e-3] [--start 800] [--kkt-delta 0.1]
        [--reference-iterations 3200] [--max-iterations 6400]
        [--sigmod-threshold 1] [--skip-rate 0.1] [--mpiexec mpiexec]

Standard library only; needs Open MPI's mpiexec (oversubscribed: 4 ranks on any machine).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

STACKS = [
    ("none", []),
    ("keycache", ["keycache"]),
    ("+zstd", ["keycache", "zstd"]),
    ("+kkt", ["keycache", "zstd", "kkt"]),
    ("+sigmod", ["keycache", "zstd", "kkt", "sigmod"]),
    ("+skip", ["keycache", "zstd", "kkt", "sigmod", "skip"]),
]


def train(args, stack: list[str], iterations: int, tmp: Path) -> tuple[float, dict, float]:
    """One run: (objective, stats JSON, seconds)."""
    stats = tmp / "stats.json"
    cmd = [args.mpiexec, "-n", "4", "--oversubscribe", str(args.rotor), "logreg", "train",
           "--data", str(args.data), "--out", str(tmp / "model.txt"), "--overwrite",
           "--lambda", str(args.lam), "--blocks", str(args.blocks),
           "--curvature", "local", "--iterations", str(iterations), "--servers", "2",
           "--filters", ",".join(stack) if stack else "none", "--stats", str(stats),
           "--kkt-delta", str(args.kkt_delta), "--sigmod-threshold", str(args.sigmod_threshold),
           "--skip-rate", str(args.skip_rate), "--timeout", "600"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    seconds = time.perf_counter() - start
    objective = float(re.search(r"objective ([0-9.eE+-]+)", out).group(1))
    return objective, json.loads(stats.read_text()), seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rotor", type=Path, required=True)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--lambda", dest="lam", type=float, default=1.0)
    p.add_argument("--blocks", type=int, default=4)
    p.add_argument("--rel", type=float, default=1e-3)
    p.add_argument("--start", type=int, default=800)
    p.add_argument("--reference-iterations", type=int, default=3200)
    p.add_argument("--max-iterations", type=int, default=6400,
                   help="give up on a stack past this (its row then shows F above the target)")
    p.add_argument("--best", type=float, default=None,
                   help="F* known from an earlier run (skips the reference run)")
    p.add_argument("--kkt-delta", type=float, default=0.1)
    p.add_argument("--sigmod-threshold", type=float, default=1.0)
    p.add_argument("--skip-rate", type=float, default=0.1)
    p.add_argument("--mpiexec", default="mpiexec")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        best = args.best
        if best is None:
            best, _, _ = train(args, [], args.reference_iterations, tmp)
        target = best * (1 + args.rel)
        print(f"F* = {best:.10g} ({args.reference_iterations} iterations, no filters, or "
              f"--best); "
              f"target F <= {target:.10g} (rel {args.rel:g})\n")
        rows = []
        for name, stack in STACKS:
            n = args.start
            while True:
                f, stats, seconds = train(args, stack, n, tmp)
                if f <= target or n * 1.25 > args.max_iterations:
                    break
                n = int(n * 1.25)
            rows.append((name, n, f, stats, seconds))
        base_s = rows[0][3]["server_bytes"]
        base_w = rows[0][3]["worker_bytes"]
        print("| filters | iterations | F | (F - F*)/F* | servers (bytes) | x | workers (bytes) "
              "| x | seconds |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, n, f, stats, seconds in rows:
            s, w = stats["server_bytes"], stats["worker_bytes"]
            print(f"| {name} | {n} | {f:.10g} | {(f - best) / best:.1e} | {s:,} | "
                  f"{base_s / s:.1f} | {w:,} | {base_w / w:.1f} | {seconds:.1f} |")
        print("\nPer filter of the full stack (bytes in -> out; push: workers' messages, "
              "pull: servers' answers):")
        for fs in rows[-1][3]["filters"]:
            print(f"- {fs['name']}: push {fs['push_in']:,} -> {fs['push_out']:,}, "
                  f"pull {fs['pull_in']:,} -> {fs['pull_out']:,}, "
                  f"entries dropped {fs['entries_dropped']:,}")


if __name__ == "__main__":
    main()
