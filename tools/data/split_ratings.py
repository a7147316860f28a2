#!/usr/bin/env python3
"""Split a ratings file into a training and a test file, by user, seeded.

Each user with n ratings sends min(round(f n), n - 1) of them, chosen uniformly, to the test
file, so every user keeps at least one rating in training (the rule of rotor's
``split_ratings(..., SplitBy::kUser)``; the draws differ: they come from Python's
``random.Random("<seed>:<user id>")``, so the split depends only on the seed and the file, and
not on the order of the users). Lines are copied verbatim, in input order; comment and blank
lines are dropped and a header line (the first data line when none of its first three fields is
a number, as rotor reads it) is written to both outputs.

A user's ratings are grouped while they are contiguous (files sorted by user, as
``make_movielens.py`` and ``make_synthetic_ratings.py`` write them): the script streams and
holds one user's lines at a time. A user whose ratings are scattered is split run by run.

Plain or gzip input (by the magic bytes); a ``.gz`` output is gzip compressed (mtime 0).
Standard library only.

    split_ratings.py RATINGS --train TRAIN --test TEST [--fraction 0.2] [--seed 1]
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import sys
from pathlib import Path

_NUMBER = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def open_text(path: Path):
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, "rt", encoding="utf-8", newline="")


def open_out(path: Path, gz: bool):
    raw = open(path, "wb")
    if gz:
        return gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename=""), raw
    return raw, None


def fields_of(line: str, csv: bool) -> list[str]:
    return [f.strip(" \t") for f in line.split(",")] if csv else line.split()


def is_header(fields: list[str]) -> bool:
    return not any(_NUMBER.match(f) for f in fields[:3])


def test_positions(user: str, n: int, fraction: float, seed: int) -> set[int]:
    """The positions (0-based, within the user's ratings) that go to the test file."""
    if n < 2:
        return set()
    t = min(int(fraction * n + 0.5), n - 1)
    return set(random.Random(f"{seed}:{user}").sample(range(n), t))


def split_stream(lines, fraction: float, seed: int, write_train, write_test) -> tuple[int, int]:
    """Splits `lines` (text lines with their newlines); returns (train, test) rating counts."""
    csv = None
    user = None
    group: list[str] = []
    counts = [0, 0]

    def flush():
        chosen = test_positions(user, len(group), fraction, seed)
        for k, text in enumerate(group):
            (write_test if k in chosen else write_train)(text)
            counts[k in chosen] += 1

    for line in lines:
        body = line.rstrip("\r\n")
        stripped = body.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        if not line.endswith("\n"):
            line += "\n"
        if csv is None:
            csv = "," in body
            if is_header(fields_of(body, csv)):
                write_train(line)
                write_test(line)
                continue
        fields = fields_of(body, csv)
        if len(fields) < 3:
            raise SystemExit(f"split_ratings.py: a line with fewer than 3 fields: {body!r}")
        if fields[0] != user:
            if group:
                flush()
            user, group = fields[0], []
        group.append(line)
    if group:
        flush()
    return counts[0], counts[1]


def split_file(src: Path, train: Path, test: Path, fraction: float, seed: int) -> tuple[int, int]:
    outs = []
    try:
        for path in (train, test):
            path.parent.mkdir(parents=True, exist_ok=True)
            outs.append(open_out(path.with_name(path.name + ".tmp"), path.suffix == ".gz"))
        writers = [lambda s, o=o: o.write(s.encode("utf-8")) for o, _ in outs]
        with open_text(src) as f:
            counts = split_stream(f, fraction, seed, writers[0], writers[1])
    finally:
        for out, raw in outs:
            out.close()
            if raw is not None:
                raw.close()
    for path in (train, test):
        os.replace(path.with_name(path.name + ".tmp"), path)
    return counts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ratings", type=Path)
    p.add_argument("--train", type=Path, required=True)
    p.add_argument("--test", type=Path, required=True)
    p.add_argument("--fraction", type=float, default=0.2, help="test share per user (0.2)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    if not 0.0 <= args.fraction <= 1.0:
        p.error("--fraction must be in [0, 1]")
    n_train, n_test = split_file(args.ratings, args.train, args.test, args.fraction, args.seed)
    print(f"{args.ratings}: {n_train} train, {n_test} test ratings", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
