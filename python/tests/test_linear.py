"""rotor.Lasso on sotu-year and rotor.LogisticRegression on sotu-party (make_sotu_year.py,
make_sotu_party.py): the command line's models bit for bit, sparse and dense inputs, errors,
model files and pickling."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

import rotor
from conftest import read_svm


@pytest.fixture(scope="module")
def year(sotu_year):
    train, test = sotu_year
    X, y = read_svm(train)
    Xt, yt = read_svm(test, X.shape[1])
    return X, y, Xt, yt


@pytest.fixture(scope="module")
def party(sotu_party):
    train, test = sotu_party
    X, y = read_svm(train)
    Xt, yt = read_svm(test, X.shape[1])
    return X, y, Xt, yt


def progress(text):
    """The progress lines of `lasso train` and `logreg train` (and of verbose=True), without rates and times."""
    return [re.sub(r"  \S+ \S+/s  elapsed .*$", "", line) for line in text.splitlines()
            if line.startswith("iter ")]


def test_lasso_is_the_command_lines_model_bit_for_bit(sotu_year, year, cli, tmp_path, capfd):
    X, y, _, _ = year
    said = cli("lasso", "train", "--data", sotu_year[0], "--lambda", 1.2, "--threads", 1,
               "--out", tmp_path / "cli.txt").stdout
    theirs = rotor.Lasso.load(tmp_path / "cli.txt")
    ours = rotor.Lasso(alpha=1.2, n_jobs=2, verbose=True).fit(X, y)
    assert progress(said) and progress(capfd.readouterr().out) == progress(said)
    np.testing.assert_array_equal(ours.coef_[: theirs.coef_.size], theirs.coef_)
    assert ours.intercept_ == theirs.intercept_
    assert ours.converged_ and ours.n_iter_ == theirs.n_iter_
    assert 0 < np.count_nonzero(ours.coef_) < X.shape[1]


def test_lasso_sparse_and_dense_agree_and_predict(year, cli, tmp_path, sotu_year):
    X, y, Xt, yt = year
    a = rotor.Lasso(alpha=1.2).fit(X[::8], y[::8])
    b = rotor.Lasso(alpha=1.2).fit(X[::8].toarray(), list(y[::8]))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    a = rotor.Lasso(alpha=1.2).fit(X, y)
    assert a.score(Xt, yt) > 0.3  # R² on held-out speeches
    a.save(tmp_path / "m.txt")
    out = cli("lasso", "eval", "--model", tmp_path / "m.txt", "--data", sotu_year[1]).stdout
    assert "rmse" in out.lower()
    assert [m["iter"] for m in a.metrics_] == list(range(1, a.n_iter_ + 1))


def test_lasso_resumed_is_the_uninterrupted_model_and_the_command_lines(sotu_year, year, cli,
                                                                         tmp_path):
    X, y, _, _ = year
    kw = dict(alpha=1.2, n_jobs=1)
    full = rotor.Lasso(max_iter=6, **kw).fit(X, y)
    assert full.n_iter_ == 6  # not converged: the resumed runs below have iterations to do
    ck = tmp_path / "ck"
    ours = rotor.Lasso(max_iter=3, checkpoint_every=3, checkpoint_dir=ck, **kw).fit(X, y)
    ours.set_params(max_iter=6).fit(X, y, resume=True)
    # The command line's checkpoint of the same file, resumed here.
    cli("lasso", "train", "--data", sotu_year[0], "--lambda", 1.2, "--threads", 1,
        "--max-iterations", 3, "--checkpoint-every", 3, "--out", tmp_path / "cli.txt", "--quiet")
    theirs = rotor.Lasso(max_iter=6, **kw).fit(X, y, resume=tmp_path / "cli.txt.checkpoint")
    for model in (ours, theirs):
        np.testing.assert_array_equal(model.coef_, full.coef_)
        assert model.intercept_ == full.intercept_ and model.n_iter_ == 6
    assert [m["iter"] for m in ours.metrics_] == list(range(1, 7))
    assert [m["iter"] for m in theirs.metrics_] == [4, 5, 6]
    with pytest.raises(ValueError, match="alpha: is 1.5 but"):
        rotor.Lasso(alpha=1.5, max_iter=6).fit(X, y, resume=ck)
    with pytest.raises(ValueError, match="standardize: is False but .* trained with True"):
        rotor.Lasso(standardize=False, max_iter=6, **kw).fit(X, y, resume=ck)
    with pytest.raises(ValueError, match=r"resume: .* other data than X \(X has \d+ samples"):
        rotor.Lasso(max_iter=6, **kw).fit(X[::2], y[::2], resume=ck)


def test_logreg_is_the_command_lines_model_bit_for_bit(sotu_party, party, cli, tmp_path, capfd):
    X, y, Xt, yt = party
    said = cli("logreg", "train", "--data", sotu_party[0], "--lambda", 2, "--blocks", 8,
               "--iterations", 64, "--out", tmp_path / "cli.txt").stdout
    ours = rotor.LogisticRegression(C=0.5, blocks=8, max_iter=64, n_jobs=1,
                                    verbose=True).fit(X, y)
    assert progress(said) and progress(capfd.readouterr().out) == progress(said)
    theirs = rotor.LogisticRegression.load(tmp_path / "cli.txt", n_features=X.shape[1])
    np.testing.assert_array_equal(ours.coef_, theirs.coef_)
    assert ours.intercept_[0] == theirs.intercept_[0]
    assert ours.score(Xt, yt) > 0.6
    proba = ours.predict_proba(Xt)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert list(ours.classes_) == [-1.0, 1.0]
    ours.save(tmp_path / "py.txt")
    out = cli("logreg", "eval", "--model", tmp_path / "py.txt", "--data", sotu_party[1]).stdout
    assert "auc" in out.lower()


def test_logreg_resumed_is_the_uninterrupted_model_and_the_command_lines(sotu_party, cli,
                                                                          tmp_path):
    """Checkpoints are the block proximal gradient's (solver="auto" takes it, as the command line
    does): a fit capped at 12 block iterations and resumed to 24, in Python or by `rotor logreg
    train --resume`, is the uninterrupted fit bit for bit (τ = 0: the margins are restored)."""
    data = tmp_path / "party.svm"  # every 6th example (1,383 of both classes), for speed
    with open(sotu_party[0]) as f:
        data.write_text("".join(f.readlines()[::6]))
    X, y = read_svm(data)
    kw = dict(C=0.5, blocks=8, evaluate_every=4, n_jobs=1)
    full = rotor.LogisticRegression(max_iter=24, **kw).fit(X, y)
    assert full.n_iter_ == 24 and not full.converged_
    ck = tmp_path / "ck"
    ours = rotor.LogisticRegression(max_iter=12, checkpoint_every=8, checkpoint_dir=ck, **kw)
    ours.fit(X, y)
    assert ours.n_iter_ == 12
    cli("logreg", "train", "--data", data, "--resume", ck, "--iterations", 24,
        "--out", tmp_path / "from-py.txt", "--quiet")
    ours.set_params(max_iter=24).fit(X, y, resume=True)
    # The command line's checkpoint of the same file, resumed here (max_iter None: its total).
    cli("logreg", "train", "--data", data, "--lambda", 2, "--blocks", 8, "--eval-every", 4,
        "--iterations", 12, "--checkpoint-every", 12, "--out", tmp_path / "cli.txt", "--quiet")
    theirs = rotor.LogisticRegression(C=0.5, max_iter=24, evaluate_every=4, n_jobs=1)
    theirs.fit(X, y, resume=tmp_path / "cli.txt.checkpoint")
    from_py = rotor.LogisticRegression.load(tmp_path / "from-py.txt", n_features=X.shape[1])
    for model in (ours, theirs, from_py):
        np.testing.assert_array_equal(model.coef_, full.coef_)
        assert model.intercept_[0] == full.intercept_[0] and model.n_iter_ == 24
    assert [m["iter"] for m in ours.metrics_] == [4, 8, 12, 16, 20, 24]
    assert ours.metrics_[-1]["objective"] == full.metrics_[-1]["objective"]
    assert [m["iter"] for m in theirs.metrics_] == [16, 20, 24]
    # Refusals, with the command line's messages naming the parameter.
    cases = [
        (dict(C=0.25), X, y, r"C: is 0.25 but .*ck was trained with 0.5; give the checkpoint's"),
        (dict(blocks=4), X, y, "blocks: is 4 but"),
        (dict(random_state=2), X, y, "random_state: is 2 but"),
        (dict(fit_intercept=False), X, y, "fit_intercept: is False but .* trained with True"),
        (dict(max_iter=8), X, y, "max_iter: .* already has 24 iterations"),
        ({}, X[1:], y[1:], r"resume: .*ck was made on other data than X \(X has \d+ examples"),
        (dict(solver="newton"), X, y, r"resume: applies to --solver prox only \(not newton\)"),
    ]
    for change, Xc, yc, message in cases:
        est = rotor.LogisticRegression(**{"C": 0.5, "max_iter": 32, "n_jobs": 1, **change})
        with pytest.raises(ValueError, match=message):
            est.fit(Xc, yc, resume=ck)
        assert not hasattr(est, "coef_")
    with pytest.raises(ValueError, match="checkpoint_every: applies to --solver prox only"):
        rotor.LogisticRegression(solver="newton", checkpoint_every=2,
                                 checkpoint_dir=tmp_path / "n").fit(X, y)


def test_logreg_threads_default_to_the_command_lines_one(party):
    # n_jobs=None is logreg train's --threads 1: with the blocks chosen from the keys (capped
    # lower with threads), the model of one thread, not that of every core.
    X, y, _, _ = party
    a = rotor.LogisticRegression(solver="prox", max_iter=2).fit(X, y)
    b = rotor.LogisticRegression(solver="prox", max_iter=2, n_jobs=1).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_logreg_sparse_and_dense_agree(party):
    X, y, _, _ = party
    X = X[::20]
    y = np.where(y[::20] > 0, "rep", "dem")
    a = rotor.LogisticRegression(blocks=4, max_iter=16).fit(X, y)
    b = rotor.LogisticRegression(blocks=4, max_iter=16).fit(X.toarray(), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert set(a.predict(X)) <= {"rep", "dem"}


def test_logreg_defaults_converge_as_the_command_line(sotu_party, party, cli, tmp_path, capfd):
    """The defaults (newton, tol 1e-4) give the command line's default model bit for bit, say
    they converged, and count Newton iterations in n_iter_; a prox parameter picks prox."""
    X, y, _, _ = party
    out = cli("logreg", "train", "--data", sotu_party[0], "--lambda", 2, "--out",
              tmp_path / "cli.txt").stdout
    assert "solver newton" in out and "rotor: converged after" in out
    ours = rotor.LogisticRegression(C=0.5, verbose=True).fit(X, y)
    assert progress(out) and progress(capfd.readouterr().out) == progress(out)
    theirs = rotor.LogisticRegression.load(tmp_path / "cli.txt", n_features=X.shape[1])
    np.testing.assert_array_equal(ours.coef_, theirs.coef_)
    assert ours.converged_ and 3 < ours.n_iter_ < 100
    assert ours.metrics_[-1]["converged"] == 1 and ours.metrics_[-1]["subgradient_ratio"] <= 1e-4
    capped = rotor.LogisticRegression(C=0.5, max_iter=2).fit(X, y)
    assert not capped.converged_ and capped.n_iter_ == 2
    with pytest.raises(ValueError, match="blocks: applies to --solver prox only"):
        rotor.LogisticRegression(solver="newton", blocks=4).fit(X, y)


@pytest.mark.parametrize("Model", [rotor.Lasso, rotor.LogisticRegression])
def test_bad_inputs(Model):
    X = np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]])
    y = np.array([1.0, -1, 1, -1])
    m = Model()
    with pytest.raises(ValueError, match="X: row 2, column 1: value NaN is not finite"):
        m.fit(np.array([[1.0, 0], [0, 1], [1, np.nan], [0, 0]]), y)
    with pytest.raises(ValueError, match="y: 3 values for X's 4 rows"):
        m.fit(X, y[:3])
    with pytest.raises(ValueError, match="y: row 1: value NaN"):
        m.fit(X, np.array([1.0, np.nan, 1, -1]))
    with pytest.raises(ValueError, match="0 sample"):
        m.fit(np.zeros((0, 2)), [])
    with pytest.raises(TypeError, match="X: dtype"):
        m.fit(np.array([["a", "b"]] * 4, dtype=object), y)
    assert not hasattr(m, "coef_")
    m.fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features"):
        m.predict(np.ones((1, 3)))


@pytest.mark.parametrize("Model", [rotor.Lasso, rotor.LogisticRegression])
def test_index_and_value_dtypes_give_the_same_model(Model, year):
    """scipy's arrays read in place: int32 or int64 indices, float32 or float64 values (or a
    matrix that is not canonical, converted) give the model of the same numbers in float64;
    a non-finite value of a sparse matrix is refused naming its row and column."""
    import scipy.sparse as sp

    X, y, _, _ = year
    X, y = X[::6], y[::6]
    if Model is rotor.LogisticRegression:
        y = np.where(y > np.median(y), 1, -1)
    X32 = sp.csr_matrix(X, dtype=np.float32)
    X64 = sp.csr_matrix(X32, dtype=np.float64)
    X64.indptr, X64.indices = X64.indptr.astype(np.int32), X64.indices.astype(np.int32)
    base = Model(max_iter=8).fit(X64, y)
    wide = X32.copy()
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    shuffled = X64.copy()
    shuffled.indices, shuffled.data = shuffled.indices.copy(), shuffled.data.copy()
    for r in range(shuffled.shape[0]):  # each row's entries reversed: not canonical
        b, e = shuffled.indptr[r], shuffled.indptr[r + 1]
        shuffled.indices[b:e] = shuffled.indices[b:e][::-1]
        shuffled.data[b:e] = shuffled.data[b:e][::-1]
    shuffled.has_sorted_indices = False
    for other in (X32, wide, X64.tocsc(), shuffled):
        m = Model(max_iter=8).fit(other, y)
        np.testing.assert_array_equal(m.coef_, base.coef_)
        assert np.array_equal(m.intercept_, base.intercept_)
    bad = X32.copy()
    r = 3
    bad.data[bad.indptr[r]] = np.inf
    with pytest.raises(ValueError, match=f"X: row {r}, column {bad.indices[bad.indptr[r]]}: "
                       "value inf is not finite"):
        Model().fit(bad, y)


def test_logreg_needs_two_classes_and_a_positive_c():
    X = np.eye(3)
    with pytest.raises(ValueError, match="3 classes given"):
        rotor.LogisticRegression().fit(X, [0, 1, 2])
    with pytest.raises(ValueError, match="C: must be > 0"):
        rotor.LogisticRegression(C=0).fit(X, [0, 1, 1])
    with pytest.raises(ValueError, match="penalty: must be one of l1"):
        rotor.LogisticRegression(penalty="l2").fit(X, [0, 1, 1])


@pytest.mark.parametrize("Model", [rotor.Lasso, rotor.LogisticRegression])
def test_pickle_round_trip(Model, party):
    X, y, Xt, _ = party
    m = Model().fit(X[::40], y[::40])
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.predict(Xt[:30]), m.predict(Xt[:30]))
