"""rotor.RICA: the command line's W bit for bit on the same data, transform, save/load, errors."""

from __future__ import annotations

import re

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


def test_fit_equals_the_command_line(patches, cli, tmp_path, capfd):
    est = rotor.RICA(n_components=10, alpha=0.5, max_iter=20, evaluate_every=5, tol=0,
                     block_rows=3, verbose=True).fit(patches)
    data = tmp_path / "x.tsv"
    np.savetxt(data, patches, fmt="%.17g", delimiter="\t")
    out = tmp_path / "m.txt"
    said = cli("rica", "train", "--data", data, "--components", 10, "--lambda", 0.5,
               "--iterations", 20, "--eval-every", 5, "--tol", 0, "--block-rows", 3, "--out",
               out).stdout

    def progress(text):  # the progress lines, without their seconds
        return [re.sub(r", [\d.]+ s$", "", line) for line in text.splitlines()
                if line.startswith("rotor: iteration ")]

    assert len(progress(said)) == 4 and progress(capfd.readouterr().out) == progress(said)
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


def test_checkpoints_pass_between_python_and_the_command_line(patches, cli, tmp_path):
    """A checkpoint (the model file with the AdaGrad factors) of fit is the command line's and
    resumes on either side to the same W bit for bit; the records continue."""
    kw = dict(n_components=10, alpha=0.5, evaluate_every=5, tol=0, block_rows=3)
    data = tmp_path / "x.tsv"
    np.savetxt(data, patches, fmt="%.17g", delimiter="\t")
    flags = ["--components", 10, "--lambda", 0.5, "--eval-every", 5, "--tol", 0, "--block-rows",
             3, "-q"]
    full = rotor.RICA(max_iter=20, **kw).fit(patches)
    ck = tmp_path / "py.checkpoint"
    est = rotor.RICA(max_iter=10, checkpoint_every=5, checkpoint_dir=ck, **kw).fit(patches)
    # Checkpoints cut no step short: the capped fit is the first 10 steps of the full one.
    assert [m["objective"] for m in est.metrics_] == [m["objective"] for m in full.metrics_[:2]]
    cli("rica", "train", "--data", data, "--iterations", 10, "--checkpoint-every", 5, "--out",
        tmp_path / "cli.txt", *flags)
    theirs = rotor.RICA.load(tmp_path / "cli.txt.checkpoint")
    assert np.array_equal(rotor.RICA.load(ck).components_, theirs.components_)
    cli("rica", "train", "--data", data, "--iterations", 20, "--resume", ck, "--out",
        tmp_path / "from-py.txt", *flags)
    est.set_params(max_iter=20).fit(patches, resume=True)
    resumed = rotor.RICA(max_iter=20, **kw).fit(patches, resume=tmp_path / "cli.txt.checkpoint")
    for model in (rotor.RICA.load(tmp_path / "from-py.txt"), resumed):
        assert np.array_equal(model.components_, est.components_)
        assert model.n_iter_ == 20
    assert [m["iter"] for m in est.metrics_] == [5, 10, 15, 20]
    assert [m["iter"] for m in resumed.metrics_] == [15, 20]
    # What resume guarantees (docs/rica.md): it descends from the checkpoint. Not the
    # uninterrupted W: the ADMM restarts (z = X w, u = 0, rho), here to a lower objective at 20
    # (1053 against 1111).
    assert est.objective_ < est.metrics_[1]["objective"]
    # Refusals, with the command line's messages.
    cases = [(dict(n_components=8), patches, "resume: .* was made with --components 10 "
                                             "--lambda 0.5"),
             (dict(alpha=0.4), patches, "resume: .* was made with --components 10"),
             (dict(max_iter=5), patches, "max_iter: is 5 but .* already has 20 iterations"),
             ({}, patches[:, :5], "resume: .* has dimension 6, X has 5")]
    for change, X, message in cases:
        other = rotor.RICA(**{**kw, "max_iter": 30, **change})
        with pytest.raises(ValueError, match=message):
            other.fit(X, resume=ck)
        assert not hasattr(other, "components_")
    est.save(tmp_path / "m.txt")
    with pytest.raises(ValueError, match="m.txt: is a model, not a checkpoint"):
        rotor.RICA(**kw).fit(patches, resume=tmp_path / "m.txt")
