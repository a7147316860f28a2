#!/usr/bin/env python3
"""Build sotu-bigrams: a set with the parameter-server paper's shape from a real corpus.

The examples and labels of sotu-party (make_sotu_party.py: a chunk of a State of the Union
address by a Republican, +1, or a Democratic president, -1; the corpus's train and heldout
splits), but the features are the chunk's word unigrams AND bigrams (adjacent tokens after the
corpus's tokenization, tools/data/tokenize.py: lowercase letters, 3-25 long, stop words dropped;
no minimum document frequency), hashed into 2^BITS buckets (``--bits``, default 22), value
1 + ln(count) of the bucket. So far more features than examples (about 600k distinct buckets
for 8k training examples), most of them seen in one or two documents: at λ = 1 most weights are
zero at the optimum, as on the paper's ad data (docs/logreg.md, "Filters").

Keys are 1 + the first 8 bytes of BLAKE2b(feature) modulo 2^BITS, little-endian; a unigram's
feature is the word, a bigram's the two words joined by a space (never a word itself). Writes
``sotu-bigrams.train.svm`` and ``sotu-bigrams.test.svm`` (LIBSVM, keys increasing).

    make_sotu_bigrams.py [--corpus data/sotu-para] --out DIR [--bits 22] [--max-docs N]

Standard library only; the same corpus gives the same bytes.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import math
from pathlib import Path

from tokenize import load_stopwords, tokenize_text

REPO = Path(__file__).resolve().parents[2]
LABELS = {"Republican": "+1", "Democratic": "-1"}
SPLITS = (("train", "train"), ("heldout", "test"))


def bucket(feature: bytes, bits: int) -> int:
    """1 + the feature's hash modulo 2^bits."""
    h = int.from_bytes(hashlib.blake2b(feature, digest_size=8).digest(), "little")
    return 1 + (h & ((1 << bits) - 1))


def features(tokens: list[bytes], bits: int) -> dict[int, int]:
    """Bucket -> count of the unigrams and bigrams of one document."""
    counts: collections.Counter = collections.Counter()
    for i, t in enumerate(tokens):
        counts[bucket(t, bits)] += 1
        if i + 1 < len(tokens):
            counts[bucket(t + b" " + tokens[i + 1], bits)] += 1
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=REPO / "data" / "sotu-para",
                    help="the sotu-para corpus (default: the repository's data/sotu-para)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--bits", type=int, default=22, help="2^BITS hash buckets (10..40)")
    ap.add_argument("--max-docs", type=int, default=0, help="at most N examples a split (0: all)")
    a = ap.parse_args()
    if not 10 <= a.bits <= 40:
        ap.error("--bits must be in 10..40")
    with gzip.open(a.corpus / "sotu-para.txt.gz", "rb") as f:
        lines = f.read().splitlines()
    stop = load_stopwords()
    rows: dict[str, list[tuple[str, int]]] = {"train": [], "heldout": []}
    with open(a.corpus / "docs.tsv", encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(header, line.rstrip("\n").split("\t")))
            label = LABELS.get(row["party"])
            if label is not None and row["split"] in rows:
                rows[row["split"]].append((label, int(row["line"])))
    a.out.mkdir(parents=True, exist_ok=True)
    for split, name in SPLITS:
        path = a.out / f"sotu-bigrams.{name}.svm"
        tmp = path.with_suffix(".svm.tmp")
        n, keys = 0, set()
        with open(tmp, "w", encoding="ascii") as o:
            for label, line in rows[split]:
                if a.max_docs and n >= a.max_docs:
                    break
                counts = features(tokenize_text(lines[line - 1], stop), a.bits)
                if not counts:
                    continue
                o.write(label + " " + " ".join(f"{k}:{1 + math.log(c):.6g}"
                                               for k, c in sorted(counts.items())) + "\n")
                keys.update(counts)
                n += 1
        tmp.replace(path)
        print(f"{path}: {n} examples, {len(keys)} distinct features")


if __name__ == "__main__":
    main()
