#!/usr/bin/env python3
"""Turn a UCI bag-of-words corpus into a ratings matrix: documents x words, 1 + ln(count).

A second real sparse matrix for matrix factorization, beside MovieLens: row = document
(the UCI docID), column = word (the UCI wordID), value = 1 + ln(count) for every (document,
word) pair the corpus holds (a log-scaled term frequency; a word seen once gives 1). Heavily
skewed degrees on both sides, as real ratings matrices have.

Input: a UCI ``docword.txt[.gz]`` (lines ``D``, ``W``, ``NNZ``, then ``docID wordID count``),
or a corpus folder written by ``tokenize.py`` (``DIR/train/docword.txt.gz``, else
``DIR/docword.txt.gz``), e.g. /work/data/kernel. Output: ``user item rating`` lines,
blank-separated, in the input's order (by document then word), ``--digits`` decimals
(default 4); a ``.gz`` path is gzip compressed (mtime 0). Streams: memory does not grow with
the corpus. Standard library only.

    make_docword_ratings.py CORPUS --out FILE[.gz] [--digits 4] [--max-docs N]
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402


def docword_path(source: Path) -> Path:
    """The docword file of a corpus folder (its train split first), or `source` itself."""
    if source.is_dir():
        for candidate in (source / "train" / "docword.txt.gz", source / "docword.txt.gz",
                          source / "train" / "docword.txt", source / "docword.txt"):
            if candidate.exists():
                return candidate
        raise SystemExit(f"{source}: no docword.txt[.gz] in it or in its train/ folder")
    return source


def open_text(path: Path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="ascii") if gz else open(path, "rt", encoding="ascii")


def convert(lines, write, digits: int, max_docs: int | None = None) -> dict:
    """Writes ``doc word 1+ln(count)`` lines for a UCI docword stream; returns its counts."""
    lines = iter(lines)
    header = []
    for line in lines:
        if line.strip():
            header.append(int(line))
        if len(header) == 3:
            break
    if len(header) < 3:
        raise SystemExit("not a UCI docword file: fewer than 3 header lines")
    docs, words, nnz = header
    fmt = f"{{}} {{}} {{:.{digits}f}}\n".format
    seen_docs = set()
    written = 0
    read = 0
    buf = []
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise SystemExit(f"docword line {read + 4}: expected docID wordID count: {line!r}")
        d, w, c = int(parts[0]), int(parts[1]), int(parts[2])
        read += 1
        if not (1 <= d <= docs and 1 <= w <= words and c >= 1):
            raise SystemExit(f"docword line {read + 3}: out of range: {line.strip()!r}")
        if max_docs is not None and d not in seen_docs and len(seen_docs) == max_docs:
            continue
        seen_docs.add(d)
        buf.append(fmt(d, w, 1.0 + math.log(c)))
        written += 1
        if len(buf) >= 100_000:
            write("".join(buf))
            buf.clear()
    write("".join(buf))
    if read != nnz:
        raise SystemExit(f"docword header says {nnz} entries, the file holds {read}")
    return {"docs": docs, "words": words, "nnz": nnz, "ratings": written,
            "rated_docs": len(seen_docs)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", type=Path, help="docword.txt[.gz] or a corpus folder")
    p.add_argument("--out", type=Path, required=True, help="ratings file (.gz: compressed)")
    p.add_argument("--digits", type=int, default=4, help="decimals written (4)")
    p.add_argument("--max-docs", type=int, help="keep the first N documents only")
    args = p.parse_args(argv)
    if args.digits < 0 or (args.max_docs is not None and args.max_docs < 1):
        p.error("--digits >= 0, --max-docs >= 1")
    src = docword_path(args.corpus)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + ".tmp")
    with open(tmp, "wb") as raw:
        out = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") \
            if args.out.suffix == ".gz" else raw
        try:
            with open_text(src) as f:
                stats = convert(f, lambda s: out.write(s.encode("ascii")), args.digits,
                                args.max_docs)
        finally:
            if out is not raw:
                out.close()
    os.replace(tmp, args.out)
    print(f"{args.out}: from {src}: {json.dumps(stats)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
