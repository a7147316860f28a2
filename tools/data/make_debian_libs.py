#!/usr/bin/env python3
"""Build debian-libs: a real sparse classification set for L1 logistic regression.

Each document of the debian-desc corpus (``make_debian_desc.py``: one English Debian package
description) is one example: label +1 when its package is a library (the name starts with
``lib``, Debian's naming rule for library packages), -1 otherwise (``docs.tsv``'s ``package``
column), features = the vocabulary's words, value = 1 + ln(count) (as make_sotu_party.py).
The train and heldout splits give ``debian-libs.train.svm`` and ``debian-libs.test.svm``
(LIBSVM, 1-based word ids; a document without words is dropped).

    make_debian_libs.py --corpus DEBIAN_DESC_CORPUS_DIR --out DIR

Standard library only; the same corpus gives the same bytes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from docword_svm import targets_of, write_splits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True,
                    help="the debian-desc corpus directory make_debian_desc.py wrote")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    targets = targets_of(a.corpus,
                         lambda row: "+1" if row["package"].startswith("lib") else "-1")
    write_splits(a.corpus, targets, a.out, "debian-libs", "examples")


if __name__ == "__main__":
    main()
