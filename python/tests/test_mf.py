"""rotor.MF on real ratings (the sotu documents x words, make_docword_ratings.py): the command
line's CCD model bit for bit, both input forms, errors, model directories and pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import rotor


def test_ccd_is_the_command_lines_model_bit_for_bit(ratings, cli, tmp_path):
    path, rows = ratings
    cli("mf", "train", "--train", path, "--solver", "ccd", "--rank", 8, "--iterations", 4,
        "--seed", 3, "--threads", 1, "--out", tmp_path / "cli", "--quiet")
    theirs = rotor.MF.load(tmp_path / "cli")
    ours = rotor.MF(8, solver="ccd", max_iter=4, random_state=3, n_jobs=2).fit(rows)
    np.testing.assert_array_equal(ours.user_factors_, theirs.user_factors_)
    np.testing.assert_array_equal(ours.item_factors_, theirs.item_factors_)
    np.testing.assert_array_equal(ours.user_bias_, theirs.user_bias_)
    assert ours.global_mean_ == theirs.global_mean_
    assert [m["iter"] for m in ours.metrics_] == [1, 2, 3, 4]


def test_sparse_and_triples_give_the_same_model(ratings):
    _, rows = ratings
    u, i = rows[:, 0].astype(int), rows[:, 1].astype(int)
    A = sp.csr_matrix((rows[:, 2], (u, i)))
    a = rotor.MF(4, solver="ccd", max_iter=2).fit(rows)
    for X in (A, A.tocoo(), A.tocsc(), rows[::-1], rows.astype(np.float32)):
        b = rotor.MF(4, solver="ccd", max_iter=2).fit(X)
        np.testing.assert_array_equal(a.user_factors_, b.user_factors_)
        np.testing.assert_array_equal(a.item_factors_, b.item_factors_)


def test_sgd_learns_and_predicts(ratings, cli, tmp_path):
    _, rows = ratings
    rng = np.random.default_rng(0)
    test = rng.random(len(rows)) < 0.2
    mf = rotor.MF(16, max_iter=10, random_state=1).fit(rows[~test], X_test=rows[test])
    rmse = [m["test_rmse"] for m in mf.metrics_]
    assert rmse[-1] < rmse[0]
    pred = mf.predict(rows[test][:, :2])
    assert pred.shape == (test.sum(),)
    assert -mf.score(rows[test]) == pytest.approx(np.sqrt(np.mean((pred - rows[test][:, 2])**2)))
    # A user the model never saw gets mu and the item's bias.
    unseen = mf.predict(np.array([[10**6, 0]]))[0]
    assert unseen == pytest.approx(mf.global_mean_ + mf.item_bias_[0], rel=1e-6)
    mf.save(tmp_path / "m")
    out = cli("mf", "recommend", "--model", tmp_path / "m", "--user", 0, "--top", 3).stdout
    assert len(out.strip().splitlines()) >= 3


@pytest.mark.parametrize(
    "X, error, message",
    [
        (np.array([[0, 0, 1.0], [1, 2, np.nan]]), ValueError, "X: row 1: rating nan is not"),
        (np.array([[0, 0, 1.0], [-1, 2, 3]]), ValueError, "X: row 1: user and item must be"),
        (np.array([[0, 0.5, 1.0]]), ValueError, "X: row 0: user and item must be"),
        (np.array([[0, 1, 1.0], [2, 2, 1], [0, 1, 2]]), ValueError,
         "X: rows 0 and 2: duplicate rating for user 0, item 1"),
        (np.array([[0, 1]]), ValueError, "expected an (n, 3) array"),
        (np.zeros((0, 3)), ValueError, "X: no ratings"),
        (np.array([["a", "b", "c"]]), TypeError, "X: dtype"),
    ],
)
def test_bad_ratings(X, error, message):
    mf = rotor.MF(2, max_iter=1)
    with pytest.raises(error) as e:
        mf.fit(X)
    assert message in str(e.value)
    assert not hasattr(mf, "user_factors_")


def test_bad_parameters_and_memory(ratings):
    _, rows = ratings
    with pytest.raises(ValueError, match="solver: must be one of"):
        rotor.MF(solver="als").fit(rows)
    with pytest.raises(ValueError, match="^n_components: "):
        rotor.MF(2**21).fit(rows)
    with pytest.raises(MemoryError, match="max_memory"):
        rotor.MF(64, max_memory="10K").fit(rows)


def test_pickle_round_trip(ratings):
    _, rows = ratings
    mf = rotor.MF(4, solver="ccd", max_iter=2).fit(rows)
    back = pickle.loads(pickle.dumps(mf))
    np.testing.assert_array_equal(back.predict(rows[:50, :2]), mf.predict(rows[:50, :2]))


def test_resumed_fit_is_the_uninterrupted_model_and_checkpoints_pass_to_the_cli(ratings, cli,
                                                                              tmp_path):
    _, rows = ratings
    rows = rows[rows[:, 0] < 150]
    # The command line's ids are the rows' numbers, in order of first appearance, as rotor.MF
    # names them: both take the same fingerprint of the same matrix.
    values = rows[:, 2].astype(np.float32)
    with open(tmp_path / "r.txt", "w") as f:
        for (u, i, _), v in zip(rows, values):
            f.write(f"{int(u)} {int(i)} {v!r}\n")
    kw = dict(solver="ccd", random_state=3, n_jobs=1)
    full = rotor.MF(8, max_iter=4, **kw).fit(rows)
    ck = tmp_path / "ck"
    mf = rotor.MF(8, max_iter=2, checkpoint_every=2, checkpoint_dir=ck, **kw).fit(rows)
    cli("mf", "train", "--train", tmp_path / "r.txt", "--resume", ck, "--iterations", 4,
        "--out", tmp_path / "from-py", "--quiet")
    mf.set_params(max_iter=4)
    mf.fit(rows, resume=True)
    for model in (mf, rotor.MF.load(tmp_path / "from-py")):
        np.testing.assert_array_equal(model.user_factors_, full.user_factors_)
        np.testing.assert_array_equal(model.item_factors_, full.item_factors_)
        np.testing.assert_array_equal(model.item_bias_, full.item_bias_)
    assert [m["iter"] for m in mf.metrics_] == [1, 2, 3, 4]
    assert mf.metrics_[-1]["train_rmse"] == full.metrics_[-1]["train_rmse"]
    # The command line's checkpoint, resumed here.
    cli("mf", "train", "--train", tmp_path / "r.txt", "--solver", "ccd", "--rank", 8,
        "--iterations", 2, "--seed", 3, "--threads", 1, "--checkpoint-every", 1, "--out",
        tmp_path / "cli", "--quiet")
    ours = rotor.MF(8, max_iter=4, **kw).fit(rows, resume=tmp_path / "cli.checkpoint")
    np.testing.assert_array_equal(ours.user_factors_, full.user_factors_)
    assert [m["iter"] for m in ours.metrics_] == [3, 4]
    with pytest.raises(ValueError, match="n_components: is 6 but"):
        rotor.MF(6, max_iter=4, **kw).fit(rows, resume=ck)
    with pytest.raises(ValueError, match=r"resume: .* other ratings than X \(X has"):
        rotor.MF(8, max_iter=4, **kw).fit(rows[:-1], resume=ck)
