"""RDP of the Gaussian on fixed-size batches without replacement (WBK19, Theorem 27).

dp-accounting's convention, read in ``rdp_privacy_accountant.py``: for a
``SampledWithoutReplacementDpEvent`` under ``NeighboringRelation.REPLACE_ONE`` the
Gaussian's ``noise_multiplier`` is sigma over the **replace-one** L2 sensitivity (its
base curve is ``alpha / (2 z^2)``, nothing doubled), the same ``z`` as ours.
"""
import logging
import math

import mpmath
import numpy as np
import pytest

import dp_accounting as dpa
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp
from sparsedp.privacy import PrivacyLedger, calibrate, calibrate_sampled_gaussian
from sparsedp.privacy import _subsampled
from sparsedp.privacy.rdp import (DEFAULT_ORDERS, rdp_gaussian, rdp_sampled_gaussian,
                                  rdp_sampled_gaussian_wor, rdp_to_dp)

logging.getLogger("absl").setLevel(logging.ERROR)

N_RECORDS = 1000
ORDERS_256 = DEFAULT_ORDERS[DEFAULT_ORDERS <= 256]


def _dpa_wor(z, q, orders):
    acc = dpa.rdp.RdpAccountant(list(orders), dpa.NeighboringRelation.REPLACE_ONE)
    event = dpa.SampledWithoutReplacementDpEvent(N_RECORDS, int(round(q * N_RECORDS)),
                                                 dpa.GaussianDpEvent(z))
    acc.compose(event)
    return np.asarray(acc._rdp)


def _log_forward_difference_mp(z, k, dps=600):
    """log of sum_i (-1)^(k-i) C(k,i) exp(i (i-1) / (2 z^2)) in 600-digit arithmetic."""
    with mpmath.workdps(dps):
        c = 1 / (2 * mpmath.mpf(z) ** 2)
        total = mpmath.fsum((-1) ** (k - i) * mpmath.binomial(k, i) * mpmath.exp(c * i * (i - 1))
                            for i in range(k + 1))
        return float(mpmath.log(total))


def _theorem_9(z, q, alpha):
    """WBK19 Theorem 9 for the Gaussian (eps(inf) = inf), integer alpha, written plainly."""
    eps = lambda j: j / (2.0 * z * z)  # noqa: E731
    terms = [2 * math.log(q) + math.log(math.comb(alpha, 2))
             + min(math.log(4 * math.expm1(eps(2))), math.log(2) + eps(2))]
    terms += [math.log(2) + j * math.log(q) + math.log(math.comb(alpha, j)) + (j - 1) * eps(j)
              for j in range(3, alpha + 1)]
    m = max(terms)
    if m < 0:  # A = 1 + sum: log1p keeps the digits of a small sum
        return math.log1p(math.fsum(math.exp(t) for t in terms)) / (alpha - 1)
    return (m + math.log(math.exp(-m) + math.fsum(math.exp(t - m) for t in terms))) / (alpha - 1)


@pytest.mark.parametrize("z", [0.5, 0.8, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("q", [1e-3, 1e-2, 0.1, 0.3])
def test_wor_equals_dp_accounting_replace_one(z, q):
    # dp-accounting's forward differences are accurate for these z (checked against 600
    # digits below); ours is capped by alpha / (2 z^2) and made non-decreasing in alpha.
    ours = rdp_sampled_gaussian_wor(z, q, ORDERS_256)
    theirs = np.minimum(_dpa_wor(z, q, ORDERS_256), ORDERS_256 / (2 * z * z))
    theirs = np.minimum.accumulate(theirs[::-1])[::-1]
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=0)


@pytest.mark.parametrize("z", [0.7, 2.0, 5.0, 28.6, 300.0])
def test_even_forward_differences_match_600_digits(z):
    ks = np.arange(2, 259, 2)
    c = 0.5 / (z * z)
    direct, ok = _subsampled.log_even_chi_moments_direct(c, ks)
    quad = _subsampled.log_even_chi_moments_quad(z, ks)
    for k in [2, 4, 6, 10, 20, 40, 100, 200, 256, 258]:
        exact = _log_forward_difference_mp(z, k)
        tol = 1e-13 * (1.0 + abs(exact))
        assert quad[k // 2 - 1] == pytest.approx(exact, abs=tol)
        if ok[k // 2 - 1]:
            assert direct[k // 2 - 1] == pytest.approx(exact, abs=tol)


def test_dp_accounting_forward_differences_cancel_at_large_noise():
    # Why ours integrates: at z = 28.6 the alternating sum (dp-accounting's) has lost all
    # digits from k = 20 on (its log is off by ~20), while the integral is exact.
    z = 28.6
    log_delta, _ = dpa_rdp._get_forward_diffs(lambda x: x * (x + 1) / (2 * z * z), 40)
    exact = _log_forward_difference_mp(z, 20)
    assert abs(log_delta[19] - exact) > 1.0
    quad = _subsampled.log_even_chi_moments_quad(z, np.array([20]))[0]
    assert quad == pytest.approx(exact, abs=1e-12)
    # the rounding test of the alternating sum rejects it there
    assert not _subsampled.log_even_chi_moments_direct(0.5 / z / z, np.array([20]))[1][0]


@pytest.mark.parametrize("z", [0.5, 1.0, 3.0, 10.0, 28.6])
@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 0.5])
def test_wor_between_poisson_lower_bound_and_theorem_9(z, q):
    # Upper: never above Theorem 9 nor the unsubsampled Gaussian. Lower: the pair
    # (1-q) N(0, z^2) + q N(1, z^2) vs N(0, z^2) is a replace-one pair of the sampled sum
    # (one record's value 1 replaced by 0, the others 0), so at integer orders the true
    # divergence, hence any valid bound, is at least the Poisson-subsampled value there.
    ints = np.array([2, 3, 4, 5, 8, 16, 32, 64, 128, 256, 512], dtype=float)
    ours = rdp_sampled_gaussian_wor(z, q, ints)
    thm9 = np.array([_theorem_9(z, q, int(a)) for a in ints])
    assert np.all(ours <= np.minimum(thm9, ints / (2 * z * z)) * (1 + 1e-12))
    assert np.all(ours >= rdp_sampled_gaussian(z, q, ints) * (1 - 1e-12))


def test_wor_tighter_than_theorem_9_at_large_noise():
    ints = np.array([2, 8, 32, 128, 256], dtype=float)
    ours = rdp_sampled_gaussian_wor(28.6, 0.1, ints)
    thm9 = np.array([_theorem_9(28.6, 0.1, int(a)) for a in ints])
    assert np.all(ours[2:] < 0.2 * thm9[2:])


def test_wor_is_monotone_and_bounded():
    qs = [1e-4, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.7, 1.0]
    zs = [0.3, 0.6, 1.0, 2.0, 4.0, 10.0, 30.0, 100.0]
    curves = np.array([[rdp_sampled_gaussian_wor(z, q) for z in zs] for q in qs])
    assert np.all(curves >= 0) and np.all(np.isfinite(curves))
    assert np.all(np.diff(curves, axis=0) >= -1e-15 * curves[1:])  # non-decreasing in q
    assert np.all(np.diff(curves, axis=1) <= 1e-15 * curves[:, :-1])  # non-increasing in z
    assert np.all(np.diff(curves, axis=2) >= 0)  # non-decreasing in the order
    for j, z in enumerate(zs):
        assert np.all(curves[:, j] <= rdp_gaussian(z) * (1 + 1e-15))
        np.testing.assert_array_equal(curves[-1, j], rdp_gaussian(z))
    assert np.all(np.isinf(rdp_sampled_gaussian_wor(0.0, 0.1)))
    assert np.all(rdp_sampled_gaussian_wor(math.inf, 0.1) == 0)
    # unsorted orders give the same values as sorted ones
    perm = np.random.default_rng(0).permutation(DEFAULT_ORDERS.size)
    np.testing.assert_array_equal(rdp_sampled_gaussian_wor(2.0, 0.1, DEFAULT_ORDERS[perm]),
                                  rdp_sampled_gaussian_wor(2.0, 0.1)[perm])


def test_wor_rejects_bad_arguments():
    with pytest.raises(ValueError):
        rdp_sampled_gaussian_wor(-1.0, 0.1)
    with pytest.raises(ValueError):
        rdp_sampled_gaussian_wor(1.0, 0.0)
    with pytest.raises(ValueError):
        rdp_sampled_gaussian_wor(1.0, 1.5)
    with pytest.raises(ValueError):
        rdp_sampled_gaussian_wor(1.0, 0.1, [0.5, 2.0])


def test_calibration_of_fixed_size_batches():
    # q = 0.1, 50 steps, (1, 1e-5): Theorem 9 needed z = 28.6; Theorem 27 needs < 6.
    q, steps, eps, delta = 0.1, 50, 1.0, 1e-5

    def ledger_of(z):
        led = PrivacyLedger(delta=delta)
        led.add_sampled_gaussian_wor("batch", z, q, count=steps)
        return led
    z = calibrate(ledger_of, eps, delta, calibrate_sampled_gaussian(eps, delta, q, steps))
    assert 5.5 < z < 6.0
    assert ledger_of(z).epsilon <= eps
    assert ledger_of(z * (1 - 1e-6)).epsilon > eps
    # dp-accounting's curve (its differences are accurate at z ~ 6) gives the same budget
    ours = rdp_to_dp(DEFAULT_ORDERS, steps * rdp_sampled_gaussian_wor(z, q), delta)
    theirs = rdp_to_dp(DEFAULT_ORDERS, steps * _dpa_wor(z, q, DEFAULT_ORDERS), delta)
    assert ours == pytest.approx(theirs, rel=1e-9)
    assert ours <= eps * (1 + 1e-9)
