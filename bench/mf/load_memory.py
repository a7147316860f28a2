#!/usr/bin/python3
"""Loading time and peak memory of `rotor mf train` against LIBMF, side by side (issue 32).

Every repetition runs each configuration once, in turn (so a change of the machine's load hits
all of them), and the report gives medians over --repeats (default 3):

- loading the training file alone: `rotor ratings info TRAIN` (read, sort into the CSR, print
  the sizes) against LIBMF's `mf-train -t 0 TRAIN` (its read_problem, then it refuses 0
  iterations and stops: a crash on the null model after the read, which is accepted here); wall
  time and peak RSS of each;
- peak RSS of a training run with the test file (K, lambda, --iterations, each thread count):
  rotor per solver (`mf train ... -n ITER --threads T`) against LIBMF (`mf-train -k K -l2 L
  -t ITER -s T -p TEST`), and rotor's memory plan (its start line) against its measured peak.
  The peak is reached while the trainer is built or the model written, so a few iterations
  measure it (the default 2);
- the load average (1 minute) before and after, since the machine may be shared.

Peak RSS is wait4's ru_maxrss of the child. LIBMF is built outside the repository from
github.com/cjlin1/libmf (its code never enters rotor); it reads `user item rating` text with
integer ids, as rotor does.

    /usr/bin/python3 bench/mf/load_memory.py --rotor build/ci/apps/rotor --libmf /work/peers/libmf \\
        --train k-train.txt --test k-test.txt --rank 32 --lambda 0.05 --out bench-out/mf-memory

Outputs in --out: report.md and results.json; the runs' logs under --out/runs/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

PLAN = re.compile(r"memory plan ([0-9.]+) (B|KiB|MiB|GiB|TiB)")
# `mf-train -t 0` reads the training file (read_problem), then refuses 0 iterations with this
# line and stops (saving the null model then crashes it, after the read and the message).
LIBMF_READ_ONLY = "number of iterations must be greater than zero"
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def run(cmd: list[str], log: Path, ends_with: str | None = None) -> tuple[float, int]:
    """Runs cmd with its output to `log`; returns (wall s, peak RSS bytes). Fails on an error,
    but for a run whose log holds `ends_with` (LIBMF's refusal of -t 0, after its read)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0 and not (ends_with and ends_with in log.read_text(errors="replace")):
        tail = log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} exited with {code}:\n{tail}")
    return wall, usage.ru_maxrss * 1024


def plan_bytes(log: Path) -> int | None:
    m = PLAN.search(log.read_text(errors="replace"))
    return int(float(m.group(1)) * UNITS[m.group(2)]) if m else None


def configs(args) -> list[tuple[str, str, int]]:
    """(name, kind, threads): the loads, then every training run."""
    out = [("load-rotor", "load-rotor", 1), ("load-libmf", "load-libmf", 1)]
    for t in args.threads:
        out.append((f"libmf-{t}T", "libmf", t))
        for s in args.solvers:
            out.append((f"rotor-{s}-{t}T", s, t))
    return out


def command(args, kind: str, threads: int, d: Path) -> list[str]:
    libmf = str(args.libmf / "mf-train")
    if kind == "load-rotor":
        return [args.rotor, "ratings", "info", str(args.train)]
    if kind == "load-libmf":
        return [libmf, "-t", "0", str(args.train), str(d / "model")]
    if kind == "libmf":
        return [libmf, "-k", str(args.rank), "-l2", str(args.lam), "-t", str(args.iterations),
                "-s", str(threads), "-p", str(args.test), str(args.train), str(d / "model")]
    return [args.rotor, "mf", "train", "--train", str(args.train), "--test", str(args.test),
            "--solver", kind, "-k", str(args.rank), "--lambda", str(args.lam),
            "-n", str(args.iterations), "--threads", str(threads), "--seed", "1",
            "--out", str(d / "model"), "--overwrite"]


def measure(args) -> dict:
    runs: dict[str, list[dict]] = {name: [] for name, _, _ in configs(args)}
    load_before = os.getloadavg()[0]
    for rep in range(args.repeats):
        for name, kind, threads in configs(args):
            d = args.out / "runs" / f"{name}-{rep}"
            wall, peak = run(command(args, kind, threads, d), d / "log.txt",
                             LIBMF_READ_ONLY if kind == "load-libmf" else None)
            r = {"wall_s": wall, "peak_rss_bytes": peak, "load": os.getloadavg()[0]}
            if kind in ("sgd", "ccd"):
                r["plan_bytes"] = plan_bytes(d / "log.txt")
            runs[name].append(r)
            if not args.quiet:
                print(f"[load_memory] {name} #{rep}: {wall:.2f} s, {peak / 2**20:.1f} MiB",
                      file=sys.stderr, flush=True)
    load_after = os.getloadavg()[0]
    med = {name: {key: statistics.median(r[key] for r in rs)
                  for key in ("wall_s", "peak_rss_bytes")} for name, rs in runs.items()}
    for name, rs in runs.items():
        plans = [r["plan_bytes"] for r in rs if r.get("plan_bytes")]
        if plans:
            med[name]["plan_bytes"] = plans[0]
    loads = [r["load"] for rs in runs.values() for r in rs] + [load_before, load_after]
    return {"args": {k: str(v) for k, v in vars(args).items()}, "runs": runs, "medians": med,
            "load_min": min(loads), "load_max": max(loads)}


def report(args, res: dict) -> str:
    med = res["medians"]
    mib = 2**20
    lr, ll = med["load-rotor"], med["load-libmf"]
    lines = [f"# Loading and peak memory against LIBMF: {args.train}",
             "",
             f"K = {args.rank}, lambda = {args.lam}, {args.iterations} iterations for the memory "
             f"runs, medians of {args.repeats}, load average {res['load_min']:.1f}–"
             f"{res['load_max']:.1f}.",
             "",
             "| loading the training file | wall s | peak RSS MiB |",
             "|---|---|---|",
             f"| LIBMF `mf-train -t 0` | {ll['wall_s']:.2f} | {ll['peak_rss_bytes'] / mib:.1f} |",
             f"| rotor `ratings info` | {lr['wall_s']:.2f} | {lr['peak_rss_bytes'] / mib:.1f} |",
             f"| rotor ÷ LIBMF | **{lr['wall_s'] / ll['wall_s']:.2f}×** | "
             f"{lr['peak_rss_bytes'] / ll['peak_rss_bytes']:.2f}× |",
             "",
             "| training run | threads | peak RSS MiB | ÷ LIBMF's | plan MiB | plan ÷ peak | wall s |",
             "|---|---|---|---|---|---|---|"]
    for t in args.threads:
        lib = med[f"libmf-{t}T"]
        lines.append(f"| LIBMF | {t} | {lib['peak_rss_bytes'] / mib:.1f} | 1 | | | "
                     f"{lib['wall_s']:.2f} |")
        for s in args.solvers:
            r = med[f"rotor-{s}-{t}T"]
            plan = r.get("plan_bytes")
            lines.append(
                f"| rotor {s} | {t} | {r['peak_rss_bytes'] / mib:.1f} | "
                f"**{r['peak_rss_bytes'] / lib['peak_rss_bytes']:.2f}×** | "
                f"{plan / mib if plan else float('nan'):.1f} | "
                f"{plan / r['peak_rss_bytes'] if plan else float('nan'):.2f} | "
                f"{r['wall_s']:.2f} |")
    return "\n".join(lines) + "\n"


def int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="report folder")
    p.add_argument("--rotor", default="build/ci/apps/rotor")
    p.add_argument("--libmf", type=Path, required=True, help="the directory of LIBMF's mf-train")
    p.add_argument("--train", type=Path, required=True)
    p.add_argument("--test", type=Path, required=True)
    p.add_argument("--rank", type=int, default=32)
    p.add_argument("--lambda", dest="lam", type=float, default=0.05)
    p.add_argument("--iterations", type=int, default=2)
    p.add_argument("--threads", type=int_list, default=[1, 2])
    p.add_argument("--solvers", type=lambda s: s.split(","), default=["sgd", "ccd"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.iterations < 1 or args.rank < 1:
        p.error("--repeats, --iterations and --rank must be >= 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        res = measure(args)
    except RuntimeError as e:
        print(f"load_memory.py: {e}", file=sys.stderr)
        return 1
    (args.out / "results.json").write_text(json.dumps(res, indent=1) + "\n")
    text = report(args, res)
    (args.out / "report.md").write_text(text)
    if not args.quiet:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
