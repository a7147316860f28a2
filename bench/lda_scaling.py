#!/usr/bin/env python3
"""End-to-end LDA benchmark of rotor: throughput, convergence and memory against threads and K.

Runs `rotor lda train` on one corpus for each (K, threads) configuration, the configurations
interleaved and repeated (--repeats, default 3) so that a noisy machine hurts every one alike,
and reports medians: seconds per iteration, tokens/s, effective_ratio, load_cv, overhead_ratio,
the final loglik/token, and peak RSS. Ratios are computed between runs of the same repeat
(2 threads against 1, K=1000 against K=100), then their median is taken.

    bench/lda_scaling.py --rotor build/release/apps/rotor --corpus /work/data/kernel/train/docword.txt.gz \
        --topics 100 1000 --threads 1 2 --iterations 20 --out bench-results/kernel

Writes <out>/runs.jsonl (one line per run), <out>/<config>-r<i>.metrics.jsonl and a Markdown
summary on stdout.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def run_one(args, k, threads, rep, out):
    name = f"k{k}-t{threads}-r{rep}"
    metrics = os.path.join(out, name + ".metrics.jsonl")
    model = os.path.join(out, name + ".model")
    cmd = [args.rotor, "lda", "train", "--corpus", args.corpus, "--topics", str(k),
           "--iterations", str(args.iterations), "--threads", str(threads), "--seed", str(rep + 1),
           "--eval-every", str(args.eval_every), "--metrics", metrics, "--out", model, "--overwrite", "-q"]
    if args.vocab:
        cmd += ["--vocab", args.vocab]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    # /usr/bin/time -f %M reports the peak RSS of this child alone.
    proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"run failed: {' '.join(cmd)}\n{proc.stderr}")
    peak_kb = int(proc.stderr.strip().splitlines()[-1])
    recs = [json.loads(line) for line in open(metrics)]
    # Skip the first iterations (topic rows are still dense) when averaging throughput.
    steady = recs[min(args.skip, len(recs) - 1):]
    evals = [r for r in recs if "loglik_per_token" in r]
    return {
        "k": k, "threads": threads, "rep": rep, "wall_s": wall, "peak_rss_mb": peak_kb / 1024,
        "s_per_iter": statistics.median(r["iteration_s"] for r in steady),
        "tokens_per_s": statistics.median(r["tokens_per_s"] for r in steady),
        "effective_ratio": statistics.median(r["effective_ratio"] for r in steady),
        # Whole-run figures over the same iterations, the evaluation sweeps' tails included:
        # Σ tokens / Σ wall and Σ sampling / (threads × Σ wall).
        "run_tokens_per_s": sum(r["tokens_sampled"] for r in steady) / sum(r["iteration_s"] for r in steady),
        "run_effective_ratio": sum(r["effective_ratio"] * r["iteration_s"] for r in steady)
        / sum(r["iteration_s"] for r in steady),
        "load_cv": statistics.median(r["load_cv"] for r in steady),
        "overhead_ratio": statistics.median(r["overhead_ratio"] for r in steady),
        "final_loglik_per_token": evals[-1]["loglik_per_token"],
        "train_time_s": recs[-1]["time_s"],
        "user_s": resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before.ru_utime,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rotor", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--vocab", default="")
    p.add_argument("--topics", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--skip", type=int, default=3, help="iterations left out of throughput medians")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)

    runs = []
    with open(os.path.join(args.out, "runs.jsonl"), "w") as log:
        for rep in range(args.repeats):
            for k in args.topics:
                for t in args.threads:
                    r = run_one(args, k, t, rep, args.out)
                    runs.append(r)
                    log.write(json.dumps(r) + "\n")
                    log.flush()
                    print(f"# {r['k']=} {r['threads']=} rep {rep}: {r['tokens_per_s']/1e6:.2f}M tok/s, "
                          f"{r['s_per_iter']:.2f} s/iter, ll/token {r['final_loglik_per_token']:.4f}",
                          file=sys.stderr)

    def med(k, t, key):
        return statistics.median(r[key] for r in runs if r["k"] == k and r["threads"] == t)

    print(f"corpus: `{args.corpus}`, {args.iterations} iterations, medians of {args.repeats} runs\n")
    print("Per-iteration medians (s/iter ... overhead_ratio) and whole-run figures over the same "
          "iterations (run tokens/s, run effective_ratio: evaluation sweeps included).\n")
    print("| K | threads | s/iter | tokens/s | effective_ratio | load_cv | overhead_ratio | run tokens/s | "
          "run effective_ratio | final loglik/token | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in args.topics:
        for t in args.threads:
            print(f"| {k} | {t} | {med(k,t,'s_per_iter'):.3f} | {med(k,t,'tokens_per_s')/1e6:.2f}M | "
                  f"{med(k,t,'effective_ratio'):.3f} | {med(k,t,'load_cv'):.3f} | {med(k,t,'overhead_ratio'):.3f} | "
                  f"{med(k,t,'run_tokens_per_s')/1e6:.2f}M | {med(k,t,'run_effective_ratio'):.3f} | "
                  f"{med(k,t,'final_loglik_per_token'):.4f} | {med(k,t,'peak_rss_mb'):.0f} |")
    print()
    t_lo, t_hi = min(args.threads), max(args.threads)
    if t_lo != t_hi:
        for k in args.topics:
            ratios = []
            for rep in range(args.repeats):
                a = [r for r in runs if r["k"] == k and r["threads"] == t_lo and r["rep"] == rep][0]
                b = [r for r in runs if r["k"] == k and r["threads"] == t_hi and r["rep"] == rep][0]
                ratios.append(b["run_tokens_per_s"] / a["run_tokens_per_s"])
            print(f"- K = {k}: whole-run throughput {t_hi} threads / {t_lo} thread = {statistics.median(ratios):.2f}x "
                  f"(per repeat: {', '.join(f'{x:.2f}' for x in ratios)})")
    k_lo, k_hi = min(args.topics), max(args.topics)
    if k_lo != k_hi:
        for t in args.threads:
            ratios = []
            for rep in range(args.repeats):
                a = [r for r in runs if r["k"] == k_lo and r["threads"] == t and r["rep"] == rep][0]
                b = [r for r in runs if r["k"] == k_hi and r["threads"] == t and r["rep"] == rep][0]
                ratios.append(b["s_per_iter"] / a["s_per_iter"])
            print(f"- {t} thread(s): per-token time K = {k_hi} / K = {k_lo} = {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
