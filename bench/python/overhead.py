#!/usr/bin/env python3
"""What a Python fit costs beyond the command line, on the same data after loading.

LDA: the shipped sotu-para training corpus stacked `--copies` times (15: 10.2M tokens) as one
CSR matrix in memory, against `rotor lda train` on the same documents as a binary corpus (memory
mapped: its reading is a few milliseconds). MF: the sotu documents x words ratings (1 + ln(count))
with the users repeated `--copies` times (2: 1.18M ratings), against `rotor mf train` on the same
ratings as a binary ratings file. The same parameters, threads and seed on both sides; runs
alternate (python, cli, python, cli, ...) and the medians of wall-clock and CPU seconds are
reported:
fit() for Python (the CSR handed over, the corpus built, training, the model returned as arrays),
the whole process for the command line (start, mapping the input, training, writing the model).

    PYTHONPATH=build/ci/python /usr/bin/python3 bench/python/overhead.py --rotor build/ci/apps/rotor
"""

from __future__ import annotations

import argparse
import gzip
import math
import resource
import statistics
import subprocess
import tempfile
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
    """(wall seconds, CPU seconds) of fn(): on a shared machine the CPU seconds of a run on one
    thread barely move with the load, the wall seconds do."""
    t, c = time.perf_counter(), cpu_seconds()
    fn()
    return time.perf_counter() - t, cpu_seconds() - c


def compare(name, py, cli, runs):
    p, c = [], []
    for _ in range(runs):
        p.append(timed(py))
        c.append(timed(cli))
    med = statistics.median
    mp, mc = med(x for x, _ in p), med(x for x, _ in c)
    cp, cc = med(y for _, y in p), med(y for _, y in c)
    print(f"| {name} | {mp:.2f} | {mc:.2f} | {mp / mc:.3f} | {cp:.2f} | {cc:.2f} | {cp / cc:.3f} | "
          f"{' '.join(f'{x:.2f}' for x, _ in p)} / {' '.join(f'{x:.2f}' for x, _ in c)} |",
          flush=True)


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
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rotor-py-bench-"))
    X1 = sotu_matrix()
    print("| what | python fit s | cli s | python / cli | python CPU s | cli CPU s | python / cli "
          "(CPU) | wall runs (python / cli) |")
    print("|---|---|---|---|---|---|---|---|")
    if not a.skip_lda:
        X = sp.vstack([X1] * a.copies).tocsr()
        write_docword(X, tmp / "docword.txt")
        subprocess.run([a.rotor, "corpus", "build", "--corpus", tmp / "docword.txt", "--format",
                        "uci", "--out", tmp / "c.rcorpus"], check=True, capture_output=True)
        (tmp / "docword.txt").unlink()
        lda = rotor.LDA(a.topics, max_iter=a.iterations, n_jobs=a.threads, random_state=1)
        cli = [a.rotor, "lda", "train", "--corpus", tmp / "c.rcorpus", "--topics", a.topics,
               "--iterations", a.iterations, "--threads", a.threads, "--seed", 1, "--out",
               tmp / "lda", "--overwrite", "--quiet"]
        compare(f"LDA, {X.sum() / 1e6:.1f}M tokens, K = {a.topics}, {a.iterations} sweeps, "
                f"{a.threads} threads", lambda: lda.fit(X),
                lambda: subprocess.run(list(map(str, cli)), check=True), a.runs)
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
        mf = rotor.MF(64, solver=solver, max_iter=a.epochs, n_jobs=a.threads, random_state=1)
        cli = [a.rotor, "mf", "train", "--train", tmp / "r.bin", "--solver", solver, "--rank", 64,
               "--iterations", a.epochs, "--threads", a.threads, "--seed", 1, "--out",
               tmp / "mf", "--overwrite", "--quiet"]
        compare(f"MF {solver}, {len(rows) / 1e6:.2f}M ratings, K = 64, {a.epochs} epochs, "
                f"{a.threads} threads", lambda: mf.fit(rows),
                lambda: subprocess.run(list(map(str, cli)), check=True), a.runs)
    assert math.isfinite(mf.global_mean_)


if __name__ == "__main__":
    main()
