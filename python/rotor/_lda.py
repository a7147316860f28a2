"""rotor.LDA: latent Dirichlet allocation by collapsed Gibbs sampling, as `rotor lda train`."""

from __future__ import annotations

import collections
import os

import numpy as np
import scipy.sparse as sp

from . import _rotor
from ._base import (
    BaseEstimator,
    TransformerMixin,
    check_fitted,
    checkpoint_params,
    check_param,
    count_arrays,
    jobs_of,
    memory_of,
    metrics_frame,
    run_fit,
    seed_of,
)

_SAMPLERS = ("sparse", "mh", "auto")
_INITS = ("sequential", "random", "sparse")
_PATTERNS = ("letters", "alnum", "unicode")


def _is_text(X):
    return isinstance(X, (list, tuple)) and len(X) > 0 and all(isinstance(d, str) for d in X)


def _is_token_lists(X):
    return (
        isinstance(X, (list, tuple))
        and len(X) > 0
        and all(isinstance(d, (list, tuple)) for d in X)
        and all(isinstance(t, str) for d in X for t in d)
    )


class LDA(TransformerMixin, BaseEstimator):
    """Latent Dirichlet allocation trained by collapsed Gibbs sampling on rotor's engine (the
    trainer of ``rotor lda train``; docs/python.md).

    Parameters are named as scikit-learn's ``LatentDirichletAllocation`` where one exists and as
    the command line's flags otherwise; defaults are the command line's:

    n_components (--topics, K), doc_topic_prior (--alpha; None: 50/K; a list: asymmetric),
    topic_word_prior (--beta), max_iter (--iterations: Gibbs sweeps), evaluate_every
    (--eval-every), random_state (--seed; None: 1), deterministic (--deterministic: the same model
    at any n_jobs), blocks (--blocks), sampler (--sampler), mh_steps, init, init_doc_topics,
    init_word_prior (--init...), optimize_alpha (--optimize-alpha), coherence_top (--top: the
    UMass coherence of each evaluation; 0: none), n_jobs (--threads; None: every
    core), pin (not --no-pin), max_memory (--max-memory), verbose (the progress lines),
    checkpoint_every, checkpoint_dir (--checkpoint-every, --checkpoint-dir: a checkpoint every N
    sweeps and after the last, which ``fit(X, resume=...)`` or ``rotor lda train --resume``
    continues).
    transform_max_iter, burn_in: ``rotor lda infer``'s --iterations and --burn-in.
    min_len, max_len, min_df, max_df, max_vocab, token_pattern, stop_words: how raw strings are
    tokenized, as ``rotor corpus build --format text`` (stop_words "english": the built-in list,
    None: none, or a list of words).

    Fitted attributes: components_ (K x V topic-word counts n_wk, int64, as the model's
    word_topic.bin holds them), n_features_in_ (V), vocabulary_ (the V words, or None),
    doc_topic_prior_ (alpha_k, size K), topic_word_prior_, n_iter_, metrics_ (one dict per
    iteration: the records of the command line's --metrics file).
    """

    def __init__(
        self,
        n_components=100,
        *,
        doc_topic_prior=None,
        topic_word_prior=0.01,
        max_iter=100,
        evaluate_every=10,
        random_state=None,
        deterministic=False,
        blocks=0,
        sampler="sparse",
        mh_steps=2,
        init="sequential",
        init_doc_topics=4,
        init_word_prior=0.0,
        optimize_alpha=0,
        coherence_top=10,
        n_jobs=None,
        pin=True,
        max_memory=None,
        verbose=False,
        checkpoint_every=0,
        checkpoint_dir=None,
        transform_max_iter=50,
        burn_in=10,
        min_len=3,
        max_len=25,
        min_df=5,
        max_df=1.0,
        max_vocab=0,
        token_pattern="letters",
        stop_words="english",
    ):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.evaluate_every = evaluate_every
        self.random_state = random_state
        self.deterministic = deterministic
        self.blocks = blocks
        self.sampler = sampler
        self.mh_steps = mh_steps
        self.init = init
        self.init_doc_topics = init_doc_topics
        self.init_word_prior = init_word_prior
        self.optimize_alpha = optimize_alpha
        self.coherence_top = coherence_top
        self.n_jobs = n_jobs
        self.pin = pin
        self.max_memory = max_memory
        self.verbose = verbose
        self.checkpoint_every = checkpoint_every
        self.checkpoint_dir = checkpoint_dir
        self.transform_max_iter = transform_max_iter
        self.burn_in = burn_in
        self.min_len = min_len
        self.max_len = max_len
        self.min_df = min_df
        self.max_df = max_df
        self.max_vocab = max_vocab
        self.token_pattern = token_pattern
        self.stop_words = stop_words

    # -- parameters ---------------------------------------------------------------------------

    def _fit_params(self):
        check_param("n_components", self.n_components, "int", low=1)
        alpha = self.doc_topic_prior
        if alpha is not None and not np.isscalar(alpha):
            alpha = [float(a) for a in alpha]
            if len(alpha) != self.n_components:
                raise ValueError(f"doc_topic_prior: {len(alpha)} values for "
                                 f"n_components={self.n_components} topics")
        elif alpha is not None:
            check_param("doc_topic_prior", alpha, "float", low=0, low_open=True)
            alpha = float(alpha)
        check_param("topic_word_prior", self.topic_word_prior, "float", low=0, low_open=True)
        check_param("max_iter", self.max_iter, "int", low=1)
        check_param("evaluate_every", self.evaluate_every, "int", low=0)
        check_param("deterministic", self.deterministic, "bool")
        check_param("blocks", self.blocks, "int", low=0)
        check_param("sampler", self.sampler, "str", choices=_SAMPLERS)
        check_param("mh_steps", self.mh_steps, "int", low=1)
        check_param("init", self.init, "str", choices=_INITS)
        check_param("init_doc_topics", self.init_doc_topics, "int", low=1)
        check_param("init_word_prior", self.init_word_prior, "float", low=0)
        check_param("optimize_alpha", self.optimize_alpha, "int", low=0)
        check_param("coherence_top", self.coherence_top, "int", low=0)
        check_param("pin", self.pin, "bool")
        return {
            "n_components": int(self.n_components),
            "doc_topic_prior": alpha,
            "topic_word_prior": float(self.topic_word_prior),
            "max_iter": int(self.max_iter),
            "evaluate_every": int(self.evaluate_every),
            "random_state": seed_of(self.random_state),
            "deterministic": bool(self.deterministic),
            "blocks": int(self.blocks),
            "sampler": self.sampler,
            "mh_steps": int(self.mh_steps),
            "init": self.init,
            "init_doc_topics": int(self.init_doc_topics),
            "init_word_prior": float(self.init_word_prior),
            "optimize_alpha": int(self.optimize_alpha),
            "coherence_top": int(self.coherence_top),
            "n_jobs": jobs_of(self.n_jobs),
            "pin": bool(self.pin),
            "max_memory": memory_of(self.max_memory),
            "verbose": bool(self.verbose),
        }

    def _text_params(self):
        check_param("min_len", self.min_len, "int", low=1)
        check_param("max_len", self.max_len, "int", low=1)
        check_param("min_df", self.min_df, "int", low=1)
        check_param("max_df", self.max_df, "float", low=0, low_open=True, high=1)
        check_param("max_vocab", self.max_vocab, "int", low=0)
        check_param("token_pattern", self.token_pattern, "str", choices=_PATTERNS)
        stop = self.stop_words
        if isinstance(stop, str) and stop != "english":
            raise ValueError(f"stop_words: 'english', None or a list of words; got {stop!r}")
        return {
            "min_len": int(self.min_len),
            "max_len": int(self.max_len),
            "min_df": int(self.min_df),
            "max_df": float(self.max_df),
            "max_vocab": int(self.max_vocab),
            "token_pattern": self.token_pattern,
            "stop_words": stop if stop is None or isinstance(stop, str) else list(stop),
        }

    # -- documents ----------------------------------------------------------------------------

    def _documents(self, X, vocabulary=None, fitted=False, model=None):
        """(kind, indptr, indices, values, V, vocabulary, rows): the documents of X as the
        native side takes them; rows maps each native document to its row of X (None: the same
        rows). `fitted`: read X with the model's words, `model` = (vocabulary, V) or the fitted
        estimator's."""
        empty = np.zeros(0, dtype=np.float64)
        model_vocab, model_features = model or (getattr(self, "vocabulary_", None),
                                                getattr(self, "n_features_in_", None))
        if _is_text(X):
            fixed = model_vocab if fitted else None
            if fitted and fixed is None:
                raise ValueError("X: raw text needs a model with a vocabulary")
            offsets, ids, words, rows = _rotor.lda_tokenize(list(X), self._text_params(), fixed)
            words = fixed if fitted else words
            return "tokens", offsets, ids, empty, len(words), words, (rows, len(X))
        if _is_token_lists(X):
            if fitted:
                if model_vocab is None:
                    raise ValueError("X: token lists need a model with a vocabulary")
                index = {w: i for i, w in enumerate(model_vocab)}
                words = model_vocab
            else:
                # The vocabulary in corpus build's order: decreasing frequency, ties by word.
                freq = collections.Counter(t for d in X for t in d)
                if "" in freq:
                    raise ValueError("X: an empty token")
                words = sorted(freq, key=lambda w: (-freq[w], w))
                index = {w: i for i, w in enumerate(words)}
            ids = [[index[t] for t in d if t in index] for d in X]
            offsets = np.zeros(len(ids) + 1, dtype=np.int64)
            offsets[1:] = np.cumsum([len(d) for d in ids])
            flat = np.fromiter((i for d in ids for i in d), dtype=np.int64, count=offsets[-1])
            return "tokens", offsets, flat, empty, len(words), list(words), None
        if isinstance(X, (list, tuple)) and len(X) == 0:
            raise ValueError("X: Found array with 0 sample(s) (shape=(0,)) while a minimum of 1 "
                             "is required.")
        indptr, indices, data, V = count_arrays(X, "X")
        if fitted and V != model_features:
            raise ValueError(
                f"X has {V} features, but LDA is expecting {model_features} features as input."
            )
        if vocabulary is not None:
            vocabulary = [str(w) for w in vocabulary]
            if len(vocabulary) != V:
                raise ValueError(f"vocabulary: {len(vocabulary)} words for X's {V} columns")
        return "counts", indptr, indices, data, V, vocabulary or [], None

    # -- fit, transform -----------------------------------------------------------------------

    def fit(self, X, y=None, vocabulary=None, X_heldout=None, resume=None):
        """Trains on X: a document-term count matrix (scipy.sparse or numpy, D x V, counts as
        any numeric dtype holding non-negative integers), a list of raw strings (tokenized as
        ``rotor corpus build --format text``) or a list of token lists. `vocabulary`: the V
        words of a matrix's columns (kept in the model, for top_words and ``rotor lda
        topics``). `X_heldout`: documents of the same columns (a matrix of V columns, or text
        and token lists read with X's vocabulary) whose document-completion perplexity every
        evaluation records (--heldout). `resume`: continue the run saved in this checkpoint
        directory (True: checkpoint_dir), of ``fit`` or of ``rotor lda train``, on the same
        documents and with the same model parameters (--resume), up to max_iter sweeps in all."""
        params = self._fit_params()
        ck = checkpoint_params(self, resume)
        params.update(ck)
        kind, indptr, indices, values, V, words, rows = self._documents(X, vocabulary)
        heldout = None
        if X_heldout is not None:
            heldout = self._heldout(X_heldout, V, words, kind)
        state, metrics = run_fit(self, _rotor.lda_fit, ck, kind, indptr, indices, values, V,
                                 words, params, heldout)
        self._set_state(state)
        self.metrics_ = metrics
        self._fit_rows = rows
        return self

    def _heldout(self, X, V, words, kind):
        """The held-out documents in the training columns."""
        if _is_text(X) or _is_token_lists(X):
            if kind != "tokens" or not words:
                raise ValueError("X_heldout: text needs training documents given as text")
            h = self._documents(X, fitted=True, model=(words, V))
            return h[0], h[1], h[2], h[3]
        indptr, indices, data, columns = count_arrays(X, "X_heldout")
        if columns != V:
            raise ValueError(f"X_heldout: {columns} columns for X's {V}")
        return "counts", indptr, indices, data

    def _set_state(self, state):
        self._state = state
        K, V = int(state["num_topics"]), int(state["num_words"])
        word_topic = sp.csr_matrix(
            (state["word_topic_counts"].astype(np.int64), state["word_topic_topics"],
             state["word_topic_offsets"]),
            shape=(V, K),
        )
        self.components_ = np.ascontiguousarray(word_topic.T.toarray())
        self.n_features_in_ = V
        self.n_components_ = K
        self.vocabulary_ = list(state["vocab"]) if len(state["vocab"]) else None
        self.doc_topic_prior_ = np.asarray(state["alpha"], dtype=np.float64)
        self.topic_word_prior_ = float(state["beta"])
        self.n_iter_ = int(state["iterations"])

    def transform(self, X):
        """Each document's topic proportions theta (D x K, rows sum to 1) by Gibbs fold-in with
        the model fixed, as ``rotor lda infer``: document d's generator is seeded from
        (random_state, d + 1), so rows do not depend on n_jobs. A document without a known word
        gets the prior's proportions."""
        check_fitted(self, "components_")
        check_param("transform_max_iter", self.transform_max_iter, "int", low=1)
        check_param("burn_in", self.burn_in, "int", low=0)
        kind, indptr, indices, values, _, _, rows = self._documents(X, fitted=True)
        theta = _rotor.lda_transform(self._state, kind, indptr, indices, values,
                                     int(self.transform_max_iter), int(self.burn_in),
                                     seed_of(self.random_state), jobs_of(self.n_jobs))
        return self._scatter(theta, rows)

    def _scatter(self, theta, rows):
        """theta of the native documents into the rows of X (raw text drops documents without
        a known word: theirs is the prior's)."""
        if rows is None:
            return theta
        kept, n = rows
        out = np.tile(self.doc_topic_prior_ / self.doc_topic_prior_.sum(), (n, 1))
        out[kept] = theta
        return out

    def fit_transform(self, X, y=None, vocabulary=None, X_heldout=None, resume=None):
        """fit(X, vocabulary=..., X_heldout=..., resume=...), then the training documents'
        proportions from the model's own doc-topic counts, theta_dk = (n_dk + alpha_k) / (n_d +
        sum alpha), as ``--doc-topics`` writes them (no fold-in)."""
        self.fit(X, vocabulary=vocabulary, X_heldout=X_heldout, resume=resume)
        return self._scatter(self.training_doc_topics(), self._fit_rows)

    def training_doc_topics(self):
        """theta of the documents the model was trained on (D x K)."""
        check_fitted(self, "components_")
        s = self._state
        counts = sp.csr_matrix(
            (s["doc_topic_counts"].astype(np.float64), s["doc_topic_topics"],
             s["doc_topic_offsets"]),
            shape=(int(s["num_docs"]), int(s["num_topics"])),
        ).toarray()
        alpha = self.doc_topic_prior_
        return (counts + alpha) / (counts.sum(axis=1, keepdims=True) + alpha.sum())

    # -- the model ----------------------------------------------------------------------------

    def topic_word_distribution(self):
        """phi (K x V): phi_kw = (n_wk + beta) / (n_k + V beta), the rows summing to 1."""
        check_fitted(self, "components_")
        beta = self.topic_word_prior_
        c = self.components_.astype(np.float64)
        return (c + beta) / (c.sum(axis=1, keepdims=True) + c.shape[1] * beta)

    def top_words(self, top=10):
        """Each topic's `top` most probable words (ties: the lower word id), as ``rotor lda
        topics`` lists them: a list of K lists of (word, probability); a word is its id when
        the model has no vocabulary."""
        phi = self.topic_word_distribution()
        order = np.argsort(-self.components_, axis=1, kind="stable")[:, :top]
        name = (lambda w: self.vocabulary_[w]) if self.vocabulary_ else (lambda w: int(w))
        return [[(name(w), float(phi[k, w])) for w in order[k]] for k in range(phi.shape[0])]

    def save(self, path):
        """Writes the model directory of ``rotor lda train --out`` (params.json, vocab.txt,
        word_topic.bin, doc_topic.bin, topics.txt), whole or not at all."""
        check_fitted(self, "components_")
        _rotor.lda_save(self._state, os.fspath(path))

    @classmethod
    def load(cls, path, **params):
        """A fitted LDA from a model directory of ``rotor lda train`` or save(); `params` set
        the estimator's other parameters (n_components and the priors come from the model)."""
        state = _rotor.lda_load(os.fspath(path))
        alpha = np.asarray(state["alpha"])
        settings = {
            "n_components": int(state["num_topics"]),
            "doc_topic_prior": float(alpha[0]) if np.all(alpha == alpha[0]) else list(alpha),
            "topic_word_prior": float(state["beta"]),
            "random_state": int(state["seed"]),
        }
        settings.update(params)
        est = cls(**settings)
        est._set_state(state)
        est.metrics_ = []
        est._fit_rows = None
        return est

    def metrics_frame(self):
        """metrics_ as a pandas DataFrame (needs pandas)."""
        check_fitted(self, "metrics_")
        return metrics_frame(self.metrics_)

    def _more_tags(self):
        return {"requires_positive_X": True, "X_types": ["2darray", "sparse"]}
