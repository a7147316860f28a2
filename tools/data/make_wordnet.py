#!/usr/bin/env python3
"""Build the wordnet corpus: one document per WordNet 3.0 synset (lemmas + gloss).

Source: ``apt-get download wordnet-base`` -> ``usr/share/wordnet/data.{adj,adv,
noun,verb}`` (the WordNet database files, format wndb(5WN)). WordNet licence
(Princeton, free use with the copyright notice).

Files are read in that (alphabetical) order, synsets in file order; the
licence header lines (they start with two spaces) are skipped. A document is
the synset's lemmas (``_`` made a space, adjective markers such as ``(a)``
removed) followed by its gloss (the text after ``|``: definition and examples).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))

import re  # noqa: E402
import time  # noqa: E402

import datalib  # noqa: E402

POS_FILES = ("adj", "adv", "noun", "verb")
_ADJ_MARKER = re.compile(rb"\((?:a|p|ip)\)$")


def synsets(path: Path) -> list[tuple[str, bytes, bytes]]:
    """(offset, lemmas, gloss) of every synset in one data.* file."""
    out = []
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        if line.startswith(b"  ") or not line.strip():
            continue
        head, bar, gloss = line.partition(b" | ")
        fields = head.split()
        try:
            count = int(fields[3], 16)
            lemmas = [_ADJ_MARKER.sub(b"", fields[4 + 2 * i]) for i in range(count)]
        except (IndexError, ValueError):
            raise SystemExit(f"{path}:{number}: not a WordNet synset line") from None
        out.append((fields[0].decode(), b" ".join(lemmas).replace(b"_", b" "), gloss.strip()))
    return out


def main() -> int:
    args = datalib.parse_args(__doc__.split("\n\n")[0])
    started = time.time()
    deb = datalib.apt_download("wordnet-base", args.cache)
    root = datalib.extract_deb(deb, args.cache) / "usr" / "share" / "wordnet"
    docs: list[bytes] = []
    meta: list[tuple[str, str]] = []
    for pos in POS_FILES:
        for offset, lemmas, gloss in synsets(root / f"data.{pos}"):
            docs.append(lemmas + b" " + gloss)
            meta.append((pos, offset))
    docs_path, meta_path = datalib.write_docs(args.out, docs, ("pos", "offset"), meta)
    source = {
        "package": "Debian wordnet-base",
        "deb": deb.name,
        "files": "usr/share/wordnet/data." + ",".join(POS_FILES),
        "input_docs": len(docs),
    }
    datalib.tokenize_docs(args, docs_path, meta_path, source, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
