"""The one root finder of the privacy package.

Every calibration and every "epsilon at delta" question is the boundary of a
monotone condition over a positive parameter (a noise multiplier, a per-step
epsilon, a total epsilon).  :func:`bracket_root` finds it on a log scale, with a
bracket that always keeps the valid side, so that a caller rounds to the safe
side by taking one end of the bracket.
"""
import math

__all__ = ["bracket_root", "epsilon_of_curve"]

LOW_LIMIT = 1e-300
HIGH_LIMIT = 1e300


def bracket_root(fun, x0, *, rtol=1e-12, low=LOW_LIMIT, high=HIGH_LIMIT):
    """Bracket the sign change of a non-decreasing function of ``x > 0``.

    Parameters
    ----------
    fun : callable
        Non-decreasing in ``x``; its values may be ``-inf`` or ``+inf``.
    x0 : float
        Starting point (a good guess saves evaluations).
    rtol : float, default=1e-12
        Relative width of the returned bracket.
    low, high : float
        The search stays in ``[low, high]``.

    Returns
    -------
    lo, hi : float
        ``fun(lo) <= 0 < fun(hi)`` and ``hi <= lo (1 + rtol)``.  ``lo`` is
        ``0.0`` if ``fun(low) > 0``; ``hi`` is ``inf`` if ``fun(high) <= 0``.

    Notes
    -----
    The bracket is grown geometrically from ``x0`` (factors 2, 4, 16, ...),
    then narrowed by the Anderson-Björck variant of regula falsi on ``log x``,
    with a bisection step after any step that fails to halve the bracket, so
    that it never takes more than about twice the bisection's evaluations and
    usually a handful.
    """
    x0 = min(max(float(x0), low), high)
    f0 = fun(x0)
    if f0 <= 0:
        lo, f_lo, factor = x0, f0, 2.0
        while True:
            if lo >= high:
                return high, math.inf
            hi = min(lo * factor, high)
            f_hi = fun(hi)
            if f_hi > 0:
                break
            lo, f_lo, factor = hi, f_hi, min(factor * factor, 1e16)
    else:
        hi, f_hi, factor = x0, f0, 2.0
        while True:
            if hi <= low:
                return 0.0, low
            lo = max(hi / factor, low)
            f_lo = fun(lo)
            if f_lo <= 0:
                break
            hi, f_hi, factor = lo, f_lo, min(factor * factor, 1e16)
    u_lo, u_hi = math.log(lo), math.log(hi)
    tol = math.log1p(rtol)
    last = 0  # which end the previous step moved: -1 lo, +1 hi
    bisect = False
    for _ in range(400):
        width = u_hi - u_lo
        if width <= tol:
            break
        if bisect or not (math.isfinite(f_lo) and math.isfinite(f_hi)) or f_hi == f_lo:
            u = u_lo + 0.5 * width
        else:
            u = u_lo - f_lo * width / (f_hi - f_lo)
            u = min(max(u, u_lo + 0.49 * tol), u_hi - 0.49 * tol)
        x = math.exp(u)
        if not lo < x < hi:  # the log scale rounded onto an end
            break
        f = fun(x)
        if f <= 0:
            if last == -1 and math.isfinite(f_lo) and math.isfinite(f):  # Anderson-Bjorck
                m = 1.0 - f / f_lo if f_lo != 0 else 0.5
                f_hi *= m if m > 0 else 0.5
            u_lo, lo, f_lo, last = u, x, f, -1
        else:
            if last == 1 and math.isfinite(f_hi) and math.isfinite(f):
                m = 1.0 - f / f_hi
                f_lo *= m if m > 0 else 0.5
            u_hi, hi, f_hi, last = u, x, f, 1
        bisect = (u_hi - u_lo) > 0.5 * width and not bisect
    return lo, hi


def epsilon_of_curve(log_delta, delta, guess):
    """Smallest epsilon (rounded up) with ``log_delta(epsilon) <= log(delta)``.

    ``log_delta`` is a privacy curve (non-increasing in epsilon); 0 when epsilon = 0
    already meets delta; ``guess`` starts the search.
    """
    log_target = math.log(delta)
    if log_delta(0.0) <= log_target:
        return 0.0
    _, hi = bracket_root(lambda eps: log_target - log_delta(eps), guess)
    return hi
