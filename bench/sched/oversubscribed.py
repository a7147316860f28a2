#!/usr/bin/env python3
"""2 threads against 1 while another process keeps one core busy (docs/scheduler.md, "The team").

Runs each model's `rotor ... train` with --threads 1 and --threads 2, interleaved (1, 2, 1, 2, ...),
REPEATS times each, while a busy loop (a second CPU-bound process) runs; prints the wall seconds,
their medians and the ratio median(2 threads) / median(1 thread) as a Markdown table. The team's
promise: the ratio stays at or below 1.10 for every model (2 threads never more than 10% slower
than 1 when threads outnumber the free cores). Not a test: the machine is shared, so read the
ratios side by side and rerun when the load changes under a run.

    bench/sched/oversubscribed.py --rotor build/ci/apps/rotor [--repeats 3] [--no-hog]
        [--models mf-ccd,mf-sgd,lasso,lasso-shotgun,logreg,lda] [--data /tmp/rotor-oversub]
        [--baseline OLD_ROTOR]

--baseline runs a second binary's 1 and 2 threads interleaved with the first's (rotor 1, 2,
baseline 1, 2, ...) and adds its rows (model "(baseline)"): a change compared side by side
under the same load.

The data are the README tour's (made once under --data): MovieLens latest-small (split 80/20),
the shipped speeches as LIBSVM (sotu-year for the Lasso, sotu-party for logistic regression) and
as a corpus (LDA).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)


def prepare(rotor, data):
    os.makedirs(data, exist_ok=True)
    tools = os.path.join(ROOT, "tools", "data")
    if not os.path.exists(f"{data}/ml-train.csv"):
        run([sys.executable, f"{tools}/make_movielens.py", "--out", f"{data}/ml"])
        run([rotor, "ratings", "split", "--ratings", f"{data}/ml/ratings.csv", "--test-fraction",
             "0.2", "--train-out", f"{data}/ml-train.csv", "--test-out", f"{data}/ml-test.csv"])
    if not os.path.exists(f"{data}/sy/sotu-year.train.svm"):
        run([sys.executable, f"{tools}/make_sotu_year.py", "--out", f"{data}/sy"])
    if not os.path.exists(f"{data}/sp/sotu-party.train.svm"):
        run([sys.executable, f"{tools}/make_sotu_party.py", "--out", f"{data}/sp"])
    if not os.path.exists(f"{data}/sotu.rcorpus"):
        run([rotor, "corpus", "build", "--corpus",
             os.path.join(ROOT, "data", "sotu-para", "sotu-para.txt.gz"), "--format", "text",
             "--out", f"{data}/sotu.rcorpus"])


def commands(data, out):
    """Each model's training command (the README tour's, made a few seconds long)."""
    os.makedirs(out, exist_ok=True)
    cmds = {
        "mf-ccd": ["mf", "train", "--train", f"{data}/ml-train.csv", "--solver", "ccd"],
        "mf-sgd": ["mf", "train", "--train", f"{data}/ml-train.csv", "--solver", "sgd"],
        "lasso": ["lasso", "train", "--data", f"{data}/sy/sotu-year.train.svm", "--lambda", "1.2"],
        "lasso-shotgun": ["lasso", "train", "--data", f"{data}/sy/sotu-year.train.svm",
                          "--lambda", "0.3", "--schedule", "shotgun"],
        "logreg": ["logreg", "train", "--data", f"{data}/sp/sotu-party.train.svm", "--lambda", "1",
                   "--blocks", "256", "--curvature", "local", "--max-step", "1",
                   "--iterations", "4096"],
        "lda": ["lda", "train", "--corpus", f"{data}/sotu.rcorpus", "--topics", "50",
                "--iterations", "20"],
    }
    return {m: c + ["--out", os.path.join(out, m), "--overwrite", "-q"] for m, c in cmds.items()}


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models", default="mf-ccd,mf-sgd,lasso,lasso-shotgun,logreg,lda")
    ap.add_argument("--data", default="/tmp/rotor-oversub")
    ap.add_argument("--baseline", help="a second rotor binary, run interleaved with --rotor")
    ap.add_argument("--no-hog", action="store_true", help="no busy loop (a quiet-machine baseline)")
    args = ap.parse_args()
    rotor = os.path.abspath(args.rotor)
    prepare(rotor, args.data)
    cmds = commands(args.data, os.path.join(args.data, "models"))
    models = args.models.split(",")
    for m in models:
        if m not in cmds:
            sys.exit(f"unknown model {m}; known: {', '.join(cmds)}")
    hog = None
    if not args.no_hog:
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.5)
    binaries = [("", rotor)]
    if args.baseline:
        binaries.append((" (baseline)", os.path.abspath(args.baseline)))
    rows = [m + tag for m in models for tag, _ in binaries]
    times = {r: {1: [], 2: []} for r in rows}
    load_start = load()
    try:
        for _ in range(args.repeats):
            for m in models:
                for tag, binary in binaries:
                    for threads in (1, 2):
                        start = time.perf_counter()
                        run([binary] + cmds[m] + ["--threads", str(threads)])
                        t = times[m + tag][threads]
                        t.append(time.perf_counter() - start)
                        print(f"{m}{tag} threads={threads} {t[-1]:.2f} s", file=sys.stderr)
    finally:
        if hog:
            hog.kill()
            hog.wait()
    print(f"load average {load_start} at the start, {load()} at the end; "
          f"{'a busy loop running' if hog else 'no busy loop'}; {args.repeats} runs each\n")
    print("| model | 1 thread s (runs) | 2 threads s (runs) | 2 / 1 |")
    print("|---|---|---|---|")
    for m in rows:
        one, two = times[m][1], times[m][2]
        cells = [f"{statistics.median(t):.2f} ({', '.join(f'{x:.2f}' for x in t)})"
                 for t in (one, two)]
        ratio = statistics.median(two) / statistics.median(one)
        print(f"| {m} | {cells[0]} | {cells[1]} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
