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
from pathlib import Path

from docword_svm import targets_of, write_splits

# The repository from this script's own path: the default corpus is found from any directory.
REPO = Path(__file__).resolve().parents[2]

LABELS = {"Republican": "+1", "Democratic": "-1"}


def label(row: dict[str, str], era: int) -> str | None:
    """By party for the two parties kept (None for the others), or by era when era > 0."""
    if era > 0:
        return "+1" if int(row["year"]) >= era else "-1"
    return LABELS.get(row["party"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=REPO / "data" / "sotu-para",
                    help="the sotu-para corpus (default: the repository's data/sotu-para)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--era", type=int, default=0,
                    help="label by year >= ERA instead of by party (0: by party)")
    ap.add_argument("--max-docs", type=int, default=0, help="at most N examples a split (0: all)")
    a = ap.parse_args()
    targets = targets_of(a.corpus, lambda row: label(row, a.era))
    stem = "sotu-era" if a.era > 0 else "sotu-party"
    write_splits(a.corpus, targets, a.out, stem, "examples", a.max_docs)


if __name__ == "__main__":
    main()
