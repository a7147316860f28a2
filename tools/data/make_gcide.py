#!/usr/bin/env python3
"""Build the gcide corpus: one document per entry of the GNU Collaborative International Dictionary.

Source: ``apt-get download dict-gcide`` -> ``usr/share/dictd/gcide.dict.dz``
(dictzip, readable as gzip) and ``gcide.index`` (dictd index: headword, base-64
offset, base-64 length). GPL-2+.

An entry is a distinct (offset, length) block of the index; several headwords
may point at one block, which is one document. The four ``00-database-*``
blocks (the database's own description) are skipped. Documents are in offset
order (the dictionary's order). A document is the block's text, headword line
included, with every bracketed group removed: the source notes (``[1913
Webster]``, ``[WordNet 1.5]``, on nearly every sense, would otherwise be the
most frequent words) and the etymologies (``[F., fr. L. ...]``); this gives
the target token count of docs/data.md within 0.1%.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))

import gzip  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402

import datalib  # noqa: E402

_BRACKETS = re.compile(rb"\[[^\]]*\]")
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def dictd_number(text: str) -> int:
    """A dictd index number (base 64, most significant digit first)."""
    n = 0
    for ch in text:
        n = n * 64 + _B64.index(ch)
    return n


def entries(index_path: Path, dict_path: Path) -> list[tuple[str, bytes]]:
    """(first headword, text) of every distinct block, in offset order."""
    data = gzip.decompress(dict_path.read_bytes())
    blocks: dict[tuple[int, int], str] = {}
    skip: set[tuple[int, int]] = set()
    for line in index_path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) < 3:
            raise SystemExit(f"{index_path}: bad index line {line!r}")
        key = (dictd_number(fields[1]), dictd_number(fields[2]))
        if fields[0].startswith("00-database-") or fields[0].startswith("00database"):
            skip.add(key)
        blocks.setdefault(key, fields[0])
    out = []
    for (offset, length), head in sorted(blocks.items()):
        if (offset, length) in skip:
            continue
        if offset + length > len(data):
            raise SystemExit(f"{index_path}: block {offset}+{length} past the end of {dict_path}")
        out.append((head, _BRACKETS.sub(b" ", data[offset : offset + length])))
    return out


def main() -> int:
    args = datalib.parse_args(__doc__.split("\n\n")[0])
    started = time.time()
    deb = datalib.apt_download("dict-gcide", args.cache)
    root = datalib.extract_deb(deb, args.cache) / "usr" / "share" / "dictd"
    items = entries(root / "gcide.index", root / "gcide.dict.dz")
    docs_path, meta_path = datalib.write_docs(
        args.out,
        (text for _, text in items),
        ("headword",),
        ((head.replace("\t", " "),) for head, _ in items),
    )
    source = {
        "package": "Debian dict-gcide",
        "deb": deb.name,
        "files": "usr/share/dictd/gcide.dict.dz, gcide.index",
        "input_docs": len(items),
    }
    datalib.tokenize_docs(args, docs_path, meta_path, source, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
