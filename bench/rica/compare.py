#!/usr/bin/env python3
"""RICA: rotor against the L-BFGS reference, threads, and ranks (docs/rica.md, "Measurements").

Runs, side by side in one invocation, each case --repeats times, and prints medians:
  1. time to the same objective, one thread each: `rotor rica train` runs --iterations steps
     (its objective F at the end is the target; its time is the metrics' time_s, loading
     excluded), then bench/rica/reference.py (scipy L-BFGS on the smoothed objective, one
     OpenBLAS thread) runs until its non-smooth F reaches that target;
  2. rotor with 2 threads against 1 (the same steps and, by construction, the same W);
  3. with --ranks: mpiexec -n 3 (1 server, 2 workers), tau = 0, 1, 4, the worker on rank 2
     slowed to 1/4 speed (--simulate-straggler 2:4), with and without --rebalance, and tau = 0
     without a straggler, with and without it: the time to the objective tau = 0 reaches.

    /usr/bin/python3 bench/rica/compare.py --rotor build/ci/apps/rotor --data /tmp/p8.tsv \
        --components 128 --lambda 0.1 --iterations 40 --repeats 3 --ranks
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def rotor_run(a, tmp: str, extra: list[str], prefix: list[str] | None = None,
              steps: int | None = None) -> list[dict]:
    """One `rotor rica train` of `steps` (default --iterations) steps; its metrics records."""
    metrics = os.path.join(tmp, "m.jsonl")
    out = os.path.join(tmp, "model.txt")
    cmd = (prefix or []) + [a.rotor, "rica", "train", "--data", a.data, "--components",
                            str(a.components), "--lambda", str(a.lam), "--iterations",
                            str(steps or a.iterations), "--eval-every", str(a.eval_every), "--tol", "0",
                            "--out", out, "--overwrite", "--metrics", metrics, "-q"] + extra
    if a.solver and not prefix:  # the mpiexec cases have 2 workers: the paper's solver
        cmd += ["--solver", a.solver]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        return [json.loads(line) for line in f]


def time_to(records: list[dict], target: float) -> float:
    """The first record's time_s at or below `target`; inf when none (not reached)."""
    for r in records:
        if r["objective"] <= target:
            return r["time_s"]
    return float("inf")


def reference_time(a, target: float) -> tuple[float, float]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, str(HERE / "reference.py"), "--data", a.data, "--components",
           str(a.components), "--lambda", str(a.lam), "--iterations", str(a.ref_iterations),
           "--target", repr(target)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    last = out.strip().splitlines()[-1].split()
    return float(last[0]), float(last[1])


def ranks(a, tmp: str) -> None:
    """The mpiexec cases, interleaved in each repeat: tau = 0, 1, 4 with the worker on rank 2
    at 1/4 speed, with and without --rebalance; and without a straggler, tau = 0 with and
    without --rebalance. Each the time to the objective tau = 0 reaches in --iterations steps
    (the same bits with or without rebalancing: the goal of every case)."""
    prefix = ["mpiexec", "-n", "3", "--oversubscribe"]
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    os.environ.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    slow = ["--simulate-straggler", "2:4"]
    cases = [(f"straggler, tau {tau}, {'rebalance' if on else 'no rebalance'}",
              ["--delay", str(tau)] + slow + ([] if on else ["--no-rebalance"]), tau)
             for on in (False, True) for tau in (0, 1, 4)]
    cases += [(f"no straggler, tau 0, {'rebalance' if on else 'no rebalance'}",
               ["--delay", "0"] + ([] if on else ["--no-rebalance"]), 0) for on in (False, True)]
    times: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    goal = None
    for rep in range(a.repeats):
        order = cases if rep % 2 == 0 else cases[::-1]
        if goal is None:  # tau = 0 first: its objective is every case's goal
            order = [cases[0]] + [c for c in order if c is not cases[0]]
        for label, extra, tau in order:
            recs = rotor_run(a, tmp, ["--servers", "1"] + extra, prefix,
                             a.iterations * (1 if tau == 0 else 2))
            if goal is None:
                goal = recs[-1]["objective"]
            times[label].append(time_to(recs, goal))
            print(f"  {label}: {times[label][-1]:.2f} s", flush=True)
    base = statistics.median(times[cases[0][0]])
    print(f"3 ranks (1 server, 2 workers), {a.iterations} steps of tau 0 reach F = {goal:.10g}; "
          f"medians of {a.repeats}; ratio = (straggler, tau 0, no rebalance) / case")
    for label, ts in times.items():
        m = statistics.median(ts)
        print(f"{label:36s}: {m:7.2f} s  ratio {base / m:.2f}x  (runs {ts})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--components", type=int, required=True)
    ap.add_argument("--lambda", dest="lam", type=float, required=True)
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--eval-every", type=int, default=5)
    ap.add_argument("--ref-iterations", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--solver", help="rotor's --solver for the one-process runs (default: its "
                    "own, admm with one worker)")
    ap.add_argument("--ranks", action="store_true", help="also the mpiexec cases")
    ap.add_argument("--only-ranks", action="store_true", help="the mpiexec cases alone")
    a = ap.parse_args(argv)
    med = statistics.median
    with tempfile.TemporaryDirectory() as tmp:
        one, two, ref, ref_f = [], [], [], []
        target = None
        for _ in range(0 if a.only_ranks else a.repeats):
            r1 = rotor_run(a, tmp, ["--threads", "1"])
            target = r1[-1]["objective"]
            one.append(r1[-1]["time_s"])
            two.append(rotor_run(a, tmp, ["--threads", "2", "--block-rows", "16"])[-1]["time_s"])
            t, f = reference_time(a, target)
            ref.append(t)
            ref_f.append(f)
        print(f"data {a.data}: {a.components} components, lambda {a.lam}, "
              f"{a.iterations} steps of rotor; medians of {a.repeats}")
        if one:
            print(f"rotor 1 thread : F = {target:.10g} in {med(one):.2f} s  (runs {one})")
            print(f"L-BFGS ref     : F <= target in {med(ref):.2f} s (runs {ref}, F {ref_f})")
            print(f"rotor / ref    : {med(one) / med(ref):.2f}x the reference's time")
            print(f"rotor 2 threads: {med(two):.2f} s; speedup {med(one) / med(two):.2f}x")
        if a.ranks:
            ranks(a, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
