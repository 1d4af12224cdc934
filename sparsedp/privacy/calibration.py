"""Calibration: the noise (or per-step budget) at which a ledger meets (epsilon, delta).

One routine for every mechanism: :func:`calibrate` takes a function from the
parameter to the ledger it would produce and finds the boundary of the
condition "the ledger is (epsilon, delta)-DP" with the package's single root
finder (:func:`~sparsedp.privacy._root.bracket_root`, log scale, safe side).
"""
import math

import numpy as np

from .._validation import check_real
from ._checks import check_delta, check_epsilon
from ._root import bracket_root

__all__ = ["calibrate", "split_budget"]

# Calibrate to epsilon (1 - 1e-11): the ledger's epsilon, rounded up by its own
# root finder (1e-12 relative), then never exceeds the target.
_EPSILON_MARGIN = 1.0 - 1e-11


def calibrate(ledger_of, epsilon, delta, guess, *, noise=True, rtol=1e-10):
    """The parameter at which ``ledger_of(parameter)`` is just (epsilon, delta)-DP.

    Parameters
    ----------
    ledger_of : callable
        ``parameter -> PrivacyLedger``; its privacy loss must be monotone in
        the parameter and its mechanisms' structure (kinds, counts) fixed.
    epsilon, delta : float
        Target budget (``epsilon`` finite).
    guess : float
        A starting parameter (e.g. from a closed-form approximation).
    noise : bool, default=True
        True if the parameter is a noise multiplier (privacy grows with it: the
        smallest is returned), False if it is a per-step budget (the largest is
        returned).
    rtol : float, default=1e-10
        Relative precision; the answer is always on the safe side.

    Returns
    -------
    parameter : float

    Raises
    ------
    ValueError
        If no parameter in (1e-300, 1e300) meets the budget.

    Notes
    -----
    The ledger's epsilon is the minimum of several bounds (its candidates), so
    the boundary is the best of each candidate's boundary.  Each is found by
    the root finder, after a single evaluation shows it can beat the best so
    far; a candidate's ``log delta`` at epsilon is used where it has one (a
    closed form, cheaper than its epsilon).
    """
    epsilon = check_epsilon(epsilon) * _EPSILON_MARGIN
    delta = check_delta(delta)
    if not 1e-300 <= guess <= 1e300:
        raise ValueError(f"the starting {'noise multiplier' if noise else 'per-step budget'} "
                         f"{guess!r} is outside [1e-300, 1e300] (epsilon = {epsilon!r} is out "
                         f"of reach)")
    log_target = math.log(delta)

    def param(t):  # t grows with the privacy loss
        return 1.0 / t if noise else t

    def excess(name, t):
        profile = ledger_of(param(t)).candidate(name)
        if profile is None:
            return math.inf
        if profile.has_log_delta:
            return profile.log_delta(epsilon) - log_target
        return profile.epsilon(delta) - epsilon

    names = [name for name, _ in ledger_of(guess).candidates()]
    best = 0.0
    for name in names:
        start = param(guess) if best == 0.0 else best * (1.0 + rtol)
        if best > 0.0 and excess(name, start) > 0:
            continue
        lo, _ = bracket_root(lambda t: excess(name, t), start, rtol=rtol)
        best = max(best, lo)
    if best == 0.0:
        raise ValueError(f"no {'noise multiplier' if noise else 'per-step budget'} in "
                         f"(1e-300, 1e300) gives ({epsilon!r}, {delta!r})-DP")
    return param(best)


def split_budget(epsilon, delta, fractions, delta_fractions=None):
    """Split an (epsilon, delta) budget between the parts of a multi-part algorithm.

    Semantics: **basic composition** of the parts. If part ``i`` is run with
    ``(epsilon_i, delta_i) = (f_i epsilon, g_i delta)`` and each part is
    (epsilon_i, delta_i)-DP (given the outputs of the previous parts), the whole algorithm
    is (sum epsilon_i, sum delta_i)-DP, i.e. (epsilon, delta)-DP when the fractions sum to
    at most one. Example (DP-CD with private smoothness constants estimated with the
    Laplace mechanism, a pure-DP part)::

        (eps_m, _), (eps_steps, delta_steps) = split_budget(eps, delta, [0.1, 0.9], [0.0, 1.0])

    Parameters
    ----------
    epsilon : float
        Total epsilon ``> 0`` (``inf`` gives ``inf`` for every part).
    delta : float
        Total delta in [0, 1).
    fractions : sequence of float
        Epsilon fractions, each in (0, 1], summing to at most 1 (up to 1e-9).
    delta_fractions : sequence of float, optional
        Delta fractions, each in [0, 1], summing to at most 1. Defaults to
        ``fractions``. A part given ``delta_i = 0`` must be pure DP.

    Returns
    -------
    budgets : list of (float, float)
        ``(epsilon_i, delta_i)`` for each part; their sums never exceed the total.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_real(delta, "delta", high=1.0, include_low=True)
    fr = np.asarray(fractions, dtype=float)
    if fr.ndim != 1 or fr.size == 0 or np.any(np.isnan(fr)) or np.any(fr <= 0) or np.any(fr > 1):
        raise ValueError("fractions must be a non-empty sequence of numbers in (0, 1]")
    if fr.sum() > 1.0 + 1e-9:
        raise ValueError(f"fractions must sum to at most 1, got {fr.sum()}")
    if delta_fractions is None:
        dfr = fr
    else:
        dfr = np.asarray(delta_fractions, dtype=float)
        if dfr.shape != fr.shape:
            raise ValueError("delta_fractions must have the same length as fractions")
        if np.any(np.isnan(dfr)) or np.any(dfr < 0) or np.any(dfr > 1):
            raise ValueError("delta_fractions must be numbers in [0, 1]")
        if dfr.sum() > 1.0 + 1e-9:
            raise ValueError(f"delta_fractions must sum to at most 1, got {dfr.sum()}")
    # rescale tiny round-off so that the parts never sum above the total
    efr = fr / fr.sum() if fr.sum() > 1.0 else fr
    dfr = dfr / dfr.sum() if dfr.sum() > 1.0 else dfr
    out = []
    for a, b in zip(efr, dfr):
        e = epsilon * float(a) * (1.0 - 1e-12) if math.isfinite(epsilon) else math.inf
        out.append((e, delta * float(b) * (1.0 - 1e-12)))
    return out
