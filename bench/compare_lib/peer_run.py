#!/usr/bin/python3
"""One timed training run of a Python peer (gensim or scikit-learn), run as a child process of
bench/compare so that GNU time measures its peak RSS alone.

    peer_run.py --tool gensim|gensim-single|sklearn --workers N --csr TRAIN.npz --topics K
                --alpha A --beta B --budget SECONDS --snapshots T1,T2,... --seed S
                [--slice-docs N] --out DIR

Both peers are online variational Bayes; they see the documents in one fixed random permutation
(from --seed), fed in slices of --slice-docs documents (default: one gensim update,
workers x chunksize documents; 8 scikit-learn mini-batches, 8 x batch_size). The training clock runs only inside the peers'
update calls. After the slice whose end passes a snapshot time, the topic-word pseudo-counts
(λ minus the prior, K x V float32) are saved as DIR/snap-<i>.npy with the clock stopped; the run
ends after the slice that passes --budget. DIR/run.json lists the snapshots (training seconds,
passes, documents and tokens seen). Tools:
  gensim         gensim.models.LdaMulticore(workers=N)   (N worker processes + the master)
  gensim-single  gensim.models.LdaModel                  (one process; --workers must be 1)
  sklearn        sklearn LatentDirichletAllocation(learning_method="online", n_jobs=N),
                 fed with partial_fit
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp


def make_gensim(args, num_words):
    from gensim.matutils import Sparse2Corpus
    from gensim.models import LdaModel, LdaMulticore

    id2word = {i: str(i) for i in range(num_words)}
    common = dict(num_topics=args.topics, id2word=id2word, alpha=args.alpha, eta=args.beta,
                  random_state=args.seed, eval_every=None, chunksize=args.chunksize)
    if args.tool == "gensim":
        model = LdaMulticore(workers=args.workers, **common)
    else:
        model = LdaModel(**common)

    def update(x):
        model.update(Sparse2Corpus(x, documents_columns=False))

    def counts():
        return np.asarray(model.state.sstats, dtype=np.float32)  # λ − η

    return update, counts


def make_sklearn(args, num_docs):
    from sklearn.decomposition import LatentDirichletAllocation

    model = LatentDirichletAllocation(
        n_components=args.topics, doc_topic_prior=args.alpha, topic_word_prior=args.beta,
        learning_method="online", total_samples=num_docs, batch_size=args.batch_size,
        n_jobs=args.workers, random_state=args.seed, evaluate_every=-1)

    def update(x):
        model.partial_fit(x)

    def counts():
        return np.maximum(model.components_ - args.beta, 0).astype(np.float32)  # λ − η

    return update, counts


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tool", required=True, choices=["gensim", "gensim-single", "sklearn"])
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--csr", required=True)
    p.add_argument("--topics", type=int, required=True)
    p.add_argument("--alpha", type=float, required=True)
    p.add_argument("--beta", type=float, required=True)
    p.add_argument("--budget", type=float, required=True)
    p.add_argument("--snapshots", required=True, help="training seconds, comma-separated")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--slice-docs", type=int, default=0, help="documents per update call")
    p.add_argument("--chunksize", type=int, default=2000, help="gensim chunksize")
    p.add_argument("--batch-size", type=int, default=128, help="scikit-learn batch_size")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if args.tool == "gensim-single" and args.workers != 1:
        sys.exit("peer_run.py: gensim-single runs LdaModel, one process: --workers must be 1")

    x = sp.load_npz(args.csr).tocsr()
    lengths = np.asarray(x.sum(axis=1)).ravel()
    keep = np.flatnonzero(lengths > 0)  # the peers' corpora hold no empty documents
    perm = keep[np.random.default_rng(args.seed).permutation(keep.size)]
    size = args.slice_docs or (8 * args.batch_size if args.tool == "sklearn"
                               else args.workers * args.chunksize)
    slices = [np.sort(perm[i:i + size]) for i in range(0, perm.size, size)]

    if args.tool == "sklearn":
        update, counts = make_sklearn(args, keep.size)
    else:
        update, counts = make_gensim(args, x.shape[1])

    times = sorted(float(t) for t in args.snapshots.split(","))
    snaps = []
    train_s, docs, tokens, passes = 0.0, 0, 0.0, 0
    next_snap = 0
    done = False
    while not done:
        for s in slices:
            xs = x[s]
            t0 = time.perf_counter()
            update(xs)
            train_s += time.perf_counter() - t0
            docs += xs.shape[0]
            tokens += lengths[s].sum()
            last = train_s >= args.budget
            if last or (next_snap < len(times) and train_s >= times[next_snap]):
                while next_snap < len(times) and train_s >= times[next_snap]:
                    next_snap += 1
                path = os.path.join(args.out, f"snap-{len(snaps)}.npy")
                np.save(path, counts())
                snaps.append({"file": os.path.basename(path), "train_s": train_s,
                              "passes": docs / keep.size, "docs": docs, "tokens": int(tokens)})
            if last:
                done = True
                break
        passes += 1
    with open(os.path.join(args.out, "run.json"), "w") as f:
        json.dump({"tool": args.tool, "workers": args.workers, "topics": args.topics,
                   "train_s": train_s, "docs": docs, "tokens": int(tokens),
                   "tokens_per_s": tokens / train_s, "passes": docs / keep.size,
                   "snapshots": snaps}, f, indent=1)


if __name__ == "__main__":
    main()
