"""Degenerate budgets, sizes and inputs found by fuzzing: a clear error before any
work, or a fit whose report keeps its budget; never an infinite epsilon in silence,
a NaN error, gigabytes of memory or minutes of time.
"""
import math
import time

import numpy as np
import pytest
import scipy.sparse as sp

from sparsedp import DPLasso, DPRidge
from sparsedp.datafits import Logistic, Squared
from sparsedp.penalties import L1, L2
from sparsedp.privacy import PrivacyLedger, sampled_gaussian_epsilon_pld
from sparsedp.privacy.pld import calibrate_sampled_gaussian_pld
from sparsedp.privacy.rdp import sampled_gaussian_epsilon
from sparsedp.solvers import dp_cd, dp_gcd, dp_scd, dp_sgd

SLACK = "too small for the samplers' floating-point slack"


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    X = sp.random(300, 40, density=0.2, format="csr", rng=rng)
    y = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    return X, y


def batch_fit(solver, X, y, epsilon, delta=1e-5):
    kw = dict(epsilon=epsilon, delta=delta, passes=20, clip=1.0, batch_size=64,
              random_state=0)
    if solver == "sgd":
        return dp_sgd(X, y, Logistic(), L2(0.01), global_smoothness=0.25, **kw)
    return dp_scd(X, y, Logistic(), L2(0.01), **kw)


# ---- 2. the samplers' slack: a ValueError before any work, or a budget kept --------
@pytest.mark.parametrize("solver", ["sgd", "scd"])
@pytest.mark.parametrize("epsilon", [40.0, 50.0, 1e4])
def test_batch_solvers_refuse_a_budget_their_samplers_cannot_meet(small, solver, epsilon):
    # (1 + e^epsilon) times the walk's total variation passes delta: it used to run and
    # report (inf, 'sampler slack') with no warning
    start = time.perf_counter()
    with pytest.raises(ValueError, match=SLACK) as err:
        batch_fit(solver, *small, epsilon)
    assert time.perf_counter() - start < 1.0  # before any calibration or kernel
    # the message names this solver's samplers, not DP-GCD's noisy max
    assert "integer Gaussian walk" in str(err.value)
    assert "report-noisy-max" not in str(err.value) and "selection" not in str(err.value)


@pytest.mark.parametrize("solver", ["sgd", "scd"])
def test_batch_solvers_keep_a_large_budget_they_can_meet(small, solver):
    res = batch_fit(solver, *small, 30.0)
    eps, method = res.privacy.get_epsilon(return_method=True)
    assert math.isfinite(eps) and eps <= 30.0, (eps, method)


def test_dp_cd_refuses_a_delta_the_slack_rounds_to_zero(small):
    X, y = small
    with pytest.raises(ValueError, match="choose a larger delta"):
        dp_cd(X, y, Logistic(), L1(0.01), epsilon=1.0, delta=5e-324, passes=2, clip=1.0,
              smoothness=np.full(40, 0.25), random_state=0)


@pytest.mark.parametrize("selection", [None, "laplace", "exponential"])
def test_dp_gcd_near_one_delta_keeps_its_budget(small, selection):
    X, y = small
    res = dp_gcd(X, y, Logistic(), L1(0.01), epsilon=1.0, delta=0.999999, n_iter=5,
                 clip=1.0, smoothness=np.full(40, 0.25), selection=selection, random_state=0)
    assert res.privacy.epsilon <= 1.0


def test_dp_gcd_laplace_at_large_epsilon_is_refused_with_its_remedy(small):
    X, y = small
    with pytest.raises(ValueError, match="selection='exponential'"):
        dp_gcd(X, y, Logistic(), L1(0.01), epsilon=40.0, delta=1e-5, n_iter=5, clip=1.0,
               smoothness=np.full(40, 0.25), selection="laplace", random_state=0)


def test_ledger_charges_total_variation_at_large_epsilon():
    # the ledger's own start (the ideal epsilon at delta / 2) is no valid start here: the
    # charge (1 + e^eps) T grows e-fold per unit of epsilon; it must still find a finite
    # epsilon, and one that pays the charge
    led = PrivacyLedger(delta=1e-5)
    led.add_gaussian("g", 0.15, count=3)
    ideal = led.get_epsilon()
    tv = 1e-5 / (10.0 * (1.0 + math.exp(ideal)))
    assert (1.0 + math.exp(led.get_epsilon(0.5e-5))) * tv > 0.5e-5  # delta / 2: no start
    led.add_sampler_tv("sampler", tv)
    eps = led.get_epsilon()
    assert math.isfinite(eps) and eps >= ideal
    left = 1e-5 - (1.0 + math.exp(eps)) * tv
    check = PrivacyLedger(delta=left)
    check.add_gaussian("g", 0.15, count=3)
    assert check.epsilon <= eps * (1 + 1e-9)


# ---- 3. large or degenerate budgets in bounded time and memory -------------------
def test_pld_epsilon_of_tiny_noise_is_rdp_closed_form():
    # was 8 s, 1.9 GB and "cannot convert float NaN to integer"
    start = time.perf_counter()
    eps = sampled_gaussian_epsilon_pld(0.02, 0.01, 1, 1e-5)
    assert time.perf_counter() - start < 1.0
    assert eps == sampled_gaussian_epsilon(0.02, 0.01, 1, 1e-5)
    assert math.isfinite(eps) and eps > 100


@pytest.mark.parametrize("epsilon", [1e4, 1e5])
def test_pld_calibration_at_huge_epsilon(epsilon):
    start = time.perf_counter()
    z = calibrate_sampled_gaussian_pld(epsilon, 1e-5, 0.1, 100)
    assert time.perf_counter() - start < 2.0
    assert 0 < z < 0.1
    assert sampled_gaussian_epsilon_pld(z, 0.1, 100, 1e-5) <= epsilon


@pytest.mark.parametrize("epsilon", [100.0, 1e4, 1e5])
def test_estimators_at_huge_epsilon_answer_fast(epsilon):
    rng = np.random.default_rng(1)
    X = sp.random(30, 20, density=0.3, format="csr", rng=rng)
    y = rng.standard_normal(30)
    for est in (DPRidge(epsilon=epsilon, random_state=0),
                DPLasso(epsilon=epsilon, random_state=0)):
        start = time.perf_counter()
        try:
            est.fit(X, y)
        except ValueError as err:  # the samplers' slack at this epsilon: said, not run
            assert SLACK in str(err)
        assert time.perf_counter() - start < 5.0


def test_iteration_sized_arrays_that_cannot_fit_are_refused(small):
    X, y = small
    # 44.7 GiB and 7.45 GiB were asked for
    with pytest.raises(ValueError, match="GiB for arrays sized by its iterations"):
        dp_sgd(X, y, Logistic(), epsilon=1.0, delta=1e-5, passes=1e9, clip=1.0,
               smoothness=0.25)
    with pytest.raises(ValueError, match="fewer iterations"):
        dp_gcd(X.tocsc(), y, Logistic(), epsilon=math.inf, delta=1e-5, n_iter=10**12,
               clip=1.0, smoothness=np.full(40, 0.25))


# ---- 4. overflowing coefficients ---------------------------------------------------
def test_dp_scd_refuses_an_overflowing_alpha(small):
    X, y = small
    with pytest.raises(ValueError, match="larger L2 penalty"):
        dp_scd(X, y, Logistic(), L2(1e-310), epsilon=1.0, delta=1e-5, passes=2, clip=1.0,
               batch_size=8, random_state=0)


# ---- 5. the default noisy max runs where report-noisy-max cannot ----------------------
def test_dp_gcd_default_selection_runs_where_report_noisy_max_cannot():
    rng = np.random.default_rng(2)
    p = 100_000
    X = sp.random(300, p, density=0.0005, format="csc", rng=rng)
    y = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    kw = dict(epsilon=1.0, delta=1e-10, n_iter=100, clip=1.0, smoothness=np.full(p, 0.25),
              random_state=0)
    with pytest.raises(ValueError, match=SLACK):
        dp_gcd(X, y, Logistic(), L1(0.01), selection="laplace", **kw)
    res = dp_gcd(X, y, Logistic(), L1(0.01), **kw)
    assert res.info["selection"] == "exponential"
    assert res.privacy.epsilon <= 1.0


# ---- 6. messages ---------------------------------------------------------------------
@pytest.mark.parametrize("dense", [False, True])
def test_regressor_refuses_string_targets(dense):
    X = sp.random(30, 5, density=0.5, format="csr", rng=0)
    with pytest.raises(ValueError, match="y must be numeric"):
        DPRidge(epsilon=1.0).fit(X.toarray() if dense else X, np.array(["a", "b"] * 15))


def test_complex_sparse_with_int64_indptr_is_refused_clearly():
    X = sp.random(30, 5, density=0.5, format="csc", rng=0).astype(complex)
    X.indptr = X.indptr.astype(np.int64)
    with pytest.raises(ValueError, match="Complex data not supported"):
        DPRidge(epsilon=1.0).fit(X, np.ones(30))
    with pytest.raises(TypeError, match="X must be real"):
        dp_cd(X, np.ones(30), Squared(), epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
              smoothness=np.ones(5))


@pytest.mark.parametrize("seed, error, message", [
    (True, TypeError, "got the bool True"),
    (np.True_, TypeError, "got the bool"),
    (-1, ValueError, "random_state must be a non-negative int"),
])
def test_random_state_bool_and_negative_are_refused(seed, error, message):
    X = sp.random(30, 5, density=0.5, format="csc", rng=0)
    with pytest.raises(error, match=message):
        dp_cd(X, np.ones(30), Squared(), epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
              smoothness=np.ones(5), random_state=seed)
