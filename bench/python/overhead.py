#!/usr/bin/env python3
"""What a Python fit costs beyond the command line, on the same data after loading.

LDA: the shipped sotu-para training corpus stacked `--copies` times (15: 10.2M tokens) as one CSR
matrix in memory, against `rotor lda train` on the same documents as a binary corpus (memory
mapped: its reading is a few milliseconds). MF: the sotu documents x words ratings (1 + ln(count))
with the users repeated `--copies` times (2: 1.18M ratings), against `rotor mf train` on the same
ratings as a binary ratings file. With `--linear`, also the Lasso (sotu-year) and L1 logistic
regression (sotu-party), their training splits stacked 15 times, as CSR matrices against `rotor
lasso train` and `rotor logreg train` on binary files. The same parameters, threads and seed on
both sides; runs alternate (python, cli, python, cli, ...) and the medians of wall-clock and CPU
seconds are reported:
fit() for Python (the CSR handed over, the corpus built, training, the model returned as arrays),
the whole process for the command line (start, mapping the input, training, writing the model).
On a shared machine the load changes from one run to the next, and with it both the wall and the
CPU seconds of the same work (cache and memory contention); `--side-by-side` (one thread) runs
fit and the command line at the same time instead, each confined to one of two CPUs, swapped
every run, both unpinned, so that each pair sees the same load; the median of the pairs' ratios
is then the comparison.

    PYTHONPATH=build/ci/python /usr/bin/python3 bench/python/overhead.py --rotor build/ci/apps/rotor
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import rotor

REPO = Path(__file__).resolve().parents[2]


def sotu_matrix():
    with gzip.open(REPO / "data/sotu-para/train/docword.txt.gz", "rt") as f:
        d, w, nnz = (int(f.readline()) for _ in range(3))
        a = np.loadtxt(f, dtype=np.int64, max_rows=nnz)
    return sp.csr_matrix((a[:, 2], (a[:, 0] - 1, a[:, 1] - 1)), shape=(d, w))


def write_docword(X, path):
    C = X.tocoo()
    with open(path, "w") as f:
        f.write(f"{X.shape[0]}\n{X.shape[1]}\n{C.nnz}\n")
        np.savetxt(f, np.column_stack([C.row + 1, C.col + 1, C.data]), fmt="%d")


def cpu_seconds():
    """CPU seconds (user + system) of this process and of its finished children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(fn):
    """(wall seconds, CPU seconds) of fn()."""
    t, c = time.perf_counter(), cpu_seconds()
    fn()
    return time.perf_counter() - t, cpu_seconds() - c


def side_by_side(py, cli, run):
    """Python's fit and the command line at the same time, each confined to one of the first two
    CPUs (swapped on odd runs): both see the same load at the same moment, which alternating
    runs on a shared machine do not. ((python wall, CPU), (cli wall, CPU))."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    mine, its = cpus if run % 2 == 0 else cpus[::-1]
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {mine})  # this thread; the fit's workers inherit it (unpinned)
    done = []
    try:
        t0 = time.perf_counter()
        child = subprocess.Popen(cli, preexec_fn=lambda: os.sched_setaffinity(0, {its}))

        def reap():
            _, status, usage = os.wait4(child.pid, 0)
            done.append((time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, status))

        reaper = threading.Thread(target=reap)
        reaper.start()
        own = resource.getrusage(resource.RUSAGE_SELF)
        t = time.perf_counter()
        py()
        wall = time.perf_counter() - t
        end = resource.getrusage(resource.RUSAGE_SELF)
        reaper.join()
    finally:
        os.sched_setaffinity(0, before)
    child.returncode = os.waitstatus_to_exitcode(done[0][2])
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, cli)
    cpu = end.ru_utime + end.ru_stime - own.ru_utime - own.ru_stime
    return (wall, cpu), done[0][:2]


def compare(name, py, cli, runs, together):
    """Medians over `runs` of Python's fit and of the command line, alternating (python, cli,
    python, ...) or, with `together`, side by side (side_by_side)."""
    p, c = [], []
    for run in range(runs):
        if together:
            a, b = side_by_side(py, cli, run)
            p.append(a)
            c.append(b)
        else:
            p.append(timed(py))
            c.append(timed(lambda: subprocess.run(cli, check=True)))
    med = statistics.median
    mp, mc = med(x for x, _ in p), med(x for x, _ in c)
    cp, cc = med(y for _, y in p), med(y for _, y in c)
    ratios = [x / y for (x, _), (y, _) in zip(p, c)]
    print(f"| {name} | {mp:.2f} | {mc:.2f} | {mp / mc:.3f} | {cp:.2f} | {cc:.2f} | {cp / cc:.3f} | "
          f"{med(ratios):.3f} | "
          f"{' '.join(f'{x:.2f}' for x, _ in p)} / {' '.join(f'{x:.2f}' for x, _ in c)} |",
          flush=True)


def linear(a, tmp, pin, no_pin):
    """The Lasso on sotu-year and L1 logistic regression on sotu-party (tools/data), each
    training split stacked a.linear_copies times: fit on the CSR matrix against `rotor lasso
    train` / `rotor logreg train` on the same rows as a binary file."""
    from sklearn.datasets import load_svmlight_file

    for script in ("make_sotu_year.py", "make_sotu_party.py"):
        subprocess.run([sys.executable, REPO / "tools/data" / script, "--out", tmp], check=True,
                       capture_output=True)
    runs = []
    for name, kind in (("sotu-year", "lasso"), ("sotu-party", "logreg")):
        text = (tmp / f"{name}.train.svm").read_text()
        (tmp / f"{name}.svm").write_text(text * a.linear_copies)
        subprocess.run([a.rotor, kind, "build", "--data", tmp / f"{name}.svm", "--out",
                        tmp / f"{name}.bin"], check=True, capture_output=True)
        X, y = load_svmlight_file(str(tmp / f"{name}.svm"), zero_based=False)
        runs.append((X, y))
    (X, y), (Xc, yc) = runs
    lasso = rotor.Lasso(alpha=1.2, n_jobs=a.threads, **pin)
    cli = [a.rotor, "lasso", "train", "--data", tmp / "sotu-year.bin", "--lambda", 1.2,
           "--threads", a.threads, "--out", tmp / "lasso.model", "--overwrite", "--quiet", *no_pin]
    compare(f"Lasso, sotu-year x {a.linear_copies}: {X.shape[0]} x {X.shape[1]}, "
            f"{X.nnz / 1e6:.2f}M nonzeros, alpha = 1.2, {a.threads} threads",
            lambda: lasso.fit(X, y), list(map(str, cli)), a.runs, a.side_by_side)
    # newton (the default) is single-threaded, on both sides.
    lr = rotor.LogisticRegression(C=0.5, n_jobs=a.threads)
    cli = [a.rotor, "logreg", "train", "--data", tmp / "sotu-party.bin", "--lambda", 2,
           "--threads", a.threads, "--out", tmp / "logreg.model", "--overwrite", "--quiet"]
    compare(f"LogisticRegression, sotu-party x {a.linear_copies}: {Xc.shape[0]} x "
            f"{Xc.shape[1]}, {Xc.nnz / 1e6:.2f}M nonzeros, C = 0.5 (--lambda 2), "
            f"{a.threads} threads", lambda: lr.fit(Xc, yc), list(map(str, cli)), a.runs,
            a.side_by_side)
    assert lasso.n_iter_ > 0 and lr.n_iter_ > 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--copies", type=int, default=15, help="LDA: corpus copies (15: 10.2M tokens)")
    ap.add_argument("--mf-copies", type=int, default=2, help="MF: user copies (2: 1.18M ratings)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-lda", action="store_true")
    ap.add_argument("--skip-mf", action="store_true")
    ap.add_argument("--linear", action="store_true",
                    help="also the Lasso (sotu-year) and LogisticRegression (sotu-party), their "
                         "training splits stacked --linear-copies times")
    ap.add_argument("--linear-copies", type=int, default=15)
    ap.add_argument("--side-by-side", action="store_true",
                    help="run Python and the command line at the same time on two CPUs, swapped "
                         "every run, both unpinned (one thread each)")
    a = ap.parse_args()
    if a.side_by_side and (a.threads != 1 or len(os.sched_getaffinity(0)) < 2):
        ap.error("--side-by-side needs --threads 1 and two CPUs")
    pin = {"pin": False} if a.side_by_side else {}
    no_pin = ["--no-pin"] if a.side_by_side else []
    tmp = Path(tempfile.mkdtemp(prefix="rotor-py-bench-"))
    X1 = sotu_matrix()
    print("| what | python fit s | cli s | python / cli | python CPU s | cli CPU s | python / cli "
          "(CPU) | median of the runs' python / cli | wall runs (python / cli) |")
    print("|---|---|---|---|---|---|---|---|---|")
    if not a.skip_lda:
        X = sp.vstack([X1] * a.copies).tocsr()
        write_docword(X, tmp / "docword.txt")
        subprocess.run([a.rotor, "corpus", "build", "--corpus", tmp / "docword.txt", "--format",
                        "uci", "--out", tmp / "c.rcorpus"], check=True, capture_output=True)
        (tmp / "docword.txt").unlink()
        lda = rotor.LDA(a.topics, max_iter=a.iterations, n_jobs=a.threads, random_state=1, **pin)
        cli = [a.rotor, "lda", "train", "--corpus", tmp / "c.rcorpus", "--topics", a.topics,
               "--iterations", a.iterations, "--threads", a.threads, "--seed", 1, "--out",
               tmp / "lda", "--overwrite", "--quiet", *no_pin]
        compare(f"LDA, {X.sum() / 1e6:.1f}M tokens, K = {a.topics}, {a.iterations} sweeps, "
                f"{a.threads} threads", lambda: lda.fit(X), list(map(str, cli)), a.runs,
                a.side_by_side)
    if a.linear:
        linear(a, tmp, pin, no_pin)
    if a.skip_mf:
        return
    C = X1.tocoo()
    users = np.concatenate([C.row + k * X1.shape[0] for k in range(a.mf_copies)])
    items = np.tile(C.col, a.mf_copies)
    values = np.tile(1 + np.log(C.data.astype(float)), a.mf_copies).astype(np.float32)
    rows = np.column_stack([users, items, values.astype(np.float64)])
    with open(tmp / "ratings.txt", "w") as f:
        np.savetxt(f, np.column_stack([users, items]), fmt="%d", delimiter=" ", newline="\n")
    lines = (tmp / "ratings.txt").read_text().splitlines()
    with open(tmp / "ratings.txt", "w") as f:
        for line, v in zip(lines, values):
            f.write(f"{line} {repr(float(v))}\n")
    subprocess.run([a.rotor, "ratings", "build", "--ratings", tmp / "ratings.txt", "--out",
                    tmp / "r.bin"], check=True, capture_output=True)
    for solver in ("sgd", "ccd"):
        mf = rotor.MF(64, solver=solver, max_iter=a.epochs, n_jobs=a.threads, random_state=1,
                      **pin)
        cli = [a.rotor, "mf", "train", "--train", tmp / "r.bin", "--solver", solver, "--rank", 64,
               "--iterations", a.epochs, "--threads", a.threads, "--seed", 1, "--out",
               tmp / "mf", "--overwrite", "--quiet", *no_pin]
        compare(f"MF {solver}, {len(rows) / 1e6:.2f}M ratings, K = 64, {a.epochs} epochs, "
                f"{a.threads} threads", lambda: mf.fit(rows), list(map(str, cli)), a.runs,
                a.side_by_side)
        assert math.isfinite(mf.global_mean_)


if __name__ == "__main__":
    main()
