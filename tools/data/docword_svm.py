"""Supervised sets from a rotor corpus directory: one LIBSVM example per document.

A corpus directory as the tools/data builders write it has ``docs.tsv`` (a header line, then one
row per document: at least ``split`` and ``doc``, plus whatever the source knows: ``path``,
``party``, ``year``…) and one UCI ``docword.txt.gz`` per split (``train``, ``heldout``). The
make_sotu_party.py, make_sotu_year.py and make_kernel_drivers.py scripts each choose a target
per document from docs.tsv and write every document's words as features, value 1 + ln(count).

Standard library only; the same corpus gives the same bytes.
"""

from __future__ import annotations

import gzip
import math
from pathlib import Path
from typing import Callable

#: (split, docID) -> the target written first on the document's line.
Targets = dict[tuple[str, int], str]

#: The train split is written as NAME.train.svm, the heldout split as NAME.test.svm.
SPLITS = (("train", "train"), ("heldout", "test"))


def targets_of(corpus: Path, target: Callable[[dict[str, str]], str | None]) -> Targets:
    """(split, docID) -> target(row) over the rows of docs.tsv (a row as {column: value});
    documents whose target is None are left out."""
    out: Targets = {}
    with open(corpus / "docs.tsv", encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(header, line.rstrip("\n").split("\t")))
            value = target(row)
            if value is not None:
                out[(row["split"], int(row["doc"]))] = value
    return out


def write_split(corpus: Path, split: str, targets: Targets, out: Path, max_docs: int = 0) -> int:
    """Writes the documents of one split that have a target (and at least one word) as LIBSVM,
    1-based word ids, value 1 + ln(count); at most max_docs of them (0: all). Returns how many."""
    docs = 0
    with gzip.open(corpus / split / "docword.txt.gz", "rt", encoding="ascii") as f, \
            open(out, "w", encoding="ascii") as o:
        for _ in range(3):
            f.readline()
        current, entries = None, []

        def flush() -> None:
            nonlocal docs
            if current is None or not entries or (split, current) not in targets or \
                    (max_docs and docs >= max_docs):
                return
            o.write(f"{targets[(split, current)]} " + " ".join(entries) + "\n")
            docs += 1

        for line in f:
            doc, word, count = (int(x) for x in line.split())
            if doc != current:
                flush()
                current, entries = doc, []
            entries.append(f"{word}:{1 + math.log(count):.6g}")
        flush()
    return docs


def write_splits(corpus: Path, targets: Targets, out_dir: Path, stem: str, noun: str,
                 max_docs: int = 0) -> None:
    """Writes OUT_DIR/STEM.train.svm and STEM.test.svm and prints their counts ("N NOUN")."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for split, name in SPLITS:
        n = write_split(corpus, split, targets, out_dir / f"{stem}.{name}.svm", max_docs)
        print(f"{out_dir}/{stem}.{name}.svm: {n} {noun}")
