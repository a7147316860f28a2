"""rotor.LDA on the shipped corpus: the command line's model bit for bit, model directories
both ways, every input form, fold-in, errors, pickling, the GIL and Ctrl-C."""

from __future__ import annotations

import _thread
import gzip
import json
import pickle
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

import rotor
from conftest import SOTU, write_docword

SMALL = dict(max_iter=12, evaluate_every=4, deterministic=True, random_state=7)


def test_version():
    assert rotor.__version__.count(".") == 2


def test_trains_the_shipped_corpus_and_lists_topics(sotu, sotu_vocab):
    X, _ = sotu
    lda = rotor.LDA(n_components=10, max_iter=30, evaluate_every=10, random_state=1, n_jobs=2)
    lda.fit(X, vocabulary=sotu_vocab)
    assert lda.components_.shape == (10, X.shape[1])
    assert lda.components_.dtype == np.int64
    assert lda.components_.sum() == X.sum()  # every token counted once
    assert [m["iter"] for m in lda.metrics_] == list(range(1, 31))
    ll = [m["loglik_per_token"] for m in lda.metrics_ if "loglik_per_token" in m]
    assert len(ll) == 3 and ll[-1] > ll[0]
    topics = lda.top_words(8)
    assert len(topics) == 10 and all(len(t) == 8 for t in topics)
    assert all(isinstance(w, str) and 0 < p < 1 for t in topics for w, p in t)
    phi = lda.topic_word_distribution()
    np.testing.assert_allclose(phi.sum(axis=1), 1.0)


def test_deterministic_fit_is_the_command_lines_model_bit_for_bit(sotu, sotu_vocab, cli,
                                                                   tmp_path):
    X, d = sotu
    cli("lda", "train", "--corpus", d / "docword.txt", "--vocab", d / "vocab.txt", "--topics",
        8, "--iterations", 12, "--eval-every", 4, "--deterministic", "--seed", 7, "--threads",
        1, "--out", tmp_path / "cli", "--metrics", tmp_path / "metrics.jsonl", "--quiet")
    ours = rotor.LDA(8, n_jobs=2, **SMALL).fit(X, vocabulary=sotu_vocab)
    theirs = rotor.LDA.load(tmp_path / "cli")
    np.testing.assert_array_equal(ours.components_, theirs.components_)
    np.testing.assert_array_equal(ours.training_doc_topics(), theirs.training_doc_topics())
    np.testing.assert_array_equal(ours.doc_topic_prior_, theirs.doc_topic_prior_)
    assert ours.vocabulary_ == theirs.vocabulary_ == sotu_vocab
    # The records of the command line's metrics file: the same keys, the same likelihoods.
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    file = [json.loads(line) for line in lines]
    assert [m["iter"] for m in ours.metrics_] == [m["iter"] for m in file]
    for a, b in zip(ours.metrics_, file):
        assert set(a) == set(b)
        assert a.get("loglik") == b.get("loglik")


def test_one_thread_fit_is_the_command_lines_model(sotu, cli, tmp_path):
    # Without deterministic the model depends on which sweeps run back to back (each run of
    # sweeps draws its own order of blocks): fit runs those of the command line.
    X, d = sotu
    cli("lda", "train", "--corpus", d / "docword.txt", "--topics", 8, "--iterations", 6,
        "--eval-every", 3, "--seed", 7, "--threads", 1, "--out", tmp_path / "cli", "--quiet")
    ours = rotor.LDA(8, max_iter=6, evaluate_every=3, random_state=7, n_jobs=1).fit(X)
    np.testing.assert_array_equal(ours.components_, rotor.LDA.load(tmp_path / "cli").components_)


def test_a_saved_model_is_read_by_the_command_line(sotu, sotu_vocab, cli, tmp_path):
    X, d = sotu
    cli("lda", "train", "--corpus", d / "docword.txt", "--topics", 8, "--iterations", 12,
        "--eval-every", 4, "--deterministic", "--seed", 7, "--out", tmp_path / "cli", "--quiet")
    rotor.LDA(8, **SMALL).fit(X, vocabulary=sotu_vocab).save(tmp_path / "py")
    theirs = cli("lda", "topics", "--model", tmp_path / "cli", "--corpus", d / "docword.txt",
                 "--top", 6).stdout
    ours = cli("lda", "topics", "--model", tmp_path / "py", "--corpus", d / "docword.txt",
               "--top", 6).stdout
    assert ours == theirs and "topic   0" in ours
    # And the other way: the command line's model in Python, saved again, reads back the same.
    again = rotor.LDA.load(tmp_path / "cli")
    again.save(tmp_path / "again")
    np.testing.assert_array_equal(rotor.LDA.load(tmp_path / "again").components_,
                                  again.components_)


def test_transform_is_lda_infer(sotu, sotu_vocab, cli, tmp_path):
    X, d = sotu
    lda = rotor.LDA(8, **SMALL).fit(X, vocabulary=sotu_vocab)
    lda.save(tmp_path / "m")
    new = X[:40]
    write_docword(new, tmp_path / "new.txt")
    (tmp_path / "vocab.txt").write_text("\n".join(sotu_vocab) + "\n")
    cli("lda", "infer", "--model", tmp_path / "m", "--corpus", tmp_path / "new.txt", "--vocab",
        tmp_path / "vocab.txt", "--dense", "--seed", 7, "--out", tmp_path / "theta.tsv")
    theta = lda.transform(new)
    assert theta.shape == (40, 8)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    for line in (tmp_path / "theta.tsv").read_text().splitlines():
        doc, k, value = line.split("\t")
        assert theta[int(doc) - 1, int(k)] == pytest.approx(float(value), rel=1e-5, abs=1e-6)
    # Rows do not depend on the threads (each document's generator is its own).
    lda.set_params(n_jobs=1)
    np.testing.assert_array_equal(lda.transform(new), theta)


def test_sparse_dense_and_dtypes_give_the_same_model(sotu):
    X, _ = sotu
    X = X[:300]
    base = rotor.LDA(6, **SMALL).fit(X).components_
    # A CSR matrix with each count split into two entries of the same column, out of order:
    # read as the sum (and the caller's matrix left as it was).
    C = X.tocoo()
    half = C.data // 2
    order = np.argsort(np.r_[C.row, C.row], kind="stable")
    split = sp.csr_matrix((np.r_[half, C.data - half][order], np.r_[C.col, C.col][order],
                           np.r_[0, np.cumsum(np.bincount(C.row, minlength=X.shape[0]) * 2)]),
                          shape=X.shape)
    data = split.data.copy()
    for other in (X.toarray(), X.astype(np.int32), X.astype(np.float32).tocsc(),
                  X.toarray().astype(np.uint16), sp.coo_matrix(X), split):
        np.testing.assert_array_equal(rotor.LDA(6, **SMALL).fit(other).components_, base)
    np.testing.assert_array_equal(split.data, data)


def test_raw_text_is_tokenized_as_corpus_build(cli, tmp_path):
    with gzip.open(SOTU / "sotu-para.txt.gz", "rt") as f:
        docs = [next(f).rstrip("\n") for _ in range(800)]
    docs.append("")  # an empty document: corpus build drops it, transform gives the prior
    (tmp_path / "docs.txt").write_text("\n".join(docs) + "\n")
    cli("corpus", "build", "--corpus", tmp_path / "docs.txt", "--format", "text", "--out",
        tmp_path / "c.rcorpus")
    cli("lda", "train", "--corpus", tmp_path / "c.rcorpus", "--topics", 5, "--iterations", 12,
        "--eval-every", 4, "--deterministic", "--seed", 7, "--out", tmp_path / "m", "--quiet")
    theirs = rotor.LDA.load(tmp_path / "m")
    ours = rotor.LDA(5, **SMALL)
    theta = ours.fit_transform(docs)
    assert ours.vocabulary_ == theirs.vocabulary_
    np.testing.assert_array_equal(ours.components_, theirs.components_)
    assert theta.shape == (len(docs), 5)
    np.testing.assert_allclose(theta[-1], ours.doc_topic_prior_ / ours.doc_topic_prior_.sum())
    assert ours.transform(docs[:3]).shape == (3, 5)


def test_token_lists():
    docs = [["tax", "tariff", "tax"], ["war", "navy"], ["tax", "navy", "war", "war"]] * 20
    lda = rotor.LDA(2, **SMALL).fit(docs)
    # The vocabulary in corpus build's order: decreasing frequency, ties alphabetical.
    assert lda.vocabulary_ == ["tax", "war", "navy", "tariff"]
    assert lda.components_.sum() == sum(len(d) for d in docs)
    assert lda.transform([["tax", "unknown"], []]).shape == (2, 2)


@pytest.mark.parametrize(
    "X, message",
    [
        (np.array([[1.0, np.nan], [0, 1]]), "X: row 0, column 1: value NaN is not finite"),
        (np.array([[1, 2], [0, -1]]), "X: row 1, column 1: count -1 is not a non-negative"),
        (sp.csr_matrix(np.array([[1, 0.5], [1, 1]])), "X: row 0, column 1: count 0.5"),
        (np.array([[1, np.inf]]), "X: row 0, column 1: value inf is not finite"),
        (np.zeros((0, 4)), "X: Found array with 0 sample(s)"),
        (np.zeros((3, 0)), "X: Found array with 0 feature(s)"),
        (np.zeros((3, 4)), "X: has no tokens"),
        (np.array([1, 2, 3]), "X: Expected 2D array"),
        (np.array([[1 + 1j, 2]]), "Complex data not supported"),
        ([], "0 sample(s)"),
    ],
)
def test_bad_documents_are_value_errors_naming_the_row(X, message):
    lda = rotor.LDA(2, **SMALL)
    with pytest.raises(ValueError) as e:
        lda.fit(X)
    assert message in str(e.value)
    assert not hasattr(lda, "components_")


def test_wrong_dtypes_and_parameters():
    with pytest.raises(TypeError, match="X: dtype"):
        rotor.LDA(2).fit(np.array([["a", "b"], ["c", "d"]], dtype=object))
    X = np.array([[1, 2], [3, 0]])
    with pytest.raises(ValueError, match="n_components: must be >= 1"):
        rotor.LDA(0).fit(X)
    with pytest.raises(TypeError, match="n_components: must be an int"):
        rotor.LDA("5").fit(X)
    with pytest.raises(ValueError, match="sampler: must be one of"):
        rotor.LDA(2, sampler="gibbs").fit(X)
    with pytest.raises(ValueError, match="topic_word_prior: must be > 0"):
        rotor.LDA(2, topic_word_prior=0.0).fit(X)
    with pytest.raises(ValueError, match="doc_topic_prior: 3 values for n_components=2"):
        rotor.LDA(2, doc_topic_prior=[1, 1, 1]).fit(X)
    with pytest.raises(ValueError, match="vocabulary: 1 words for X's 2 columns"):
        rotor.LDA(2).fit(X, vocabulary=["a"])
    with pytest.raises(ValueError, match="vocabulary"):
        rotor.LDA(2, **SMALL).fit(X, vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="n_jobs"):
        rotor.LDA(2, n_jobs=-1000).fit(X)


def test_the_memory_limit_is_a_memory_error(sotu):
    X, _ = sotu
    with pytest.raises(MemoryError, match="max_memory: this run needs about"):
        rotor.LDA(50, max_memory="1M").fit(X)
    # The Lasso's, LogisticRegression's and RICA's plans (their command lines') refuse alike,
    # before the data are copied.
    A = X[:40, :8].toarray().astype(np.float64)
    for est, args in ((rotor.Lasso(max_memory="1K"), (A, A[:, 0])),
                      (rotor.LogisticRegression(max_memory="1M"), (A, A[:, 0] > 0)),
                      (rotor.RICA(4, max_memory="1K"), (A,))):
        with pytest.raises(MemoryError, match="max_memory: this run needs about"):
            est.fit(*args)
    # A malformed size is a configuration error, not a memory limit.
    for bad in ("abc", "12Q", 0, -5):
        with pytest.raises(ValueError, match="max_memory: .* is not a size"):
            rotor.Lasso(max_memory=bad).fit(A, A[:, 0])


def test_transform_checks_its_input(sotu):
    X, _ = sotu
    lda = rotor.LDA(3, **SMALL).fit(X[:100])
    with pytest.raises(ValueError, match="X has 5 features, but LDA is expecting"):
        lda.transform(np.ones((2, 5)))
    with pytest.raises(ValueError, match="X: row 1, column 0: value NaN"):
        lda.transform(sp.csr_matrix(([1.0, np.nan], ([0, 1], [0, 0])), shape=(2, X.shape[1])))
    with pytest.raises(rotor._base.NotFittedError):
        rotor.LDA(3).transform(X)


def test_nothing_half_written(sotu, tmp_path):
    X, _ = sotu
    lda = rotor.LDA(3, **SMALL).fit(X[:100])
    keep = tmp_path / "not-a-model"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not-a-model"):
        lda.save(keep)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-model"]
    assert [p.name for p in keep.iterdir()] == ["notes.txt"]
    with pytest.raises(ValueError, match="params.json"):
        rotor.LDA.load(tmp_path / "missing")


def test_pickle_round_trip(sotu):
    X, _ = sotu
    lda = rotor.LDA(4, **SMALL).fit(X[:200])
    back = pickle.loads(pickle.dumps(lda))
    np.testing.assert_array_equal(back.components_, lda.components_)
    np.testing.assert_array_equal(back.transform(X[:20]), lda.transform(X[:20]))
    assert back.get_params() == lda.get_params()


def test_training_releases_the_gil(sotu):
    X, _ = sotu
    lda = rotor.LDA(20, max_iter=40, n_jobs=1, random_state=3)
    done = threading.Event()

    def train():
        lda.fit(X)
        done.set()

    t = threading.Thread(target=train)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert ticks > 50  # this thread ran while the other one trained


def test_ctrl_c_stops_training_cleanly(sotu):
    X, _ = sotu
    # No evaluation before the end: the sweeps run back to back, and the worker that ends one
    # sees the signal.
    lda = rotor.LDA(10, max_iter=100000, evaluate_every=0, n_jobs=2)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        lda.fit(X)
    assert time.monotonic() - start < 30
    assert not hasattr(lda, "components_")
    # The engine is left in order: the next fit runs.
    assert rotor.LDA(3, **SMALL).fit(X[:50]).components_.sum() == X[:50].sum()


def test_heldout_perplexity_is_the_command_lines(sotu, cli, tmp_path):
    X, d = sotu
    held = X[1400:]
    train = X[:1400]
    write_docword(train, tmp_path / "train.txt")
    write_docword(held, tmp_path / "held.txt")
    cli("lda", "train", "--corpus", tmp_path / "train.txt", "--heldout", tmp_path / "held.txt",
        "--topics", 6, "--iterations", 8, "--eval-every", 4, "--deterministic", "--seed", 7,
        "--out", tmp_path / "m", "--metrics", tmp_path / "metrics.jsonl", "--quiet")
    file = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    lda = rotor.LDA(6, max_iter=8, evaluate_every=4, deterministic=True, random_state=7)
    lda.fit(train, X_heldout=held)
    ours = [m["heldout_perplexity"] for m in lda.metrics_ if "heldout_perplexity" in m]
    theirs = [m["heldout_perplexity"] for m in file if "heldout_perplexity" in m]
    assert len(ours) == 2 and ours == theirs
    with pytest.raises(ValueError, match="X_heldout: 3 columns"):
        lda.fit(train, X_heldout=np.ones((2, 3)))


# -- checkpoints ------------------------------------------------------------------------------

CKPT = dict(deterministic=True, random_state=7, evaluate_every=0)


def _interrupt_after(path, deadline=60):
    """Ctrl-C for the main thread once `path` exists (a checkpoint was written)."""
    def wait():
        end = time.monotonic() + deadline
        while not path.exists() and time.monotonic() < end:
            time.sleep(0.005)
        _thread.interrupt_main()

    t = threading.Thread(target=wait)
    t.start()
    return t


def test_interrupted_and_resumed_fit_is_the_uninterrupted_model(sotu, tmp_path):
    X = sotu[0][:300]
    ck = tmp_path / "ck"
    lda = rotor.LDA(6, max_iter=100000, checkpoint_every=5, checkpoint_dir=ck, n_jobs=2, **CKPT)
    waiter = _interrupt_after(ck / "state.json")
    with pytest.raises(KeyboardInterrupt):
        lda.fit(X)
    waiter.join()
    assert not hasattr(lda, "components_")
    # The last checkpoint is whole (nothing half-written beside it) and resumes.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]
    done = json.loads((ck / "state.json").read_text())["iterations_done"]
    assert done >= 5 and done % 5 == 0
    lda.set_params(max_iter=done + 3)
    lda.fit(X, resume=True)
    full = rotor.LDA(6, max_iter=done + 3, n_jobs=1, **CKPT).fit(X)
    np.testing.assert_array_equal(lda.components_, full.components_)
    np.testing.assert_array_equal(lda.training_doc_topics(), full.training_doc_topics())
    # The records continue those of the interrupted fit, as the command line's metrics file.
    assert [m["iter"] for m in lda.metrics_] == list(range(1, done + 4))
    assert lda.metrics_[-1]["loglik"] == full.metrics_[-1]["loglik"]
    assert json.loads((ck / "state.json").read_text())["iterations_done"] == done + 3


def test_checkpoints_pass_between_the_command_line_and_python(sotu, cli, tmp_path):
    X = sotu[0][:300]
    write_docword(X, tmp_path / "docword.txt")
    full = rotor.LDA(6, max_iter=8, **CKPT).fit(X)
    # The command line's checkpoint, resumed here on the same documents in memory.
    cli("lda", "train", "--corpus", tmp_path / "docword.txt", "--topics", 6, "--iterations", 4,
        "--checkpoint-every", 2, "--deterministic", "--seed", 7, "--out", tmp_path / "cli",
        "--quiet")
    ours = rotor.LDA(6, max_iter=8, **CKPT)
    theta = ours.fit_transform(X, resume=tmp_path / "cli.checkpoint")  # fit's resume too
    np.testing.assert_array_equal(ours.components_, full.components_)
    np.testing.assert_array_equal(theta[np.asarray(X.sum(axis=1)).ravel() > 0],
                                  full.training_doc_topics())
    assert [m["iter"] for m in ours.metrics_] == [5, 6, 7, 8]
    # And a checkpoint of fit, resumed by the command line on the file.
    rotor.LDA(6, max_iter=4, checkpoint_every=2, checkpoint_dir=tmp_path / "py", **CKPT).fit(X)
    cli("lda", "train", "--corpus", tmp_path / "docword.txt", "--resume", tmp_path / "py",
        "--iterations", 8, "--out", tmp_path / "resumed", "--quiet")
    np.testing.assert_array_equal(rotor.LDA.load(tmp_path / "resumed").components_,
                                  full.components_)


def test_resume_refuses_other_data_or_parameters(sotu, tmp_path):
    X = sotu[0][:100]
    ck = tmp_path / "ck"
    rotor.LDA(4, max_iter=2, checkpoint_every=2, checkpoint_dir=ck, **CKPT).fit(X)
    cases = [
        (dict(n_components=5), X, r"n_components: is 5 but .*ck was trained with 4; give the "
                                  r"checkpoint's value"),
        (dict(random_state=8), X, "random_state: is 8 but"),
        (dict(topic_word_prior=0.1), X, "topic_word_prior: is 0.1 but"),
        (dict(max_iter=1), X, "max_iter: is 1 but .* already has 2 iterations"),
        ({}, X[:80], r"resume: .*ck was made on another corpus than X \(X has 80 documents"),
    ]
    for change, data, message in cases:
        lda = rotor.LDA(**{"n_components": 4, "max_iter": 4, **CKPT, **change})
        with pytest.raises(ValueError, match=message):
            lda.fit(data, resume=ck)
        assert not hasattr(lda, "components_")
    with pytest.raises(ValueError, match="missing/state.json"):
        rotor.LDA(4, **CKPT).fit(X, resume=tmp_path / "missing")
    with pytest.raises(ValueError, match="checkpoint_dir: needed when checkpoint_every > 0"):
        rotor.LDA(4, checkpoint_every=2).fit(X)
    with pytest.raises(ValueError, match="resume: True resumes from checkpoint_dir"):
        rotor.LDA(4).fit(X, resume=True)
    with pytest.raises(ValueError, match="checkpoint_dir"):
        rotor.LDA(4, checkpoint_every=1, checkpoint_dir=tmp_path / "no" / "such").fit(X)
    part = ck / "part-00000.bin"
    part.write_bytes(part.read_bytes()[:-4])
    with pytest.raises(ValueError, match="part-00000.bin"):
        rotor.LDA(4, max_iter=4, **CKPT).fit(X, resume=ck)
