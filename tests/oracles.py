"""Independent computations of privacy curves: the oracles the tests hold the library to.

Closed forms in 40-digit mpmath (Gaussian DP, the optimal composition of pure
mechanisms) and dp-accounting (the privacy loss distributions of subsampled
Gaussians): never the library's own accountants.  Used by the accountants' unit
tests (``test_accountants_alone.py``) and by the audit's claims computed from a
fit's budget (``audit/_mechanisms.py``).
"""
import functools
import math

import mpmath

mpmath.mp.dps = 40


def gdp_delta(epsilon, mu):
    """delta(epsilon) of mu-GDP (Dong, Roth and Su 2022, Cor. 2.13)."""
    epsilon, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)
    return mpmath.ncdf(-epsilon / mu + mu / 2) - mpmath.exp(epsilon) * mpmath.ncdf(
        -epsilon / mu - mu / 2)


def _bisect(f, lo, hi, iterations=200):
    """The root of an increasing ``f`` in ``[lo, hi]`` (f(lo) <= 0 < f(hi)), by bisection
    in 40 digits; returns (lo, hi) around it."""
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if f(mid) <= 0:
            lo = mid
        else:
            hi = mid
    return lo, hi


@functools.lru_cache(maxsize=None)
def gdp_epsilon(mu, delta):
    """The epsilon of mu-GDP at delta, rounded up (the smallest epsilon with
    delta(epsilon) <= delta)."""
    _, hi = _bisect(lambda e: delta - gdp_delta(e, mu), 0, 200)
    return float(hi) * (1 + 1e-12)


@functools.lru_cache(maxsize=None)
def gdp_mu(epsilon, delta):
    """The largest mu for which mu-GDP is (epsilon, delta)-DP, rounded down."""
    lo, _ = _bisect(lambda m: gdp_delta(epsilon, m) - delta, 0, 100)
    return float(lo) * (1 - 1e-12)


def kov_delta(epsilon, eps0, k):
    """Kairouz, Oh and Viswanath 2017, Thm. 3.3 (the optimal composition of k eps0-DP
    mechanisms), summed term by term in 40 digits."""
    epsilon, eps0 = mpmath.mpf(epsilon), mpmath.mpf(eps0)
    total = mpmath.mpf(0)
    for i in range(k + 1):
        term = mpmath.exp(eps0 * (k - i)) - mpmath.exp(epsilon + eps0 * i)
        if term > 0:
            total += mpmath.binomial(k, i) * term
    return total / (1 + mpmath.exp(eps0)) ** k


@functools.lru_cache(maxsize=None)
def kov_epsilon0(epsilon, delta, k):
    """The largest eps0 whose k-fold optimal composition is (epsilon, delta)-DP: no
    accountant of k eps0-DP mechanisms can allow more (randomised response attains
    the curve), rounded up so that it stays an upper bound."""
    _, hi = _bisect(lambda e0: kov_delta(epsilon, e0, k) - delta, 0, epsilon)
    return float(hi) * (1 + 1e-12)


def dp_accounting_pld_epsilon(z, q, count, delta, pessimistic):
    """dp-accounting's epsilon of ``count`` Poisson-subsampled Gaussians (multiplier z,
    rate q, add/remove), its pessimistic or optimistic estimate."""
    from dp_accounting.pld import privacy_loss_distribution
    pld = privacy_loss_distribution.from_gaussian_mechanism(
        z, sampling_prob=q, value_discretization_interval=1e-4,
        pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
    return pld.self_compose(count).get_epsilon_for_delta(delta)


def _rnm_laplace_delta(eps0, n_iter, epsilon):
    """dp-accounting's optimistic delta(epsilon) of n_iter iterations of one eps0-DP
    mechanism (randomised response, the worst case of pure DP) and one Laplace
    mechanism of scale 1 / eps0: a lower bound on the delta of any such iterations."""
    import logging
    from dp_accounting.pld import privacy_loss_distribution as pld
    logging.getLogger().setLevel(logging.ERROR)  # "Using Privacy Buckets" notices
    kw = dict(value_discretization_interval=1e-3, pessimistic_estimate=False)
    rr = pld.from_randomized_response(2.0 / (1.0 + math.exp(eps0)), 2, **kw)
    lap = pld.from_laplace_mechanism(1.0 / eps0, sensitivity=1.0, **kw)
    return rr.compose(lap).self_compose(n_iter).get_delta_for_epsilon(epsilon)


@functools.lru_cache(maxsize=None)
def rnm_laplace_epsilon0(epsilon, delta, n_iter):
    """An upper bound on the per-step epsilon0 any correct accounting can give ``n_iter``
    DP-GCD iterations of a Laplace report-noisy-max (epsilon0-DP) and a Laplace release
    (scale 1 / epsilon0) within (epsilon, delta): the largest epsilon0 whose
    dp-accounting optimistic PLD (randomised response for the selection: it dominates
    every epsilon0-DP mechanism) stays within delta, to 1e-3 relative, rounded up."""
    lo, hi = epsilon / (2 * n_iter), epsilon
    while hi / lo > 1.0 + 1e-3:
        mid = math.sqrt(lo * hi)
        if _rnm_laplace_delta(mid, n_iter, epsilon) <= delta:
            lo = mid
        else:
            hi = mid
    return hi
