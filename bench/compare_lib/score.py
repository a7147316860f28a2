"""The one scorer for every tool: a topic-word matrix written as `word<TAB>topic<TAB>weight`
and scored by `rotor lda eval --phi` (held-out document completion, docs/evaluation.md).

Every tool's matrix is written as pseudo-counts c_wk without the prior, and the prior goes back
in through `--beta`: eval computes φ_kw = (c_wk + β)/(c_k + Vβ) with V the number of distinct
words with a positive weight in the file (eval drops all-zero words as unknown), so every
vocabulary word is written, with a weight of kPad in topic 0 for words a tool never counted, and
V is the training vocabulary for everyone. For rotor c_wk are the sampler's
counts n_wk and β its prior, which gives exactly rotor's φ; for the variational peers c_wk is
λ_kw − η and β = η, which gives exactly the normalised λ (their posterior-mean topics). Peer
entries below `kDropBelow` pseudo-counts are left out (they change φ by less than kDropBelow/η
relative, 1e-4 at η = 0.01) to keep the files small.
"""
import json
import os

import numpy as np

from compare_lib.rotor_run import run

kDropBelow = 1e-6
kPad = 1e-12


def write_phi_from_counts(counts, vocab, path):
    """counts: K x V array of pseudo-counts (λ − η), vocab: V words. Writes the TSV."""
    k_count, v_count = counts.shape
    if v_count != len(vocab):
        raise ValueError(f"matrix has {v_count} words, vocabulary {len(vocab)}")
    seen = np.zeros(v_count, dtype=bool)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for k in range(k_count):
            idx = np.flatnonzero(counts[k] >= kDropBelow)
            seen[idx] = True
            f.write("".join(f"{vocab[w]}\t{k}\t{v:.7g}\n"
                            for w, v in zip(idx.tolist(), counts[k, idx].tolist())))
        f.writelines(f"{vocab[w]}\t0\t{kPad}\n" for w in np.flatnonzero(~seen).tolist())
    os.replace(tmp, path)


def write_phi_from_rotor(word_topic_tsv, vocab, path):
    """rotor's export (word, topic, count; nonzero counts only) plus a zero row for every
    vocabulary word it lacks."""
    present = set()
    tmp = path + ".tmp"
    with open(word_topic_tsv) as src, open(tmp, "w") as f:
        for line in src:
            present.add(line.split("\t", 1)[0])
            f.write(line)
        f.writelines(f"{w}\t0\t{kPad}\n" for w in vocab if w not in present)
    os.replace(tmp, path)


def evaluate(rotor, phi_tsv, heldout, vocab_path, alpha, beta, threads=2, seed=1):
    """`rotor lda eval --phi`; returns its JSON (heldout_loglik_per_token, heldout_perplexity,
    token counts)."""
    out = run([rotor, "lda", "eval", "--phi", phi_tsv, "--corpus", heldout, "--vocab", vocab_path,
               "--alpha", f"{alpha!r}", "--beta", f"{beta!r}", "--threads", str(threads),
               "--seed", str(seed)])
    return json.loads(out.strip().splitlines()[-1])
