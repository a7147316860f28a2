"""rotor from Python: LDA, matrix factorization, the Lasso, L1 logistic regression and reconstruction ICA on rotor's
engine, with scikit-learn's conventions (docs/python.md)."""

from ._rotor import __version__
from ._lda import LDA
from ._linear import Lasso, LogisticRegression
from ._mf import MF
from ._rica import RICA

__all__ = ["LDA", "MF", "Lasso", "LogisticRegression", "RICA", "__version__"]
