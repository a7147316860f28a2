#!/usr/bin/python3
"""Thread and rank scaling of `rotor lasso train`: 1 rank x 1 thread, 1 rank x 2 threads and
2 ranks x 1 thread (mpiexec) side by side on one data set, for each schedule.

Configurations run interleaved (1x1, 1x2, 2x1, 1x1, ...) --repeats times; the table shows the
median of each: the seconds of training plus the convergence checks (the last metrics record's
time_s + eval_s), the wall seconds of the whole command (reading the data included), the peak
resident set of the largest process (wait4's ru_maxrss), iterations and updates, and the
speedups 2 threads / 1 thread and 2 ranks / 2 threads (of the training seconds). The model files
of the three configurations are compared byte for byte (they must be equal).

    scaling.py --rotor build/ci/apps/rotor --data FILE --lambda-frac 0.05 --out DIR
        [--schedules cyclic,shotgun,strads] [--args '-L 1024'] [--repeats 3] [--tol 1e-6]
        [--max-iterations 100] [--mpiexec mpiexec]

Standard library only. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

CONFIGS = (("1x1", 1, 1), ("1x2", 1, 2), ("2x1", 2, 1))


def run(a, ranks: int, threads: int, schedule: str, out: Path, tag: str) -> dict:
    model, metrics = out / f"{tag}.model", out / f"{tag}.jsonl"
    cmd = [str(a.rotor), "lasso", "train", "--data", str(a.data), "--lambda", repr(a.lam),
           "--schedule", schedule, "--tol", repr(a.tol), "--max-iterations",
           str(a.max_iterations), "--threads", str(threads), "--overwrite", "--out", str(model), "--metrics",
           str(metrics), "-q"] + a.args.split()
    if ranks > 1:
        cmd = [a.mpiexec, "-n", str(ranks), "--oversubscribe"] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err}")
    last = [json.loads(line) for line in metrics.read_text().splitlines()][-1]
    return {"train_s": last["time_s"] + last.get("eval_s", 0), "wall_s": wall,
            "rss_mb": usage.ru_maxrss / 1024, "iterations": last["iter"],
            "updates": last.get("updates_total", 0), "objective": last.get("objective"),
            "model": model.read_bytes(), "err": err}


def lambda_of(a) -> float:
    """lambda_max from a one-iteration run's start line, times --lambda-frac."""
    r = subprocess.run([str(a.rotor), "lasso", "train", "--data", str(a.data), "--lambda", "0",
                        "--max-iterations", "1", "--overwrite", "--out", str(a.out / "lmax.model")],
                       capture_output=True, text=True, check=True)
    text = r.stdout.split("lambda_max ", 1)[1]
    return float(text.split(";", 1)[0]) * a.lambda_frac


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lambda-frac", type=float, default=0.05)
    ap.add_argument("--schedules", default="cyclic,shotgun,strads")
    ap.add_argument("--args", default="")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iterations", type=int, default=100)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--configs", default="1x1,1x2,2x1",
                    help="of 1x1, 1x2, 2x1 (cyclic on 2 ranks: one allreduce per update)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    a.lam = lambda_of(a)
    print(f"lambda = {a.lambda_frac} lambda_max = {a.lam:.6g}\n")
    print("| schedule | config | s (train + checks) | wall s | peak RSS MB | iterations | updates |"
          " F |\n|---|---|---|---|---|---|---|---|")
    for schedule in a.schedules.split(","):
        configs = [c for c in CONFIGS if c[0] in a.configs.split(",")]
        runs = {name: [] for name, _, _ in configs}
        for k in range(a.repeats):
            for name, ranks, threads in configs:
                runs[name].append(run(a, ranks, threads, schedule, a.out, f"{schedule}-{name}-{k}"))
        med = {}
        for name, _, _ in configs:
            rs = runs[name]
            med[name] = {key: statistics.median(r[key] for r in rs)
                         for key in ("train_s", "wall_s", "rss_mb")}
            r = rs[0]
            print(f"| {schedule} | {name} | {med[name]['train_s']:.3f} | {med[name]['wall_s']:.2f} "
                  f"| {med[name]['rss_mb']:.0f} | {r['iterations']} | {r['updates']:,.0f} | "
                  f"{r['objective']:.10g} |")
        same = all(r["model"] == runs[configs[0][0]][0]["model"] for rs in runs.values() for r in rs)
        ratio = lambda p, q: f"{med[p]['train_s'] / med[q]['train_s']:.2f}x" \
            if p in med and q in med else "–"
        print(f"| {schedule} | 2 threads / 1: **{ratio('1x1', '1x2')}**, 2 ranks / 2 threads: "
              f"**{ratio('1x2', '2x1')}**, models identical: {same} | | | | | |")


if __name__ == "__main__":
    main()
