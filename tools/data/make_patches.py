#!/usr/bin/env python3
"""Whitened natural-image patches for `rotor rica train` (docs/rica.md, "Data").

The photographs are scikit-learn's two sample images, china.jpg and flower.jpg (427x640 colour
photographs shipped in Debian's python3-sklearn package, read with sklearn.datasets.
load_sample_images, which needs python3-pil). Each is turned to grey levels in [0, 1] and
downsampled by averaging blocks of DOWNSAMPLE x DOWNSAMPLE pixels (default 2: JPEG's 8x8 block
artefacts would otherwise teach checkerboard filters); patches of
SIZE x SIZE pixels are cut at random positions (a seeded generator, both images alike), each
pixel's mean over the training patches is removed, and the set is ZCA-whitened as in the RICA literature
(Le et al. 2011): with the patches' covariance E diag(d) E', x <- E diag(1/sqrt(d + eps)) E' x,
eps = EPS times the mean eigenvalue, so that the whitened dimensions have about unit variance
and the noisiest directions are damped. The held-out patches (--heldout) are whitened with the
training set's transform.

Writes TSV, one patch per row (SIZE*SIZE columns, row-major pixels), the numbers with 7
significant digits:
    tools/data/make_patches.py --size 8 --count 100000 --out /tmp/patches8.tsv \
        --heldout 10000 --heldout-out /tmp/patches8-heldout.tsv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first

import numpy as np  # noqa: E402


def photographs(downsample: int) -> list[np.ndarray]:
    """The sample photographs as grey images in [0, 1], each block of downsample x downsample
    pixels averaged into one (which removes most of JPEG's 8x8 block artefacts)."""
    from sklearn.datasets import load_sample_images

    out = []
    for img in load_sample_images().images:
        g = img.astype(np.float64) @ np.array([0.299, 0.587, 0.114]) / 255.0
        h, w = (g.shape[0] // downsample) * downsample, (g.shape[1] // downsample) * downsample
        out.append(g[:h, :w].reshape(h // downsample, downsample, w // downsample,
                                      downsample).mean(axis=(1, 3)))
    return out


def cut(images: list[np.ndarray], size: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` patches (rows of size*size pixels) at random positions of random images."""
    out = np.empty((count, size * size))
    which = rng.integers(0, len(images), count)
    for k, img in enumerate(images):
        rows = np.flatnonzero(which == k)
        ys = rng.integers(0, img.shape[0] - size + 1, rows.size)
        xs = rng.integers(0, img.shape[1] - size + 1, rows.size)
        for r, y, x in zip(rows, ys, xs):
            out[r] = img[y:y + size, x:x + size].ravel()
    return out


def zca(train: np.ndarray, eps: float) -> np.ndarray:
    """The ZCA whitening matrix of the rows of `train`."""
    cov = train.T @ train / train.shape[0]
    d, e = np.linalg.eigh(cov)
    d = np.maximum(d, 0)
    return (e / np.sqrt(d + eps * d.mean())) @ e.T


def write_tsv(path: str, x: np.ndarray) -> None:
    np.savetxt(path, x, fmt="%.7g", delimiter="\t")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=8, help="patch side in pixels (8 or 16)")
    ap.add_argument("--count", type=int, default=100000, help="training patches")
    ap.add_argument("--heldout", type=int, default=0, help="held-out patches")
    ap.add_argument("--eps", type=float, default=0.1, help="whitening's eps, x mean eigenvalue")
    ap.add_argument("--downsample", type=int, default=2, help="average blocks of N x N pixels")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="training patches (TSV)")
    ap.add_argument("--heldout-out", help="held-out patches (TSV); required with --heldout")
    a = ap.parse_args(argv)
    if a.size < 2 or a.count < 1 or a.heldout < 0 or (a.heldout > 0 and not a.heldout_out):
        ap.error("--size >= 2, --count >= 1, --heldout >= 0 (with --heldout-out)")
    rng = np.random.default_rng(a.seed)
    images = photographs(a.downsample)
    x = cut(images, a.size, a.count + a.heldout, rng)
    # Centred per pixel, not per patch: removing each patch's mean would leave X without its
    # DC direction, and rows of W there cost nothing and learn nothing (dead filters).
    mean = x[: a.count].mean(axis=0)
    train, held = x[: a.count] - mean, x[a.count:] - mean
    white = zca(train, a.eps)
    write_tsv(a.out, train @ white)
    if a.heldout:
        write_tsv(a.heldout_out, held @ white)
    print(f"make_patches: {a.count} + {a.heldout} patches of {a.size}x{a.size} from "
          f"{len(images)} photographs, whitened (eps {a.eps})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
