"""The squared hinge loss in the primal solvers (against scikit-learn's LinearSVC), and the
hinge loss refused by them."""
import numpy as np
import pytest
from sklearn.svm import LinearSVC

from problems import make_sparse_problem
from sparsedp.datafits import Hinge, SquaredHinge
from sparsedp.penalties import L2
from sparsedp.solvers import dp_cd, dp_gcd, exact, objective


def _problem(n=120, p=30, seed=0):
    return make_sparse_problem(n, p, density=0.3, seed=seed, n_active=p, labels="sign",
                               noise=0.3, values="uniform-legacy")


def test_squared_hinge_loss_and_derivative():
    z = np.array([-2.0, 0.0, 0.5, 1.0, 3.0])
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    sh = SquaredHinge()
    np.testing.assert_allclose(sh.loss(z, y), [9.0, 1.0, 0.25, 0.0, 16.0])
    eps = 1e-6
    numeric = (sh.loss(z + eps, y) - sh.loss(z - eps, y)) / (2 * eps)
    np.testing.assert_allclose(sh.derivative(z, y), numeric, atol=1e-6)
    with pytest.raises(ValueError, match=r"SquaredHinge datafit needs labels in \{-1, \+1\}"):
        sh.check_y(np.array([0.0, 1.0]))


def test_exact_squared_hinge_matches_linear_svc():
    """F = (1/n) sum max(0, 1 - y x.w)^2 + alpha/2 |w|^2 is LinearSVC's objective
    1/2 |w|^2 + C sum max(0, 1 - y x.w)^2 scaled, with C = 1 / (n alpha)."""
    X, y = _problem()
    alpha = 0.05
    res = exact(X, y, SquaredHinge(), L2(alpha), tol=1e-12)
    svc = LinearSVC(loss="squared_hinge", penalty="l2", dual=False, fit_intercept=False,
                    C=1.0 / (X.shape[0] * alpha), tol=1e-12, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(res.coef, svc.coef_.ravel(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("solver", ["dp_cd", "dp_gcd"])
def test_noiseless_private_solvers_approach_the_squared_hinge_optimum(solver):
    X, y = _problem(seed=1)
    pen = L2(0.05)
    best = exact(X, y, SquaredHinge(), pen, tol=1e-12)
    f_star = objective(X, y, best.coef, SquaredHinge(), pen)
    M = SquaredHinge().smoothness(X)
    if solver == "dp_cd":
        res = dp_cd(X, y, SquaredHinge(), pen, epsilon=float("inf"), delta=1e-6, passes=200,
                    clip=1e6, smoothness=M, averaging=False, random_state=0)
    else:
        res = dp_gcd(X, y, SquaredHinge(), pen, epsilon=float("inf"), delta=1e-6, n_iter=3000,
                     clip=1e6, smoothness=M, random_state=0)
    f = objective(X, y, res.coef, SquaredHinge(), pen)
    f0 = objective(X, y, np.zeros(X.shape[1]), SquaredHinge(), pen)
    assert (f - f_star) / (f0 - f_star) < 1e-3


@pytest.mark.parametrize("fit", [
    lambda X, y: exact(X, y, Hinge(), L2(0.1)),
    lambda X, y: dp_cd(X, y, Hinge(), L2(0.1), epsilon=1.0, delta=1e-6, passes=1, clip=1.0,
                       smoothness=np.ones(30)),
    lambda X, y: dp_gcd(X, y, Hinge(), L2(0.1), epsilon=1.0, delta=1e-6, n_iter=2, clip=1.0,
                        smoothness=np.ones(30)),
])
def test_primal_solvers_refuse_the_hinge_loss(fit):
    X, y = _problem()
    with pytest.raises(TypeError, match="Hinge is not smooth"):
        fit(X, y)
