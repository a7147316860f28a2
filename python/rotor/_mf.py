"""rotor.MF: matrix factorization of explicit ratings (CCD++ or block SGD), as `rotor mf train`."""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from . import _rotor
from ._base import (
    BaseEstimator,
    check_fitted,
    check_param,
    checkpoint_params,
    jobs_of,
    memory_of,
    metrics_frame,
    run_fit,
    seed_of,
)


_NATIVE = {np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.uint64,
                                  np.uint32)}


def _native(column):
    """A column as the native side reads it in place (a view when its dtype is one it takes)."""
    if column.dtype in _NATIVE and column.dtype.isnative:
        return column
    return column.astype(np.float64)


def _triples(X, name="X"):
    """(users, items, ratings, n_users, n_items) of X: a scipy.sparse matrix (users x items; its
    stored entries are the ratings; its shape) or an (n, 3) array of (user, item, rating) rows
    (-1, -1: the largest ids + 1), as columns viewed in place. TypeError for a dtype that is not
    a real number type, ValueError for a wrong shape or no ratings; the native side checks the
    rows (ids non-negative integers, ratings finite, no (user, item) pair twice) as it reads
    them, naming the array and the row."""
    if sp.issparse(X):
        if not np.issubdtype(X.dtype, np.number) or np.iscomplexobj(X):
            raise TypeError(f"{name}: dtype {X.dtype} is not a real number type")
        C = X.tocoo()
        columns = (C.row, C.col, C.data)
        n_users, n_items = C.shape
    else:
        A = np.asarray(X)
        if A.dtype.kind not in "iuf":
            raise TypeError(f"{name}: dtype {A.dtype} is not a real number type")
        if A.ndim != 2 or A.shape[1] != 3:
            raise ValueError(f"{name}: expected an (n, 3) array of (user, item, rating) rows, "
                             f"got shape {A.shape}")
        columns = (A[:, 0], A[:, 1], A[:, 2])
        n_users = n_items = -1
    if len(columns[2]) == 0:
        raise ValueError(f"{name}: no ratings")
    users, items, values = (_native(c) for c in columns)
    return users, items, values, int(n_users), int(n_items)


class MF(BaseEstimator):
    """Matrix factorization A ~ mu + b_u + c_i + W_u . H_i of explicit ratings on rotor's engine
    (the trainer of ``rotor mf train``; docs/python.md, docs/mf.md).

    n_components (--rank, K), alpha (--lambda: regularisation of W and H), alpha_bias
    (--lambda-bias), lambda_form (--lambda-form), bias (not --no-bias), solver ("sgd" or
    "ccd"), inner (--inner), eta (--eta), max_iter (--iterations: epochs), evaluate_every
    (--eval-every), deterministic (--deterministic), blocks (--blocks), random_state (--seed;
    None: 1), n_jobs (--threads; None: every core), pin, max_memory, verbose, checkpoint_every,
    checkpoint_dir (--checkpoint-every, --checkpoint-dir: a checkpoint every N epochs and after
    the last, which ``fit(X, resume=...)`` or ``rotor mf train --resume`` continues).

    fit(X): X is a scipy.sparse matrix (users x items, the stored entries are the ratings) or an
    (n, 3) array of (user, item, rating) rows. Fitted: user_factors_ (N x K), item_factors_
    (M x K), user_bias_, item_bias_, global_mean_, n_users_, n_items_, user_ids_ and item_ids_
    (the ids a model directory names its rows by: "0", "1", ... for a model fitted here),
    metrics_.
    """

    def __init__(
        self,
        n_components=64,
        *,
        alpha=0.1,
        alpha_bias=0.1,
        lambda_form="weighted",
        bias=True,
        solver="sgd",
        inner=3,
        eta=0.1,
        max_iter=20,
        evaluate_every=1,
        deterministic=False,
        blocks=0,
        random_state=None,
        n_jobs=None,
        pin=True,
        max_memory=None,
        verbose=False,
        checkpoint_every=0,
        checkpoint_dir=None,
    ):
        self.n_components = n_components
        self.alpha = alpha
        self.alpha_bias = alpha_bias
        self.lambda_form = lambda_form
        self.bias = bias
        self.solver = solver
        self.inner = inner
        self.eta = eta
        self.max_iter = max_iter
        self.evaluate_every = evaluate_every
        self.deterministic = deterministic
        self.blocks = blocks
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.pin = pin
        self.max_memory = max_memory
        self.verbose = verbose
        self.checkpoint_every = checkpoint_every
        self.checkpoint_dir = checkpoint_dir

    def _params(self):
        check_param("n_components", self.n_components, "int", low=1)
        check_param("alpha", self.alpha, "float", low=0)
        check_param("alpha_bias", self.alpha_bias, "float", low=0)
        check_param("lambda_form", self.lambda_form, "str", choices=("weighted", "plain"))
        check_param("bias", self.bias, "bool")
        check_param("solver", self.solver, "str", choices=("sgd", "ccd"))
        check_param("inner", self.inner, "int", low=1)
        check_param("eta", self.eta, "float", low=0, low_open=True)
        check_param("max_iter", self.max_iter, "int", low=1)
        check_param("evaluate_every", self.evaluate_every, "int", low=0)
        check_param("deterministic", self.deterministic, "bool")
        check_param("blocks", self.blocks, "int", low=0)
        check_param("pin", self.pin, "bool")
        return {
            "n_components": int(self.n_components),
            "alpha": float(self.alpha),
            "alpha_bias": float(self.alpha_bias),
            "lambda_form": self.lambda_form,
            "bias": bool(self.bias),
            "solver": self.solver,
            "inner": int(self.inner),
            "eta": float(self.eta),
            "max_iter": int(self.max_iter),
            "evaluate_every": int(self.evaluate_every),
            "deterministic": bool(self.deterministic),
            "blocks": int(self.blocks),
            "random_state": seed_of(self.random_state),
            "n_jobs": jobs_of(self.n_jobs),
            "pin": bool(self.pin),
            "max_memory": memory_of(self.max_memory),
            "verbose": bool(self.verbose),
        }

    def fit(self, X, y=None, X_test=None, resume=None):
        """Trains on the ratings X; with X_test (the same forms, indices of X's users and
        items) the metrics carry its RMSE and MAE at every evaluation. `resume`: continue the
        run saved in this checkpoint directory (True: checkpoint_dir), of ``fit`` or of ``rotor
        mf train``, on the same ratings and with the same model parameters (--resume), up to
        max_iter epochs in all."""
        params = self._params()
        ck = checkpoint_params(self, resume)
        params.update(ck)
        users, items, values, n_users, n_items = _triples(X)
        test = None
        if X_test is not None:
            tu, ti, tv, _, _ = _triples(X_test, "X_test")
            test = (tu, ti, tv)
        state, metrics = run_fit(self, _rotor.mf_fit, ck, users, items, values, n_users,
                                 n_items, params, test)
        self._set_state(state)
        self.metrics_ = metrics
        return self

    def _set_state(self, state):
        self._state = state
        self.user_factors_ = np.asarray(state["w"])
        self.item_factors_ = np.asarray(state["h"])
        self.user_bias_ = np.asarray(state["row_bias"])
        self.item_bias_ = np.asarray(state["col_bias"])
        self.global_mean_ = float(state["mu"])
        self.n_users_, self.n_items_ = len(self.user_factors_), len(self.item_factors_)
        self.user_ids_ = list(state["users"])
        self.item_ids_ = list(state["items"])
        self.n_iter_ = int(state["iterations"])

    def predict(self, X):
        """Predicted ratings of X: an (n, 2) array of (user, item) rows, an (n, 3) array (the
        third column is ignored) or a scipy.sparse matrix (at its stored entries, in COO
        order). A user or item beyond the model's rows is one it never saw: mu and the known
        bias."""
        check_fitted(self, "user_factors_")
        if sp.issparse(X):
            C = sp.coo_matrix(X)
            users, items = C.row.astype(np.int64), C.col.astype(np.int64)
        else:
            A = np.asarray(X)
            if A.ndim != 2 or A.shape[1] not in (2, 3) or A.dtype.kind not in "iuf":
                raise ValueError(f"X: expected an (n, 2) array of (user, item) rows, got shape "
                                 f"{A.shape} of {A.dtype}")
            ids = A[:, :2].astype(np.float64)
            if not (np.isfinite(ids).all() and (ids >= 0).all() and (ids == np.floor(ids)).all()):
                r = int(np.flatnonzero(~(np.isfinite(ids) & (ids >= 0)).all(axis=1) |
                                       (ids != np.floor(np.nan_to_num(ids))).any(axis=1))[0])
                raise ValueError(f"X: row {r}: user and item must be non-negative integers")
            users, items = ids[:, 0].astype(np.int64), ids[:, 1].astype(np.int64)
        return _rotor.mf_predict(self._state, users, items)

    def score(self, X, y=None):
        """Minus the RMSE of the predictions of X's ratings (higher is better, as
        scikit-learn's scores)."""
        check_fitted(self, "user_factors_")
        users, items, values, _, _ = _triples(X)
        return -_rotor.mf_rmse(self._state, users, items, values)

    def save(self, path):
        """Writes the model directory of ``rotor mf train --out``."""
        check_fitted(self, "user_factors_")
        _rotor.mf_save(self._state, os.fspath(path))

    @classmethod
    def load(cls, path, **params):
        """A fitted MF from a model directory of ``rotor mf train`` or save()."""
        state = _rotor.mf_load(os.fspath(path))
        settings = {
            "n_components": int(np.asarray(state["w"]).shape[1]),
            "alpha": float(state["lambda"]),
            "alpha_bias": float(state["lambda_bias"]),
            "lambda_form": state["lambda_form"],
            "bias": bool(state["bias"]),
            "solver": state["solver"],
            "random_state": int(state["seed"]),
        }
        settings.update(params)
        est = cls(**settings)
        est._set_state(state)
        est.metrics_ = []
        return est

    def metrics_frame(self):
        check_fitted(self, "metrics_")
        return metrics_frame(self.metrics_)
