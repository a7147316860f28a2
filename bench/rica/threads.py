#!/usr/bin/env python3
"""RICA: 2 threads against 1, side by side (docs/rica.md, "Measurements", target >= 1.8x).

Runs `rotor rica train` with 1 and 2 threads alternately (--pairs pairs, the order inside a pair
swapped every other pair), each run's time the metrics' time_s of its last record (training only,
loading excluded), and prints every run, the 1-minute load average before each, the medians,
their ratio and the median of the pairs' ratios. Checks that both thread counts reach the same
objective to the last bit (the model is the same for any --threads). With --baseline, a second
binary runs the same pairs interleaved (before/after a change, one invocation).

    /usr/bin/python3 bench/rica/threads.py --rotor build/ci/apps/rotor --data /tmp/p8.tsv \
        --components 128 --iterations 20 --pairs 5
    /usr/bin/python3 bench/rica/threads.py --rotor build/ci/apps/rotor --data /tmp/p16.tsv \
        --components 512 --iterations 10 --pairs 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(binary: str, a, threads: int, tmp: str) -> tuple[float, float, float]:
    """One training run: (time_s, objective, load average before it)."""
    load = os.getloadavg()[0]
    metrics = os.path.join(tmp, "m.jsonl")
    cmd = [binary, "rica", "train", "--data", a.data, "--components", str(a.components),
           "--lambda", str(a.lam), "--iterations", str(a.iterations), "--eval-every",
           str(a.eval_every), "--tol", "0", "--threads", str(threads), "--metrics", metrics,
           "--out", os.path.join(tmp, "model.txt"), "--overwrite", "-q"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        last = [json.loads(line) for line in f][-1]
    return last["time_s"], last["objective"], load


def report(name: str, one: list[float], two: list[float]) -> None:
    m1, m2 = statistics.median(one), statistics.median(two)
    pairs = statistics.median(x / y for x, y in zip(one, two))
    print(f"{name}: 1 thread {m1:.3f} s ({', '.join(f'{t:.2f}' for t in one)}); "
          f"2 threads {m2:.3f} s ({', '.join(f'{t:.2f}' for t in two)}); "
          f"ratio of medians {m1 / m2:.3f}x, median of pair ratios {pairs:.3f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--baseline", help="a second rotor binary, run interleaved")
    ap.add_argument("--data", required=True)
    ap.add_argument("--components", type=int, required=True)
    ap.add_argument("--lambda", dest="lam", type=float, default=0.05)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--eval-every", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=5)
    a = ap.parse_args(argv)
    binaries = {"rotor": a.rotor}
    if a.baseline:
        binaries["baseline"] = a.baseline
    times = {(name, t): [] for name in binaries for t in (1, 2)}
    objectives: dict[str, set[float]] = {name: set() for name in binaries}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.pairs):
            for name, binary in binaries.items():
                for t in ((1, 2) if i % 2 == 0 else (2, 1)):
                    s, f, load = run(binary, a, t, tmp)
                    times[(name, t)].append(s)
                    objectives[name].add(f)
                    loads.append(load)
                    print(f"pair {i}: {name} {t} thread(s) {s:.3f} s, F = {f!r}, load {load:.2f}",
                          flush=True)
    print(f"load average (1 min) before the runs: {min(loads):.2f}-{max(loads):.2f}, "
          f"median {statistics.median(loads):.2f}")
    status = 0
    for name in binaries:
        report(name, times[(name, 1)], times[(name, 2)])
        if len(objectives[name]) != 1:
            print(f"{name}: the objective differs between runs: {sorted(objectives[name])}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
