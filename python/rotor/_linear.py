"""rotor.Lasso and rotor.LogisticRegression (L1), as `rotor lasso train` and `rotor logreg
train`."""

from __future__ import annotations

import os

import numpy as np

from . import _rotor
from ._base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    as_csr,
    as_targets,
    check_features,
    check_fitted,
    check_param,
    checkpoint_params,
    csr_arrays,
    finite_targets,
    jobs_of,
    memory_of,
    metrics_frame,
    run_fit,
    seed_of,
)


class Lasso(RegressorMixin, BaseEstimator):
    """The Lasso, min_b 1/(2N) ||y - b0 - X b||^2 + alpha ||b||_1 (scikit-learn's and glmnet's
    normalisation), by coordinate descent on rotor's engine (the trainer of ``rotor lasso
    train``; docs/lasso.md).

    alpha (--lambda), fit_intercept (not --no-intercept), standardize (not --no-standardize:
    the penalty applies to the standardised coefficients, glmnet's default; False is
    scikit-learn's Lasso), schedule (--schedule cyclic|shotgun|strads), parallel (-L),
    candidates, rho, eta (strads), tol (--tol), stop (--stop gap|kkt), max_iter
    (--max-iterations), active_set (not --no-active-set), evaluate_every (--eval-every),
    random_state (--seed; None: 1), n_jobs (--threads; None: as the command line chooses
    without it: 1 thread when a round reads too few entries for a second to pay, else the
    cores the 1-minute load average leaves free), pin, max_memory (--max-memory: the run is
    refused with MemoryError when its memory plan needs more; None: 90% of the machine's
    memory), verbose (the command line's progress lines on stdout), checkpoint_every,
    checkpoint_dir (--checkpoint-every, --checkpoint-dir: a checkpoint every N iterations and
    after the last, which ``fit(X, y, resume=...)`` or ``rotor lasso train --resume``
    continues).

    Fitted: coef_ (p), intercept_, n_iter_, n_features_in_, converged_, objective_,
    relative_gap_, lambda_max_ (the smallest alpha whose solution is 0), metrics_.
    """

    def __init__(
        self,
        alpha=1.0,
        *,
        fit_intercept=True,
        standardize=True,
        schedule="cyclic",
        parallel=16,
        candidates=32,
        rho=0.3,
        eta=1e-6,
        tol=1e-7,
        stop="gap",
        max_iter=1000,
        active_set=True,
        evaluate_every=1,
        random_state=None,
        n_jobs=None,
        pin=True,
        max_memory=None,
        verbose=False,
        checkpoint_every=0,
        checkpoint_dir=None,
    ):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.schedule = schedule
        self.parallel = parallel
        self.candidates = candidates
        self.rho = rho
        self.eta = eta
        self.tol = tol
        self.stop = stop
        self.max_iter = max_iter
        self.active_set = active_set
        self.evaluate_every = evaluate_every
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.pin = pin
        self.max_memory = max_memory
        self.verbose = verbose
        self.checkpoint_every = checkpoint_every
        self.checkpoint_dir = checkpoint_dir

    def _params(self):
        check_param("alpha", self.alpha, "float", low=0)
        check_param("fit_intercept", self.fit_intercept, "bool")
        check_param("standardize", self.standardize, "bool")
        check_param("schedule", self.schedule, "str", choices=("cyclic", "shotgun", "strads"))
        check_param("parallel", self.parallel, "int", low=1)
        check_param("candidates", self.candidates, "int", low=1)
        check_param("rho", self.rho, "float", low=0, low_open=True, high=1)
        check_param("eta", self.eta, "float", low=0, low_open=True)
        check_param("tol", self.tol, "float", low=0)
        check_param("stop", self.stop, "str", choices=("gap", "kkt"))
        check_param("max_iter", self.max_iter, "int", low=1)
        check_param("active_set", self.active_set, "bool")
        check_param("evaluate_every", self.evaluate_every, "int", low=1)
        check_param("pin", self.pin, "bool")
        return {
            "alpha": float(self.alpha),
            "fit_intercept": bool(self.fit_intercept),
            "standardize": bool(self.standardize),
            "schedule": self.schedule,
            "parallel": int(self.parallel),
            "candidates": int(self.candidates),
            "rho": float(self.rho),
            "eta": float(self.eta),
            "tol": float(self.tol),
            "stop": self.stop,
            "max_iter": int(self.max_iter),
            "active_set": bool(self.active_set),
            "evaluate_every": int(self.evaluate_every),
            "random_state": seed_of(self.random_state),
            "n_jobs": jobs_of(self.n_jobs),
            "pin": bool(self.pin),
            "max_memory": memory_of(self.max_memory),
            "verbose": bool(self.verbose),
        }

    def fit(self, X, y, resume=None):
        """X: numpy array or scipy.sparse matrix (n x p, finite values); y: n finite values.
        `resume`: continue the run saved in this checkpoint directory (True: checkpoint_dir), of
        ``fit`` or of ``rotor lasso train``, on the same data and with the same parameters
        (--resume), up to max_iter iterations in all."""
        params = self._params()
        ck = checkpoint_params(self, resume)
        params.update(ck)
        indptr, indices, data, p = csr_arrays(X, "X")
        t = finite_targets(as_targets(y, len(indptr) - 1))
        (state, converged, lambda_max), metrics = run_fit(self, _rotor.lasso_fit, ck, indptr,
                                                          indices, data, p, t, params)
        self._set_state(state)
        self.metrics_ = metrics
        self.converged_ = bool(converged)
        self.lambda_max_ = float(lambda_max)
        return self

    def _set_state(self, state):
        self._state = state
        self.coef_ = np.asarray(state["beta"], dtype=np.float64)
        self.intercept_ = float(state["intercept"])
        self.n_features_in_ = int(state["features"])
        self.n_iter_ = int(state["iterations"])
        self.objective_ = float(state["objective"])
        self.relative_gap_ = float(state["relative_gap"])

    def predict(self, X):
        check_fitted(self, "coef_")
        M = as_csr(X, "X")
        check_features(self, M)
        return np.asarray(M @ self.coef_).ravel() + self.intercept_

    def save(self, path):
        """Writes the model file of ``rotor lasso train --out``."""
        check_fitted(self, "coef_")
        _rotor.lasso_save(self._state, os.fspath(path))

    @classmethod
    def load(cls, path, **params):
        """A fitted Lasso from a model file of ``rotor lasso train`` or save()."""
        state = _rotor.lasso_load(os.fspath(path))
        settings = {"alpha": float(state["lambda"]), "fit_intercept": bool(state["intercept_fitted"]),
                    "standardize": bool(state["standardize"]), "schedule": state["schedule"]}
        settings.update(params)
        est = cls(**settings)
        est._set_state(state)
        est.metrics_ = []
        return est

    def metrics_frame(self):
        check_fitted(self, "metrics_")
        return metrics_frame(self.metrics_)


class LogisticRegression(ClassifierMixin, BaseEstimator):
    """Sparse L1 logistic regression, min_w sum_i log(1 + exp(-y_i x_i.w)) + (1/C) ||w||_1
    (liblinear's and scikit-learn's ``LogisticRegression(penalty="l1", C=C)``: rotor's --lambda
    is 1/C), by the delayed block proximal gradient of ``rotor logreg train`` on one process
    (docs/logreg.md).

    C (1 / --lambda), penalty ("l1" only), fit_intercept (not --no-intercept), solver
    (--solver: "newton" (newGLMNET, one thread), "prox" (the block proximal gradient) or "auto":
    newton unless a parameter of prox's below is set), tol (--tol, default 1e-4: stop when the
    min-norm subgradient's 1-norm is <= tol times its value at w = 0; 0 never), max_iter
    (--iterations: a cap, in Newton iterations or block iterations; None: 1000 Newton iterations
    or 1000 passes), random_state (--seed; None: 1); prox's: blocks (--blocks; None: keys / 8 up
    to 1024), curvature (--curvature bound|local; None: local with max_step 1), eta (--eta;
    None: 1), max_step (--max-step), evaluate_every (--eval-every; None: every 4 passes with
    tol), n_jobs (--threads of the worker; None: 1, as the command line; newton uses one
    thread whatever it is), max_memory (--max-memory: the run is refused with MemoryError when
    its memory plan needs more; None: 90% of the machine's memory), verbose (the command line's
    progress lines on stdout), checkpoint_every, checkpoint_dir (--checkpoint-every,
    --checkpoint-dir: a checkpoint every N block iterations and after the last, which
    ``fit(X, y, resume=...)`` or ``rotor logreg train --resume`` continues; prox's only, as on
    the command line: solver="auto" then takes prox). The defaults are the command line's
    (docs/logreg.md, "Stopping and defaults", "Solvers").

    Features are keyed as LIBSVM numbers them: column j is feature j + 1, so a saved model
    scores a file of ``rotor logreg eval``. Fitted: classes_ (2), coef_ (1 x p), intercept_
    (1), n_iter_, n_features_in_, converged_, objective_, metrics_.
    """

    def __init__(
        self,
        C=1.0,
        *,
        penalty="l1",
        fit_intercept=True,
        solver="auto",
        blocks=None,
        max_iter=None,
        curvature=None,
        eta=None,
        max_step=None,
        tol=1e-4,
        evaluate_every=None,
        random_state=None,
        n_jobs=None,
        max_memory=None,
        verbose=False,
        checkpoint_every=0,
        checkpoint_dir=None,
    ):
        self.C = C
        self.penalty = penalty
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.blocks = blocks
        self.max_iter = max_iter
        self.curvature = curvature
        self.eta = eta
        self.max_step = max_step
        self.tol = tol
        self.evaluate_every = evaluate_every
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.max_memory = max_memory
        self.verbose = verbose
        self.checkpoint_every = checkpoint_every
        self.checkpoint_dir = checkpoint_dir

    def _params(self):
        check_param("C", self.C, "float", low=0, low_open=True)
        check_param("penalty", self.penalty, "str", choices=("l1",))
        check_param("fit_intercept", self.fit_intercept, "bool")
        if self.blocks is not None:
            check_param("blocks", self.blocks, "int", low=1)
        if self.max_iter is not None:
            check_param("max_iter", self.max_iter, "int", low=1)
        if self.curvature is not None:
            check_param("curvature", self.curvature, "str", choices=("bound", "local"))
        check_param("solver", self.solver, "str", choices=("auto", "newton", "prox"))
        if self.eta is not None:
            check_param("eta", self.eta, "float", low=0, low_open=True, high=1)
        if self.max_step is not None:
            check_param("max_step", self.max_step, "float", low=0)
        check_param("tol", self.tol, "float", low=0)
        if self.tol >= 1:
            raise ValueError(f"tol: must be < 1, got {self.tol}")
        if self.evaluate_every is not None:
            check_param("evaluate_every", self.evaluate_every, "int", low=0)
        jobs = jobs_of(self.n_jobs, none=1)  # logreg train's --threads 1
        return {
            "C": float(self.C),
            "fit_intercept": bool(self.fit_intercept),
            "blocks": None if self.blocks is None else int(self.blocks),
            "max_iter": None if self.max_iter is None else int(self.max_iter),
            "curvature": self.curvature,
            "solver": self.solver,
            "eta": None if self.eta is None else float(self.eta),
            "max_step": None if self.max_step is None else float(self.max_step),
            "tol": float(self.tol),
            "evaluate_every": None if self.evaluate_every is None else int(self.evaluate_every),
            "random_state": seed_of(self.random_state),
            "n_jobs": jobs,
            "max_memory": memory_of(self.max_memory),
            "verbose": bool(self.verbose),
        }

    def fit(self, X, y, resume=None):
        """X: numpy array or scipy.sparse matrix (n x p, finite); y: two classes (the second
        of classes_, sorted, is the positive one, +1). `resume`: continue the run saved in this
        checkpoint directory (True: checkpoint_dir), of ``fit`` or of ``rotor logreg train``, on
        the same data and with the same parameters (--resume; parameters left None take the
        checkpoint's), up to max_iter iterations in all (None: the checkpoint's total).
        Checkpoints and resume are the block proximal gradient's: solver="auto" takes it, as
        the command line does, and solver="newton" refuses them."""
        params = self._params()
        ck = checkpoint_params(self, resume)
        params.update(ck)
        indptr, indices, data, p = csr_arrays(X, "X")
        labels = as_targets(y, len(indptr) - 1)
        if labels.dtype.kind == "f":
            finite_targets(labels)
            if np.any(labels != np.floor(labels)):
                raise ValueError("y: Unknown label type: 'continuous' (LogisticRegression needs "
                                 "two classes)")
        classes = np.unique(labels)
        if len(classes) != 2:
            raise ValueError(f"y: LogisticRegression is binary: {len(classes)} classes given "
                             "(need exactly 2)")
        signs = np.where(labels == classes[1], 1, -1).astype(np.int64)
        (state, converged), metrics = run_fit(self, _rotor.logreg_fit, ck, indptr, indices,
                                              data, p, signs, params)
        self.classes_ = classes
        self._set_state(state, p)
        self.metrics_ = metrics
        self.converged_ = bool(converged)
        return self

    def _set_state(self, state, p):
        self._state = state
        keys = np.asarray(state["keys"], dtype=np.uint64)
        weights = np.asarray(state["weights"], dtype=np.float64)
        coef = np.zeros(p, dtype=np.float64)
        inside = (keys >= 1) & (keys <= p)
        coef[(keys[inside] - 1).astype(np.int64)] = weights[inside]
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([float(state["intercept"])])
        self.n_features_in_ = p
        self.n_iter_ = int(state["iterations"])
        self.objective_ = float(state["objective"])

    def decision_function(self, X):
        """x.w + intercept of each row (> 0: classes_[1])."""
        check_fitted(self, "coef_")
        indptr, indices, data, p = csr_arrays(X, "X")
        check_features(self, p)
        return _rotor.logreg_decision(self._state, indptr, indices, data, p)

    def predict_proba(self, X):
        m = self.decision_function(X)
        p = 1.0 / (1.0 + np.exp(-m))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        check_fitted(self, "coef_")
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def save(self, path):
        """Writes the model file of ``rotor logreg train --out``."""
        check_fitted(self, "coef_")
        _rotor.logreg_save(self._state, os.fspath(path))

    @classmethod
    def load(cls, path, n_features=None, classes=(-1, 1), **params):
        """A fitted model from a model file of ``rotor logreg train`` or save(): its features
        are keys 1..n_features (default: the largest key), classes_ (negative, positive)."""
        state = _rotor.logreg_load(os.fspath(path))
        keys = np.asarray(state["keys"], dtype=np.uint64)
        p = n_features if n_features is not None else int(keys.max()) if len(keys) else 0
        settings = {"C": 1.0 / float(state["lambda"])}
        settings.update(params)
        est = cls(**settings)
        est.classes_ = np.asarray(classes)
        est._set_state(state, p)
        est.metrics_ = []
        return est

    def metrics_frame(self):
        check_fitted(self, "metrics_")
        return metrics_frame(self.metrics_)

    def _more_tags(self):
        return {"binary_only": True}
