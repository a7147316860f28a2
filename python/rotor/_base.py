"""What the estimators share: scikit-learn's base classes when scikit-learn is installed (a
small stand-in otherwise), seeds, input checks with rotor's messages, and metrics records."""

from __future__ import annotations

import inspect
import json
import numbers
import os
import warnings

import numpy as np
import scipy.sparse as sp

from . import _rotor

try:  # scikit-learn is optional: clone(), pipelines and check_estimator need it.
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin
    from sklearn.exceptions import DataConversionWarning, NotFittedError
except ImportError:  # pragma: no cover - exercised only without scikit-learn

    class DataConversionWarning(UserWarning):
        """y of another shape than expected, converted."""

    class NotFittedError(ValueError, AttributeError):
        """An estimator used before fit."""

    class BaseEstimator:
        """get_params/set_params from the constructor's signature, as scikit-learn's."""

        @classmethod
        def _get_param_names(cls):
            sig = inspect.signature(cls.__init__)
            return sorted(p for p in sig.parameters if p != "self")

        def get_params(self, deep=True):
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params):
            valid = self._get_param_names()
            for key, value in params.items():
                if key not in valid:
                    raise ValueError(
                        f"Invalid parameter {key!r} for estimator {type(self).__name__}. "
                        f"Valid parameters are: {valid!r}."
                    )
                setattr(self, key, value)
            return self

        def __repr__(self):
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
            return f"{type(self).__name__}({args})"

    class TransformerMixin:
        def fit_transform(self, X, y=None, **fit_params):
            return self.fit(X, y, **fit_params).transform(X)

    class RegressorMixin:
        _estimator_type = "regressor"

        def score(self, X, y):
            y = np.asarray(y, dtype=float)
            residual = ((y - self.predict(X)) ** 2).sum()
            total = ((y - y.mean()) ** 2).sum()
            return 1.0 - residual / total if total > 0 else 0.0

    class ClassifierMixin:
        _estimator_type = "classifier"

        def score(self, X, y):
            return float(np.mean(self.predict(X) == np.asarray(y)))


__all__ = [
    "BaseEstimator",
    "ClassifierMixin",
    "NotFittedError",
    "RegressorMixin",
    "TransformerMixin",
]


def seed_of(random_state) -> int:
    """rotor's seed: the command line's default 1 for None, an int as it is (>= 0), or a draw
    from a numpy RandomState / Generator."""
    if random_state is None:
        return 1
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError("random_state: must be None, an int or a numpy random generator")
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state: must be >= 0, got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    raise TypeError(
        f"random_state: must be None, an int or a numpy random generator, "
        f"not {type(random_state).__name__}"
    )


def jobs_of(n_jobs, none=0) -> int:
    """n_jobs for the native side (-1: every core, -2: all but one, ...). None is what the
    command line does without --threads: `none`, 0 (every core: lda, mf and lasso train, the
    Lasso choosing from the data) or 1 (one thread: logreg and rica train)."""
    if n_jobs is None:
        return none
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs: must be None or an int, not {type(n_jobs).__name__}")
    if n_jobs == 0:
        raise ValueError("n_jobs: must not be 0 (None or -1: every core)")
    return int(n_jobs)


def check_param(name, value, kind, *, low=None, high=None, low_open=False, choices=None):
    """Raises TypeError unless `value` is of `kind` ("int", "float", "bool", "str"), ValueError
    (naming the parameter) when it is outside [low, high] (or (low, high]) or not a choice."""
    integral = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    ok = {
        "int": integral,
        "float": integral or (isinstance(value, numbers.Real) and not isinstance(value, bool)),
        "bool": isinstance(value, (bool, np.bool_)),
        "str": isinstance(value, str),
    }[kind]
    if not ok:
        raise TypeError(f"{name}: must be {'an' if kind == 'int' else 'a'} {kind}, "
                        f"not {type(value).__name__}")
    if kind == "float" and not np.isfinite(value):
        raise ValueError(f"{name}: must be finite, got {value}")
    if choices is not None and value not in choices:
        raise ValueError(f"{name}: must be one of {', '.join(map(str, choices))}; got {value!r}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name}: must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name}: must be <= {high}, got {value}")


def memory_of(max_memory) -> str:
    """max_memory as the command line's --max-memory takes it ("" for None)."""
    if max_memory is None:
        return ""
    if isinstance(max_memory, numbers.Integral) and not isinstance(max_memory, bool):
        text = str(int(max_memory))
    elif isinstance(max_memory, str):
        text = max_memory
    else:
        raise TypeError("max_memory: must be None, a number of bytes or a size such as '8G'")
    _rotor.check_size(text)  # parsed as --max-memory is: ValueError for a malformed size
    return text


def as_csr(X, name="X", *, counts=False, min_samples=1, min_features=1):
    """X (a scipy.sparse matrix or anything numpy makes a 2-d numeric array of) as a CSR matrix
    of float64 with sorted, summed entries. Raises TypeError for a non-numeric dtype and
    ValueError naming `name` and the row for a wrong shape, too few samples or features, a
    value that is not finite, or (counts) a count that is not a non-negative integer."""
    if sp.issparse(X):
        if np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError(f"{name}: Complex data not supported")
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
            raise TypeError(f"{name}: dtype {X.dtype} is not numeric")
        M = sp.csr_matrix(X, dtype=np.float64, copy=True)
    else:
        if hasattr(X, "dtype") and np.iscomplexobj(X):
            raise ValueError(f"{name}: Complex data not supported")
        try:
            A = np.asarray(X)
        except Exception as e:  # ragged lists and the like
            raise ValueError(f"{name}: cannot be read as a 2-d array ({e})") from None
        if np.iscomplexobj(A):
            raise ValueError(f"{name}: Complex data not supported")
        if A.dtype.kind in "OUS":
            try:
                A = A.astype(np.float64)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{name}: dtype {A.dtype} is not numeric ({e})") from None
        if A.ndim != 2:
            raise ValueError(
                f"{name}: Expected 2D array, got {A.ndim}D array instead. Reshape your data "
                "either using array.reshape(-1, 1) if your data has a single feature or "
                "array.reshape(1, -1) if it contains a single sample."
            )
        if not (np.issubdtype(A.dtype, np.number) or A.dtype == np.bool_):
            raise TypeError(f"{name}: dtype {A.dtype} is not numeric")
        M = sp.csr_matrix(A.astype(np.float64, copy=False))
        # csr_matrix drops zeros but keeps NaN: a NaN entry is still found below.
    M.sum_duplicates()
    M.sort_indices()
    n, p = M.shape
    if n < min_samples:
        raise ValueError(
            f"{name}: Found array with {n} sample(s) (shape={M.shape}) while a minimum of "
            f"{min_samples} is required."
        )
    if p < min_features:
        raise ValueError(
            f"{name}: Found array with {p} feature(s) (shape={M.shape}) while a minimum of "
            f"{min_features} is required."
        )
    data = M.data
    bad = ~np.isfinite(data)
    if counts:
        bad |= (data < 0) | (data != np.floor(np.where(np.isfinite(data), data, 0)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        r = int(np.searchsorted(M.indptr, i, side="right")) - 1
        c, v = int(M.indices[i]), float(data[i])
        if np.isfinite(v):
            raise ValueError(f"{name}: row {r}, column {c}: count {v:g} is not a non-negative "
                             "integer")
        text = "NaN" if np.isnan(v) else ("inf" if v > 0 else "-inf")
        raise ValueError(f"{name}: row {r}, column {c}: value {text} is not finite")
    return M


def count_arrays(X, name="X"):
    """csr_arrays of a count matrix X: the native side checks the counts (non-negative integers,
    naming the row and column) as it reads them."""
    return csr_arrays(X, name, counts=True)


def csr_arrays(X, name="X", *, counts=False):
    """The CSR arrays (indptr, indices, data) and the number of columns of X for the native
    side, which checks the values (finite; with counts, non-negative integers), naming the row
    and column, as it reads them. A scipy.sparse CSR matrix in canonical form (sorted indices,
    no duplicates) is handed over as it is, without a copy (int32 or int64 indices, its values'
    dtype); other sparse matrices are converted to one (duplicates summed), other inputs go
    through as_csr. Raises TypeError for a non-numeric dtype and ValueError for a wrong shape or
    too few samples or features."""
    if not sp.issparse(X):
        M = as_csr(X, name, counts=counts)
        return M.indptr, M.indices, M.data, M.shape[1]
    if np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"{name}: Complex data not supported")
    if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
        raise TypeError(f"{name}: dtype {X.dtype} is not numeric")
    n, p = X.shape
    if n < 1:
        raise ValueError(f"{name}: Found array with {n} sample(s) (shape={X.shape}) while a "
                         "minimum of 1 is required.")
    if p < 1:
        raise ValueError(f"{name}: Found array with {p} feature(s) (shape={X.shape}) while a "
                         "minimum of 1 is required.")
    M = X.tocsr()
    if not M.has_canonical_format:
        M = M.copy() if M is X else M
        M.sum_duplicates()  # sorts the indices too
    return M.indptr, M.indices, M.data, M.shape[1]


def as_targets(y, n, name="y"):
    """y as a float64 vector of n finite values (ValueError naming the row otherwise)."""
    if y is None:
        raise ValueError(f"{name}: requires y to be passed, but the target y is None")
    a = np.asarray(y)
    if np.iscomplexobj(a):
        raise ValueError(f"{name}: Complex data not supported")
    if a.ndim == 2 and a.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape "
            "of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        a = a.ravel()
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d array, got shape {a.shape}")
    if a.shape[0] != n:
        raise ValueError(f"{name}: {a.shape[0]} values for X's {n} rows (inconsistent numbers "
                         "of samples)")
    return a


def finite_targets(a, name="y"):
    try:
        v = a.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: values are not numbers") from None
    bad = ~np.isfinite(v)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: row {i}: value {'NaN' if np.isnan(v[i]) else 'inf'} "
                         "is not finite")
    return v


def check_features(estimator, M, name="X"):
    """M: a matrix, or its number of columns."""
    p = int(M) if isinstance(M, numbers.Integral) else M.shape[1]
    if p != estimator.n_features_in_:
        raise ValueError(
            f"X has {p} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )


def check_fitted(estimator, attribute):
    if not hasattr(estimator, attribute):
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
            "appropriate arguments before using this estimator."
        )


def checkpoint_params(estimator, resume):
    """The checkpoint settings of a fit for the native side: checkpoint_every and checkpoint_dir
    (the command line's --checkpoint-every and --checkpoint-dir) and fit's `resume` (--resume: a
    checkpoint directory, or True for checkpoint_dir; None or False: a new run)."""
    every = estimator.checkpoint_every
    check_param("checkpoint_every", every, "int", low=0)
    folder = estimator.checkpoint_dir
    if folder is not None:
        if not isinstance(folder, (str, os.PathLike)):
            raise TypeError(f"checkpoint_dir: must be None or a path, not {type(folder).__name__}")
        folder = os.fspath(folder)
    if every > 0 and not folder:
        raise ValueError("checkpoint_dir: needed when checkpoint_every > 0 (where the "
                         "checkpoints go; the command line's default, <out>.checkpoint, has no "
                         "out here)")
    if resume is None or resume is False:
        resume = ""
    elif resume is True:
        if not folder:
            raise ValueError("resume: True resumes from checkpoint_dir, which is not set")
        resume = folder
    elif isinstance(resume, (str, os.PathLike)):
        resume = os.fspath(resume)
    else:
        raise TypeError(f"resume: must be a checkpoint directory, True or None, not "
                        f"{type(resume).__name__}")
    return {"checkpoint_every": int(every), "checkpoint_dir": folder or "", "resume": resume}


def run_fit(estimator, native, ck, *args):
    """Calls native(*args, sink) for a fit that may write or resume checkpoints (`ck`, from
    checkpoint_params) and returns (its result without the iteration resumed from, the metrics
    records). The records continue those of the run that wrote the checkpoint, as the command
    line's --metrics file does on --resume, when this estimator made that run (its records up to
    the checkpoint's iteration come first); a fit resuming another process' checkpoint records
    from the checkpoint on. The records of a fit that writes checkpoints stay with the estimator
    (even when it is interrupted) for the fit that resumes it."""
    sink = []
    earlier = []
    run = getattr(estimator, "_checkpoint_run", None)
    if ck["resume"] and run is not None and run[0] == os.path.abspath(ck["resume"]):
        earlier = run[1]
    try:
        *result, done = native(*args, sink)
    except BaseException:
        new = records(sink)
        if ck["checkpoint_every"] > 0:
            first = new[0]["iter"] if new else None
            kept = [m for m in earlier if first is None or m["iter"] < first]
            estimator._checkpoint_run = (os.path.abspath(ck["checkpoint_dir"]), kept + new)
        raise
    new = records(sink)
    metrics = [m for m in earlier if m["iter"] <= done] + new if done else new
    if ck["checkpoint_every"] > 0:
        estimator._checkpoint_run = (os.path.abspath(ck["checkpoint_dir"]), metrics)
    return (result[0] if len(result) == 1 else tuple(result)), metrics


def records(lines):
    """The metrics records (JSON lines of the command line's --metrics file) as dicts."""
    return [json.loads(line) for line in lines]


def metrics_frame(metrics):
    """The records as a pandas DataFrame (pandas is optional)."""
    import pandas as pd  # noqa: PLC0415 - optional dependency

    return pd.DataFrame(metrics)


def signature_params(cls):
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
