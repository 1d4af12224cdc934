"""The demo's lambda is fixed a priori, from the problem's public description."""
import inspect

import numpy as np

from sparsedp.datafits import Logistic
from sparsedp.demo import DENSITY, make_problem, public_lambda


def test_public_lambda_reads_no_record_and_keeps_noise_features_out():
    assert list(inspect.signature(public_lambda).parameters) == ["n", "p", "density", "alpha"]
    assert public_lambda(4000, 100_000) == public_lambda(4000, 100_000, DENSITY)
    for seed in range(3):
        X, y = make_problem(n=2000, p=20_000, seed=seed)
        n, p = X.shape
        lam = public_lambda(n, p)
        grad = np.abs(X.T @ Logistic().derivative(np.zeros(n), y)) / n
        assert grad[5:].max() < lam < grad[:5].min()  # noise out, informative in
