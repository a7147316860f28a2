#!/usr/bin/python3
"""The papers' measurements from rotor metrics files (and, when present, scheduler traces).

    bench/plot_paper.py [--out DIR] [--skip N] [--threads T1,T2,...] [--label L]... METRICS...

Each METRICS is a `rotor lda train --metrics FILE` JSON-lines file, usually of the same corpus
and K at 1 and 2 threads. When `--trace` was given to the same run, put the trace beside the
metrics file as <name>.trace.json (for <name>.metrics.jsonl or <name>.jsonl): it gives each
thread's compute seconds per iteration exactly and the thread count; otherwise pass --threads
(one per file, same order). --label names the runs (one per file; default "N threads"). Writes into --out (default .):

  paper_tables.md              per-thread time breakdown, HarpLDA+ Table 4: seconds per thread,
                               summed over the iterations after --skip, split into effective
                               (sampling inside blocks), wait (inside the iteration's block span
                               but not sampling: waiting for a free block, or idle at the end)
                               and overhead (the rest of the iteration: reconciling n_k, setting
                               up the sweep); plus per-run medians of the per-iteration ratios
  load_overhead.png            load_cv and overhead_ratio per iteration (HarpLDA+ Fig. 6)
  throughput_convergence.png   tokens/s per iteration, and loglik/token against training time
  s_error.png                  s_error per iteration (STRADS Fig. 2: staleness of n_k)

Without a trace, a run's per-thread effective seconds come from effective_ratio and load_cv
(exact for 1 and 2 threads: c = mean ± std), and wait and overhead are reported together.

Example (the commands behind docs/BENCHMARKS.md):
    for t in 1 2; do rotor lda train --corpus /work/data/kernel/train/docword.txt.gz -k 100 \\
        -n 30 -t $t --eval-every 2 --metrics kernel-t$t.metrics.jsonl \\
        --trace kernel-t$t.trace.json --out model-t$t -q; done
    bench/plot_paper.py --out docs/img kernel-t1.metrics.jsonl kernel-t2.metrics.jsonl
"""
import argparse
import json
import os
import statistics
import sys


def read_metrics(path):
    with open(path) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    if not recs:
        sys.exit(f"plot_paper.py: {path} has no records")
    for key in ("iter", "time_s", "iteration_s", "tokens_per_s", "effective_ratio", "load_cv",
                "overhead_ratio", "s_error"):
        if key not in recs[0]:
            sys.exit(f"plot_paper.py: {path}:1: no '{key}' (is it a rotor metrics file?)")
    return recs


def trace_path(metrics):
    for suffix in (".metrics.jsonl", ".jsonl"):
        if metrics.endswith(suffix):
            path = metrics[: -len(suffix)] + ".trace.json"
            if os.path.exists(path):
                return path
    return None


def read_trace(path):
    """{iter: {worker: [(start_s, end_s), ...]}} and the number of workers."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    workers = sum(1 for e in events if e.get("ph") == "M" and e.get("name") == "thread_name")
    runs = {}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "block":
            continue
        start = e["ts"] / 1e6
        runs.setdefault(e["args"]["iter"], {}).setdefault(e["tid"], []).append(
            (start, start + e["dur"] / 1e6))
    return runs, workers


def breakdown(recs, trace, threads, skip):
    """Per thread: [effective, wait, overhead] seconds summed over the iterations after `skip`
    (wait is None without a trace: it is then inside overhead)."""
    totals = [[0.0, 0.0 if trace else None, 0.0] for _ in range(threads)]
    for r in recs[skip:]:
        wall = r["iteration_s"]
        if trace:
            blocks = trace.get(r["iter"], {})
            spans = [b for w in blocks.values() for b in w]
            span = (max(e for _, e in spans) - min(s for s, _ in spans)) if spans else 0.0
            for w in range(threads):
                compute = sum(e - s for s, e in blocks.get(w, []))
                totals[w][0] += compute
                totals[w][1] += max(0.0, span - compute)
                totals[w][2] += max(0.0, wall - span)
        else:
            mean = r["effective_ratio"] * wall
            std = r["load_cv"] * mean
            # P = 1: c = mean; P = 2: the population std of two values is half their gap.
            computes = [mean] if threads == 1 else [mean + std, mean - std]
            if threads > 2:
                computes = [mean] * threads  # not recoverable: the mean for everyone
            for w in range(threads):
                totals[w][0] += computes[w]
                totals[w][2] += max(0.0, wall - computes[w])
    return totals


def tables(runs, skip):
    out = [f"### Per-thread time breakdown (iterations after the first {skip})", "",
           "| run | thread | effective s | wait s | overhead s | effective % | wait % | "
           "overhead % |", "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        for w, (eff, wait, over) in enumerate(run["breakdown"]):
            total = eff + (wait or 0) + over
            pct = (lambda x: "–" if x is None else f"{100 * x / total:.1f}") if total else str
            wait_txt = "(in overhead)" if wait is None else f"{wait:.2f}"
            out.append(f"| {run['label']} | {w} | {eff:.2f} | {wait_txt} | {over:.2f} | "
                       f"{pct(eff)} | {pct(wait)} | {pct(over)} |")
    out += ["", f"### Medians per iteration (iterations after the first {skip})", "",
            "| run | threads | iterations | s/iteration | tokens/s | effective_ratio | load_cv | "
            "overhead_ratio | s_error | final loglik/token | training s |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        rs = run["recs"][skip:] or run["recs"]

        def med(key):
            return statistics.median(r[key] for r in rs)

        evals = [r for r in run["recs"] if "loglik_per_token" in r]
        ll = f"{evals[-1]['loglik_per_token']:.4f}" if evals else "–"
        out.append(f"| {run['label']} | {run['threads']} | {len(run['recs'])} | "
                   f"{med('iteration_s'):.3f} | {med('tokens_per_s'):,.0f} | "
                   f"{med('effective_ratio'):.3f} | {med('load_cv'):.3f} | "
                   f"{med('overhead_ratio'):.3f} | {med('s_error'):.2e} | {ll} | "
                   f"{run['recs'][-1]['time_s']:.1f} |")
    if len(runs) >= 2:
        base = runs[0]
        out += ["", f"Speed-up against {base['label']} (median tokens/s after the first {skip} "
                "iterations):", ""]
        b = statistics.median(r["tokens_per_s"] for r in base["recs"][skip:] or base["recs"])
        for run in runs[1:]:
            t = statistics.median(r["tokens_per_s"] for r in run["recs"][skip:] or run["recs"])
            out.append(f"- {run['label']}: {t / b:.2f}×")
    return "\n".join(out) + "\n"


def plots(runs, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    def iters(run, key):
        return [r["iter"] for r in run["recs"]], [r[key] for r in run["recs"]]

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for run in runs:
        a1.plot(*iters(run, "load_cv"), marker=".", label=run["label"])
        a2.plot(*iters(run, "overhead_ratio"), marker=".", label=run["label"])
    a1.set(xlabel="iteration", ylabel="load CV (std/mean of per-thread sampling s)",
           title="Load balance")
    a2.set(xlabel="iteration", ylabel="overhead ratio (mean of 1 − sampling s / iteration s)",
           title="Overhead")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    for a in (a1, a2):
        a.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.savefig(os.path.join(out_dir, "load_overhead.png"), dpi=110)
    plt.close(fig)

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for run in runs:
        a1.plot(*iters(run, "tokens_per_s"), marker=".", label=run["label"])
        ev = [r for r in run["recs"] if "loglik_per_token" in r]
        a2.plot([r["time_s"] for r in ev], [r["loglik_per_token"] for r in ev], marker="o",
                markersize=3, label=run["label"])
    a1.set(xlabel="iteration", ylabel="tokens sampled per second", title="Throughput")
    a1.set_ylim(bottom=0)
    a2.set(xlabel="training time, s", ylabel="log p(w, z) per token",
           title="Convergence (training log-likelihood)")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    a1.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.savefig(os.path.join(out_dir, "throughput_convergence.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for run in runs:
        ax.plot(*iters(run, "s_error"), marker=".", label=run["label"])
    ax.set(xlabel="iteration", ylabel="s_error Δ_t = Σ_p ‖ñ^p − n‖₁ / (P·N)",
           title="Staleness of the workers' topic totals (STRADS eq. 1)")
    ax.set_yscale("symlog", linthresh=1e-6)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "s_error.png"), dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("metrics", nargs="+")
    p.add_argument("--out", default=".")
    p.add_argument("--skip", type=int, default=1,
                   help="leading iterations left out of tables (the first sweeps are dense)")
    p.add_argument("--threads", default="",
                   help="comma-separated thread counts, one per file (files without a trace)")
    p.add_argument("--label", action="append", default=[], help="one per file, in order")
    args = p.parse_args()
    if args.label and len(args.label) != len(args.metrics):
        p.error("give one --label per metrics file")
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        p.error(f"--threads {args.threads!r}: expected integers separated by commas")
    if args.skip < 0:
        p.error("--skip must be >= 0")

    runs = []
    for i, path in enumerate(args.metrics):
        recs = read_metrics(path)
        tpath = trace_path(path)
        trace, threads = read_trace(tpath) if tpath else (None, None)
        if threads is None:
            if i >= len(args.threads):
                p.error(f"{path}: no trace beside it; give its thread count with --threads")
            threads = args.threads[i]
        label = args.label[i] if args.label else f"{threads} thread{'s' * (threads > 1)}"
        if args.skip >= len(recs):
            p.error(f"{path}: --skip {args.skip} leaves no iteration of {len(recs)}")
        runs.append({"label": label, "threads": threads, "recs": recs, "trace": tpath,
                     "breakdown": breakdown(recs, trace, threads, args.skip)})
    os.makedirs(args.out, exist_ok=True)
    text = tables(runs, args.skip)
    with open(os.path.join(args.out, "paper_tables.md"), "w") as f:
        f.write(text)
    plots(runs, args.out)
    print(text)


if __name__ == "__main__":
    main()
