#!/usr/bin/env python3
"""Two rotor binaries side by side: LDA training throughput of a baseline and a candidate build.

Made to check that a refactoring costs no speed (docs/BENCHMARKS.md, "Comparing two builds
of rotor"): the same `rotor lda train` command, same corpus, K, seed and
iterations, runs with each binary in turn, A B A B ... (baseline first), so that a noisy machine
hurts both alike. Configurations (--configs, all by default):

  1x1   one process, --threads 1
  1x2   one process, --threads 2
  2x1   mpiexec -n 2 --oversubscribe, --threads 1 --no-timer --no-rebalance per rank

Each run writes --metrics; its throughput is Σ tokens_sampled / Σ iteration_s over the
iterations after --skip (the first sweeps, while the topic rows are still dense, are left out;
the final evaluation is not part of iteration_s). Peak RSS is GNU time's %M of the child: under
mpiexec, the largest single process, not the sum over ranks. Seeds are 1 + repeat for both
binaries, so a candidate that does the same work ends 1x1 and 2x1 with the same final
log-likelihood as the baseline (1x2's dynamic block order differs from run to run).

    bench/engine_compare.py --baseline /work/baseline/build/apps/rotor \\
        --candidate build/release/apps/rotor --corpus /work/data/kernel/train/docword.txt.gz \\
        --topics 100 --iterations 10 --skip 2 --repeats 3 --json /tmp/engine-compare/result.json

(18 runs, about 5 minutes on an idle 2-core machine.)

Prints a Markdown table on stdout (medians over the repeats, the candidate / baseline ratio of
the medians, the per-repeat ratios, every run's value and the peak RSS); progress goes to
stderr. --json FILE also writes the settings, every run and the summary.
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_lib.rotor_run import RunError, read_metrics, run_timed  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_CORPUS = "/work/data/kernel/train/docword.txt.gz"
SOTU_CORPUS = os.path.join(REPO, "data", "sotu-para", "train", "docword.txt.gz")
# Corpora with at least this many non-zero (document, word) entries count as large: fewer
# iterations by default (the kernel corpus: 4.3M entries, about 2 s per sweep on one thread).
LARGE_NNZ = 1_000_000

CONFIGS = {
    # name: (ranks, threads per rank, extra flags, description)
    "1x1": (1, 1, [], "single node, 1 thread"),
    "1x2": (1, 2, [], "single node, 2 threads"),
    "2x1": (2, 1, ["--no-timer", "--no-rebalance"], "2 ranks x 1 thread, --no-timer --no-rebalance"),
}
BINARIES = ("baseline", "candidate")


def corpus_nnz(path):
    """The NNZ line of a UCI docword file's header (lines D, W, NNZ)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        header = [f.readline() for _ in range(3)]
    try:
        return int(header[2])
    except (IndexError, ValueError):
        sys.exit(f"error: {path} does not start with a UCI header (D, W, NNZ lines)")


def check_inputs(args):
    """Exits with a clear message when a binary, the corpus, GNU time or mpiexec is missing."""
    for name in BINARIES:
        path = getattr(args, name)
        if not os.path.isfile(path):
            sys.exit(f"error: --{name} {path}: no such file (build it first, see --help)")
        if not os.access(path, os.X_OK):
            sys.exit(f"error: --{name} {path}: not executable")
    if not os.path.isfile(args.corpus):
        sys.exit(f"error: --corpus {args.corpus}: no such file")
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("error: /usr/bin/time (GNU time, Debian package `time`) is needed for peak RSS")
    if any(CONFIGS[c][0] > 1 for c in args.configs) and not shutil.which(args.mpiexec):
        sys.exit(f"error: {args.mpiexec} not found (needed by 2x1; leave it out with --configs)")


def command(args, binary, config, rep, metrics, model):
    ranks, threads, extra, _ = CONFIGS[config]
    cmd = [binary, "lda", "train", "--corpus", args.corpus, "--topics", str(args.topics),
           "--iterations", str(args.iterations), "--threads", str(threads), "--seed", str(rep + 1),
           "--eval-every", "0", "--metrics", metrics, "--out", model, "--overwrite", "-q"] + extra
    if ranks > 1:
        cmd = [args.mpiexec, "-n", str(ranks), "--oversubscribe"] + cmd
    return cmd


def run_one(args, which, config, rep):
    """One training run; returns its figures (see the module docstring)."""
    stem = os.path.join(args.out, f"{config}-{which}-r{rep}")
    metrics, model = stem + ".metrics.jsonl", stem + ".model"
    if os.path.exists(metrics):
        os.remove(metrics)
    cmd = command(args, getattr(args, which), config, rep, metrics, model)
    wall, peak_mb, _ = run_timed(cmd)
    if not args.keep_models:
        shutil.rmtree(model, ignore_errors=True)
    recs = read_metrics(metrics)
    if len(recs) <= args.skip:
        raise RunError(f"{metrics}: {len(recs)} iterations, none left after --skip {args.skip}")
    steady = recs[args.skip:]
    evals = [r["loglik_per_token"] for r in recs if "loglik_per_token" in r]
    return {
        "config": config, "binary": which, "rep": rep, "command": cmd, "wall_s": wall,
        "peak_rss_mb": peak_mb,
        "tokens_per_s": sum(r["tokens_sampled"] for r in steady) / sum(r["iteration_s"] for r in steady),
        "iterations_measured": len(steady),
        # A figure less sensitive to one disturbed sweep, for noisy machines (JSON only).
        "median_iteration_tokens_per_s": statistics.median(r["tokens_sampled"] / r["iteration_s"]
                                                           for r in steady),
        "final_loglik_per_token": evals[-1] if evals else None,
    }


def summarize(runs, configs):
    """Per configuration: medians, ratio of the medians, per-repeat ratios, per-run values."""
    out = []
    for config in configs:
        by = {w: [r for r in runs if r["config"] == config and r["binary"] == w] for w in BINARIES}
        tps = {w: [r["tokens_per_s"] for r in by[w]] for w in BINARIES}
        med = {w: statistics.median(tps[w]) for w in BINARIES}
        same_ll = all(a["final_loglik_per_token"] is not None
                      and a["final_loglik_per_token"] == b["final_loglik_per_token"]
                      for a, b in zip(by["baseline"], by["candidate"]))
        out.append({
            "config": config, "description": CONFIGS[config][3],
            "baseline_tokens_per_s": med["baseline"], "candidate_tokens_per_s": med["candidate"],
            "ratio": med["candidate"] / med["baseline"],
            "ratio_per_repeat": [c / b for b, c in zip(tps["baseline"], tps["candidate"])],
            "baseline_runs": tps["baseline"], "candidate_runs": tps["candidate"],
            "baseline_peak_rss_mb": max(r["peak_rss_mb"] for r in by["baseline"]),
            "candidate_peak_rss_mb": max(r["peak_rss_mb"] for r in by["candidate"]),
            "same_final_loglik": same_ll,
        })
    return out


def print_table(args, summary, load_before, load_after, elapsed):
    m = lambda x: f"{x / 1e6:.3f}M"  # noqa: E731
    print(f"corpus `{args.corpus}`, K = {args.topics}, {args.iterations} iterations, throughput "
          f"over iterations {args.skip + 1}-{args.iterations}, {args.repeats} repeat(s) "
          f"(baseline and candidate alternating), {elapsed / 60:.1f} min; "
          f"load average {load_before:.2f} before, {load_after:.2f} after\n")
    print(f"- baseline: `{args.baseline}`\n- candidate: `{args.candidate}`\n")
    print("| config | baseline tok/s (median) | candidate tok/s (median) | ratio | ratio per repeat | "
          "baseline runs | candidate runs | peak RSS MiB (base / cand) | same final loglik |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in summary:
        ok = "" if s["ratio"] >= 1 - args.tolerance else " **below**"
        print(f"| {s['config']} ({s['description']}) | {m(s['baseline_tokens_per_s'])} | "
              f"{m(s['candidate_tokens_per_s'])} | {s['ratio']:.3f}{ok} | "
              f"{', '.join(f'{x:.3f}' for x in s['ratio_per_repeat'])} | "
              f"{', '.join(m(x) for x in s['baseline_runs'])} | "
              f"{', '.join(m(x) for x in s['candidate_runs'])} | "
              f"{s['baseline_peak_rss_mb']:.0f} / {s['candidate_peak_rss_mb']:.0f} | "
              f"{'yes' if s['same_final_loglik'] else 'no'} |")
    print(f"\nratio = candidate / baseline median tokens/s; **below** marks a ratio under "
          f"{1 - args.tolerance:.2f} (tolerance {args.tolerance:.0%}). Same final loglik is "
          f"expected for 1x1 and 2x1 (fixed block order), not for 1x2.")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", required=True, help="rotor binary of the reference build")
    p.add_argument("--candidate", required=True, help="rotor binary under test")
    p.add_argument("--corpus", default=None,
                   help=f"UCI docword file (default: {KERNEL_CORPUS} if present, built by "
                        f"tools/data/make_kernel.py, else data/sotu-para/train/docword.txt.gz)")
    p.add_argument("--topics", "-k", type=int, default=100)
    p.add_argument("--iterations", "-n", type=int, default=None,
                   help=f"sweeps per run (default: 10 on a corpus of >= {LARGE_NNZ:,} non-zeros "
                        "such as kernel, 60 on a smaller one such as sotu-para)")
    p.add_argument("--skip", type=int, default=None,
                   help="first iterations left out of the throughput (default: 2 with 10 "
                        "iterations on a large corpus, 5 on a small one)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    p.add_argument("--mpiexec", default="mpiexec")
    p.add_argument("--tolerance", type=float, default=0.03,
                   help="ratios below 1 - tolerance are marked (default 0.03)")
    p.add_argument("--out", default="/tmp/engine-compare", help="metrics files go here")
    p.add_argument("--keep-models", action="store_true", help="keep each run's model directory")
    p.add_argument("--json", default=None, help="also write settings, runs and summary here")
    args = p.parse_args()
    if args.corpus is None:
        args.corpus = KERNEL_CORPUS if os.path.isfile(KERNEL_CORPUS) else SOTU_CORPUS
    check_inputs(args)
    large = corpus_nnz(args.corpus) >= LARGE_NNZ
    if args.iterations is None:
        args.iterations = 10 if large else 60
    if args.skip is None:
        args.skip = 2 if large else 5
    if args.repeats < 1 or args.skip < 0 or args.skip >= args.iterations:
        p.error("need --repeats >= 1 and 0 <= --skip < --iterations")
    return args


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    # Open MPI refuses to start as root without these; they change nothing else.
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    load_before, t0 = os.getloadavg()[0], time.monotonic()
    runs = []
    try:
        for rep in range(args.repeats):
            for config in args.configs:
                for which in BINARIES:
                    r = run_one(args, which, config, rep)
                    runs.append(r)
                    print(f"# r{rep} {config} {which}: {r['tokens_per_s'] / 1e6:.3f}M tok/s, "
                          f"{r['wall_s']:.1f} s wall, {r['peak_rss_mb']:.0f} MiB", file=sys.stderr)
    except RunError as e:
        sys.exit(f"error: run failed: {e}")
    elapsed, load_after = time.monotonic() - t0, os.getloadavg()[0]
    summary = summarize(runs, args.configs)
    print_table(args, summary, load_before, load_after, elapsed)
    if args.json:
        settings = {k: v for k, v in vars(args).items() if k != "json"}
        settings.update(load_before=load_before, load_after=load_after, elapsed_s=elapsed)
        with open(args.json, "w") as f:
            json.dump({"settings": settings, "runs": runs, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
