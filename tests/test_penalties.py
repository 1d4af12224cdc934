"""Penalties: prox against brute-force minimisation, subdifferential distance, GS-q model."""
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from sparsedp._kernels import KernelId, kernel_id
from problems import gsq_model_value
from sparsedp.penalties import L1, L2, ElasticNet, as_penalty

PENALTIES = [as_penalty(None), L1(0.7), L2(1.3), ElasticNet(0.9, 0.4)]


def coord_value(pen, w):
    return pen.l1 * abs(w) + 0.5 * pen.l2 * w * w


def brute_argmin(fun, center):
    res = minimize_scalar(fun, bounds=(center - 20, center + 20), method="bounded",
                          options={"xatol": 1e-12})
    # the bounded search can miss a kink at 0 by its tolerance: compare with 0
    return 0.0 if fun(0.0) <= fun(res.x) else res.x


@pytest.mark.parametrize("pen", PENALTIES, ids=repr)
@pytest.mark.parametrize("x", [-3.0, -0.5, -0.1, 0.0, 0.2, 0.6, 4.0])
@pytest.mark.parametrize("step", [0.3, 1.0, 2.5])
def test_prox_is_the_minimiser(pen, x, step):
    fun = lambda u: 0.5 * (u - x) ** 2 + step * coord_value(pen, u)
    expected = brute_argmin(fun, x)
    assert pen.prox(x, step) == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize("pen", PENALTIES, ids=repr)
def test_subdiff_distance_against_definition(pen):
    rng = np.random.default_rng(0)
    w = np.concatenate([rng.normal(size=20), np.zeros(20)])
    g = rng.normal(size=40)
    got = pen.subdiff_distance(w, g)
    for wj, gj, dj in zip(w, g, got):
        if wj != 0:
            sub = np.array([pen.l2 * wj + pen.l1 * np.sign(wj)])
        else:  # the interval l2*0 + [-l1, l1], sampled finely plus its ends
            sub = np.linspace(-pen.l1, pen.l1, 200001)
        assert dj == pytest.approx(np.min(np.abs(-gj - sub)), abs=1e-5)


@pytest.mark.parametrize("pen", PENALTIES, ids=repr)
def test_gsq_model_value_is_the_model_minimum(pen):
    """The tests' GS-q oracle (tests/problems.py) against brute-force minimisation."""
    rng = np.random.default_rng(1)
    w = np.concatenate([rng.normal(size=10), np.zeros(10)])
    g = rng.normal(size=20)
    M = rng.uniform(0.5, 3, size=20)
    got = gsq_model_value(pen, w, g, M)
    for wj, gj, mj, vj in zip(w, g, M, got):
        fun = lambda d: gj * d + 0.5 * mj * d * d + coord_value(pen, wj + d) - coord_value(pen, wj)
        d = brute_argmin(lambda u: fun(u - wj), wj) - wj
        assert vj == pytest.approx(fun(d), abs=1e-9)
        assert vj <= 1e-15


def test_penalty_values_follow_the_api_contract():
    w = np.array([1.0, -2.0, 0.0])
    assert L1(0.5).value(w) == pytest.approx(1.5)
    assert L2(0.5).value(w) == pytest.approx(0.25 * 5)
    assert ElasticNet(2.0, 0.25).value(w) == pytest.approx(2 * (0.25 * 3 + 0.75 / 2 * 5))
    assert as_penalty(None).value(w) == 0.0


@pytest.mark.parametrize("make", [L1, L2, lambda a: ElasticNet(a, 0.5)])
def test_negative_or_nonfinite_strength_is_rejected(make):
    with pytest.raises(ValueError, match=r"alpha == -0.1, must be >= 0"):
        make(-0.1)
    with pytest.raises(ValueError, match="alpha must be a number, got nan"):
        make(np.nan)
    with pytest.raises(ValueError, match="alpha must be finite"):
        make(np.inf)


def test_bad_l1_ratio_and_types():
    with pytest.raises(ValueError, match="l1_ratio"):
        ElasticNet(1.0, 1.5)
    with pytest.raises(TypeError, match="alpha must be a real number"):
        L1("0.1")
    with pytest.raises(TypeError, match="penalty must be"):
        as_penalty("l1")


class GroupishL1(L1):
    """A user's penalty: its own prox, which the kernels would never run."""

    def prox(self, x, step):
        return np.zeros_like(np.asarray(x, dtype=float))


@pytest.mark.parametrize("parent,args", [(L1, (0.1,)), (L2, (0.1,)), (ElasticNet, (0.1, 0.5))])
@pytest.mark.parametrize("overrides", [{}, {"value": lambda self, w: 0.0}])
def test_penalty_subclass_without_its_own_kernel_id_is_refused_by_name(parent, args, overrides):
    Sub = type("MyPenalty", (parent,), dict(overrides))
    with pytest.raises(TypeError, match="MyPenalty has no compiled kernel"):
        kernel_id(Sub(*args))
    Declared = type("MyDeclared", (parent,), {"kernel_id": KernelId.ELASTIC_NET})
    assert kernel_id(Declared(*args)) is KernelId.ELASTIC_NET


def test_built_in_penalties_declare_the_elastic_net_kernel():
    for pen in (as_penalty(None), L1(0.1), L2(0.1), ElasticNet(0.1, 0.3)):
        assert kernel_id(pen) is KernelId.ELASTIC_NET


@pytest.mark.filterwarnings("ignore::sparsedp.PrivacyLeakWarning")
@pytest.mark.parametrize("solver", ["exact", "dp_cd", "dp_gcd"])
def test_solvers_refuse_a_penalty_subclass_without_a_kernel(solver):
    from problems import make_sparse_problem
    from sparsedp.datafits import Squared
    from sparsedp.solvers import dp_cd, dp_gcd, exact
    X, y = make_sparse_problem(20, 6, density=0.5, seed=0)
    run = {"exact": lambda pen: exact(X, y, Squared(), pen, max_epochs=2),
           "dp_cd": lambda pen: dp_cd(X, y, Squared(), pen, epsilon=1.0, delta=1e-5,
                                      passes=1, clip=1.0, random_state=0),
           "dp_gcd": lambda pen: dp_gcd(X, y, Squared(), pen, epsilon=1.0, delta=1e-5,
                                        n_iter=2, clip=1.0, random_state=0)}[solver]
    with pytest.raises(TypeError, match="GroupishL1 has no compiled kernel"):
        run(GroupishL1(0.1))
    run(L1(0.1))


@pytest.mark.parametrize("pen,expected", [
    (L1(0.1), 0.1 * 2e200), (L2(0.0), 0.0), (as_penalty(None), 0.0),
    (ElasticNet(0.1, 1.0), 0.1 * 2e200), (L2(0.1), np.inf)])
def test_penalty_value_is_scale_safe(pen, expected):
    """A zero strength contributes 0 at huge w (no 0 * inf = NaN); a true
    overflow is inf, never NaN."""
    w = np.array([1e200, -1e200])
    with np.errstate(over="ignore"):  # L2: w @ w overflows to inf, as it should
        assert pen.value(w) == pytest.approx(expected, rel=1e-12)
    if np.isfinite(expected):  # the per-coordinate values of the GS-q model too
        assert not np.isnan(gsq_model_value(pen, w, np.zeros(2), np.ones(2))).any()


def test_gsq_model_value_at_huge_coefficients_is_not_nan():
    """At |w| ~ 1e200 the GS-q model's terms overflow; its minimum (<= -M d^2 / 2) is -inf,
    and where nothing overflows the value is unchanged."""
    w = np.array([1e200, 1.0, 0.0])
    grad = np.array([1.0, 0.5, -3.0])
    lip = np.array([1.0, 1.0, 2.0])
    for pen in (L2(0.1), ElasticNet(0.1, 0.5), L1(0.1)):
        value = gsq_model_value(pen, w, grad, lip)
        assert not np.isnan(value).any()
        d = pen.prox_step(w[1:], grad[1:], 1.0 / lip[1:])
        after = [pen.value([x]) for x in w[1:] + d]
        before = [pen.value([x]) for x in w[1:]]
        direct = grad[1:] * d + lip[1:] / 2 * d * d + np.subtract(after, before)
        np.testing.assert_allclose(value[1:], direct, rtol=1e-12)
    assert gsq_model_value(L2(0.1), w, grad, lip)[0] == -np.inf
