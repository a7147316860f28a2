"""rotor.RICA: the command line's W bit for bit on the same data, transform, save/load, errors."""

from __future__ import annotations

import numpy as np
import pytest

import rotor


@pytest.fixture(scope="module")
def patches():
    """Sparse sources mixed by a fixed matrix: 300 observations of dimension 6."""
    rng = np.random.default_rng(3)
    s = rng.standard_normal((300, 6))
    s[np.abs(s) < 1.2] = 0
    return s @ rng.standard_normal((6, 6))


def test_fit_equals_the_command_line(patches, cli, tmp_path):
    est = rotor.RICA(n_components=10, alpha=0.5, max_iter=20, evaluate_every=5, tol=0,
                     block_rows=3).fit(patches)
    data = tmp_path / "x.tsv"
    np.savetxt(data, patches, fmt="%.17g", delimiter="\t")
    out = tmp_path / "m.txt"
    cli("rica", "train", "--data", data, "--components", 10, "--lambda", 0.5, "--iterations", 20,
        "--eval-every", 5, "--tol", 0, "--block-rows", 3, "--out", out, "-q")
    cli_model = rotor.RICA.load(out)
    assert np.array_equal(est.components_, cli_model.components_)
    assert est.objective_ == cli_model.objective_
    assert est.n_iter_ == 20 and len(est.metrics_) == 4
    assert est.metrics_[-1]["objective"] < est.metrics_[0]["objective"]
    # transform is X W'; save/load keeps W exactly.
    assert np.allclose(est.transform(patches), patches @ est.components_.T)
    est.save(tmp_path / "py.txt")
    assert np.array_equal(rotor.RICA.load(tmp_path / "py.txt").components_, est.components_)
    # The paper's solver too.
    prox = rotor.RICA(n_components=10, alpha=0.5, max_iter=20, evaluate_every=5, tol=0,
                      block_rows=3, solver="prox").fit(patches)
    cli("rica", "train", "--data", data, "--components", 10, "--lambda", 0.5, "--iterations", 20,
        "--eval-every", 5, "--tol", 0, "--block-rows", 3, "--solver", "prox", "--out", out,
        "--overwrite", "-q")
    assert np.array_equal(prox.components_, rotor.RICA.load(out).components_)


def test_errors_name_the_parameter(patches):
    with pytest.raises(ValueError, match="alpha"):
        rotor.RICA(alpha=-1).fit(patches)
    with pytest.raises(ValueError, match="NaN"):
        rotor.RICA().fit(np.array([[1.0, np.nan]]))
    est = rotor.RICA(n_components=4, max_iter=2).fit(patches)
    with pytest.raises(ValueError, match="features"):
        est.transform(np.ones((2, 3)))
