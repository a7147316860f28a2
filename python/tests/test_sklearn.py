"""scikit-learn's own estimator checks: all of check_estimator for Lasso and LogisticRegression
(binary_only), and for LDA and MF the checks of the conventions that apply to an estimator whose
input is counts or ratings (parameters, cloning, fitted attributes, unfitted errors)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import (
    check_estimator,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

import rotor


@pytest.mark.parametrize("Model", [rotor.Lasso, rotor.LogisticRegression])
def test_check_estimator(Model):
    check_estimator(Model(n_jobs=1))


@pytest.mark.parametrize("Model", [rotor.LDA, rotor.MF])
def test_conventions(Model):
    name = Model.__name__
    check_parameters_default_constructible(name, Model())
    check_no_attributes_set_in_init(name, Model())
    check_get_params_invariance(name, Model())
    check_set_params(name, Model())
    assert clone(Model(n_components=3)).get_params()["n_components"] == 3
    with pytest.raises(ValueError, match="Invalid parameter"):
        Model().set_params(n_topics=3)


def test_unfitted_and_fitted_attributes():
    X = np.array([[2, 0, 1], [0, 3, 1], [1, 1, 4]])
    lda = rotor.LDA(2, max_iter=3)
    with pytest.raises(AttributeError):
        lda.transform(X)
    lda.fit(X)
    assert lda.n_features_in_ == 3 and lda.n_components_ == 2
    mf = rotor.MF(2, max_iter=1)
    with pytest.raises(ValueError, match="not fitted"):
        mf.predict(np.array([[0, 0]]))
