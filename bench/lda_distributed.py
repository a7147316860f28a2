#!/usr/bin/env python3
"""MPI benchmark of rotor: P ranks x 1 thread against 1 rank x P threads, with and without the
timer and a simulated straggler (docs/distributed.md, "Measurements").

Each configuration runs `rotor lda train` on the same corpus, seed and iteration count; the
configurations are interleaved and repeated (--repeats) so that a noisy machine hurts each alike.
For every run it reports, over the iterations after --skip: tokens/s (sum of tokens sampled /
sum of iteration seconds), the overhead ratio (time-weighted mean), the per-iteration compute /
communication / wait breakdown (medians), the processed ratio, and the training seconds needed
to reach each evaluated log-likelihood of the reference configuration (the first one given).
With --heldout the quality is the held-out perplexity (`rotor lda train --heldout`, scored at
every evaluation) instead: the seconds to reach each perplexity the reference reached.

    bench/lda_distributed.py --rotor build/release/apps/rotor \\
        --corpus /work/data/kernel/train/docword.txt.gz --topics 100 --iterations 30 \\
        --eval-every 5 --repeats 3 --out /tmp/bench/dist

Writes <out>/<config>-r<i>.metrics.jsonl and a Markdown summary on stdout.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CONFIGS = {
    # name: (ranks, threads per rank, extra flags)
    "1x2": (1, 2, []),
    "2x1-notimer": (2, 1, ["--no-timer"]),
    "2x1-timer": (2, 1, []),
    "2x1-timer-always": (2, 1, ["--timer-always"]),
    "2x1-timer-adaptive": (2, 1, ["--no-timer-always"]),
    "2x1-timer-straggler5": (2, 1, ["--simulate-straggler", "1:5"]),
    "2x1-notimer-straggler5": (2, 1, ["--no-timer", "--simulate-straggler", "1:5"]),
    "2x1-timer-always-straggler5": (2, 1, ["--timer-always", "--simulate-straggler", "1:5"]),
    "2x1-timer-adaptive-straggler5": (2, 1, ["--no-timer-always", "--simulate-straggler", "1:5"]),
    "2x1-timer-straggler5-static": (2, 1, ["--simulate-straggler", "1:5", "--no-rebalance"]),
    "2x1-notimer-straggler5-static": (2, 1, ["--no-timer", "--simulate-straggler", "1:5",
                                             "--no-rebalance"]),
}


def run_one(args, name, rep):
    ranks, threads, extra = CONFIGS[name]
    metrics = os.path.join(args.out, f"{name}-r{rep}.metrics.jsonl")
    model = os.path.join(args.out, f"{name}-r{rep}.model")
    iterations = args.iterations * (args.straggler_factor if "straggler" in name else 1)
    cmd = [args.rotor, "lda", "train", "--corpus", args.corpus, "--topics", str(args.topics),
           "--iterations", str(iterations), "--threads", str(threads), "--seed", str(rep + 1),
           "--eval-every", str(args.eval_every), "--metrics", metrics, "--out", model, "--overwrite", "-q"] + extra
    if args.heldout:
        cmd += ["--heldout", args.heldout]
    if ranks > 1:
        cmd = [args.mpiexec, "-n", str(ranks), "--bind-to", "core", "--oversubscribe"] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"run failed: {' '.join(cmd)}\n{proc.stderr}")
    recs = [json.loads(line) for line in open(metrics)]
    steady = recs[min(args.skip, len(recs) - 1):]
    wall = sum(r["iteration_s"] for r in steady)
    out = {
        "name": name, "rep": rep,
        "tokens_per_s": sum(r["tokens_sampled"] for r in steady) / wall,
        "overhead_ratio": sum(r["overhead_ratio"] * r["iteration_s"] for r in steady) / wall,
        "iteration_s": statistics.median(r["iteration_s"] for r in steady),
        "processed_ratio": statistics.median(r["processed_ratio"] for r in steady),
        # Higher is better: the log-likelihood per token, or minus the held-out perplexity.
        "evals": [(r["iter"], r["time_s"], -r["heldout_perplexity"] if args.heldout else r["loglik_per_token"])
                  for r in recs if ("heldout_perplexity" if args.heldout else "loglik_per_token") in r],
    }
    for key in ("compute_s", "comm_s", "wait_s"):
        if key in steady[0]:
            out[key] = statistics.median(r[key] for r in steady)
    return out


def time_to(evals, target):
    """Training seconds of the first evaluation at or above `target`, None if never reached."""
    for _, t, ll in evals:
        if ll >= target:
            return t
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rotor", required=True)
    p.add_argument("--mpiexec", default="mpiexec")
    p.add_argument("--corpus", required=True)
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--skip", type=int, default=5, help="iterations left out of throughput figures")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--straggler-factor", type=int, default=5,
                   help="straggler runs get this many times the iterations, to reach the targets")
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    p.add_argument("--heldout", help="held-out docword: the quality is its perplexity")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)

    runs = []
    for rep in range(args.repeats):
        for name in args.configs:
            r = run_one(args, name, rep)
            runs.append(r)
            print(f"# {name} rep {rep}: {r['tokens_per_s']/1e6:.2f}M tok/s, overhead {r['overhead_ratio']:.3f}, "
                  f"final ll {r['evals'][-1][2]:.4f} at {r['evals'][-1][1]:.1f} s", file=sys.stderr)

    def med(name, key):
        vals = [r[key] for r in runs if r["name"] == name and key in r]
        return statistics.median(vals) if vals else None

    def fmt(x, f="{:.3f}"):
        return "-" if x is None else f.format(x)

    print(f"corpus: `{args.corpus}`, K = {args.topics}, {args.iterations} iterations "
          f"(straggler runs: {args.iterations * args.straggler_factor}), medians of {args.repeats} runs, "
          f"iterations after {args.skip}\n")
    print("| configuration | tokens/s | overhead ratio | s/iteration | compute / comm / wait s per iteration | processed ratio |")
    print("|---|---|---|---|---|---|")
    for name in args.configs:
        br = "-"
        if med(name, "compute_s") is not None:
            br = f"{med(name, 'compute_s'):.3f} / {med(name, 'comm_s'):.4f} / {med(name, 'wait_s'):.4f}"
        print(f"| {name} | {med(name, 'tokens_per_s')/1e6:.2f}M | {fmt(med(name, 'overhead_ratio'))} | "
              f"{fmt(med(name, 'iteration_s'))} | {br} | {fmt(med(name, 'processed_ratio'), '{:.2f}')} |")
    print()
    ref = args.configs[0]
    for name in args.configs[1:]:
        ratios = []
        for rep in range(args.repeats):
            a = [r for r in runs if r["name"] == ref and r["rep"] == rep][0]
            b = [r for r in runs if r["name"] == name and r["rep"] == rep][0]
            ratios.append(b["tokens_per_s"] / a["tokens_per_s"])
        print(f"- {name} / {ref}: throughput {statistics.median(ratios):.2f}x "
              f"(per repeat: {', '.join(f'{x:.2f}' for x in ratios)})")
    # Time to the log-likelihood the reference reached at each of its evaluations (same repeat).
    quality = "held-out perplexity" if args.heldout else "log-likelihood/token"
    print(f"\nTraining seconds to reach the {quality} of `{ref}` at its evaluations "
          f"(median over repeats; '-' = not reached):\n")
    ref_evals = [r["evals"] for r in runs if r["name"] == ref]
    iters = [it for it, _, _ in ref_evals[0]]
    print("| target (iteration of " + ref + ") | " + " | ".join(args.configs) + " |")
    print("|---|" + "---|" * len(args.configs))
    for i, it in enumerate(iters):
        cells = []
        for name in args.configs:
            ts = []
            for rep in range(args.repeats):
                target = [r for r in runs if r["name"] == ref and r["rep"] == rep][0]["evals"][i][2]
                run = [r for r in runs if r["name"] == name and r["rep"] == rep][0]
                ts.append(time_to(run["evals"], target))
            got = [t for t in ts if t is not None]
            cells.append(fmt(statistics.median(got), "{:.1f} s") if len(got) == len(ts) else "-")
        target_med = statistics.median(
            [r["evals"][i][2] for r in runs if r["name"] == ref])
        shown = f"{-target_med:.1f}" if args.heldout else f"{target_med:.4f}"
        print(f"| {shown} (iter {it}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
