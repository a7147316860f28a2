"""Shared fixtures of the Python package's tests: the rotor executable, and small real data
sets made from the shipped corpus data/sotu-para (the corpus itself, its ratings, sotu-year for
the Lasso, sotu-party for logistic regression) by the scripts of tools/data."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import rotor

REPO = Path(__file__).resolve().parents[2]
SOTU = REPO / "data" / "sotu-para"


def _cli() -> Path:
    env = os.environ.get("ROTOR_CLI")
    if env:
        return Path(env)
    # rotor is imported from <build>/python/rotor; the executable is <build>/apps/rotor.
    return Path(rotor.__file__).resolve().parents[2] / "apps" / "rotor"


@pytest.fixture(scope="session")
def cli():
    path = _cli()
    assert path.exists(), f"the rotor executable is not at {path} (set ROTOR_CLI)"

    def run(*args, check=True):
        return subprocess.run([str(path), *map(str, args)], capture_output=True, text=True,
                              check=check)

    return run


def read_docword(path: Path, max_docs: int | None = None):
    """A UCI docword file as a CSR matrix (docs x words) of int64 counts."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        d, w, nnz = (int(f.readline()) for _ in range(3))
        a = np.loadtxt(f, dtype=np.int64, ndmin=2, max_rows=nnz)
    X = sp.csr_matrix((a[:, 2], (a[:, 0] - 1, a[:, 1] - 1)), shape=(d, w))
    return X[:max_docs] if max_docs else X


def write_docword(X, path: Path):
    C = sp.coo_matrix(X)
    order = np.lexsort((C.col, C.row))
    with open(path, "w") as f:
        f.write(f"{X.shape[0]}\n{X.shape[1]}\n{C.nnz}\n")
        for i in order:
            f.write(f"{C.row[i] + 1} {C.col[i] + 1} {C.data[i]}\n")


@pytest.fixture(scope="session")
def sotu_vocab():
    return (SOTU / "train" / "vocab.txt").read_text().split("\n")[:-1]


@pytest.fixture(scope="session")
def sotu(tmp_path_factory, sotu_vocab):
    """The first 1,500 documents of sotu-para's training split (about 100,000 tokens): the CSR
    matrix, and the same as a UCI corpus (docword.txt + vocab.txt) for the command line."""
    X = read_docword(SOTU / "train" / "docword.txt.gz", 1500)
    d = tmp_path_factory.mktemp("sotu")
    write_docword(X, d / "docword.txt")
    (d / "vocab.txt").write_text("\n".join(sotu_vocab) + "\n")
    return X, d


def _run_script(name, out, *args):
    subprocess.run([sys.executable, str(REPO / "tools" / "data" / name), "--corpus", str(SOTU),
                    "--out", str(out), *args], check=True, capture_output=True)


def read_svm(path: Path, features: int | None = None):
    """A LIBSVM file as (CSR matrix with column j = feature j + 1, targets); with `features`,
    the features beyond them are left out."""
    from sklearn.datasets import load_svmlight_file  # noqa: PLC0415

    X, y = load_svmlight_file(str(path), zero_based=False)
    X = sp.csr_matrix(X)
    if features:
        X = X[:, :features] if X.shape[1] >= features else sp.csr_matrix(
            (X.data, X.indices, X.indptr), shape=(X.shape[0], features))
    return X, y


@pytest.fixture(scope="session")
def sotu_year(tmp_path_factory):
    """make_sotu_year.py: words -> the year of the address (9,585 + 1,065 samples)."""
    d = tmp_path_factory.mktemp("sotu-year")
    _run_script("make_sotu_year.py", d)
    return d / "sotu-year.train.svm", d / "sotu-year.test.svm"


@pytest.fixture(scope="session")
def sotu_party(tmp_path_factory):
    """make_sotu_party.py: Republican (+1) vs Democratic (-1) (8,294 + 907 examples)."""
    d = tmp_path_factory.mktemp("sotu-party")
    _run_script("make_sotu_party.py", d)
    return d / "sotu-party.train.svm", d / "sotu-party.test.svm"


@pytest.fixture(scope="session")
def ratings(tmp_path_factory, sotu):
    """make_docword_ratings.py on the sotu documents: document x word, 1 + ln(count), as
    `user item rating` lines; and the same as (user, item, rating) rows with users and items
    numbered in order of first appearance, as `rotor mf train` numbers the file's ids."""
    X, d = sotu
    out = tmp_path_factory.mktemp("ratings") / "ratings.txt"
    subprocess.run([sys.executable, str(REPO / "tools" / "data" / "make_docword_ratings.py"),
                    str(d / "docword.txt"), "--out", str(out), "--max-docs", "400"],
                   check=True, capture_output=True)
    users, items, rows = {}, {}, []
    for line in out.read_text().splitlines():
        u, i, r = line.split()
        rows.append((users.setdefault(u, len(users)), items.setdefault(i, len(items)), float(r)))
    return out, np.array(rows)
