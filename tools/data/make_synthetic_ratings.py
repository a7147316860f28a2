#!/usr/bin/python3
"""Write a synthetic ratings matrix: a planted rank-r matrix observed on a power-law pattern.

The model (seeded; numpy's default generator, PCG64):

- factors W (N x r) and H (M x r) with i.i.d. N(0, r^-1/2) entries, so that
  w_u . h_i has variance 1;
- the observed pairs: user u is drawn with probability proportional to
  (rank_u + 1)^-a and item i to (rank_i + 1)^-b, ranks a random permutation
  (ids do not sort by degree), each probability capped so that no user expects
  more than M/2 ratings and no item more than N/2; pairs drawn again are
  dropped and replaced until exactly --nnz distinct pairs are held;
- each rating is mean + w_u . h_i + sigma * e with e ~ N(0, 1), written with
  --digits decimals.

Output: one ``user item rating`` line per rating, blank-separated, sorted by
user then item; ids are the 0-based rows of W and H. A ``.gz`` path is gzip
compressed (mtime 0). ``--factors PATH.npz`` also saves W, H, mean and sigma.
The same arguments give the same bytes (for a given numpy version: numpy does
not promise the same streams across versions).

``--netflix-shape`` sets the Netflix Prize's shape: 480,189 users x 17,770
items, 10^8 ratings (rank 20, sigma 0.5, mean 3.6 unless given). That writes a
~2 GB text file and needs ~5 GB of memory and several minutes; tests use small
sizes. Needs numpy (Debian ``python3-numpy``; /usr/bin/python3 has it).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first

import argparse  # noqa: E402
import gzip  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

NETFLIX = {"users": 480_189, "items": 17_770, "nnz": 100_000_000, "rank": 20, "noise": 0.5,
           "mean": 3.6}
DEFAULTS = {"users": 1000, "items": 500, "nnz": 20_000, "rank": 10, "noise": 0.1, "mean": 0.0}
CHUNK = 1_000_000  # ratings formatted at a time


def import_numpy():
    try:
        import numpy
    except ImportError:
        raise SystemExit("make_synthetic_ratings.py needs numpy: apt-get install python3-numpy "
                         "(and run it with /usr/bin/python3)") from None
    return numpy


def degree_weights(np, n: int, exponent: float, cap: float, rng):
    """Probabilities (rank + 1)^-exponent over a random permutation of n ids, none above cap."""
    w = np.arange(1, n + 1, dtype=np.float64) ** -exponent
    w /= w.sum()
    if cap * n < 1.0:
        raise SystemExit(f"no degree distribution over {n} ids has every share <= {cap:.3g}: "
                         "ask for fewer ratings")
    for _ in range(100):  # clip the head, give its mass to the rest, until nothing exceeds cap
        over = w > cap
        if not over.any():
            break
        excess = (w[over] - cap).sum()
        w[over] = cap
        w[~over] += excess * w[~over] / w[~over].sum()
    return w[rng.permutation(n)]


def draw_pairs(np, n: int, m: int, nnz: int, pu, pi, rng):
    """Exactly nnz distinct (user, item) pairs, sorted by user then item, as codes u*m + i."""
    held = np.empty(0, dtype=np.int64)
    for _ in range(200):
        need = nnz - held.size
        if need == 0:
            return held
        users = rng.choice(n, size=need, p=pu)
        items = rng.choice(m, size=need, p=pi)
        held = np.union1d(held, users.astype(np.int64) * m + items)
    raise SystemExit(f"could not place {nnz} distinct ratings in {n} x {m}: too dense")


def generate(np, users: int, items: int, nnz: int, rank: int, noise: float, mean: float,
             user_exponent: float, item_exponent: float, seed: int):
    """(user ids, item ids, ratings, W, H), ratings sorted by user then item."""
    if nnz > users * items // 4:
        raise SystemExit(f"--nnz {nnz} is more than a quarter of {users} x {items}")
    rng = np.random.default_rng(seed)
    scale = rank ** -0.25
    w = rng.normal(0.0, scale, size=(users, rank))
    h = rng.normal(0.0, scale, size=(items, rank))
    pu = degree_weights(np, users, user_exponent, 0.5 * items / nnz, rng)
    pi = degree_weights(np, items, item_exponent, 0.5 * users / nnz, rng)
    codes = draw_pairs(np, users, items, nnz, pu, pi, rng)
    u = codes // items
    i = codes % items
    values = np.empty(nnz, dtype=np.float64)
    for start in range(0, nnz, CHUNK):  # the dot products chunk by chunk: bounded memory
        s = slice(start, start + CHUNK)
        values[s] = mean + np.einsum("kr,kr->k", w[u[s]], h[i[s]])
    values += noise * rng.standard_normal(nnz)
    return u, i, values, w, h


def write_ratings(np, path: Path, u, i, values, digits: int) -> None:
    tmp = path.with_name(path.name + ".tmp")
    raw = open(tmp, "wb")
    out = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") if path.suffix == ".gz" \
        else raw
    try:
        for start in range(0, len(values), CHUNK):
            s = slice(start, start + CHUNK)
            buf = io.StringIO()
            rows = np.column_stack([u[s], i[s], values[s]])
            np.savetxt(buf, rows, fmt=["%d", "%d", f"%.{digits}f"], delimiter=" ")
            out.write(buf.getvalue().encode("ascii"))
    finally:
        if out is not raw:
            out.close()
        raw.close()
    os.replace(tmp, path)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, type=Path, help="ratings file (.gz: compressed)")
    p.add_argument("--users", type=int, help=f"N (default {DEFAULTS['users']})")
    p.add_argument("--items", type=int, help=f"M (default {DEFAULTS['items']})")
    p.add_argument("--nnz", type=int, help=f"ratings (default {DEFAULTS['nnz']})")
    p.add_argument("--rank", type=int, help=f"planted rank r (default {DEFAULTS['rank']})")
    p.add_argument("--noise", type=float, help=f"sigma (default {DEFAULTS['noise']})")
    p.add_argument("--mean", type=float, help=f"added to every rating (default "
                                              f"{DEFAULTS['mean']})")
    p.add_argument("--user-exponent", type=float, default=0.5, help="a: user degree power law")
    p.add_argument("--item-exponent", type=float, default=0.8, help="b: item degree power law")
    p.add_argument("--digits", type=int, default=3, help="decimals written")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--factors", type=Path, help="also save W, H, mean, sigma to this .npz")
    p.add_argument("--netflix-shape", action="store_true",
                   help="480,189 x 17,770, 1e8 ratings (large: ~2 GB of text)")
    args = p.parse_args(argv)
    preset = NETFLIX if args.netflix_shape else DEFAULTS
    for key, value in preset.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    for key in ("users", "items", "nnz", "rank"):
        if getattr(args, key) < 1:
            p.error(f"--{key} must be >= 1")
    if args.noise < 0 or args.digits < 0:
        p.error("--noise and --digits must be >= 0")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    np = import_numpy()
    u, i, values, w, h = generate(np, args.users, args.items, args.nnz, args.rank, args.noise,
                                  args.mean, args.user_exponent, args.item_exponent, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_ratings(np, args.out, u, i, values, args.digits)
    if args.factors is not None:
        np.savez(args.factors, w=w, h=h, mean=args.mean, noise=args.noise)
    print(f"{args.out}: {args.users} x {args.items}, {args.nnz} ratings, rank {args.rank}, "
          f"sigma {args.noise}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
