#!/usr/bin/env python3
"""How a start (--init) shapes the model, not only the training curve (issue 16).

    bench/lda/init_heldout.py --corpus DIR --topics K --threads T --iterations N --rotor BIN
        --variant LABEL=FLAGS [--variant ...] [--seeds 1,2] --work DIR [--md FILE]

DIR holds train/docword.txt[.gz] and heldout/docword.txt[.gz] (tools/data/*.py write both).
Every variant trains N sweeps with α = 50/K, β = 0.01 and T threads for each seed, then
`rotor lda eval` scores the held-out split by document completion. One row per variant, medians
over the seeds: training seconds (rotor's own clock), the final log p(w,z)/token and log
p(w|z)/token, and the held-out perplexity. The training log-likelihood alone can mislead: a start
that leaves each word on few topics is far ahead on log p(w,z) and behind held out
(docs/sampler.md, "Sequential initialisation"). Runs one after another, variants interleaved
within a seed.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
from pathlib import Path


def corpus_file(root: Path, split: str) -> Path:
    for name in ("docword.txt.gz", "docword.txt"):
        path = root / split / name
        if path.exists():
            return path
    sys.exit(f"init_heldout.py: no {split}/docword.txt[.gz] under {root}")


def run(args, label: str, flags: str, seed: int, work: Path) -> dict:
    out = work / f"{label}-{seed}"
    metrics = work / f"{label}-{seed}.jsonl"
    alpha = 50.0 / args.topics
    cmd = [args.rotor, "lda", "train", "--corpus", str(corpus_file(args.corpus, "train")),
           "--topics", str(args.topics), "--threads", str(args.threads), "--alpha", f"{alpha:g}",
           "--beta", "0.01", "--seed", str(seed), "--iterations", str(args.iterations),
           "--eval-every", str(args.iterations), "--coherence-top", "0", "--metrics",
           str(metrics), "--out", str(out), "--overwrite", "-q", *shlex.split(flags)]
    subprocess.run(cmd, check=True)
    last = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    last = [r for r in last if "loglik_per_token" in r][-1]
    ev = subprocess.run([args.rotor, "lda", "eval", "--model", str(out), "--corpus",
                         str(corpus_file(args.corpus, "heldout")), "--threads",
                         str(args.threads)], check=True, capture_output=True, text=True)
    held = json.loads(ev.stdout.strip().splitlines()[-1])
    return {"label": label, "seed": seed, "time_s": last["time_s"],
            "loglik": last["loglik_per_token"], "loglik_word": last["loglik_word_per_token"],
            "perplexity": held["heldout_perplexity"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--topics", type=int, required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iterations", type=int, required=True)
    p.add_argument("--rotor", required=True)
    p.add_argument("--variant", action="append", required=True, help="LABEL=EXTRA_FLAGS")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--md", type=Path)
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    variants = [v.split("=", 1) if "=" in v else (v, "") for v in args.variant]
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for label, flags in variants:
            rows.append(run(args, label, flags, seed, args.work))
            print(json.dumps(rows[-1]), flush=True)
    (args.work / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    lines = [f"### {args.corpus.name}, K = {args.topics}, {args.threads} thread(s), "
             f"{args.iterations} sweeps, seeds {args.seeds} (medians)", "",
             "| start | flags | training s | log p(w,z)/token | log p(w\\|z)/token | "
             "held-out perplexity |", "|---|---|---|---|---|---|"]
    for label, flags in variants:
        mine = [r for r in rows if r["label"] == label]
        med = {k: statistics.median(r[k] for r in mine)
               for k in ("time_s", "loglik", "loglik_word", "perplexity")}
        lines.append(f"| {label} | `{flags or '(defaults)'}` | {med['time_s']:.1f} | "
                     f"{med['loglik']:.3f} | {med['loglik_word']:.3f} | {med['perplexity']:,.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.md:
        args.md.write_text(text)


if __name__ == "__main__":
    main()
