"""Composition of pure epsilon0-DP mechanisms: optimal, advanced, zCDP and basic.

The optimal composition of ``k`` adaptive epsilon0-DP mechanisms is exact
(Kairouz, Oh and Viswanathan 2017, Thm. 3.3); advanced composition (Dwork,
Rothblum and Vadhan 2010) and the zCDP route (Bun and Steinke 2016; Cesar and
Rogers 2021 for bounded-range mechanisms) are valid and sometimes tighter
after rounding; basic composition spends ``k epsilon0`` and no delta.
"""
import math
from functools import lru_cache

import numpy as np
from scipy import special

from .._validation import check_option
from ._checks import check_calibration, check_count, check_delta, check_nonneg, log1mexp_array
from ._root import bracket_root, epsilon_of_curve
from .zcdp import zcdp_log_delta, zcdp_max_rho, zcdp_to_dp

__all__ = ["advanced_log_delta", "calibrate_pure_composition", "optimal_log_delta",
           "pure_composition_delta", "pure_composition_epsilon"]

METHODS = ("optimal", "advanced", "zcdp", "basic", "best")


@lru_cache(maxsize=16)
def _log_binomials(k):
    """``log C(k, i)`` for ``i = 0..k`` (read-only, cached per k)."""
    i = np.arange(k + 1, dtype=float)
    out = special.gammaln(k + 1.0) - special.gammaln(i + 1.0) - special.gammaln(k - i + 1.0)
    out.setflags(write=False)
    return out


def optimal_log_delta(epsilon, eps0, k):
    """log delta of the optimal k-fold composition of eps0-DP mechanisms at epsilon.

    ``delta = sum_i C(k,i) max(0, e^{eps0 (k-i)} - e^{epsilon + eps0 i}) / (1 + e^{eps0})^k``
    (Kairouz, Oh and Viswanathan 2017, Thm. 3.3), in log space; the terms are
    positive for ``i < (k - epsilon / eps0) / 2``.
    """
    if eps0 <= 0 or math.isinf(epsilon):
        return -math.inf
    if math.isinf(eps0):
        return 0.0
    half = 0.5 * k - 0.5 * epsilon / eps0  # the terms are positive for i < half
    if not half > 0:
        return -math.inf
    i_max = min(math.ceil(half) - 1, k) if half < k else k
    if i_max < 0:
        return -math.inf
    i = np.arange(i_max + 1, dtype=float)
    d = epsilon + eps0 * (2.0 * i - k)
    keep = d < 0
    if not keep.all():
        i, d = i[keep], d[keep]
        if i.size == 0:
            return -math.inf
    terms = _log_binomials(k)[: i_max + 1][keep] + eps0 * (k - i) + log1mexp_array(d)
    top = float(terms.max())
    if top == -math.inf:
        return -math.inf
    log_sum = top + math.log(float(np.exp(terms - top).sum()))
    return log_sum - k * float(np.logaddexp(0.0, eps0))


def advanced_log_delta(epsilon, sum_sq, sum_lin):
    """log delta at epsilon of advanced composition.

    ``epsilon = sqrt(2 log(1/delta) sum_i eps_i^2) + sum_i eps_i (e^{eps_i} - 1)``
    (Dwork and Roth 2014, Thm. 3.20, heterogeneous form), solved for delta:
    ``log delta = -(epsilon - sum_lin)^2 / (2 sum_sq)`` when ``epsilon > sum_lin``.
    """
    if sum_sq == 0.0:
        return -math.inf
    if not epsilon > sum_lin or math.isinf(sum_sq):
        return 0.0
    gap = float(epsilon) - float(sum_lin)  # Python floats: inf past 1e154, no warning
    return -(gap * gap) / (2.0 * sum_sq)


def _advanced_sums(eps0, k):
    lin = k * eps0 * math.expm1(eps0) if eps0 < 700 else math.inf
    return k * eps0 * eps0, lin


def _log_delta(method, epsilon, eps0, k, bounded_range):
    """log delta at epsilon of k eps0-DP mechanisms by one method (not "best")."""
    if method == "basic":
        return -math.inf if epsilon >= k * eps0 else 0.0
    if method == "advanced":
        return advanced_log_delta(epsilon, *_advanced_sums(eps0, k))
    if method == "zcdp":
        return zcdp_log_delta(k * eps0 * eps0 / (8.0 if bounded_range else 2.0), epsilon)
    return optimal_log_delta(epsilon, eps0, k)


def _epsilon(method, eps0, k, delta, bounded_range):
    """Smallest epsilon (rounded up) at delta for one method; "best" is the minimum."""
    if eps0 == 0:
        return 0.0
    if math.isinf(eps0):
        return math.inf
    basic = math.nextafter(k * eps0, math.inf)
    if method == "basic":
        return basic
    if method == "best":
        return min(_epsilon(m, eps0, k, delta, bounded_range)
                   for m in ("optimal", "advanced", "zcdp"))
    if method == "advanced":
        sum_sq, sum_lin = _advanced_sums(eps0, k)
        return min(basic, math.nextafter(math.sqrt(2.0 * math.log(1.0 / delta) * sum_sq)
                                         + sum_lin, math.inf))
    if method == "zcdp":
        return min(basic, zcdp_to_dp(k * eps0 * eps0 / (8.0 if bounded_range else 2.0),
                                     delta))
    hi = epsilon_of_curve(lambda eps: _log_delta(method, eps, eps0, k, bounded_range),
                          delta, basic)
    return min(hi, basic)


def pure_composition_delta(epsilon0, mechanisms, epsilon):
    """Optimal delta of ``mechanisms`` adaptive epsilon0-DP mechanisms at ``epsilon >= 0``.

    Kairouz, Oh and Viswanathan (2017), Theorem 3.3 (exact, homogeneous case);
    ``epsilon0`` and ``mechanisms`` as in :func:`pure_composition_epsilon`.
    """
    eps0 = check_nonneg(epsilon0, "epsilon0")
    k = check_count(mechanisms, "mechanisms")
    epsilon = check_nonneg(epsilon, "epsilon")
    return math.exp(optimal_log_delta(epsilon, eps0, k))


def pure_composition_epsilon(epsilon0, mechanisms, delta, method="best", *,
                             bounded_range=False):
    """Epsilon of ``mechanisms`` adaptive epsilon0-DP mechanisms at a given delta.

    Parameters
    ----------
    epsilon0 : float
        Per-mechanism pure DP parameter, ``>= 0``.
    mechanisms : int
        Number of mechanisms ``k >= 1``.
    delta : float
        Target delta in (0, 1).
    method : {"best", "optimal", "advanced", "zcdp", "basic"}, default="best"
        * ``"basic"``: ``k epsilon0``.
        * ``"advanced"``: ``sqrt(2 k log(1/delta)) eps0 + k eps0 (e^eps0 - 1)``
          (Dwork and Roth 2014, Thm. 3.20), with basic composition when smaller.
        * ``"optimal"``: the exact optimal homogeneous composition of Kairouz, Oh and
          Viswanathan (2017).
        * ``"zcdp"``: eps0-DP implies ``eps0^2/2``-zCDP (``eps0^2/8`` for bounded-range
          mechanisms), composed additively and converted by
          :func:`~sparsedp.privacy.zcdp.zcdp_to_dp`.
        * ``"best"``: the minimum of the above (all are valid).
    bounded_range : bool, default=False
        Whether each mechanism is epsilon0-bounded-range (e.g. the exponential
        mechanism); only changes ``"zcdp"`` (and hence ``"best"``).

    Returns
    -------
    epsilon : float
    """
    eps0 = check_nonneg(epsilon0, "epsilon0")
    k = check_count(mechanisms, "mechanisms")
    delta = check_delta(delta)
    check_option(method, "method", METHODS)
    return _epsilon(method, eps0, k, delta, bool(bounded_range))


def calibrate_pure_composition(epsilon, delta, mechanisms, method="optimal", *,
                               bounded_range=False):
    """Largest epsilon0 such that ``mechanisms`` eps0-DP mechanisms are (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Total epsilon ``> 0``; ``inf`` returns ``inf``.
    delta : float
        Total delta in (0, 1).
    mechanisms : int
        Number ``k >= 1`` of adaptively composed epsilon0-DP mechanisms.
    method : {"optimal", "advanced", "zcdp", "basic", "best"}, default="optimal"
        See :func:`pure_composition_epsilon`; ``"best"`` returns the largest of the
        methods' answers.
    bounded_range : bool, default=False
        Whether each mechanism is epsilon0-bounded-range; used by ``"zcdp"``.

    Returns
    -------
    epsilon0 : float
        Rounded down: plugged back into :func:`pure_composition_epsilon` with the same
        method it gives an epsilon ``<= epsilon``; never below ``epsilon / k``.
    """
    epsilon, delta, k = check_calibration(epsilon, delta, mechanisms, "mechanisms")
    check_option(method, "method", METHODS)
    if math.isinf(epsilon):
        return math.inf
    bounded_range = bool(bounded_range)
    methods = ("optimal", "advanced", "zcdp") if method == "best" else (method,)
    basic = epsilon / k * (1.0 - 1e-15)
    best = basic
    log_target = math.log(delta)
    for m in methods:
        if m == "basic":
            continue
        if m == "zcdp":
            e0 = math.sqrt((8.0 if bounded_range else 2.0) * zcdp_max_rho(epsilon, delta) / k)
        else:
            # optimal: a hair (1e-10 relative) below delta, so that a naive evaluation
            # of the sum confirms it
            target = log_target + (math.log1p(-1e-10) if m == "optimal" else 0.0)
            e0, _ = bracket_root(
                lambda e: _log_delta(m, epsilon, e, k, bounded_range) - target, basic)
        while e0 > best and _epsilon(m, e0, k, delta, bounded_range) > epsilon:
            e0 *= 1.0 - 1e-12
        best = max(best, e0)
    return best
