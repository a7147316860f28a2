#!/usr/bin/python3
"""Benchmark of `rotor mf train` (CCD++ and SGD) against a reference ALS (bench/mf/als_numpy.py).

Default mode (MovieLens-small or any ratings file, split 80/20 by user unless --train/--test):
every configuration runs --repeats times (default 3), side by side (repetition r of every
configuration before repetition r + 1, so a load change hits all of them), and the report
gives medians over the repetitions:

- time to a ladder of test-RMSE targets per tool, solver and thread count (rotor's time_s: its
  training clock; the ALS peer's own clock);
- per solver, the epoch-time speedup 1 thread / 2 threads (target >= 1.9) and the effective
  ratio of the 2-thread runs (target >= 0.98);
- per solver, 2 ranks x 1 thread (mpiexec -n 2 --oversubscribe) against 1 rank x 2 threads:
  epoch time of 1x2 / epoch time of 2x1 (target >= 0.9); skipped without mpiexec (--no-mpi);
- peak RSS of every process (its largest resident set, from wait4) against rotor's memory plan;
- rmse_time.png: test RMSE against time, both solvers at 1 and 2 threads, and the ALS peer;
- with --libmf DIR: LIBMF's mf-train (built from github.com/cjlin1/libmf outside the repository)
  at every thread count, K and lambda as rotor's (its -l2, rotor's default 0.1 when --lambda is
  not given), on the same split converted to its format (integer ids, string ids numbered);
  its time to iteration i is the arrival of its i-th progress line minus that of its first,
  plus one median epoch for the first (the lines are flushed as printed; its per-iteration
  validation RMSE is inside its time, rotor's evaluations are not).

--big: ratings/s at K = 16, 128, 1024 on a 10^7-rating synthetic matrix
(tools/data/make_synthetic_ratings.py --preset 1e7, generated into --workdir when --big-train
is not given), peak RSS against the plan (target <= 1.2), cost per rating against K.

The memory plan is read from the metrics when rotor puts it there (a record key
memory_estimate_bytes, memory_plan_bytes or estimate_memory_bytes), else from the refusal of
a run with --max-memory 1 ("... needs about X ..."); the report says which.

    bench/mf/mf_bench.py --ratings /work/data/movielens/ratings.csv --out bench-out/mf
    bench/mf/mf_bench.py --big --out bench-out/mf-big
Outputs in --out: report.md, results.json, rmse_time.png (default mode) or big.md, big.json;
every run's metrics and log under --out/runs/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ALS = HERE / "als_numpy.py"
SPLIT = REPO / "tools" / "data" / "split_ratings.py"
SYNTHETIC = REPO / "tools" / "data" / "make_synthetic_ratings.py"
PLAN_KEYS = ("memory_estimate_bytes", "memory_plan_bytes", "estimate_memory_bytes")
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
DEFAULT_TARGETS = (1.0, 0.95, 0.92, 0.90, 0.89, 0.88, 0.87)


class RunError(RuntimeError):
    """A child process failed; the message holds its command and the end of its log."""


def find_rotor(given: str | None) -> str:
    """The rotor binary: --rotor, else the release then the CI build of this checkout, else PATH."""
    candidates = [given] if given else [REPO / "build" / "release" / "apps" / "rotor",
                                        REPO / "build" / "ci" / "apps" / "rotor"]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(Path(c).resolve())
    found = shutil.which(given or "rotor")
    if found:
        return found
    raise SystemExit(f"mf_bench.py: no rotor binary ({given or 'build/release/apps/rotor'}); "
                     "build it or pass --rotor PATH")


def run_process(cmd: list[str], log: Path, env: dict | None = None, check: bool = True):
    """Runs cmd with stdout+stderr to `log`; returns (wall s, peak RSS KiB, exit code).

    The peak is wait4's ru_maxrss: the largest resident set of the child or of any descendant
    it waited for (with mpiexec: the largest rank), not a sum.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ, **(env or {}))
    with open(log, "w") as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=full_env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if check and proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RunError(f"failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")
    return wall, usage.ru_maxrss, proc.returncode


def read_jsonl(path: Path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def rotor_cmd(args, solver: str, threads: int, ranks: int, metrics: Path, out: Path,
              rank: int, train: Path, test: Path | None, iterations: int,
              extra: tuple = ()) -> list[str]:
    cmd = [args.rotor, "mf", "train", "--train", str(train), "--solver", solver, "--rank",
           str(rank), "--threads", str(threads), "--iterations", str(iterations), "--seed",
           str(args.seed), "--metrics", str(metrics), "--out", str(out), "--overwrite"]
    if not args.verbose_rotor:
        cmd.append("--quiet")
    if test is not None:
        cmd += ["--test", str(test)]
    if args.lam is not None:
        cmd += ["--lambda", repr(args.lam)]
    cmd += list(args.rotor_arg) + list(extra)
    if ranks > 1:
        cmd = [args.mpiexec, "-n", str(ranks), "--oversubscribe"] + cmd
    return cmd


def run_rotor(args, solver: str, threads: int, ranks: int, tag: str, rank: int, train: Path,
              test: Path | None, iterations: int) -> dict:
    d = args.out / "runs" / tag
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    cmd = rotor_cmd(args, solver, threads, ranks, d / "metrics.jsonl", d / "model", rank, train,
                    test, iterations)
    wall, peak_kib, _ = run_process(cmd, d / "log.txt", MPI_ENV if ranks > 1 else None)
    records = read_jsonl(d / "metrics.jsonl")
    shutil.rmtree(d / "model", ignore_errors=True)  # models are not kept: disk
    return {"tool": "rotor", "solver": solver, "threads": threads, "ranks": ranks, "rank": rank,
            "wall_s": wall, "peak_rss_bytes": peak_kib * 1024, "records": records,
            "cmd": cmd, "log": d / "log.txt"}


def run_als(args, tag: str, train: Path, test: Path | None) -> dict:
    d = args.out / "runs" / tag
    d.mkdir(parents=True, exist_ok=True)
    cmd = [args.python, str(ALS), "--train", str(train), "--rank", str(args.rank),
           "--iterations", str(args.als_iterations), "--seed", str(args.seed), "--threads", "1",
           "--metrics", str(d / "metrics.jsonl"), "--quiet"]
    if test is not None:
        cmd += ["--test", str(test)]
    if args.lam is not None:
        cmd += ["--lambda", repr(args.lam)]
    wall, peak_kib, _ = run_process(cmd, d / "log.txt")
    return {"tool": "als", "solver": "als", "threads": 1, "ranks": 1, "rank": args.rank,
            "wall_s": wall, "peak_rss_bytes": peak_kib * 1024,
            "records": read_jsonl(d / "metrics.jsonl"), "cmd": cmd}


def libmf_data(args, train: Path, test: Path | None) -> tuple[Path, Path | None]:
    """train and test in LIBMF's text format ("user item rating" a line) under --out/data.

    Reads rotor's ratings files (CSV with or without a header, or whitespace-separated): integer
    ids are kept as they are, other ids are numbered in order of first appearance (train, then
    test), one numbering for users and one for items shared by both files.
    """
    d = args.out / "data"
    d.mkdir(parents=True, exist_ok=True)
    ids: tuple[dict, dict] = ({}, {})
    numeric = all(_integer_ids(path) for path in (train, test) if path is not None)
    outs = []
    for path, name in ((train, "train"), (test, "test")):
        if path is None:
            outs.append(None)
            continue
        out = d / f"libmf-{name}.txt"
        with open(path) as src, open(out, "w") as dst:
            for n, line in enumerate(src, 1):
                fields = line.replace(",", " ").split()
                if not fields or line.lstrip().startswith("#"):
                    continue
                try:
                    value = float(fields[2])
                except (IndexError, ValueError):
                    if n == 1:
                        continue  # the header
                    raise SystemExit(f"mf_bench.py: {path}:{n}: not 'user item rating': {line!r}")
                if numeric:
                    u, i = int(fields[0]), int(fields[1])
                else:
                    u = ids[0].setdefault(fields[0], len(ids[0]))
                    i = ids[1].setdefault(fields[1], len(ids[1]))
                dst.write(f"{u} {i} {value!r}\n")
        outs.append(out)
    return outs[0], outs[1]


def _integer_ids(path: Path) -> bool:
    """Whether every rating line of `path` has non-negative integer user and item ids."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.replace(",", " ").split()
            if len(fields) < 3 or line.lstrip().startswith("#"):
                continue
            try:
                float(fields[2])
            except ValueError:
                if n == 1:
                    continue
            if not (fields[0].isdigit() and fields[1].isdigit()):
                return False
    return True


def libmf_records(lines: list[tuple[float, str]]) -> list[dict]:
    """Metrics records from mf-train's progress lines, each with its arrival time (monotonic s).

    A line "iter tr_rmse [va_rmse] obj" gives iteration iter + 1; time_s is its arrival minus the
    first line's, plus one median epoch (the first line's own epoch is not observable).
    """
    rows = []
    for t, line in lines:
        fields = line.split()
        if len(fields) >= 3 and fields[0].isdigit():
            rows.append((t, int(fields[0]), [float(x) for x in fields[1:]]))
    if not rows:
        return []
    gaps = [b[0] - a[0] for a, b in zip(rows, rows[1:])]
    first = statistics.median(gaps) if gaps else 0.0
    records = []
    for k, (t, it, vals) in enumerate(rows):
        rec = {"iteration": it + 1, "time_s": t - rows[0][0] + first,
               "iteration_s": gaps[k - 1] if k else first, "train_rmse": vals[0]}
        if len(vals) >= 3:  # tr, va, obj
            rec["test_rmse"] = vals[1]
        records.append(rec)
    return records


def run_libmf(args, tag: str, threads: int, train: Path, test: Path | None) -> dict:
    d = args.out / "runs" / tag
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    cmd = [str(args.libmf / "mf-train"), "-k", str(args.rank), "-l2",
           repr(args.lam if args.lam is not None else 0.1), "-t", str(args.iterations), "-s",
           str(threads)]
    if test is not None:
        cmd += ["-p", str(test)]
    cmd += [str(train), str(d / "model.txt")]
    lines = []
    with open(d / "log.txt", "w") as log_file:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            lines.append((time.monotonic(), line))
            log_file.write(line)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RunError(f"failed: {' '.join(cmd)}\n{''.join(l for _, l in lines)[-3000:]}")
    (d / "model.txt").unlink(missing_ok=True)
    records = libmf_records(lines)
    (d / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return {"tool": "libmf", "solver": "libmf", "threads": threads, "ranks": 1,
            "rank": args.rank, "wall_s": wall, "peak_rss_bytes": usage.ru_maxrss * 1024,
            "records": records, "cmd": cmd}


def parse_needs(text: str, phrase: str = "needs about") -> int | None:
    """Bytes of the first "<phrase> X UNIT" in rotor's output, or None."""
    m = re.search(re.escape(phrase) + r" ([0-9.]+) ?(B|KiB|MiB|GiB|TiB)\b", text)
    return int(float(m.group(1)) * UNITS[m.group(2)]) if m else None


def memory_plan(args, solver: str, threads: int, rank: int, train: Path, test: Path | None,
                records: list[dict], tag: str, run_log: Path | None = None
                ) -> tuple[int | None, str]:
    """(plan bytes, where it came from): the metrics' key, else the start line of the run's log
    ("memory plan X", printed without --quiet), else a refused --max-memory 1 run."""
    for rec in records[:1]:
        for key in PLAN_KEYS:
            if key in rec:
                return int(rec[key]), f"metrics {key}"
    if run_log is not None and run_log.exists():
        plan = parse_needs(run_log.read_text(errors="replace"), "memory plan")
        if plan is not None:
            return plan, "the run's start line (rounded to 0.1 unit)"
    d = args.out / "runs" / tag
    d.mkdir(parents=True, exist_ok=True)
    cmd = rotor_cmd(args, solver, threads, 1, d / "metrics.jsonl", d / "model", rank, train,
                    test, 1, ("--max-memory", "1"))
    _, _, rc = run_process(cmd, d / "log.txt", check=False)
    shutil.rmtree(d / "model", ignore_errors=True)
    need = parse_needs((d / "log.txt").read_text(errors="replace"))
    if rc == 0 or need is None:
        return None, "none (no plan in the metrics; --max-memory 1 was not refused)"
    return need, "--max-memory 1 refusal (rounded to 0.1 unit)"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def epoch_times(records: list[dict]) -> list[float]:
    """Seconds per iteration: iteration_s when recorded, else differences of time_s."""
    if records and all("iteration_s" in r for r in records):
        return [r["iteration_s"] for r in records]
    t = [0.0] + [r["time_s"] for r in records]
    return [b - a for a, b in zip(t, t[1:])]


def steady_epoch(records: list[dict]) -> float | None:
    """Median epoch time, the first iteration (warm-up) left out when there are others."""
    e = epoch_times(records)
    return median(e[1:] if len(e) > 1 else e)


def time_to(records: list[dict], target: float) -> float | None:
    for r in records:
        if r.get("test_rmse") is not None and r["test_rmse"] <= target:
            return r["time_s"]
    return None


def time_to_median(runs: list[dict], target: float) -> tuple[float | None, int]:
    """(median time to reach target over the runs that reached it, how many reached it);
    None when fewer than half of the runs did."""
    times = [time_to(r["records"], target) for r in runs]
    hit = [t for t in times if t is not None]
    return (statistics.median(hit) if 2 * len(hit) > len(runs) else None), len(hit)


def median_run(runs: list[dict]) -> dict:
    """The run whose total time is the median (the one plotted)."""
    ordered = sorted(runs, key=lambda r: r["records"][-1]["time_s"] if r["records"] else 0.0)
    return ordered[(len(ordered) - 1) // 2]


def config_name(run: dict) -> str:
    if run["tool"] == "als":
        return "ALS (numpy)"
    if run["tool"] == "libmf":
        return f"LIBMF {run['threads']}T"
    ranks = f"{run['ranks']} ranks x " if run["ranks"] > 1 else ""
    return f"rotor {run['solver']} {ranks}{run['threads']}T"


def fmt(x, spec="{:.3f}") -> str:
    return "—" if x is None else spec.format(x)


def prepare_split(args) -> tuple[Path, Path | None]:
    if args.train is not None:
        return args.train, args.test
    if args.ratings is None:
        raise SystemExit("mf_bench.py: give --ratings FILE (split 80/20 here) or --train/--test")
    d = args.out / "data"
    d.mkdir(parents=True, exist_ok=True)
    train, test = d / "train.txt", d / "test.txt"
    subprocess.run([args.python, str(SPLIT), str(args.ratings), "--train", str(train), "--test",
                    str(test), "--fraction", str(args.test_fraction), "--seed", "1"], check=True,
                   stderr=subprocess.DEVNULL if args.quiet else None)
    return train, test


def ladder_configs(args) -> list[tuple[str, int, int]]:
    """(solver, threads, ranks) of every rotor configuration of the default mode."""
    configs = [(s, t, 1) for s in args.solvers for t in args.threads]
    if args.mpi:
        configs += [(s, 1, 2) for s in args.solvers]
    return configs


def ladder_mode(args) -> dict:
    train, test = prepare_split(args)
    libmf_train, libmf_test = libmf_data(args, train, test) if args.libmf else (None, None)
    runs: dict[str, list[dict]] = {}
    for rep in range(args.repeats):
        for threads in args.threads if args.libmf else ():
            run = run_libmf(args, f"libmf-t{threads}-{rep}", threads, libmf_train, libmf_test)
            runs.setdefault(config_name(run), []).append(run)
            log(args, f"libmf-t{threads}-{rep}: {run['wall_s']:.2f} s")
        for solver, threads, ranks in ladder_configs(args):
            tag = f"{solver}-r{ranks}-t{threads}-{rep}"
            run = run_rotor(args, solver, threads, ranks, tag, args.rank, train, test,
                            args.iterations)
            runs.setdefault(config_name(run), []).append(run)
            log(args, f"{tag}: {run['wall_s']:.2f} s")
        if args.als:
            run = run_als(args, f"als-{rep}", train, test)
            runs.setdefault(config_name(run), []).append(run)
            log(args, f"als-{rep}: {run['wall_s']:.2f} s")
    plans = {}
    for solver in args.solvers:
        for threads in args.threads:
            name = f"rotor {solver} {threads}T"
            plans[name] = memory_plan(args, solver, threads, args.rank, train, test,
                                      runs[name][0]["records"], f"plan-{solver}-t{threads}",
                                      runs[name][0]["log"])
    results = summarize_ladder(args, runs, plans)
    results["data"] = {"train": str(train), "test": str(test) if test else None}
    write_ladder_report(args, results)
    plot_rmse_time(args, runs, args.out / "rmse_time.png")
    return results


def summarize_ladder(args, runs: dict, plans: dict) -> dict:
    configs = {}
    for name, rs in runs.items():
        last = [r["records"][-1] for r in rs if r["records"]]
        configs[name] = {
            "solver": rs[0]["solver"], "threads": rs[0]["threads"], "ranks": rs[0]["ranks"],
            "repeats": len(rs),
            "epoch_s": median([steady_epoch(r["records"]) for r in rs]),
            "final_test_rmse": median([x.get("test_rmse") for x in last]),
            "best_test_rmse": median([min((x["test_rmse"] for x in r["records"]
                                           if x.get("test_rmse") is not None), default=None)
                                      for r in rs]),
            "final_time_s": median([x["time_s"] for x in last]),
            "wall_s": median([r["wall_s"] for r in rs]),
            "effective_ratio": median([median([x.get("effective_ratio") for x in r["records"]])
                                       for r in rs]),
            "peak_rss_bytes": median([r["peak_rss_bytes"] for r in rs]),
            "time_to": {f"{t:.3f}": time_to_median(rs, t) for t in args.targets},
        }
        if name in plans:
            plan, source = plans[name]
            configs[name]["plan_bytes"], configs[name]["plan_source"] = plan, source
    scaling = {}
    for solver in args.solvers:
        one = configs.get(f"rotor {solver} 1T", {}).get("epoch_s")
        two = configs.get(f"rotor {solver} 2T", {}).get("epoch_s")
        mpi = configs.get(f"rotor {solver} 2 ranks x 1T", {}).get("epoch_s")
        scaling[solver] = {
            "speedup_2T": one / two if one and two else None,
            "effective_ratio_2T": configs.get(f"rotor {solver} 2T", {}).get("effective_ratio"),
            "ranks2x1_over_ranks1x2": two / mpi if two and mpi else None,
        }
    return {"rank": args.rank, "iterations": args.iterations, "lambda": args.lam,
            "repeats": args.repeats, "targets": list(args.targets), "configs": configs,
            "scaling": scaling}


def write_ladder_report(args, res: dict) -> None:
    (args.out / "results.json").write_text(json.dumps(res, indent=1) + "\n")
    lam = "rotor's default" if res["lambda"] is None else res["lambda"]
    lines = [f"# MF benchmark: K = {res['rank']}, {res['iterations']} iterations, "
             f"lambda {lam}, medians of {res['repeats']} runs", "",
             "Time (s) to reach each test RMSE (— : not reached by most runs):", ""]
    targets = [f"{t:.3f}" for t in res["targets"]]
    lines.append("| configuration | " + " | ".join(f"≤ {t}" for t in targets) +
                 " | final RMSE | best RMSE | epoch s | process wall s |")
    lines.append("|---|" + "---|" * (len(targets) + 4))
    for name, c in res["configs"].items():
        cells = [fmt(c["time_to"][t][0], "{:.3g}") for t in targets]
        tail = [fmt(c["final_test_rmse"], "{:.4f}"), fmt(c["best_test_rmse"], "{:.4f}"),
                fmt(c["epoch_s"], "{:.4g}"), fmt(c.get("wall_s"), "{:.3g}")]
        lines.append(f"| {name} | " + " | ".join(cells + tail) + " |")
    lines += ["", "Scaling (targets: speedup ≥ 1.9, effective ratio ≥ 0.98, 2x1 / 1x2 ≥ 0.9):",
              "",
              "| solver | epoch 1T / 2T | effective ratio 2T | 2 ranks x 1T vs 1 rank x 2T |",
              "|---|---|---|---|"]
    for solver, s in res["scaling"].items():
        lines.append(f"| {solver} | {fmt(s['speedup_2T'])} | {fmt(s['effective_ratio_2T'])} | "
                     f"{fmt(s['ranks2x1_over_ranks1x2'])} |")
    lines += ["", "Peak RSS against the memory plan:", "",
              "| configuration | peak RSS MiB | plan MiB | RSS / plan | plan from |",
              "|---|---|---|---|---|"]
    for name, c in res["configs"].items():
        plan = c.get("plan_bytes")
        ratio = c["peak_rss_bytes"] / plan if plan else None
        lines.append(f"| {name} | {c['peak_rss_bytes'] / 2**20:.1f} | "
                     f"{fmt(plan / 2**20 if plan else None, '{:.1f}')} | {fmt(ratio, '{:.2f}')} | "
                     f"{c.get('plan_source', '—')} |")
    (args.out / "report.md").write_text("\n".join(lines) + "\n")


def plot_rmse_time(args, runs: dict, path: Path) -> None:
    """Test RMSE against training time: the median run of every one-rank configuration."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, rs in runs.items():
        if rs[0]["ranks"] > 1:
            continue
        recs = [r for r in median_run(rs)["records"] if r.get("test_rmse") is not None]
        if not recs:
            continue
        style = {"als": "k-", "libmf": "m-" if rs[0]["threads"] > 1 else "m--"}.get(
            rs[0]["tool"], "-" if rs[0]["threads"] > 1 else "--")
        ax.plot([r["time_s"] for r in recs], [r["test_rmse"] for r in recs], style, marker=".",
                label=name)
    for t in args.plot_targets:
        ax.axhline(t, color="grey", linewidth=0.6, linestyle=":")
    ax.set_xscale("log")
    ax.set_xlabel("training time (s, log scale)")
    ax.set_ylabel("test RMSE")
    ax.set_title(f"MF, K = {args.rank}: test RMSE against time")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def big_train(args) -> Path:
    if args.big_train is not None:
        return args.big_train
    path = args.out / "data" / "synthetic-1e7.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([args.python, str(SYNTHETIC), "--preset", "1e7", "--out", str(path)],
                       check=True)
    return path


def big_mode(args) -> dict:
    """ratings/s per K at the largest thread count, peak RSS against the plan."""
    train = big_train(args)
    threads = max(args.threads)
    rows = []
    for solver in args.solvers:
        for k in args.big_ranks:
            runs = [run_rotor(args, solver, threads, 1, f"big-{solver}-k{k}-{rep}", k, train, None,
                              args.big_iterations) for rep in range(args.big_repeats)]
            plan, source = memory_plan(args, solver, threads, k, train, None, runs[0]["records"],
                                       f"big-plan-{solver}-k{k}", runs[0]["log"])
            rps = median([median([r.get("ratings_per_s") for r in run["records"][1:] or
                                  run["records"]]) for run in runs])
            peak = median([r["peak_rss_bytes"] for r in runs])
            rows.append({"solver": solver, "rank": k, "threads": threads, "ratings_per_s": rps,
                         "ratings_k_per_s": rps * k if rps else None, "peak_rss_bytes": peak,
                         "plan_bytes": plan, "plan_source": source,
                         "rss_over_plan": peak / plan if plan else None})
            log(args, f"big {solver} K={k}: {fmt(rps, '{:.3g}')} ratings/s, "
                      f"peak {peak / 2**20:.0f} MiB")
    for r in rows:  # cost per rating relative to the smallest K, against K's own ratio
        base = next(x for x in rows if x["solver"] == r["solver"])
        if r["ratings_per_s"] and base["ratings_per_s"]:
            r["cost_ratio"] = base["ratings_per_s"] / r["ratings_per_s"]
            r["k_ratio"] = r["rank"] / base["rank"]
    res = {"train": str(train), "iterations": args.big_iterations, "rows": rows}
    (args.out / "big.json").write_text(json.dumps(res, indent=1) + "\n")
    lines = [f"# MF at large K: {train}, {threads} threads, {args.big_iterations} iterations", "",
             "| solver | K | ratings/s | ratings·K/s | cost/rating vs smallest K (K ratio) | "
             "peak RSS MiB | plan MiB | RSS / plan (≤ 1.2) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        plan = r["plan_bytes"]
        lines.append(f"| {r['solver']} | {r['rank']} | {fmt(r['ratings_per_s'], '{:.3g}')} | "
                     f"{fmt(r['ratings_k_per_s'], '{:.3g}')} | {fmt(r.get('cost_ratio'), '{:.2f}')}"
                     f" ({fmt(r.get('k_ratio'), '{:.0f}')}) | {r['peak_rss_bytes'] / 2**20:.0f} | "
                     f"{fmt(plan / 2**20 if plan else None, '{:.0f}')} | "
                     f"{fmt(r['rss_over_plan'], '{:.2f}')} |")
    lines += ["", "Plan from: " + ", ".join(sorted({r["plan_source"] for r in rows}))]
    (args.out / "big.md").write_text("\n".join(lines) + "\n")
    return res


def log(args, msg: str) -> None:
    if not args.quiet:
        print(f"[mf_bench] {msg}", file=sys.stderr, flush=True)


def int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def float_list(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="report folder")
    p.add_argument("--rotor", help="rotor binary (default: build/release, then build/ci)")
    p.add_argument("--mpiexec", default="mpiexec")
    p.add_argument("--python", default=sys.executable, help="runs the ALS peer and the tools")
    p.add_argument("--ratings", type=Path, help="a ratings file, split 80/20 by user here")
    p.add_argument("--train", type=Path)
    p.add_argument("--test", type=Path)
    p.add_argument("--test-fraction", type=float, default=0.2)
    p.add_argument("--solvers", type=lambda s: s.split(","), default=["ccd", "sgd"])
    p.add_argument("--threads", type=int_list, default=[1, 2], help="thread counts (1,2)")
    p.add_argument("--rank", type=int, default=64)
    p.add_argument("--lambda", dest="lam", type=float, help="default: rotor's and the peer's")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--als-iterations", type=int, default=15)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--targets", type=float_list, default=list(DEFAULT_TARGETS))
    p.add_argument("--plot-targets", type=float_list, default=[0.88])
    p.add_argument("--no-als", dest="als", action="store_false")
    p.add_argument("--libmf", type=Path, help="a directory with LIBMF's mf-train: run it too")
    p.add_argument("--no-mpi", dest="mpi", action="store_false")
    p.add_argument("--rotor-arg", action="append", default=[],
                   help="one more argument for every rotor run (repeatable)")
    p.add_argument("--verbose-rotor", action="store_true",
                   help="run rotor without --quiet (its start line gives the memory plan)")
    p.add_argument("--big", action="store_true", help="the large-K mode instead")
    p.add_argument("--big-train", type=Path, help="ratings for --big (default: a 1e7 synthetic)")
    p.add_argument("--big-ranks", type=int_list, default=[16, 128, 1024])
    p.add_argument("--big-iterations", type=int, default=3)
    p.add_argument("--big-repeats", type=int, default=1)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.rank < 1 or args.iterations < 1:
        p.error("--repeats, --rank and --iterations must be >= 1")
    if (args.train is None) != (args.test is None) and args.train is None:
        p.error("--test needs --train")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    args.rotor = find_rotor(args.rotor)
    if args.mpi and not args.big and shutil.which(args.mpiexec) is None:
        log(args, f"no {args.mpiexec}: the 2-rank runs are skipped")
        args.mpi = False
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        res = big_mode(args) if args.big else ladder_mode(args)
    except RunError as e:
        print(f"mf_bench.py: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print((args.out / ("big.md" if args.big else "report.md")).read_text())
    return 0 if res else 1


if __name__ == "__main__":
    sys.exit(main())
