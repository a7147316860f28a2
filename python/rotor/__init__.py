"""rotor from Python: LDA, matrix factorization, the Lasso and L1 logistic regression on rotor's
engine, with scikit-learn's conventions (docs/python.md)."""

from ._rotor import __version__
from ._lda import LDA
from ._linear import Lasso, LogisticRegression
from ._mf import MF

__all__ = ["LDA", "MF", "Lasso", "LogisticRegression", "__version__"]
