#!/usr/bin/env python3
"""Build kernel-drivers: a real sparse classification set for L1 logistic regression.

Each document of the kernel corpus (``make_kernel.py``: one document per Linux 6.1 source file,
its comments, documentation or Kconfig help text) is one example: label +1 when its path is
under ``drivers/``, -1 otherwise (``docs.tsv``), features = the vocabulary's words, value =
1 + ln(count) (as make_sotu_party.py). The train and heldout splits give
``kernel-drivers.train.svm`` and ``kernel-drivers.test.svm`` (LIBSVM, 1-based word ids; a
document without words is dropped).

    make_kernel_drivers.py --corpus KERNEL_CORPUS_DIR --out DIR

Standard library only; the same corpus gives the same bytes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from docword_svm import targets_of, write_splits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True,
                    help="the kernel corpus directory make_kernel.py wrote")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    targets = targets_of(a.corpus,
                         lambda row: "+1" if row["path"].startswith("drivers/") else "-1")
    write_splits(a.corpus, targets, a.out, "kernel-drivers", "examples")


if __name__ == "__main__":
    main()
