#!/usr/bin/env python3
"""Time to the same objective against the bounded delay tau (the parameter-server paper's figure).

Runs `rotor logreg train` under `mpiexec -n S+W --oversubscribe` with `--servers S` (ranks
0..S-1 servers, the W others workers; default 2 and 2) and one worker slowed by
`--simulate-straggler` (default: the last rank at factor 2), for each tau, `--reps` times, and
reads the metrics file (one record every --eval-every iterations, time_s excluding evaluations)
and the --stats file (each rank's seconds blocked in the kv engine). The target is F_ref times
1 + --rel, F_ref the objective of a long tau = 0 run (one process) or --best; a run's time to it
is interpolated linearly between the two records around it. Prints a Markdown table (medians of
the repetitions, the load averages before and after) and writes a PNG and the raw results.

    /usr/bin/python3 bench/logreg/tau_sweep.py --rotor build/ci/apps/rotor \\
        --data sotu-party.train.svm [--lambda 1] [--blocks 4] [--workers 2] [--servers 2] \\
        [--straggler 3:2] [--taus 0,1,2,4,8,16,inf] [--reps 3] [--rel 1e-4] [--best F*] \\
        [--extra "--no-intercept --max-step 1"] [--png docs/img/logreg-tau.png]

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


def model_objective(path: Path) -> float:
    for line in path.read_text().splitlines():
        if line.startswith("objective "):
            return float(line.split()[1])
    raise ValueError(f"{path}: no objective line")


def train(args, extra: list[str], out: Path, mpi: bool) -> None:
    cmd = [args.rotor, "logreg", "train", "--data", str(args.data), "--lambda", str(args.lam),
           "--blocks", str(args.blocks), "--curvature", args.curvature, "-q", "--out", str(out),
           "--overwrite"] + args.extra.split()
    if mpi:
        cmd = ([args.mpiexec, "-n", str(args.servers + args.workers), "--oversubscribe"] + cmd
               + ["--servers", str(args.servers)])
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
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--straggler", help="RANK:FACTOR (default: the last rank, factor 2)")
    ap.add_argument("--taus", default="0,1,2,4,8,16,inf")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rel", type=float, default=1e-4)
    ap.add_argument("--best", type=float, help="F_ref (skips the reference run)")
    ap.add_argument("--extra", default="", help="more flags of rotor logreg train")
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--iterations", type=int, default=3000)
    ap.add_argument("--reference-iterations", type=int, default=8000)
    ap.add_argument("--png", type=Path, default=None, help="write the plot here (none by default)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="keep the metrics files here")
    args = ap.parse_args()
    ranks = args.servers + args.workers
    straggler = args.straggler or f"{ranks - 1}:2"
    slow = int(straggler.split(":")[0])
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        if args.best is None:
            train(args, ["--iterations", str(args.reference_iterations)], tmp / "ref.txt", False)
            f_ref = model_objective(tmp / "ref.txt")
        else:
            f_ref = args.best
        target = f_ref * (1 + args.rel)
        taus = args.taus.split(",")
        results = {tau: [] for tau in taus}
        for rep in range(args.reps):  # the taus in turn, so the load's drift touches each alike
            for tau in taus:
                runs = results[tau]
                metrics = tmp / f"m-{tau}-{rep}.jsonl"
                stats = tmp / f"s-{tau}-{rep}.json"
                metrics.unlink(missing_ok=True)
                train(args, ["--delay", tau, "--iterations", str(args.iterations), "--eval-every",
                             str(args.eval_every), "--simulate-straggler", straggler,
                             "--metrics", str(metrics), "--stats", str(stats)], tmp / "m.txt", True)
                recs = [json.loads(l) for l in metrics.read_text().splitlines()]
                final = recs[-1]["objective"]
                wait = json.loads(stats.read_text()).get("rank_wait_s", [])
                total = recs[-1]["time_s"]
                fast = [w for r, w in enumerate(wait) if r >= args.servers and r != slow]
                runs.append({"reached": time_to(recs, target), "final": final,
                             "diverged": final is None, "total_s": total,
                             "iterations": recs[-1]["iter"], "rank_wait_s": wait,
                             "fast_wait": statistics.mean(fast) / total if fast else None,
                             "slow_wait": wait[slow] / total if slow < len(wait) else None})
        rows = []
        for tau in taus:
            runs = results[tau]
            reached = [r["reached"] for r in runs if r["reached"] is not None]
            med = lambda key: statistics.median(r[key] for r in runs if r[key] is not None)
            rows.append({
                "tau": tau, "runs": runs,
                "median_s": statistics.median(t for t, _ in reached) if reached else None,
                "median_iterations": statistics.median(i for _, i in reached) if reached else None,
                "reached": f"{len(reached)}/{len(runs)}",
                "diverged": sum(r["diverged"] for r in runs),
                "s_per_iteration": statistics.median(r["total_s"] / r["iterations"] for r in runs),
                "fast_wait": med("fast_wait"), "slow_wait": med("slow_wait")})
    load_after = os.getloadavg()
    base = rows[0]["median_s"]
    print(f"F_ref = {f_ref:.10g}; target F_ref * (1 + {args.rel:g}) = {target:.10g}; "
          f"{args.workers} workers + {args.servers} servers, straggler {straggler}; load "
          f"before {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f}, after "
          f"{load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f}\n")
    print("| tau | reached (diverged) | iterations to target | seconds to target "
          "| speed-up over tau = 0 | ms per iteration | fast workers waiting | straggler waiting |")
    print("|---|---|---|---|---|---|---|---|")
    pct = lambda x: f"{100 * x:.0f}%" if x is not None else "-"
    for r in rows:
        s = r["median_s"]
        up = f"{base / s:.2f}x" if s and base else "-"
        it = f"{r['median_iterations']:.0f}" if r["median_iterations"] is not None else "-"
        sec = f"{s:.2f}" if s is not None else "not reached"
        print(f"| {r['tau']} | {r['reached']} ({r['diverged']}) | {it} | {sec} | {up} "
              f"| {1000 * r['s_per_iteration']:.3f} | {pct(r['fast_wait'])} "
              f"| {pct(r['slow_wait'])} |")
    if args.json:
        args.json.write_text(json.dumps({"f_ref": f_ref, "target": target, "rows": rows,
                                         "load": [load_before, load_after]}, indent=1))
    if args.png:
        plot(rows, args.png, f"{args.data.name}: lambda {args.lam:g}, {args.blocks} blocks, curvature "
             f"{args.curvature}, {args.workers} workers + {args.servers} servers, straggler "
             f"{straggler}; target (F - F_ref)/F_ref <= {args.rel:g}; medians of {args.reps}")


if __name__ == "__main__":
    main()
