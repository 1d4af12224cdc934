"""Zero-concentrated differential privacy (zCDP): rho adds up under composition.

rho-zCDP is (alpha, rho alpha)-RDP at every order alpha > 1 (Bun and Steinke
2016), so the conversions optimise over a continuum of orders.
"""
import math

import numpy as np
from scipy import optimize

from ._checks import check_delta, check_nonneg
from ._root import bracket_root
from .rdp import conversion_terms

__all__ = ["zcdp_log_delta", "zcdp_max_rho", "zcdp_to_dp"]

#: the orders searched before the scalar refinement of each conversion
_GRID = 1.0 + np.geomspace(1e-4, 1e7, 400)
_GRID.setflags(write=False)


def zcdp_to_dp(rho, delta):
    """Convert rho-zCDP to (epsilon, delta)-DP (optimised over a continuum of orders).

    rho-zCDP means (alpha, rho alpha)-RDP for all alpha > 1, so by the improved
    conversion (see :func:`rdp_to_dp`) ``epsilon = min_alpha rho alpha + log((alpha-1)/alpha)
    - (log delta + log alpha)/(alpha-1)``. The minimisation is numerical (a grid plus a
    bounded scalar refinement); every alpha gives a valid bound.

    Parameters
    ----------
    rho : float
        zCDP parameter, ``>= 0``.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
    """
    rho = check_nonneg(rho, "rho")
    delta = check_delta(delta)
    if rho == 0:
        return 0.0
    if math.isinf(rho):
        return math.inf
    log_delta = math.log(delta)

    def f(a):
        return rho * a + math.log1p(-1.0 / a) - (log_delta + math.log(a)) / (a - 1.0)

    vals = rho * _GRID + conversion_terms(_GRID, log_delta)
    i = int(np.argmin(vals))
    a_lo, a_hi = _GRID[max(i - 1, 0)], _GRID[min(i + 1, _GRID.size - 1)]
    best = float(vals[i])
    res = optimize.minimize_scalar(f, bounds=(a_lo, a_hi), method="bounded",
                                   options={"xatol": 1e-10 * a_hi})
    if res.success and res.fun < best:
        best = float(res.fun)
    tv = math.sqrt(-math.expm1(-rho * 1.0)) if rho < 50 else 1.0  # KL <= rho
    if tv <= delta:
        return 0.0
    return max(best, 0.0)


def zcdp_max_rho(epsilon, delta):
    """Largest rho such that rho-zCDP is (epsilon, delta)-DP (via the improved conversion).

    For fixed alpha the condition is linear in rho, so rho_max = max_alpha of
    (epsilon - log((alpha-1)/alpha) + (log delta + log alpha)/(alpha-1)) / alpha.
    """
    log_delta = math.log(delta)

    def g(a):
        return (epsilon - math.log1p(-1.0 / a) + (log_delta + math.log(a)) / (a - 1.0)) / a

    vals = (epsilon - conversion_terms(_GRID, log_delta)) / _GRID
    i = int(np.argmax(vals))
    a_lo, a_hi = _GRID[max(i - 1, 0)], _GRID[min(i + 1, _GRID.size - 1)]
    best = float(vals[i])
    res = optimize.minimize_scalar(lambda a: -g(a), bounds=(a_lo, a_hi), method="bounded",
                                   options={"xatol": 1e-10 * a_hi})
    if res.success and -res.fun > best:
        best = float(-res.fun)
    return max(best, 0.0)


def zcdp_log_delta(rho, epsilon):
    """``log delta`` at ``epsilon`` of rho-zCDP (the delta form of :func:`zcdp_to_dp`).

    ``min over alpha > 1 of (alpha - 1) (rho alpha - epsilon + log(1 - 1/alpha)) - log alpha``,
    and at most ``sqrt(1 - exp(-rho))`` (total variation, KL ``<= rho``).  The
    objective's derivative, ``rho (2 alpha - 1) - epsilon + log(1 - 1/alpha)``, is
    increasing in alpha: its root in ``alpha - 1`` is found by the package's root
    finder (any alpha gives a valid bound; this one is the best).
    """
    if rho == 0.0:
        return -math.inf
    if math.isinf(rho):
        return 0.0
    tv = 0.5 * math.log(-math.expm1(-rho)) if rho < 700 else 0.0

    def slope(x):  # at alpha = 1 + x, where log(1 - 1/alpha) = log x - log1p(x)
        return rho * (1.0 + 2.0 * x) - epsilon + math.log(x) - math.log1p(x)

    _, x = bracket_root(slope, 1.0, rtol=1e-9, low=1e-17, high=1e17)
    if math.isinf(x):
        return min(tv, 0.0)
    log_a = math.log1p(x)
    value = x * (rho * (1.0 + x) - epsilon + math.log(x) - log_a) - log_a
    return min(value, tv, 0.0)
