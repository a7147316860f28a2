#!/usr/bin/env python3
"""Build sotu-party: a real sparse classification set for L1 logistic regression from sotu-para.

Each document of ``data/sotu-para`` (a chunk of a State of the Union address) by a Republican or
a Democratic president is one example: label +1 for Republican, -1 for Democratic (``docs.tsv``;
chunks of other parties are dropped), features = the vocabulary's words, value = 1 + ln(count)
(as make_sotu_year.py). The train and heldout splits give ``sotu-party.train.svm`` and
``sotu-party.test.svm`` (LIBSVM, 1-based word ids; a document without words is dropped).

With ``--era YEAR`` it builds sotu-era instead, a second real set from the same corpus: every
chunk is kept, label +1 when its address is from YEAR or later, -1 before (``sotu-era.train.svm``,
``sotu-era.test.svm``). ``--max-docs N`` keeps the first N examples of each split.

    make_sotu_party.py [--corpus data/sotu-para] --out DIR [--era YEAR] [--max-docs N]

Standard library only; the same corpus gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import math
from pathlib import Path

LABELS = {"Republican": "+1", "Democratic": "-1"}


def labels_of(corpus: Path, era: int = 0) -> dict[tuple[str, int], str]:
    """(split, docID) -> label: by party for the two parties kept, or by era when era > 0."""
    out: dict[tuple[str, int], str] = {}
    with open(corpus / "docs.tsv", encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        split_col, doc_col, party_col, year_col = (
            header.index(k) for k in ("split", "doc", "party", "year"))
        for line in f:
            fields = line.rstrip("\n").split("\t")
            key = (fields[split_col], int(fields[doc_col]))
            if era > 0:
                out[key] = "+1" if int(fields[year_col]) >= era else "-1"
            elif fields[party_col] in LABELS:
                out[key] = LABELS[fields[party_col]]
    return out


def write_split(corpus: Path, split: str, labels: dict[tuple[str, int], str], out: Path,
                max_docs: int = 0) -> int:
    """Writes one split as LIBSVM; returns the number of examples."""
    docs = 0
    with gzip.open(corpus / split / "docword.txt.gz", "rt", encoding="ascii") as f, \
            open(out, "w", encoding="ascii") as o:
        for _ in range(3):
            f.readline()
        current, entries = None, []

        def flush() -> None:
            nonlocal docs
            if current is None or not entries or (split, current) not in labels or \
                    (max_docs and docs >= max_docs):
                return
            o.write(f"{labels[(split, current)]} " + " ".join(entries) + "\n")
            docs += 1

        for line in f:
            doc, word, count = (int(x) for x in line.split())
            if doc != current:
                flush()
                current, entries = doc, []
            entries.append(f"{word}:{1 + math.log(count):.6g}")
        flush()
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path("data/sotu-para"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--era", type=int, default=0,
                    help="label by year >= ERA instead of by party (0: by party)")
    ap.add_argument("--max-docs", type=int, default=0, help="at most N examples a split (0: all)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    labels = labels_of(a.corpus, a.era)
    stem = "sotu-era" if a.era > 0 else "sotu-party"
    for split, name in (("train", "train"), ("heldout", "test")):
        n = write_split(a.corpus, split, labels, a.out / f"{stem}.{name}.svm", a.max_docs)
        print(f"{a.out}/{stem}.{name}.svm: {n} examples")


if __name__ == "__main__":
    main()
