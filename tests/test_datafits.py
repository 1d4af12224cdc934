"""Datafits: values, derivatives (against finite differences), smoothness, labels."""
import numpy as np
import pytest
import scipy.sparse as sp

from sparsedp._kernels import KernelId, kernel_id
from sparsedp.datafits import Logistic, Squared

from problems import make_sparse_problem


@pytest.mark.parametrize("datafit", [Squared(), Logistic()])
def test_derivative_matches_finite_differences(datafit):
    rng = np.random.default_rng(1)
    z = rng.normal(scale=3, size=200)
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    h = 1e-6
    fd = (datafit.loss(z + h, y) - datafit.loss(z - h, y)) / (2 * h)
    np.testing.assert_allclose(datafit.derivative(z, y), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("datafit", [Squared(), Logistic()])
def test_gradient_in_w_matches_finite_differences(datafit):
    X, y = make_sparse_problem(n=30, p=8, density=0.5, logistic=True, seed=3)
    rng = np.random.default_rng(2)
    w = rng.normal(size=8)
    g = datafit.gradient(X, X @ w, y)
    h = 1e-6
    for j in range(8):
        e = np.zeros(8)
        e[j] = h
        fd = (datafit.value(X @ (w + e), y) - datafit.value(X @ (w - e), y)) / (2 * h)
        assert g[j] == pytest.approx(fd, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("datafit", [Squared(), Logistic()])
def test_smoothness_bounds_second_derivative(datafit):
    z = np.linspace(-30, 30, 2001)
    y = np.ones_like(z)
    h = 1e-3  # central second difference: exact for quadratics up to rounding
    second = (datafit.loss(z + h, y) - 2 * datafit.loss(z, y) + datafit.loss(z - h, y)) / h**2
    assert second.max() <= datafit.beta * (1 + 1e-4)
    assert second.max() >= datafit.beta * 0.99  # and the bound is attained


def test_coordinate_smoothness_constants():
    X, _ = make_sparse_problem(n=50, p=7, density=0.4)
    dense = X.toarray()
    np.testing.assert_allclose(Squared().smoothness(X), 2 * (dense**2).sum(0) / 50)
    np.testing.assert_allclose(Logistic().smoothness(dense), 0.25 * (dense**2).sum(0) / 50)
    # CSC with empty columns, first, inner and last (the reduceat path)
    X = sp.random(40, 60, density=0.03, format="csc", rng=np.random.default_rng(2))
    X = sp.csc_array(X)
    empty = np.diff(X.indptr) == 0
    assert empty[0] or empty[-1] or empty.sum() > 5
    np.testing.assert_allclose(Squared().smoothness(X),
                               2 * (X.toarray() ** 2).sum(0) / 40, rtol=1e-14, atol=0)
    assert Squared().smoothness(sp.csc_array((3, 4))).tolist() == [0.0] * 4


def test_logistic_is_stable_for_huge_margins():
    z = np.array([-1e4, -800.0, 0.0, 800.0, 1e4])
    y = np.ones(5)
    with np.errstate(over="raise", invalid="raise"):
        loss = Logistic().loss(z, y)
        der = Logistic().derivative(z, y)
    np.testing.assert_allclose(loss, [1e4, 800.0, np.log(2), 0.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(der, [-1.0, -1.0, -0.5, 0.0, 0.0])
    assert abs(Logistic().derivative(z, y)).max() <= Logistic().derivative_bound


def test_logistic_rejects_labels_outside_domain():
    with pytest.raises(ValueError, match=r"labels in \{-1, \+1\}"):
        Logistic().check_y(np.array([0.0, 1.0, 1.0]))
    Logistic().check_y(np.array([-1.0, 1.0]))


def _solvers():
    from sparsedp.solvers import dp_cd, dp_gcd, exact
    return [
        ("exact", lambda X, y, d: exact(X, y, d, max_epochs=2)),
        ("dp_cd", lambda X, y, d: dp_cd(X, y, d, epsilon=1.0, delta=1e-5, passes=1,
                                         clip=1.0, random_state=0)),
        ("dp_gcd", lambda X, y, d: dp_gcd(X, y, d, epsilon=1.0, delta=1e-5, n_iter=2,
                                           clip=1.0, random_state=0)),
    ]


def test_declared_kernel_ids_are_the_kernels_enum():
    from sparsedp._kernels import KernelId, _cd_fast
    assert _cd_fast.KERNEL_IDS == {k.name: k.value for k in KernelId}
    assert kernel_id(Squared()) is KernelId.SQUARED
    assert kernel_id(Logistic()) is KernelId.LOGISTIC


class Hinge(Logistic):
    """A user's loss that inherits Logistic's kernel id but not its maths."""

    def loss(self, z, y):
        return np.maximum(0.0, 1.0 - y * np.asarray(z))


class ScaledSquared(Squared):
    """A subclass that declares the kernel it computes."""

    kernel_id = KernelId.SQUARED


@pytest.mark.parametrize("parent", [Squared, Logistic])
def test_subclass_without_its_own_kernel_id_is_refused_by_name(parent):
    Sub = type("MyLoss", (parent,), {"derivative": lambda self, z, y: 0 * z})
    with pytest.raises(TypeError, match="MyLoss has no compiled kernel"):
        kernel_id(Sub())


@pytest.mark.filterwarnings("ignore::sparsedp.PrivacyLeakWarning")
@pytest.mark.parametrize("name,solve", _solvers())
def test_solvers_refuse_a_datafit_subclass_without_a_kernel(name, solve):
    X, y = make_sparse_problem(20, 6, density=0.5, seed=0, logistic=True)
    with pytest.raises(TypeError, match="Hinge has no compiled kernel"):
        solve(X, y, Hinge())
    solve(X, y, ScaledSquared())  # a declared id runs


def test_kernels_refuse_an_unknown_loss_id():
    from sparsedp._kernels import _cd_fast
    X = sp.random(5, 3, density=0.6, format="csc", random_state=0)
    w, z = np.zeros(3), np.zeros(5)
    with pytest.raises(ValueError, match="unknown loss kernel id 7"):
        _cd_fast.cd_epochs(7, X.data, X.indices, X.indptr, np.ones(5), w, z, np.ones(3),
                           0.0, 0.0, 1)
