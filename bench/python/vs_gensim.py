#!/usr/bin/env python3
"""rotor.LDA (collapsed Gibbs) against gensim's LdaModel (online variational Bayes), side by side
on one corpus, one K, one thread: training seconds against held-out perplexity.

Corpus: the shipped sotu-para (training split 9,585 documents, 679,711 tokens; held-out split
1,065 documents), K = --topics. Both tools train on the same bag-of-words in memory. Held-out
perplexity is measured the same way for both: each model's topic-word matrix phi (K x V,
rows normalised: rotor's (n_wk + beta) / (n_k + V beta), gensim's get_topics()) is written as
`word topic weight` rows and scored by `rotor lda eval --phi` (document completion: Gibbs fold-in
on the first half of each held-out document's tokens with alpha = 50/K, the second half scored).
rotor: one fit per sweep count of --sweeps (each a whole run: its fit() seconds); gensim: one
model updated a pass at a time (passes accumulate; the seconds are the sum of its update calls,
its own evaluation off). One thread each (gensim's LdaModel is single-threaded; BLAS pinned to one
thread). Both models have alpha = 50/K and beta (gensim's eta) = 0.01, as bench/compare sets
them. Prints a Markdown table and the time each tool needs to reach the best perplexity gensim
reached.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=build/ci/python /usr/bin/python3 bench/python/vs_gensim.py \\
        --rotor build/ci/apps/rotor
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import rotor

REPO = Path(__file__).resolve().parents[2]
SOTU = REPO / "data" / "sotu-para"


def docword(path):
    with gzip.open(path, "rt") as f:
        d, w, nnz = (int(f.readline()) for _ in range(3))
        a = np.loadtxt(f, dtype=np.int64, max_rows=nnz)
    return sp.csr_matrix((a[:, 2], (a[:, 0] - 1, a[:, 1] - 1)), shape=(d, w))


def perplexity(rotor_cli, phi, vocab, tmp, topics):
    """`rotor lda eval --phi` of a K x V matrix over the held-out split."""
    path = tmp / "phi.tsv"
    with open(path, "w") as f:
        for k in range(phi.shape[0]):
            for w in np.flatnonzero(phi[k] > 0):
                f.write(f"{vocab[w]}\t{k}\t{phi[k, w]:.9g}\n")
    out = subprocess.run([rotor_cli, "lda", "eval", "--phi", str(path), "--corpus",
                          str(SOTU / "heldout/docword.txt.gz"), "--vocab",
                          str(SOTU / "heldout/vocab.txt"), "--alpha", str(50 / topics)],
                         check=True, capture_output=True, text=True)
    record = [line for line in out.stdout.splitlines() if line.startswith("{")][-1]
    return float(json.loads(record)["heldout_perplexity"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--sweeps", default="10,20,40,80,160")
    ap.add_argument("--passes", type=int, default=16)
    a = ap.parse_args()
    import gensim  # noqa: PLC0415 - a benchmark peer (Debian's python3-gensim)
    from gensim.models import LdaModel  # noqa: PLC0415

    tmp = Path(tempfile.mkdtemp(prefix="rotor-vs-gensim-"))
    X = docword(SOTU / "train/docword.txt.gz")
    vocab = (SOTU / "train/vocab.txt").read_text().split("\n")[:-1]
    K = a.topics
    rows = []
    for n in map(int, a.sweeps.split(",")):
        lda = rotor.LDA(K, max_iter=n, evaluate_every=0, coherence_top=0, n_jobs=1,
                        random_state=1)
        t = time.perf_counter()
        lda.fit(X, vocabulary=vocab)
        s = time.perf_counter() - t
        rows.append(("rotor.LDA", f"{n} sweeps", s,
                     perplexity(a.rotor, lda.topic_word_distribution(), vocab, tmp, K)))
        print(rows[-1], flush=True)
    corpus = [list(zip(X.indices[X.indptr[d]:X.indptr[d + 1]].tolist(),
                       X.data[X.indptr[d]:X.indptr[d + 1]].tolist()))
              for d in range(X.shape[0])]
    id2word = dict(enumerate(vocab))
    t = time.perf_counter()
    model = LdaModel(corpus, id2word=id2word, num_topics=K, passes=1, eval_every=None,
                     alpha=50 / K, eta=0.01, random_state=1)
    spent = time.perf_counter() - t
    for p in range(1, a.passes + 1):
        if p > 1:
            t = time.perf_counter()
            model.update(corpus)
            spent += time.perf_counter() - t
        if p & (p - 1) == 0:  # 1, 2, 4, 8, ...
            rows.append((f"gensim {gensim.__version__} LdaModel", f"{p} passes", spent,
                         perplexity(a.rotor, model.get_topics(), vocab, tmp, K)))
            print(rows[-1], flush=True)
    print(f"\nsotu-para, K = {K}, 1 thread; held-out perplexity by `rotor lda eval --phi`\n")
    print("| model | training | seconds | held-out perplexity |")
    print("|---|---|---|---|")
    for name, what, s, ppl in rows:
        print(f"| {name} | {what} | {s:.1f} | {ppl:.1f} |")
    target = min(p for n, _, _, p in rows if n.startswith("gensim"))
    for tool in ("rotor.LDA", "gensim"):
        hit = [s for n, _, s, p in rows if n.startswith(tool) and p <= target]
        print(f"\n{tool}: {min(hit):.1f} s to reach perplexity {target:.1f}" if hit else
              f"\n{tool}: does not reach {target:.1f} in the runs above")


if __name__ == "__main__":
    main()
