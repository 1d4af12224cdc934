"""Synthetic data sets: the laws they are documented to follow."""
import numpy as np
import pytest

from sparsedp.datasets import make_sparse_lasso


def test_sparse_lasso_weights():
    X, y, w = make_sparse_lasso(50, 40, 6, noise=0.5, random_state=3)
    rng = np.random.default_rng(3)  # the documented draws, in order
    X_ref = rng.standard_normal((50, 40))
    support = rng.choice(40, 6, replace=False)
    w_ref = np.zeros(40)
    w_ref[support] = rng.standard_normal(6)
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(w, w_ref)
    np.testing.assert_array_equal(y, X_ref @ w_ref + 0.5 * rng.standard_normal(50))
    for law, low, high in (("sign", 1.0, 1.0), ("uniform", 0.5, 1.5)):
        _, _, w = make_sparse_lasso(50, 400, 200, random_state=4, weights=law)
        magnitudes = np.abs(w[w != 0])
        assert magnitudes.size == 200
        assert magnitudes.min() >= low and magnitudes.max() <= high
        assert 60 < np.sum(w > 0) < 140  # random signs (binomial(200, 1/2): +-5.6 sd)
    with pytest.raises(ValueError, match="weights must be"):
        make_sparse_lasso(weights="laplace")
