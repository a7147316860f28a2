#!/usr/bin/env python3
"""Build sotu-year: a real sparse regression set for the Lasso from the shipped sotu-para corpus.

Each document of ``data/sotu-para`` (a chunk of a State of the Union address) is one sample:
y = the address's year (``docs.tsv``), features = the vocabulary's words, value = 1 + ln(count)
for each word the chunk holds (a log-scaled term frequency, as make_docword_ratings.py). The
question a Lasso answers on it: which words date a speech. The train and heldout splits of the
corpus give ``sotu-year.train.svm`` and ``sotu-year.test.svm`` (LIBSVM, 1-based word ids, the
training vocabulary for both; a document without words is dropped).

    make_sotu_year.py [--corpus data/sotu-para] --out DIR [--max-docs N]

Standard library only; the same corpus gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import math
from pathlib import Path


def years_of(corpus: Path) -> dict[tuple[str, int], int]:
    """(split, docID) -> year, from docs.tsv."""
    out: dict[tuple[str, int], int] = {}
    with open(corpus / "docs.tsv", encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        split_col, doc_col, year_col = (header.index(k) for k in ("split", "doc", "year"))
        for line in f:
            fields = line.rstrip("\n").split("\t")
            out[(fields[split_col], int(fields[doc_col]))] = int(fields[year_col])
    return out


def write_split(corpus: Path, split: str, years: dict[tuple[str, int], int], out: Path,
                max_docs: int) -> int:
    """Writes one split as LIBSVM; returns the number of samples."""
    docs = 0
    with gzip.open(corpus / split / "docword.txt.gz", "rt", encoding="ascii") as f, \
            open(out, "w", encoding="ascii") as o:
        for _ in range(3):
            f.readline()
        current, entries = None, []

        def flush() -> None:
            nonlocal docs
            if current is None or not entries or (max_docs and docs >= max_docs):
                return
            o.write(f"{years[(split, current)]} " + " ".join(entries) + "\n")
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
    ap.add_argument("--max-docs", type=int, default=0, help="at most N samples a split (0: all)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    years = years_of(a.corpus)
    for split, name in (("train", "train"), ("heldout", "test")):
        n = write_split(a.corpus, split, years, a.out / f"sotu-year.{name}.svm", a.max_docs)
        print(f"{a.out}/sotu-year.{name}.svm: {n} samples")


if __name__ == "__main__":
    main()
