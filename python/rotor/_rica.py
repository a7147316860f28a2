"""rotor.RICA: reconstruction ICA by the trainer of ``rotor rica train`` (docs/rica.md)."""

from __future__ import annotations

import os

import numpy as np

from . import _rotor
from ._base import (
    BaseEstimator,
    TransformerMixin,
    check_features,
    check_fitted,
    check_param,
    checkpoint_params,
    jobs_of,
    memory_of,
    metrics_frame,
    run_fit,
    seed_of,
)


def _dense(X):
    """X as a C-contiguous float64 n x p array of finite values (rotor's message otherwise)."""
    a = np.asarray(X, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"X: expected a 2-d array (observations x dimension), got {a.ndim}-d")
    if a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"X: needs at least one observation and one column, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("X: holds NaN or infinity")
    return np.ascontiguousarray(a)


class RICA(TransformerMixin, BaseEstimator):
    """Reconstruction ICA: min_W sum_i 1/2 |W'W x_i - x_i|^2 + alpha |W x_i|_1 over W of
    n_components x p (overcomplete allowed), by the solvers of ``rotor rica train`` on one
    process (the same W bit for bit as the command line on the same data).

    n_components (--components), alpha (--lambda), solver (--solver: "auto" and "admm" are ADMM
    on all of W, "prox" the paper's proximal gradient), rho (--rho), inner_iter
    (--inner-iterations), eta (--eta), admm_iter (--admm-iterations),
    block_rows (--block-rows), tol (--tol), max_iter (--iterations), evaluate_every
    (--eval-every), random_state (--seed; None: 1), n_jobs (--threads; None: 1, as the command
    line; -1: every core), max_memory (--max-memory: the run is refused with MemoryError when
    its memory plan needs more; None: 90% of the machine's memory), verbose (the command line's
    progress lines on stdout), checkpoint_every (--checkpoint-every: a checkpoint every N steps and
    at the end), checkpoint_dir (where it goes: one file, the command line's <out>.checkpoint),
    which ``fit(X, resume=...)`` or ``rotor rica train --resume`` continues. A checkpoint keeps
    W and the AdaGrad factors, not the ADMM's warm start: a resumed fit is not the uninterrupted
    one bit for bit (docs/rica.md).

    Fitted: components_ (W, n_components x p), n_features_in_, n_iter_, objective_,
    converged_, metrics_. transform(X) is X W' (the features W x of each row).
    """

    def __init__(self, n_components=128, *, alpha=0.1, solver="auto", rho=0.2, inner_iter=20,
                 eta=8.0, admm_iter=1, block_rows=16, tol=1e-4, max_iter=1000, evaluate_every=10,
                 random_state=None, n_jobs=1, max_memory=None, verbose=False, checkpoint_every=0,
                 checkpoint_dir=None):
        self.n_components = n_components
        self.alpha = alpha
        self.solver = solver
        self.rho = rho
        self.inner_iter = inner_iter
        self.eta = eta
        self.admm_iter = admm_iter
        self.block_rows = block_rows
        self.tol = tol
        self.max_iter = max_iter
        self.evaluate_every = evaluate_every
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.max_memory = max_memory
        self.verbose = verbose
        self.checkpoint_every = checkpoint_every
        self.checkpoint_dir = checkpoint_dir

    def _params(self):
        check_param("n_components", self.n_components, "int", low=1)
        check_param("alpha", self.alpha, "float", low=0, low_open=True)
        check_param("solver", self.solver, "str", choices=("auto", "admm", "prox"))
        check_param("rho", self.rho, "float", low=0, low_open=True)
        check_param("inner_iter", self.inner_iter, "int", low=1)
        check_param("eta", self.eta, "float", low=0, low_open=True)
        check_param("admm_iter", self.admm_iter, "int", low=1)
        check_param("block_rows", self.block_rows, "int", low=1)
        check_param("tol", self.tol, "float", low=0)
        check_param("max_iter", self.max_iter, "int", low=0)
        check_param("evaluate_every", self.evaluate_every, "int", low=1)
        return {
            "n_components": int(self.n_components),
            "alpha": float(self.alpha),
            "solver": self.solver,
            "rho": float(self.rho),
            "inner_iter": int(self.inner_iter),
            "eta": float(self.eta),
            "admm_iter": int(self.admm_iter),
            "block_rows": int(self.block_rows),
            "tol": float(self.tol),
            "max_iter": int(self.max_iter),
            "evaluate_every": int(self.evaluate_every),
            "random_state": seed_of(self.random_state),
            "n_jobs": jobs_of(self.n_jobs, none=1),  # rica train's --threads 1
            "max_memory": memory_of(self.max_memory),
            "verbose": bool(self.verbose),
        }

    def fit(self, X, y=None, resume=None):
        """X: n x p array of finite values, one observation per row (y is ignored). `resume`:
        continue from this checkpoint file (True: checkpoint_dir), of ``fit`` or of ``rotor rica
        train``, made with the same n_components and alpha on data of X's dimension
        (--resume), up to max_iter steps in all."""
        params = self._params()
        ck = checkpoint_params(self, resume)
        params.update(ck)
        a = _dense(X)
        (state, converged), metrics = run_fit(self, _rotor.rica_fit, ck, a.ravel(), a.shape[0],
                                              a.shape[1], params)
        self._set_state(state)
        self.metrics_ = metrics
        self.converged_ = bool(converged)
        return self

    def _set_state(self, state):
        self._state = state
        k, p = int(state["components"]), int(state["dimension"])
        self.components_ = np.asarray(state["w"], dtype=np.float64).reshape(k, p)
        self.n_features_in_ = p
        self.n_iter_ = int(state["iterations"])
        self.objective_ = float(state["objective"])

    def transform(self, X):
        """The features W x of each row of X (n x n_components)."""
        check_fitted(self, "components_")
        a = _dense(X)
        check_features(self, a)
        return a @ self.components_.T

    def save(self, path):
        """Writes the model file of ``rotor rica train --out``."""
        check_fitted(self, "components_")
        _rotor.rica_save(self._state, os.fspath(path))

    @classmethod
    def load(cls, path, **params):
        """A fitted RICA from a model file of ``rotor rica train`` or save()."""
        state = _rotor.rica_load(os.fspath(path))
        settings = {"n_components": int(state["components"]), "alpha": float(state["lambda"])}
        settings.update(params)
        est = cls(**settings)
        est._set_state(state)
        est.metrics_ = []
        return est

    def metrics_frame(self):
        check_fitted(self, "metrics_")
        return metrics_frame(self.metrics_)
