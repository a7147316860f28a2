"""`rotor lasso train` against scikit-learn's Lasso where parallel updates diverge (issue 37, item 5).

The correlated design of the issue: n = 400, p = 2,000, every column 0.7 z_j + 0.3 z_0 with z
standard normal (every pair of columns correlated at 0.155, under strads' rho = 0.3, while 8 or
more columns updated at once can raise the objective). strads and shotgun at --parallel 4, 16 and
64 on 1 and 2 threads must reach scikit-learn's objective to 1e-6 (relative); the same on
scikit-learn's diabetes data. Shotgun gets there by rolling back diverged iterations, strads by
keeping no round that could diverge (docs/lasso.md, "Parallel updates that cannot diverge").

Run by ctest (test `lasso_sklearn_python`, with ROTOR_BIN set) under an interpreter that has
numpy and scikit-learn (Debian's python3-sklearn, installed by tools/bootstrap):

    ROTOR_BIN=build/ci/apps/rotor /usr/bin/python3 tests/apps/lasso/test_lasso_sklearn.py -v
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso

ROTOR = os.environ.get("ROTOR_BIN", "build/ci/apps/rotor")


def standardised_objective(x: np.ndarray, y: np.ndarray, lam: float) -> float:
    """scikit-learn's optimum of rotor's problem (docs/lasso.md): glmnet's normalisation with the
    penalty on standardised coefficients, 1/(2N)||y - b0 - Zb||^2 + lam ||b||_1, Z the columns
    centred and scaled to unit population variance."""
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    model = Lasso(alpha=lam, fit_intercept=True, tol=1e-12, max_iter=1_000_000)
    model.fit(z, y)
    r = y - model.predict(z)
    return float(r @ r / (2 * len(y)) + lam * np.abs(model.coef_).sum())


def write_csv(path: Path, x: np.ndarray, y: np.ndarray) -> None:
    np.savetxt(path, np.column_stack([x, y]), delimiter=",", fmt="%.17g")


def lambda_max(x: np.ndarray, y: np.ndarray) -> float:
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    return float(np.abs(z.T @ (y - y.mean())).max() / len(y))


class LassoAgainstScikitLearn(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def train(self, data: Path, lam: float, schedule: str, parallel: int, threads: int) -> dict:
        out = self.dir / "m.txt"
        r = subprocess.run(
            [ROTOR, "lasso", "train", "--data", str(data), "--lambda", repr(lam),
             "--schedule", schedule, "--parallel", str(parallel), "--threads", str(threads),
             "--tol", "1e-10", "--max-iterations", "5000", "--out", str(out), "--overwrite"],
            capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        fields = {}
        for line in out.read_text().splitlines():
            key, _, value = line.partition("\t")
            fields[key] = value
        return {"objective": float(fields["objective"]), "stdout": r.stdout}

    def check(self, name: str, x: np.ndarray, y: np.ndarray, lam: float) -> None:
        text = self.dir / f"{name}.csv"
        write_csv(text, x, y)
        data = self.dir / f"{name}.bin"  # the binary form: read without parsing, 24 times
        subprocess.run([ROTOR, "lasso", "build", "--data", str(text), "--out", str(data)],
                       check=True, capture_output=True)
        want = standardised_objective(x, y, lam)
        for schedule in ("strads", "shotgun"):
            for parallel in (4, 16, 64):
                for threads in (1, 2):
                    with self.subTest(data=name, schedule=schedule, parallel=parallel,
                                      threads=threads):
                        got = self.train(data, lam, schedule, parallel, threads)
                        self.assertLess(abs(got["objective"] - want) / want, 1e-6,
                                        f"rotor {got['objective']!r}, scikit-learn {want!r}")
                        if schedule == "strads":  # its rounds cannot diverge
                            self.assertNotIn("diverged", got["stdout"])

    def test_correlated_design(self) -> None:
        rng = np.random.default_rng(37)
        n, p = 400, 2000
        z = rng.standard_normal((n, p + 1))
        x = 0.7 * z[:, 1:] + 0.3 * z[:, [0]]
        beta = np.zeros(p)
        beta[:20] = rng.choice([-2.0, -1.0, 1.0, 2.0], size=20)
        y = x @ beta + 0.5 * rng.standard_normal(n)
        self.check("correlated", x, y, 0.05 * lambda_max(x, y))

    def test_diabetes(self) -> None:
        d = load_diabetes()
        self.check("diabetes", d.data, d.target, 0.01 * lambda_max(d.data, d.target))


if __name__ == "__main__":
    unittest.main()
