#!/usr/bin/env python3
"""Time to the same objective against the bounded delay tau (the parameter-server paper's figure).

Runs `rotor logreg train` under `mpiexec -n 4 --oversubscribe` with `--servers 2` (ranks 0 and 1
servers, ranks 2 and 3 workers) and one worker slowed by `--simulate-straggler`, for each tau,
`--reps` times, and reads the metrics file (one record every --eval-every iterations, time_s
excluding evaluations). The target is the objective of a long tau = 0 run (one process) times
1 + --rel; a run's time to it is interpolated linearly between the two records around it.
Prints a Markdown table (median of the repetitions) and writes a PNG and the raw results.

    /usr/bin/python3 bench/logreg/tau_sweep.py --rotor build/ci/apps/rotor \\
        --data sotu-party.train.svm [--lambda 1] [--blocks 4] [--straggler 3:2] \\
        [--taus 0,1,2,4,8,16,inf] [--reps 3] [--rel 1e-3] [--png docs/img/logreg-tau.png]

Standard library (matplotlib for the PNG, when present).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # found from the script, not the working directory


def model_objective(path: Path) -> float:
    for line in path.read_text().splitlines():
        if line.startswith("objective "):
            return float(line.split()[1])
    raise ValueError(f"{path}: no objective line")


def train(args, extra: list[str], out: Path, mpi: bool) -> None:
    cmd = [args.rotor, "logreg", "train", "--data", str(args.data), "--lambda", str(args.lam),
           "--blocks", str(args.blocks), "--curvature", args.curvature, "-q", "--out", str(out), "--overwrite"]
    if mpi:
        cmd = [args.mpiexec, "-n", "4", "--oversubscribe"] + cmd + ["--servers", "2"]
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1")  # oversubscribed: yield when idle
    subprocess.run(cmd + extra, check=True, stdout=subprocess.DEVNULL, env=env)


def time_to(records: list[dict], target: float) -> tuple[float, int] | None:
    """Seconds and iterations at which the objective first reaches target (interpolated)."""
    before = {"time_s": 0.0, "iter": 0, "objective": None}
    for r in records:
        if r["objective"] is None:  # not finite: the run diverged
            return None
        if r["objective"] <= target:
            if before["objective"] is None:
                return r["time_s"], r["iter"]
            a, b = before["objective"] - target, before["objective"] - r["objective"]
            f = a / b if b > 0 else 1.0
            t = before["time_s"] + f * (r["time_s"] - before["time_s"])
            return t, round(before["iter"] + f * (r["iter"] - before["iter"]))
        before = r
    return None


def plot(rows: list[dict], png: Path, title: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no PNG")
        return
    labels = [r["tau"] for r in rows]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    ax[0].bar(labels, [r["median_s"] or 0 for r in rows], color="tab:blue")
    ax[0].set_xlabel("bounded delay tau")
    ax[0].set_ylabel("seconds to the target objective")
    ax[1].bar(labels, [r["median_iterations"] or 0 for r in rows], color="tab:orange")
    ax[1].set_xlabel("bounded delay tau")
    ax[1].set_ylabel("iterations to the target objective")
    for a in ax:  # runs that never reached the target (diverged or too slow)
        for i, r in enumerate(rows):
            if r["median_s"] is None:
                a.text(i, 0, "not\nreached", ha="center", va="bottom", fontsize=8, color="tab:red")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--lambda", dest="lam", type=float, default=1.0)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--curvature", default="local")
    ap.add_argument("--straggler", default="3:2")
    ap.add_argument("--taus", default="0,1,2,4,8,16,inf")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rel", type=float, default=1e-3)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--iterations", type=int, default=3000)
    ap.add_argument("--reference-iterations", type=int, default=8000)
    ap.add_argument("--png", type=Path, default=REPO / "docs" / "img" / "logreg-tau.png")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="keep the metrics files here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        train(args, ["--iterations", str(args.reference_iterations)], tmp / "ref.txt", False)
        f_ref = model_objective(tmp / "ref.txt")
        target = f_ref * (1 + args.rel)
        rows = []
        for tau in args.taus.split(","):
            runs = []
            for rep in range(args.reps):
                metrics = tmp / f"m-{tau}-{rep}.jsonl"
                train(args, ["--delay", tau, "--iterations", str(args.iterations), "--eval-every",
                             str(args.eval_every), "--simulate-straggler", args.straggler,
                             "--metrics", str(metrics)], tmp / "m.txt", True)
                recs = [json.loads(l) for l in metrics.read_text().splitlines()]
                final = recs[-1]["objective"]
                runs.append({"reached": time_to(recs, target), "final": final,
                             "diverged": final is None, "total_s": recs[-1]["time_s"]})
            reached = [r["reached"] for r in runs if r["reached"] is not None]
            rows.append({
                "tau": tau, "runs": runs,
                "median_s": statistics.median(t for t, _ in reached) if reached else None,
                "median_iterations": statistics.median(i for _, i in reached) if reached else None,
                "reached": f"{len(reached)}/{len(runs)}",
                "diverged": sum(r["diverged"] for r in runs),
                "s_per_iteration": statistics.median(r["total_s"] for r in runs) / args.iterations})
    base = rows[0]["median_s"]
    print(f"F_ref = {f_ref:.10g} ({args.reference_iterations} iterations, tau = 0); "
          f"target F_ref * (1 + {args.rel:g}) = {target:.10g}\n")
    print("| tau | reached (diverged) | iterations to target | seconds to target "
          "| speed-up over tau = 0 | ms per iteration |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        s = r["median_s"]
        up = f"{base / s:.2f}x" if s and base else "-"
        it = f"{r['median_iterations']:.0f}" if r["median_iterations"] is not None else "-"
        sec = f"{s:.2f}" if s is not None else "not reached"
        print(f"| {r['tau']} | {r['reached']} ({r['diverged']}) | {it} | {sec} | {up} "
              f"| {1000 * r['s_per_iteration']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"f_ref": f_ref, "target": target, "rows": rows}, indent=1))
    plot(rows, args.png, f"{args.data.name}: lambda {args.lam:g}, {args.blocks} blocks, curvature "
         f"{args.curvature}, 2 workers + 2 servers, straggler {args.straggler}; "
         f"target (F - F_ref)/F_ref <= {args.rel:g}; medians of {args.reps}")


if __name__ == "__main__":
    main()
