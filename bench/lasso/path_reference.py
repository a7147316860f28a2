#!/usr/bin/python3
"""Write glmnet's and scikit-learn's Lasso paths on two real data sets: the fixture that
tests/apps/lasso/test_path_reference.cpp compares `rotor lasso path` against (issue 13: the same
objective to 1e-6 relative and the same active sets along a path, on two real data sets).

Data sets (both real, both from the repository):

- ``diabetes``: tests/core/lasso/data/diabetes.csv (scikit-learn's diabetes data, raw features,
  442 x 10, dense);
- ``sotu-year``: the first --sotu-docs training chunks of data/sotu-para, built by
  ``tools/data/make_sotu_year.py --out DIR --max-docs N`` (sotu-year.train.svm, sparse; the
  ctest builds it the same way).

The problem is rotor's (docs/lasso.md): columns standardised (mean 0, population sd 1), an
unpenalised intercept, F = 1/(2N) ||y - b0 - X beta||^2 + lambda ||beta * sd||_1 in y's units.
The path is rotor's: lambda_k = lambda_max * eps^(k / (K - 1)), k = 0..K-1, lambda_max =
max_j |z_j^T (y - mean y)| / N. glmnet (R, ``glmnet(x, y, lambda = path, standardize = TRUE,
thresh = 1e-14)``) and scikit-learn (``Lasso(alpha = lambda, tol = 1e-12)`` on the standardised
columns, warm-started down the path) each give coefficients; F is recomputed here, in numpy, from
each. The support (coefficients above 1e-12 sd(y) in standardised units, 1-based feature ids) is
glmnet's; the script fails when
scikit-learn's differs by a coefficient larger than 1e-9 (standardised; at lambda_max one may keep
a coefficient at rounding level, which is printed). sotu-year has words found together in one
chunk only, identical columns, so below about 0.1 lambda_max its solution is not unique and the
supports may differ (at 0.097 lambda_max glmnet and scikit-learn disagree by 4e-3 with the same
F to 1e-14): hence eps 0.15.

Output (--out): comment lines (this command, the data command, versions), then
``data  k  lambda  objective_glmnet  objective_sklearn  nonzeros  support`` (support comma
separated). Needs numpy, scipy, scikit-learn, R with glmnet (tools/bootstrap --bench).

    path_reference.py --out tests/apps/lasso/data/path_reference.tsv [--n-lambdas 10]
        [--eps 0.15] [--sotu-docs 1500]
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first

import argparse  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.linear_model import Lasso  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def load_diabetes_csv(path: Path):
    raw = np.loadtxt(path, delimiter=",", skiprows=1)
    return raw[:, :-1], raw[:, -1]


def glmnet_path(x, y, lambdas, tmp: Path) -> np.ndarray:
    """glmnet's (intercept, coefficients) at each lambda: a (K, p + 1) array."""
    xs = sp.coo_matrix(x)
    triplets = tmp / "x.tsv"
    np.savetxt(triplets, np.column_stack([xs.row + 1, xs.col + 1, xs.data]), fmt="%d\t%d\t%.17g")
    np.savetxt(tmp / "y.txt", y, fmt="%.17g")
    np.savetxt(tmp / "lambda.txt", lambdas, fmt="%.17g")
    script = tmp / "path.R"
    script.write_text(f"""
suppressMessages({{library(glmnet); library(Matrix)}})
t <- read.table("{tmp / 'x.tsv'}")
y <- scan("{tmp / 'y.txt'}", quiet = TRUE)
lam <- scan("{tmp / 'lambda.txt'}", quiet = TRUE)
x <- sparseMatrix(i = t[, 1], j = t[, 2], x = t[, 3], dims = c({x.shape[0]}, {x.shape[1]}))
fit <- glmnet(x, y, family = "gaussian", lambda = lam, standardize = TRUE, thresh = 1e-14,
              maxit = 1e7)
b <- as.matrix(coef(fit))
write.table(t(b), "{tmp / 'coef.tsv'}", row.names = FALSE, col.names = FALSE, sep = "\\t")
writeLines(paste(R.version$major, R.version$minor, packageVersion("glmnet")),
           "{tmp / 'version.txt'}")
""")
    subprocess.run(["Rscript", str(script)], check=True)
    return np.loadtxt(tmp / "coef.tsv", ndmin=2)


def objective(x, y, lam, b0, beta, sd) -> float:
    r = y - b0 - x @ beta
    return float(r @ r / (2 * len(y)) + lam * np.abs(beta * sd).sum())


def reference_rows(name: str, x, y, a, tmp: Path) -> list[str]:
    x = sp.csc_matrix(x)
    n = x.shape[0]
    mean = np.asarray(x.mean(axis=0)).ravel()
    sd = np.sqrt(np.maximum(np.asarray(x.multiply(x).mean(axis=0)).ravel() - mean**2, 0))
    usable = sd > 0
    sd_safe = np.where(usable, sd, 1)
    z = (x.toarray() - mean) / sd_safe
    z[:, ~usable] = 0
    yc = y - y.mean()
    lambda_max = np.abs(z.T @ yc).max() / n
    lambdas = lambda_max * a.eps ** (np.arange(a.n_lambdas) / (a.n_lambdas - 1))
    coef = glmnet_path(x, y, lambdas, tmp)
    model = Lasso(alpha=lambdas[0], tol=1e-12, max_iter=10**7, warm_start=True)
    rows = []
    for k, lam in enumerate(lambdas):
        model.set_params(alpha=lam)
        model.fit(z, y)
        w = model.coef_
        beta_sk = np.where(usable, w / sd_safe, 0)
        b0_sk = y.mean() - mean @ beta_sk
        f_sk = objective(x, y, lam, b0_sk, beta_sk, sd)
        f_gl = objective(x, y, lam, coef[k, 0], coef[k, 1:], sd)
        # Nonzero beyond rounding (1e-12 in units of y's sd): at lambda_max, a lambda_max computed
        # here a rounding below rotor's exact one leaves one coefficient at ~1e-15.
        floor = 1e-12 * y.std()
        gl = np.abs(coef[k, 1:] * sd) > floor
        sk = np.abs(w) > floor
        support = np.flatnonzero(gl) + 1
        differ = np.flatnonzero(gl != sk)
        if differ.size:
            # At lambda_max (and at near-ties) one of them may keep a coefficient at rounding
            # level: allowed below 1e-9 (standardised), reported; anything larger fails.
            size = np.maximum(np.abs(w[differ]), np.abs(coef[k, 1 + differ] * sd[differ]))
            print(f"{name} k={k}: supports differ at {differ + 1} by {size}")
            if size.max() > 1e-9:
                sys.exit(f"{name} k={k}: glmnet's and scikit-learn's supports differ")
        rows.append(f"{name}\t{k}\t{lam!r}\t{f_gl!r}\t{f_sk!r}\t{support.size}\t"
                    + ",".join(str(j) for j in support))
        print(f"{name} k={k} lambda={lam:.6g} F glmnet {f_gl:.12g} sklearn {f_sk:.12g} "
              f"rel {abs(f_gl - f_sk) / f_sk:.2e} nonzeros {support.size}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--n-lambdas", type=int, default=10)
    ap.add_argument("--eps", type=float, default=0.15)
    ap.add_argument("--sotu-docs", type=int, default=1500)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        data_cmd = ["python3", "tools/data/make_sotu_year.py", "--out", str(tmp / "sotu"),
                    "--max-docs", str(a.sotu_docs)]
        subprocess.run(data_cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        rows = reference_rows("diabetes", *load_diabetes_csv(
            ROOT / "tests/core/lasso/data/diabetes.csv"), a, tmp)
        x, y = load_svmlight_file(str(tmp / "sotu/sotu-year.train.svm"), dtype=np.float64)
        rows += reference_rows("sotu-year", x, y, a, tmp)
        r_version = (tmp / "version.txt").read_text().split()
    header = [
        "# glmnet's and scikit-learn's Lasso paths on rotor's problem (bench/lasso/path_reference.py)",
        "# made by: /usr/bin/python3 bench/lasso/path_reference.py --out " + str(a.out)
        + f" --n-lambdas {a.n_lambdas} --eps {a.eps!r} --sotu-docs {a.sotu_docs}",
        "# sotu-year: python3 tools/data/make_sotu_year.py --out DIR --max-docs "
        + f"{a.sotu_docs} (DIR/sotu-year.train.svm); diabetes: tests/core/lasso/data/diabetes.csv",
        f"# R {r_version[0]}.{r_version[1]}, glmnet {r_version[2]}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}; n_lambdas {a.n_lambdas} eps {a.eps!r}",
        "data\tk\tlambda\tobjective_glmnet\tobjective_sklearn\tnonzeros\tsupport",
    ]
    a.out.write_text("\n".join(header + rows) + "\n")


if __name__ == "__main__":
    main()
