"""Confidence bounds behind the audits: Clopper-Pearson, and one-run auditing.

Two ways to turn observed outputs into a lower bound on epsilon:

* **Two datasets, many runs.**  ``k1`` of ``n1`` outputs on D fell in an event E
  fixed in advance, ``k2`` of ``n2`` on D'.  An (epsilon, delta)-DP mechanism has
  ``P(E | D) <= e^epsilon P(E | D') + delta``, so with one-sided Clopper-Pearson
  bounds ``p1 >= p1_low`` and ``p2 <= p2_high`` (each failing with probability at
  most ``alpha``),

      ``epsilon >= log((p1_low - delta) / p2_high)``

  with probability at least ``1 - 2 alpha`` (:func:`epsilon_lower_bound`).
* **One run, many canaries** (Steinke, Nasr and Jagielski, "Privacy auditing
  with one (1) training run", NeurIPS 2023).  Each of ``m`` canaries is in the
  training data or not by a fair coin, independently; after one run a guesser
  says "in" or "out" for ``r`` of them (abstaining on the rest), ``v`` rightly.
  If the algorithm is (epsilon, delta)-DP with respect to each canary's coin,
  then for every ``v`` (their Theorem 3.3 with the bound of their Appendix D)

      ``P(W >= v) <= P(Bin(r, q) >= v) + 2 m delta max_{1 <= i <= v}
      P(v - i <= Bin(r, q) < v) / i``,   ``q = e^epsilon / (1 + e^epsilon)``

  (:func:`one_run_p_value`): a guesser no better than epsilon-randomised response,
  up to delta.  The lower bound at confidence ``1 - beta`` is the largest epsilon
  whose p-value for the observed ``v`` is below ``beta`` (:func:`one_run_epsilon`).
"""
import math

import numpy as np
from scipy import optimize, stats

__all__ = ["clopper_pearson_lower", "clopper_pearson_upper", "epsilon_lower_bound",
           "one_run_epsilon", "one_run_p_value"]

#: one-run lower bounds are searched in [0, EPSILON_MAX]
EPSILON_MAX = 60.0


def clopper_pearson_lower(k, n, alpha):
    """One-sided Clopper-Pearson lower bound on p from ``k`` successes in ``n`` trials.

    ``P(p < bound) <= alpha``; 0 when ``k = 0``.  Vectorised over ``k`` and ``n``.
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(alpha, np.maximum(k, 1), np.maximum(n - k + 1, 1))
    return np.where(k > 0, out, 0.0)


def clopper_pearson_upper(k, n, alpha):
    """One-sided Clopper-Pearson upper bound on p from ``k`` successes in ``n`` trials.

    ``P(p > bound) <= alpha``; 1 when ``k = n``.  Vectorised over ``k`` and ``n``.
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(1.0 - alpha, k + 1, np.maximum(n - k, 1))
    return np.where(k < n, out, 1.0)


def epsilon_lower_bound(k1, n1, k2, n2, delta, alpha):
    """``log((p1_low - delta) / p2_high)``: a lower bound on epsilon at ``delta``.

    ``k1`` of ``n1`` outputs on D and ``k2`` of ``n2`` on D' fell in an event
    chosen before these outputs were seen; each Clopper-Pearson bound is at level
    ``alpha``, so the bound holds with probability at least ``1 - 2 alpha``.
    ``-inf`` where ``p1_low <= delta``.  Vectorised over ``k1`` and ``k2``.
    """
    p1 = clopper_pearson_lower(k1, n1, alpha)
    p2 = clopper_pearson_upper(k2, n2, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.maximum(p1 - delta, 0.0) / p2)
    return np.where(p1 > delta, out, -np.inf)


def one_run_p_value(m, r, v, epsilon, delta):
    """The p-value of ``v`` right guesses of ``r`` under the (epsilon, delta)-DP hypothesis.

    ``m`` canaries each in or out by a fair coin, ``r`` guesses (the others
    abstained), ``v`` of them right: an upper bound on ``P(W >= v)`` for any
    (epsilon, delta)-DP algorithm and any guesser (Steinke, Nasr and Jagielski
    2023, Theorem 3.3 and Appendix D; see the module docstring).
    """
    m, r, v = int(m), int(r), int(v)
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if not (epsilon >= 0 and 0 <= delta <= 1):
        raise ValueError(f"need epsilon >= 0 and delta in [0, 1], got {epsilon}, {delta}")
    if v == 0:
        return 1.0
    q = 1.0 / (1.0 + math.exp(-epsilon)) if epsilon < 700 else 1.0
    tail = stats.binom.sf(v - 1, r, q)           # P(Bin(r, q) >= v)
    if delta == 0:
        return float(min(tail, 1.0))
    below = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P(Bin = v - i), i = 1..v
    worst = float(np.max(np.cumsum(below) / np.arange(1, v + 1)))
    return float(min(tail + 2.0 * m * delta * worst, 1.0))


def one_run_epsilon(m, r, v, delta, confidence=0.95):
    """The one-run lower bound on epsilon: the largest epsilon rejected at ``confidence``.

    The supremum of the epsilons whose :func:`one_run_p_value` for ``v`` right
    guesses of ``r`` (``m`` canaries) is below ``1 - confidence``; 0 when even
    epsilon = 0 is not rejected.  The p-value grows with epsilon, so the bound is
    found by bracketing (to 1e-6 in epsilon, rounded down).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    beta = 1.0 - confidence

    def gap(epsilon):
        return one_run_p_value(m, r, v, epsilon, delta) - beta

    if gap(0.0) >= 0:
        return 0.0
    if gap(EPSILON_MAX) < 0:
        return EPSILON_MAX
    root = optimize.brentq(gap, 0.0, EPSILON_MAX, xtol=1e-7)
    # brentq's root may sit on either side: step down until it is rejected
    while root > 0 and gap(root) >= 0:
        root = max(0.0, root - 1e-7)
    return float(math.floor(root * 1e6) / 1e6)
