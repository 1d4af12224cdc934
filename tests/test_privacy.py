"""Tests of the privacy package's structure: the root finder, the calibration routine,
the accountants as candidates of the ledger, extreme arguments, and adding a mechanism."""
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from sparsedp.privacy import (Gaussian, Laplace, Mechanism, PrivacyLedger, PureDP, calibrate,
                              calibrate_gaussian, gaussian_epsilon, gdp_epsilon,
                              pure_composition_epsilon)
from sparsedp.privacy._root import bracket_root
from sparsedp.privacy.rdp import rdp_pure
from sparsedp.solvers import calibrate_dp_gcd
from sparsedp.solvers._dp_gcd import _ledger


# --------------------------------------------------------------------------------------
# The root finder
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("root", [1e-250, 3e-7, 1.0, math.e ** 3, 7.5e12, 1e250])
def test_bracket_root_brackets_the_sign_change(root):
    calls = []

    def fun(x):
        calls.append(x)
        return math.log(x) - math.log(root)

    lo, hi = bracket_root(fun, 1.0, rtol=1e-12)
    assert fun(lo) <= 0 < fun(hi)
    assert hi <= lo * (1 + 1e-12) * (1 + 1e-15)
    assert len(calls) < 80


def test_bracket_root_with_infinite_values_and_limits():
    def step(x):  # -inf below 0.3, +inf above: bisection only
        return -math.inf if x <= 0.3 else math.inf

    lo, hi = bracket_root(step, 1.0, rtol=1e-10)
    assert lo <= 0.3 < hi and hi / lo < 1 + 1e-9
    assert bracket_root(lambda x: 1.0, 1.0) == (0.0, 1e-300)  # never <= 0
    assert bracket_root(lambda x: -1.0, 1.0) == (1e300, math.inf)  # always <= 0


# --------------------------------------------------------------------------------------
# Calibration: tight, safe, monotone, never more noise than a plain bisection
# --------------------------------------------------------------------------------------
def _bisection_e0(epsilon, delta, n_iter, selection, noise):
    """Independent reference: the largest e0 whose ledger spends <= epsilon (bisection)."""
    def spent(e0):
        return _ledger(e0, n_iter, selection, noise, delta).get_epsilon(delta)

    lo, hi = epsilon / (8 * n_iter), 4 * epsilon
    assert spent(lo) <= epsilon < spent(hi)
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if spent(mid) <= epsilon else (lo, mid)
    return lo


@pytest.mark.parametrize("selection", ["laplace", "exponential"])
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("epsilon, delta, n_iter", [(1.0, 1e-6, 10), (0.3, 1e-8, 200),
                                                    (5.0, 1e-5, 2000)])
def test_calibrate_dp_gcd_is_the_ledger_boundary(selection, noise, epsilon, delta, n_iter):
    e0 = calibrate_dp_gcd(epsilon, delta, n_iter, selection, noise)
    assert _ledger(e0, n_iter, selection, noise, delta).get_epsilon(delta) <= epsilon
    assert _ledger(e0 * (1 + 1e-8), n_iter, selection, noise, delta).get_epsilon(delta) \
        > epsilon * (1 - 1e-9)
    assert e0 >= _bisection_e0(epsilon, delta, n_iter, selection, noise) * (1 - 1e-9)


@pytest.mark.parametrize("selection", ["laplace", "exponential"])
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_calibrate_dp_gcd_is_monotone(selection, noise):
    by_delta = [calibrate_dp_gcd(1.0, d, 20, selection, noise)
                for d in np.geomspace(1e-12, 0.9, 25)]
    assert np.all(np.diff(by_delta) >= 0)
    by_epsilon = [calibrate_dp_gcd(e, 1e-6, 1, selection, noise)
                  for e in np.geomspace(1e-3, 1e4, 25)]
    assert np.all(np.diff(by_epsilon) > 0)
    by_steps = [calibrate_dp_gcd(1.0, 1e-6, t, selection, noise) for t in (1, 3, 30, 300, 3000)]
    assert np.all(np.diff(by_steps) < 0)


def test_calibrate_dp_gcd_large_epsilon_is_finite_and_within_budget():
    for epsilon in (800.0, 1e4):
        for selection in ("laplace", "exponential"):
            e0 = calibrate_dp_gcd(epsilon, 1e-6, 1, selection, "laplace")
            assert math.isfinite(e0) and e0 >= epsilon / 2 * (1 - 1e-12)
            assert _ledger(e0, 1, selection, "laplace", 1e-6).get_epsilon(1e-6) <= epsilon


def test_calibrate_gaussian_tiny_epsilon_returns():
    """Below about 1e-15 the old search never ended (its bracket started at 0)."""
    for epsilon in (1e-16, 1e-100):
        z = calibrate_gaussian(epsilon, 1e-6, 1000)
        assert math.isfinite(z)
        assert gaussian_epsilon(z, 1000, 1e-6) <= epsilon
    with pytest.raises(ValueError, match="too small"):
        calibrate_gaussian(1e-320, 1e-320, 10**6)


def test_calibrate_any_ledger_noise_multiplier():
    """The generic routine gives calibrate_gaussian's answer for a Gaussian ledger."""
    def ledger_of(z):
        ledger = PrivacyLedger()
        ledger.add_gaussian("g", z, count=500)
        return ledger

    z = calibrate(ledger_of, 1.0, 1e-6, 10.0, noise=True)
    assert z == pytest.approx(calibrate_gaussian(1.0, 1e-6, 500), rel=1e-9)
    assert ledger_of(z).get_epsilon(1e-6) <= 1.0


# --------------------------------------------------------------------------------------
# The ledger's candidates
# --------------------------------------------------------------------------------------
def test_ledger_split_beats_every_delta_share():
    """The optimised epsilon split between a Gaussian group (exact GDP) and a pure group
    (best composition) is at least as good as any fixed split of delta."""
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add_gaussian("gradients", 30.0, count=300)
    ledger.add_pure("selections", 0.01, count=300)
    eps = ledger.get_epsilon(1e-6)
    mu = math.sqrt(300) / 30.0
    for share in (0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99):
        by_share = gdp_epsilon(mu, 1e-6 * share) + pure_composition_epsilon(
            0.01, 300, 1e-6 * (1 - share))
        assert eps <= by_share * (1 + 1e-9)


def test_ledger_extreme_noise_never_raises():
    for z in (1e-320, 1e-200, 1e200):
        for add in ("add_gaussian", "add_laplace"):
            ledger = PrivacyLedger(delta=1e-6)
            getattr(ledger, add)("m", z, count=10)
            ledger.add_pure("selection", 0.1)
            eps = ledger.epsilon
            assert eps >= 0 and not math.isnan(eps)
            assert (z < 1e-100) == (eps > 1e3) or math.isinf(eps)
            assert "Total" in str(ledger)


# --------------------------------------------------------------------------------------
# Adding a mechanism is adding a class
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """Binary randomized response with flip probability 1 / (1 + e^eps0): eps0-DP."""

    epsilon0: float
    kind: ClassVar[str] = "randomized_response"

    @property
    def pure_epsilon(self):
        return self.epsilon0

    def rdp(self, orders):
        return self.count * rdp_pure(self.epsilon0, orders)


def test_a_new_mechanism_is_accounted_by_every_applicable_accountant():
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add(RandomizedResponse(0.05, name="votes", count=400))
    names = [name for name, _ in ledger.candidates()]
    assert set(names) == {"basic", "advanced", "zcdp", "rdp", "optimal"}
    same = PrivacyLedger(delta=1e-6)
    same.add(PureDP(0.05, name="votes", count=400))
    assert ledger.epsilon == same.epsilon == pure_composition_epsilon(0.05, 400, 1e-6)
    assert "randomized_response" in str(ledger)
    with pytest.raises(ValueError, match="relation must be one of"):
        Gaussian(1.0, relation="neighbours")
    assert Laplace(2.0, count=3).as_dict()["kind"] == "laplace"


def test_gdp_delta_is_an_upper_bound_at_every_scale():
    """log delta(eps) of mu-GDP never below a 120-digit evaluation, for mu from 1e-25 (where
    the two terms of the formula agree to every double digit) to 30 (seeded, 400 pairs)."""
    import mpmath

    from sparsedp.privacy.gdp import gdp_log_delta

    mpmath.mp.dps = 120
    rng = np.random.default_rng(1)
    for _ in range(400):
        mu, eps = 10 ** rng.uniform(-25, 1.5), 10 ** rng.uniform(-30, 1.5)
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        exact = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
        ref = float(mpmath.log(exact)) if exact > 0 else -math.inf
        got = gdp_log_delta(eps, mu)
        assert got >= ref - 1e-12 * abs(ref), (mu, eps)
        if mu > 1e-3 and ref > -700:
            assert got <= ref + 1e-9, (mu, eps)


def test_gdp_log_delta_array_is_the_scalar_curve():
    """The PLD's vectorised GDP curve takes the same branches as the scalar one (seeded)."""
    from sparsedp.privacy.gdp import gdp_log_delta, gdp_log_delta_array

    rng = np.random.default_rng(0)
    for mu in list(10 ** rng.uniform(-8, 1.5, 100)) + [1e-4, 1.4e-3, 1.0]:
        eps = np.concatenate([[0.0, np.inf], 10 ** rng.uniform(-8, 2, 30)])
        got = gdp_log_delta_array(eps, mu)
        want = np.array([gdp_log_delta(e, mu) for e in eps])
        np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-13, atol=1e-13)
