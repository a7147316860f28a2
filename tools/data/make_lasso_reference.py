#!/usr/bin/python3
"""Write small Lasso data sets and scikit-learn's solutions on them: the reference
that tests/core/lasso/test_objective.cpp compares rotor's kernels against.

Data sets (written into --out):

- ``diabetes.csv``: scikit-learn's diabetes data (Efron et al., "Least angle
  regression", 2004), raw features (``load_diabetes(scaled=False)``), dense,
  with a header; target ``y`` last. 442 samples x 10 features.
- ``sparse.svm``: synthetic LIBSVM, 80 samples x 40 features, density 0.15, a
  planted 6-sparse beta, noise 0.1 (numpy PCG64, --seed).
- ``wide.svm``: synthetic LIBSVM with p >> n: 30 samples x 120 features,
  density 0.2, planted 5-sparse beta.

Every value is written with repr(), so reading the file back gives the same
doubles. The problem solved is rotor's (docs/lasso.md): each column
standardised to mean 0 and sum of squares N (population sd; a constant column
is dropped), y left raw, an unpenalised intercept, and

    F(w) = 1/(2N) ||y - mean(y) - Z w||^2 + lambda ||w||_1,

which is exactly scikit-learn's ``Lasso(alpha=lambda, fit_intercept=True)`` on
Z. For each data set and each fraction in --fractions, lambda = fraction *
lambda_max with lambda_max = max_j |z_j^T (y - mean(y))| / N; scikit-learn
solves with tol=1e-14 and the reference records lambda, F at its solution, the
number of nonzeros and w (standardised units).

Output ``reference.tsv``: comment lines (the command, versions), then
``data  lambda  objective  nonzeros  coefficients`` (coefficients comma
separated). Needs numpy and scikit-learn (Debian ``python3-numpy``,
``python3-sklearn``; /usr/bin/python3 has them). The same arguments give the
same bytes for the same numpy and scikit-learn versions.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first

import argparse  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.linear_model import Lasso  # noqa: E402


def write_csv(path: Path, x: np.ndarray, y: np.ndarray) -> None:
    names = [f"x{j + 1}" for j in range(x.shape[1])] + ["y"]
    with path.open("w") as f:
        f.write(",".join(names) + "\n")
        for row, t in zip(x, y):
            f.write(",".join(repr(float(v)) for v in row) + "," + repr(float(t)) + "\n")


def write_svm(path: Path, x: np.ndarray, y: np.ndarray) -> None:
    with path.open("w") as f:
        f.write("# synthetic sparse regression data (tools/data/make_lasso_reference.py)\n")
        for row, t in zip(x, y):
            feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
            f.write(f"{float(t)!r} {feats}".rstrip() + "\n")


def synthetic(rng: np.random.Generator, n: int, p: int, density: float, planted: int):
    x = rng.uniform(-1, 1, size=(n, p)) * (rng.uniform(size=(n, p)) < density)
    x = np.round(x, 6)
    beta = np.zeros(p)
    beta[rng.choice(p, planted, replace=False)] = rng.uniform(2, 4, planted) * rng.choice(
        [-1, 1], planted)
    y = np.round(3 + x @ beta + 0.1 * rng.uniform(-1, 1, n), 6)
    return x, y


def standardise(x: np.ndarray) -> np.ndarray:
    m = x.mean(axis=0)
    s = np.sqrt(((x - m) ** 2).mean(axis=0))
    s[s == 0] = 1
    return (x - m) / s


def solve(z: np.ndarray, y: np.ndarray, lam: float):
    model = Lasso(alpha=lam, fit_intercept=True, tol=1e-14, max_iter=1_000_000,
                  selection="cyclic")
    model.fit(z, y)
    w = model.coef_
    r = y - y.mean() - z @ w
    objective = (r @ r) / (2 * len(y)) + lam * np.abs(w).sum()
    return objective, w


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--fractions", default="0.5,0.1,0.01")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    sets = {}
    d = load_diabetes(scaled=False)
    write_csv(args.out / "diabetes.csv", d.data, d.target)
    sets["diabetes.csv"] = (d.data.astype(float), d.target.astype(float))
    for name, shape in (("sparse.svm", (80, 40, 0.15, 6)), ("wide.svm", (30, 120, 0.2, 5))):
        x, y = synthetic(rng, *shape)
        write_svm(args.out / name, x, y)
        sets[name] = (x, y)

    lines = [
        "# scikit-learn's Lasso on rotor's standardised problem (docs/lasso.md)",
        "# made by: /usr/bin/python3 tools/data/make_lasso_reference.py --out "
        f"{args.out} --seed {args.seed} --fractions {args.fractions}",
        f"# numpy {np.__version__}, scikit-learn {sklearn.__version__}",
        "# data\tlambda\tobjective\tnonzeros\tcoefficients",
    ]
    for name, (x, y) in sets.items():
        z = standardise(x)
        lam_max = np.abs(z.T @ (y - y.mean())).max() / len(y)
        for frac in (float(f) for f in args.fractions.split(",")):
            lam = frac * lam_max
            objective, w = solve(z, y, lam)
            coefs = ",".join(repr(float(v)) for v in w)
            lines.append(f"{name}\t{lam!r}\t{objective!r}\t{int((w != 0).sum())}\t{coefs}")
    (args.out / "reference.tsv").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
