#!/usr/bin/python3
"""Write a synthetic ratings matrix: a planted rank-r matrix observed on a power-law pattern.

The model (seeded; numpy's default generator, PCG64):

- factors W (N x r) and H (M x r) with i.i.d. N(0, r^-1/2) entries, so that
  w_u . h_i has variance 1;
- the observed pairs: user degrees are multinomial(K, p_u) with p_u proportional to
  (rank_u + 1)^-a, and each user's items are distinct draws with probability proportional to
  (rank_i + 1)^-b (a duplicate is drawn again: sampling without replacement), ranks a random
  permutation (ids do not sort by degree); each probability is capped so that no user expects
  more than M/2 ratings and no item more than N/2; exactly --nnz distinct pairs;
- each rating is mean + w_u . h_i + sigma * e with e ~ N(0, 1), written with
  --digits decimals.

Output: one ``user item rating`` line per rating, blank-separated, sorted by
user then item; ids are the 0-based rows of W and H. A ``.gz`` path is gzip
compressed (level 6, mtime 0). ``--factors PATH.npz`` also saves W, H, mean and
sigma. The same arguments give the same bytes (for a given numpy version: numpy
does not promise the same streams across versions).

Streaming: users are cut into blocks of about 10^6 ratings, each drawn from its
own seed sequence (seed, "PAIR", block) and written before the next, so memory
holds W, H and one block: about 0.3 GB at the Netflix shape.

``--preset 1e5|1e6|1e7|1e8`` sets Netflix's shape and density scaled to that
many ratings (users and items both times sqrt(nnz / 10^8); rank 20, sigma 0.5,
mean 3.6); ``--preset netflix`` (= 1e8, = ``--netflix-shape``) is the Netflix
Prize's shape itself: 480,189 users x 17,770 items, 10^8 ratings, about 2 GB of
text. Needs numpy (Debian ``python3-numpy``; /usr/bin/python3 has it).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first

import argparse  # noqa: E402
import gzip  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

PLANT = {"rank": 20, "noise": 0.5, "mean": 3.6}
# Netflix's shape and density (1.17%), scaled: users and items both by sqrt(nnz / 10^8).
PRESETS = {
    "1e5": {"users": 15_185, "items": 562, "nnz": 100_000, **PLANT},
    "1e6": {"users": 48_019, "items": 1_777, "nnz": 1_000_000, **PLANT},
    "1e7": {"users": 151_850, "items": 5_619, "nnz": 10_000_000, **PLANT},
    "netflix": {"users": 480_189, "items": 17_770, "nnz": 100_000_000, **PLANT},
}
PRESETS["1e8"] = PRESETS["netflix"]
NETFLIX = PRESETS["netflix"]
DEFAULTS = {"users": 1000, "items": 500, "nnz": 20_000, "rank": 10, "noise": 0.1, "mean": 0.0}
CHUNK = 1_000_000  # ratings per block of users (a block holds whole users)
WRITE_CHUNK = 100_000  # ratings formatted at a time
HEAVY = 16  # a user with more than M / HEAVY ratings draws its items by Gumbel top-k
GZIP_LEVEL = 6
PAIRS_STREAM = 0x5041_4952  # "PAIR": the seed stream of each block's draws


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


def user_degrees(np, nnz: int, m: int, pu, rng):
    """Ratings per user: multinomial(nnz, pu), none above m (the excess drawn again)."""
    d = rng.multinomial(nnz, pu)
    for _ in range(1000):
        excess = int(np.maximum(d - m, 0).sum())
        if excess == 0:
            return d
        d = np.minimum(d, m)
        room = np.where(d < m, pu, 0.0)
        d += rng.multinomial(excess, room / room.sum())
    raise SystemExit("could not place the ratings: too dense")


def blocks_of(np, degrees, chunk: int):
    """User ranges [a, b) of about `chunk` ratings each (a function of the degrees only)."""
    ends = np.cumsum(degrees)
    a = 0
    while a < len(degrees):
        base = ends[a - 1] if a else 0
        b = int(np.searchsorted(ends, base + chunk, side="left")) + 1
        b = min(max(b, a + 1), len(degrees))
        yield a, b
        a = b


def draw_items(np, degrees, m: int, pi, cdf, rng):
    """Sorted codes local_user * m + item: degrees[k] distinct items for each user k.

    Each user's set is the first d distinct values of i.i.d. draws from pi (successive sampling
    without replacement): light users by drawing and redrawing the shortfall, heavy users by
    the equivalent Gumbel top-k over all m items.
    """
    n = len(degrees)
    heavy = np.flatnonzero(degrees * HEAVY > m)
    need = degrees.copy()
    need[heavy] = 0
    parts = []
    log_pi = np.log(pi)
    for k in heavy:
        keys = log_pi + rng.gumbel(size=m)
        top = np.argpartition(-keys, degrees[k] - 1)[:degrees[k]]
        parts.append(k * m + np.sort(top))
    held = np.empty(0, dtype=np.int64)
    target = need.copy()
    for _ in range(10_000):
        total = int(need.sum())
        if total == 0:
            break
        users = np.repeat(np.arange(n, dtype=np.int64), need)
        items = np.minimum(np.searchsorted(cdf, rng.random(total), side="right"), m - 1)
        held = np.unique(np.concatenate([held, users * m + items]))
        need = target - np.bincount(held // m, minlength=n)
    else:
        raise SystemExit("could not draw distinct items: too dense")
    parts.append(held)
    return np.sort(np.concatenate(parts)) if heavy.size else held


def stream_ratings(np, users: int, items: int, nnz: int, rank: int, noise: float, mean: float,
                   user_exponent: float, item_exponent: float, seed: int, chunk: int = CHUNK):
    """(W, H, generator of (user ids, item ids, ratings) blocks sorted by user then item).

    Memory: W, H, the degree arrays and one block; the draws of block k come from the seed
    sequence (seed, PAIRS_STREAM, k), blocks being cut from the degrees alone, so the output
    does not depend on anything but the arguments.
    """
    if nnz > users * items // 4:
        raise SystemExit(f"--nnz {nnz} is more than a quarter of {users} x {items}")
    rng = np.random.default_rng(seed)
    scale = rank ** -0.25
    w = rng.normal(0.0, scale, size=(users, rank))
    h = rng.normal(0.0, scale, size=(items, rank))
    pu = degree_weights(np, users, user_exponent, 0.5 * items / nnz, rng)
    pi = degree_weights(np, items, item_exponent, 0.5 * users / nnz, rng)
    degrees = user_degrees(np, nnz, items, pu, rng)
    cdf = np.cumsum(pi)

    def blocks():
        for k, (a, b) in enumerate(blocks_of(np, degrees, chunk)):
            brng = np.random.default_rng(np.random.SeedSequence([seed, PAIRS_STREAM, k]))
            codes = draw_items(np, degrees[a:b], items, pi, cdf, brng)
            u = a + codes // items
            i = codes % items
            values = np.empty(len(codes))
            for c in range(0, len(codes), WRITE_CHUNK):  # gathered rows: 16 r bytes per rating
                s = slice(c, c + WRITE_CHUNK)
                values[s] = mean + np.einsum("kr,kr->k", w[u[s]], h[i[s]])
            values += noise * brng.standard_normal(len(codes))
            yield u, i, values

    return w, h, blocks()


def generate(np, users: int, items: int, nnz: int, rank: int, noise: float, mean: float,
             user_exponent: float, item_exponent: float, seed: int):
    """(user ids, item ids, ratings, W, H) in memory, sorted by user then item (small sizes)."""
    w, h, blocks = stream_ratings(np, users, items, nnz, rank, noise, mean, user_exponent,
                                  item_exponent, seed)
    parts = list(blocks)
    u, i, v = (np.concatenate([p[k] for p in parts]) for k in range(3))
    return u, i, v, w, h


def write_ratings(np, path: Path, blocks, digits: int) -> int:
    """Writes the blocks as ``user item rating`` lines; returns the number of ratings."""
    tmp = path.with_name(path.name + ".tmp")
    raw = open(tmp, "wb")
    out = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="",
                        compresslevel=GZIP_LEVEL) if path.suffix == ".gz" else raw
    line = f"{{}} {{}} {{:.{digits}f}}\n".format
    count = 0
    try:
        for u, i, values in blocks:
            for a in range(0, len(values), WRITE_CHUNK):  # Python strings: ~300 B per rating
                s = slice(a, a + WRITE_CHUNK)
                text = "".join(map(line, u[s].tolist(), i[s].tolist(), values[s].tolist()))
                out.write(text.encode("ascii"))
            count += len(values)
    finally:
        if out is not raw:
            out.close()
        raw.close()
    os.replace(tmp, path)
    return count


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
    p.add_argument("--preset", choices=sorted(PRESETS),
                   help="a size: 1e5 .. 1e8 ratings in Netflix's shape and density "
                        "(rank 20, sigma 0.5, mean 3.6); other flags override it")
    p.add_argument("--netflix-shape", action="store_true",
                   help="= --preset netflix: 480,189 x 17,770, 1e8 ratings (~2 GB of text)")
    args = p.parse_args(argv)
    if args.netflix_shape:
        if args.preset not in (None, "netflix", "1e8"):
            p.error("--netflix-shape and --preset differ")
        args.preset = "netflix"
    preset = PRESETS[args.preset] if args.preset else DEFAULTS
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
    w, h, blocks = stream_ratings(np, args.users, args.items, args.nnz, args.rank, args.noise,
                                  args.mean, args.user_exponent, args.item_exponent, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_ratings(np, args.out, blocks, args.digits)
    if args.factors is not None:
        np.savez(args.factors, w=w, h=h, mean=args.mean, noise=args.noise)
    print(f"{args.out}: {args.users} x {args.items}, {args.nnz} ratings, rank {args.rank}, "
          f"sigma {args.noise}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
