#!/usr/bin/env python3
"""Build the movielens ratings: MovieLens "latest-small" (2016 edition) from Debian's r-cran-dslabs.

Source: ``apt-get download r-cran-dslabs`` -> ``usr/lib/R/site-library/dslabs/
data/Rdata.rdx|rdb``, the R package's lazy-load database, object ``movielens``:
a data frame of 100,004 ratings (671 users, 9,066 movies, ratings 0.5-5 in
steps of 0.5) with columns movieId, title, year, genres, userId, rating,
timestamp. It is read with ``rdata.py`` (no R needed). dslabs is under the
Artistic-2.0 licence; the MovieLens data are GroupLens' (research use, cite
Harper & Konstan, ACM TiiS 2015).

Writes into ``--out``: ``ratings.csv`` with the header ``userId,movieId,rating``
and one line per rating sorted by user then movie (ratings printed as Python
floats: ``2.5``, ``3.0``), and ``source.json`` (package file, counts, mean).
The output is the same bytes on every run for the same package version.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import datalib  # noqa: E402
import rdata  # noqa: E402

PACKAGE = "r-cran-dslabs"
RDX = Path("usr/lib/R/site-library/dslabs/data/Rdata.rdx")
OBJECT = "movielens"


def ratings_from_frame(frame: rdata.RObject) -> list[tuple[int, int, float]]:
    """(userId, movieId, rating) of every row, sorted; fails on NA, a non-finite rating or a
    repeated (user, movie) pair."""
    cols = rdata.data_frame_columns(frame)
    for name in ("userId", "movieId", "rating"):
        if name not in cols:
            raise SystemExit(f"{OBJECT}: no column {name!r} (has {', '.join(cols)})")
    users, movies, values = (cols[n].value for n in ("userId", "movieId", "rating"))
    if not len(users) == len(movies) == len(values):
        raise SystemExit(f"{OBJECT}: columns of different lengths")
    rows = []
    for k, (u, m, r) in enumerate(zip(users, movies, values)):
        if rdata.NA_INTEGER in (u, m) or not math.isfinite(r):
            raise SystemExit(f"{OBJECT}: row {k + 1} has a missing or non-finite field")
        rows.append((int(u), int(m), float(r)))
    rows.sort()
    for a, b in zip(rows, rows[1:]):
        if a[:2] == b[:2]:
            raise SystemExit(f"{OBJECT}: user {a[0]} rated movie {a[1]} twice")
    return rows


def write_csv(path: Path, rows: list[tuple[int, int, float]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="ascii", newline="\n") as f:
        f.write("userId,movieId,rating\n")
        f.writelines(f"{u},{m},{r!r}\n" for u, m, r in rows)
    os.replace(tmp, path)


def stats(rows: list[tuple[int, int, float]]) -> dict:
    return {
        "ratings": len(rows),
        "users": len({u for u, _, _ in rows}),
        "movies": len({m for _, m, _ in rows}),
        "mean": round(sum(r for _, _, r in rows) / max(len(rows), 1), 6),
        "min": min((r for _, _, r in rows), default=0.0),
        "max": max((r for _, _, r in rows), default=0.0),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--cache", type=Path, default=datalib.DEFAULT_CACHE, help="download cache")
    args = p.parse_args()
    started = time.time()
    deb = datalib.apt_download(PACKAGE, args.cache)
    rdx = datalib.extract_deb(deb, args.cache) / RDX
    rows = ratings_from_frame(rdata.lazyload_fetch(rdx, OBJECT))
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out / "ratings.csv", rows)
    source = {"package": f"Debian {PACKAGE}", "deb": deb.name, "file": str(RDX),
              "object": OBJECT, **stats(rows)}
    (args.out / "source.json").write_text(json.dumps(source, indent=2, sort_keys=True) + "\n")
    datalib.log(f"{args.out}/ratings.csv: {json.dumps(stats(rows))} "
                f"in {time.time() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
