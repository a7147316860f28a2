"""UCI bag-of-words corpora as SciPy CSR matrices, cached, and held-out subsets.

The UCI format (docword.txt[.gz] + vocab.txt): three header lines D, W, NNZ, then
`docID wordID count` lines, 1-based. Every tool of the comparison reads the same files:
rotor reads them itself, the Python peers read the CSR matrix made here.
"""
import gzip
import hashlib
import os

import numpy as np
import scipy.sparse as sp


def _open(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def read_vocab(path):
    """The words of a vocab.txt, in order (line i is word i, 0-based here)."""
    with open(path) as f:
        return [line.rstrip("\n") for line in f]


def read_uci(path):
    """Reads a UCI docword file into a D x W CSR matrix of counts (float64).

    Rows are documents in file id order (doc id i → row i-1); documents without lines stay as
    empty rows. Raises ValueError naming the file on a malformed header or body."""
    with _open(path) as f:
        try:
            d, w, nnz = (int(f.readline()) for _ in range(3))
        except ValueError as e:
            raise ValueError(f"{path}: bad UCI header: {e}") from None
        body = np.array(f.read().split(), dtype=np.int64)
    if body.size != 3 * nnz:
        raise ValueError(f"{path}: header says {nnz} entries, body has {body.size / 3:g}")
    triples = body.reshape(-1, 3)
    docs, words, counts = triples[:, 0] - 1, triples[:, 1] - 1, triples[:, 2]
    if nnz and (docs.min() < 0 or docs.max() >= d or words.min() < 0 or words.max() >= w):
        raise ValueError(f"{path}: a doc or word id is outside the header's D = {d}, W = {w}")
    return sp.csr_matrix((counts.astype(np.float64), (docs, words)), shape=(d, w))


def cached_csr(path, cache_dir):
    """read_uci(path), cached as .npz in cache_dir under a name derived from path, size, mtime."""
    st = os.stat(path)
    key = hashlib.sha1(f"{os.path.abspath(path)}:{st.st_size}:{st.st_mtime_ns}".encode())
    cache = os.path.join(cache_dir, f"csr-{key.hexdigest()[:16]}.npz")
    if os.path.exists(cache):
        return cache, sp.load_npz(cache)
    x = read_uci(path)
    os.makedirs(cache_dir, exist_ok=True)
    tmp = cache + f".tmp{os.getpid()}.npz"
    sp.save_npz(tmp, x, compressed=False)
    os.replace(tmp, cache)
    return cache, x


def write_subset(docword, out_path, every):
    """Writes every `every`-th non-empty document of a UCI file (the 1st, (1+every)-th, ...) as a
    UCI docword file; returns (docs, tokens) written. every = 1 copies all documents."""
    x = read_uci(docword)
    lengths = np.asarray(x.sum(axis=1)).ravel()
    rows = np.flatnonzero(lengths > 0)[::every]
    sub = x[rows].tocoo()
    order = np.lexsort((sub.col, sub.row))
    tmp = out_path + f".tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(f"{len(rows)}\n{x.shape[1]}\n{sub.nnz}\n")
        f.writelines(f"{r + 1} {c + 1} {int(v)}\n"
                     for r, c, v in zip(sub.row[order], sub.col[order], sub.data[order]))
    os.replace(tmp, out_path)
    return len(rows), int(lengths[rows].sum())
