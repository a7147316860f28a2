#!/usr/bin/env python3
"""Build kernel-drivers: a real sparse classification set for L1 logistic regression.

Each document of the kernel corpus (``make_kernel.py``: one document per Linux 6.1 source file,
its comments, documentation or Kconfig help text) is one example: label +1 when its path is
under ``drivers/``, -1 otherwise (``docs.tsv``), features = the vocabulary's words, value =
1 + ln(count) (as make_sotu_party.py). The train and heldout splits give
``kernel-drivers.train.svm`` and ``kernel-drivers.test.svm`` (LIBSVM, 1-based word ids; a
document without words is dropped).

    make_kernel_drivers.py [--corpus /work/data/kernel] --out DIR

Standard library only; the same corpus gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import math
from pathlib import Path


def labels_of(corpus: Path) -> dict[tuple[str, int], str]:
    """(split, docID) -> "+1" (drivers/) or "-1"."""
    out: dict[tuple[str, int], str] = {}
    with open(corpus / "docs.tsv", encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        split_col, doc_col, path_col = (header.index(k) for k in ("split", "doc", "path"))
        for line in f:
            fields = line.rstrip("\n").split("\t")
            label = "+1" if fields[path_col].startswith("drivers/") else "-1"
            out[(fields[split_col], int(fields[doc_col]))] = label
    return out


def write_split(corpus: Path, split: str, labels: dict[tuple[str, int], str], out: Path) -> int:
    """Writes one split as LIBSVM; returns the number of examples."""
    docs = 0
    with gzip.open(corpus / split / "docword.txt.gz", "rt", encoding="ascii") as f, \
            open(out, "w", encoding="ascii") as o:
        for _ in range(3):
            f.readline()
        current, entries = None, []

        def flush() -> None:
            nonlocal docs
            if current is None or not entries or (split, current) not in labels:
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
    ap.add_argument("--corpus", type=Path, default=Path("/work/data/kernel"))
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    labels = labels_of(a.corpus)
    for split, name in (("train", "train"), ("heldout", "test")):
        n = write_split(a.corpus, split, labels, a.out / f"kernel-drivers.{name}.svm")
        print(f"{a.out}/kernel-drivers.{name}.svm: {n} examples")


if __name__ == "__main__":
    main()
