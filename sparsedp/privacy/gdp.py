"""Gaussian differential privacy: the exact accounting of Gaussian mechanisms.

``k`` adaptive releases with noise multiplier ``z`` are exactly ``mu``-GDP with
``mu = sqrt(k) / z`` (Dong, Roth and Su 2022), and a ``mu``-GDP mechanism is
``(epsilon, delta)``-DP exactly when ``delta >= Phi(-epsilon/mu + mu/2) -
e^epsilon Phi(-epsilon/mu - mu/2)`` (Balle and Wang 2018).  No accountant can
give a smaller epsilon for these mechanisms.
"""
import functools
import math

import numpy as np
from scipy import special

from ._checks import (check_calibration, check_count, check_delta, check_noise, check_nonneg,
                      log1mexp, log1mexp_array)
from ._root import bracket_root, epsilon_of_curve

__all__ = ["calibrate_gaussian", "gaussian_delta", "gaussian_epsilon", "gdp_delta",
           "gdp_epsilon", "gdp_log_delta"]

_SQRT2 = math.sqrt(2.0)
_LOG_HALF = math.log(0.5)


def gdp_log_delta(epsilon, mu):
    """``log delta(epsilon)`` of the ``mu``-GDP curve, stable in log space.

    With ``a = eps/mu - mu/2`` and ``b = eps/mu + mu/2`` (``b^2 - a^2 = 2 eps``),
    for ``a > 0``: ``delta = exp(-a^2/2) / 2 (erfcx(a/sqrt2) - erfcx(b/sqrt2))``,
    free of cancellation between exponentially small numbers.
    """
    if mu == 0.0 or math.isinf(epsilon):
        return -math.inf
    if math.isinf(mu):
        return 0.0
    a = epsilon / mu - 0.5 * mu
    b = epsilon / mu + 0.5 * mu
    if a > 0.0:
        h = mu / _SQRT2  # (b - a) / sqrt2
        x = a / _SQRT2
        if h < 1e-3:
            # erfcx is convex, so erfcx(x) - erfcx(x + h) <= -h erfcx'(x) = h (2/sqrt(pi)
            # - 2 x erfcx(x)), and erfcx(x) >= 2 / (sqrt(pi) (x + sqrt(x^2 + 2))): an upper
            # bound where the difference of two near-equal values would round to 0.
            s = math.sqrt(x * x + 2.0)
            diff = h * 4.0 / (math.sqrt(math.pi) * (x + s) * (x + s))
        else:  # accurate to ~1e-15 / h relative: rounded up
            diff = (float(special.erfcx(x)) - float(special.erfcx(x + h))) * (1.0 + 1e-10)
        if diff <= 0.0 or math.isinf(a):
            return -math.inf
        return -0.5 * a * a + _LOG_HALF + math.log(diff)
    if mu < 1e-3:
        # a <= 0 < b = a + mu: delta <= Phi(b) - Phi(a) <= mu phi(0), where the two
        # near-equal terms below would round to a difference of 0
        return math.log(mu) - 0.5 * math.log(2.0 * math.pi)
    first = float(special.log_ndtr(-a))
    second = epsilon + float(special.log_ndtr(-b))
    if second >= first:
        return -math.inf
    return first + log1mexp(second - first)


def gdp_log_delta_array(epsilon, mu):
    """:func:`gdp_log_delta` at an array of ``epsilon`` (the same branches, vectorised).

    A negative ``epsilon`` (the hockey-stick curve below 0, for the PLD) takes the
    direct formula ``Phi(-a) - e^eps Phi(-b)``.
    """
    eps = np.asarray(epsilon, dtype=float)
    if mu == 0.0:
        return np.full(eps.shape, -np.inf)
    if math.isinf(mu):
        return np.where(np.isinf(eps), -np.inf, 0.0)
    a = eps / mu - 0.5 * mu
    h = mu / _SQRT2
    out = np.empty(eps.shape)
    upper = a > 0.0  # each branch evaluated only where it is taken
    lower = ~upper
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a_up = a[upper]
        x = a_up / _SQRT2
        if h < 1e-3:  # the convexity bound of gdp_log_delta
            diff = h * 4.0 / (math.sqrt(math.pi) * (x + np.sqrt(x * x + 2.0)) ** 2)
        else:
            diff = (special.erfcx(x) - special.erfcx(x + h)) * (1.0 + 1e-10)
        out[upper] = np.where(diff > 0.0, -0.5 * a_up * a_up + _LOG_HALF + np.log(diff), -np.inf)
        a, e = a[lower], eps[lower]
        first = special.log_ndtr(-a)
        second = e + special.log_ndtr(-(a + mu))
        low = np.where(second >= first, -np.inf,
                       first + log1mexp_array(np.minimum(second - first, 0.0)))
        if mu < 1e-3:  # the bound mu phi(0) of gdp_log_delta (epsilon >= 0 only)
            low = np.where(e >= 0.0, math.log(mu) - 0.5 * math.log(2.0 * math.pi), low)
        out[lower] = low
    return np.where(np.isnan(out) | np.isinf(eps), -np.inf, out)


def gdp_epsilon_of(mu, delta):
    """Smallest epsilon (rounded up) with ``delta_mu(epsilon) <= delta`` (checked input)."""
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    # delta(eps) < Phi(-eps/mu + mu/2), which equals delta at this guess:
    guess = max(mu * (0.5 * mu - float(special.ndtri(delta))), 1e-12)
    return epsilon_of_curve(lambda eps: gdp_log_delta(eps, mu), delta, guess)


def gdp_delta(mu, epsilon):
    """delta(epsilon) of a mu-GDP mechanism (Dong, Roth and Su 2022, Cor. 2.13).

    Parameters
    ----------
    mu : float
        GDP parameter, ``mu >= 0``.
    epsilon : float
        Privacy loss ``epsilon >= 0``.

    Returns
    -------
    delta : float
        ``Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2)``.
    """
    mu = check_nonneg(mu, "mu")
    epsilon = check_nonneg(epsilon, "epsilon")
    return math.exp(gdp_log_delta(epsilon, mu))


def gdp_epsilon(mu, delta):
    """The smallest epsilon (rounded up) at which a mu-GDP mechanism is (epsilon, delta)-DP.

    ``mu >= 0`` (``inf`` gives ``inf``), ``delta`` in (0, 1).
    """
    return gdp_epsilon_of(check_nonneg(mu, "mu"), check_delta(delta))


def gaussian_epsilon(noise_multiplier, steps, delta):
    """Exact epsilon of ``steps`` adaptive Gaussian mechanisms.

    Each release adds N(0, sigma^2) noise to a quantity of L2 sensitivity ``Delta``
    (under the neighbouring relation in use, library default replace-one) with
    ``noise_multiplier = sigma / Delta``; the composition is exactly mu-GDP with
    ``mu = sqrt(steps) / noise_multiplier``.

    Parameters
    ----------
    noise_multiplier : float
        ``sigma / Delta >= 0``. ``0`` (no noise) gives ``inf``.
    steps : int
        Number of adaptive releases, ``>= 1``.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
        The smallest epsilon (rounded up) such that the composition is (epsilon, delta)-DP.
    """
    z = check_noise(noise_multiplier)
    steps = check_count(steps)
    delta = check_delta(delta)
    if z == 0.0:
        return math.inf
    return gdp_epsilon_of(math.sqrt(steps) / z, delta)


def gaussian_delta(noise_multiplier, steps, epsilon):
    """Exact delta of ``steps`` adaptive Gaussian mechanisms at a given epsilon.

    Parameters
    ----------
    noise_multiplier : float
        ``sigma / Delta >= 0``.
    steps : int
        Number of adaptive releases, ``>= 1``.
    epsilon : float
        Privacy loss ``>= 0``.

    Returns
    -------
    delta : float
        The smallest delta such that the composition is (epsilon, delta)-DP.
    """
    z = check_noise(noise_multiplier)
    steps = check_count(steps)
    epsilon = check_nonneg(epsilon, "epsilon")
    if z == 0.0:
        return 0.0 if math.isinf(epsilon) else 1.0
    return math.exp(gdp_log_delta(epsilon, math.sqrt(steps) / z))


@functools.lru_cache(maxsize=256)
def _gdp_mu(epsilon, delta):
    """The GDP parameter mu whose (epsilon, delta) curve passes through (epsilon, delta):
    the root of ``gdp_log_delta(epsilon, mu) = log(delta)`` (cached: every fit of a
    sweep or an audit calibrates the same few budgets)."""
    log_target = math.log(delta)
    s = math.sqrt(2.0 * math.log(1.0 / delta))
    guess = 2.0 * epsilon / (s + math.sqrt(s * s + 2.0 * epsilon))  # eps ~ mu s + mu^2/2
    mu, _ = bracket_root(lambda m: gdp_log_delta(epsilon, m) - log_target, guess)
    return mu


def calibrate_gaussian(epsilon, delta, steps):
    """Smallest noise multiplier for ``steps`` adaptive Gaussian releases.

    Exact, via Gaussian DP (see :func:`gaussian_epsilon`): the returned ``z`` is the
    smallest (up to ~1e-12 relative, always on the safe side) such that ``steps``
    adaptive releases with ``sigma = z * Delta`` are (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``> 0``; ``inf`` returns ``0.0`` (no noise).
    delta : float
        Target delta in (0, 1).
    steps : int
        Number of adaptive releases, ``>= 1``.

    Returns
    -------
    noise_multiplier : float
        Plugged back into :func:`gaussian_epsilon` it gives an epsilon ``<= epsilon``.

    Raises
    ------
    ValueError
        If an argument is out of range, or epsilon is so small that no finite
        noise multiplier reaches it.
    """
    epsilon, delta, steps = check_calibration(epsilon, delta, steps)
    if math.isinf(epsilon):
        return 0.0
    log_target = math.log(delta)
    mu = _gdp_mu(epsilon, delta)
    z = math.sqrt(steps) / mu * (1.0 + 1e-12) if mu > 0 else math.inf
    if not math.isfinite(z):
        raise ValueError(f"epsilon = {epsilon!r} is too small: no finite noise multiplier "
                         f"gives ({epsilon!r}, {delta!r})-DP over {steps} releases")
    while gdp_log_delta(epsilon, math.sqrt(steps) / z) > log_target:  # pragma: no cover
        z *= 1.0 + 1e-12
    return z
