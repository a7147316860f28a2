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
from pathlib import Path

from docword_svm import targets_of, write_splits

# The repository from this script's own path: the default corpus is found from any directory.
REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=REPO / "data" / "sotu-para",
                    help="the sotu-para corpus (default: the repository's data/sotu-para)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--max-docs", type=int, default=0, help="at most N samples a split (0: all)")
    a = ap.parse_args()
    targets = targets_of(a.corpus, lambda row: str(int(row["year"])))
    write_splits(a.corpus, targets, a.out, "sotu-year", "samples", a.max_docs)


if __name__ == "__main__":
    main()
