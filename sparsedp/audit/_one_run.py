"""One-run auditing: canaries inserted by coin flips, guessed from a single fit.

Steinke, Nasr and Jagielski, "Privacy auditing with one (1) training run"
(NeurIPS 2023).  ``m`` canaries are each put in the training data or left out by
an independent fair coin; the fit runs once; a guesser scores every canary from
the output and says "in" for the ``k`` highest scores and "out" for the ``k``
lowest (abstaining on the rest).  An (epsilon, delta)-DP fit cannot make the
guesser much better than epsilon-randomised response (:func:`sparsedp.audit.
one_run_epsilon`), so the number of right guesses bounds epsilon from below,
from one run instead of thousands.

The canaries here are white-box and built for sparse linear models: canary ``i``
is a row with a single nonzero, in a column of its own appended to X (a feature
no other row has), with a saturating label or value, so its clipped term moves
that one coefficient and nothing else.  The two datasets of a coin flip differ
in that one row:

* ``relation="add-remove"``: present or empty (an empty row contributes no
  term): neighbours under add/remove with n public (DP-SGD, DP-SCD), and under
  replace-one too;
* ``relation="replace-one"``: the row with its sign flipped (label for the
  squared loss, value for the logistic loss): neighbours under replace-one only
  (DP-CD, DP-GCD, fixed-size batches), and twice the signal.

The score is the canary's coefficient (its term pushes it up when "in").  The
bound is only as strong as the canary's own coordinate is informative: a solver
that spreads its budget over p coordinates (DP-CD updates each ``passes``
times) shows a canary a ``1 / sqrt(p)`` share of its privacy loss, so one run
bounds it loosely; DP-SGD with large batches, much more tightly.
"""
import dataclasses
import math
import time

import numpy as np
import scipy.sparse as sp

from .._validation import check_integer, check_option, check_real
from ._audit import _run_trials, seed_sequence
from ._bounds import one_run_epsilon
from ._pairs import SATURATE

__all__ = ["OneRunReport", "canary_dataset", "one_run_audit"]


@dataclasses.dataclass
class OneRunReport:
    """The one-run lower bound on epsilon, beside the claim.

    Attributes
    ----------
    epsilon_lower_bound : float
        Holds with probability at least ``confidence`` (over the coins and the fit).
    claimed_epsilon, delta, confidence : float
    n_canaries : int
        m.
    guesses, correct : int
        r (the canaries guessed, half "in" and half "out") and how many were right.
    seconds : float
    """
    epsilon_lower_bound: float
    claimed_epsilon: float
    delta: float
    confidence: float
    n_canaries: int
    guesses: int
    correct: int
    seconds: float = 0.0

    @property
    def violated(self):
        return self.claimed_epsilon is not None and self.epsilon_lower_bound > self.claimed_epsilon

    def __str__(self):
        claim = ("" if self.claimed_epsilon is None
                 else f", claimed {self.claimed_epsilon:.4g}: "
                 + ("VIOLATED" if self.violated else "consistent"))
        return (f"one-run audit: epsilon >= {self.epsilon_lower_bound:.4g} at delta = "
                f"{self.delta:g} ({100 * self.confidence:g}% confidence){claim}; "
                f"{self.correct} of {self.guesses} guesses right, {self.n_canaries} canaries")


RELATIONS = ("add-remove", "replace-one")


def canary_dataset(X, y, included, *, loss="squared", relation="add-remove"):
    """``(X_aug, y_aug)``: ``X`` with one column and one row per canary appended.

    Canary ``i`` is row ``n + i``, its nonzero in column ``p + i``: squared
    loss, value 1 and label :data:`SATURATE`; logistic, value ``SATURATE`` and
    label 1.  Where ``included[i]`` is False the row is empty (add-remove; its
    label kept: an empty row contributes no term) or has its sign flipped
    (replace-one: label ``-SATURATE``, or value ``-SATURATE``).  Returns CSR.
    """
    check_option(loss, "loss", ("squared", "logistic"))
    check_option(relation, "relation", RELATIONS)
    X = sp.csr_matrix(X)
    n, p = X.shape
    included = np.asarray(included, dtype=bool)
    m = included.size
    sign = np.where(included, 1.0, -1.0)
    which = np.flatnonzero(included) if relation == "add-remove" else np.arange(m)
    if loss == "squared":
        values, labels = np.ones(which.size), SATURATE * (
            np.ones(m) if relation == "add-remove" else sign)
    else:
        values = SATURATE * (np.ones(which.size) if relation == "add-remove" else sign)
        labels = np.ones(m)
    canaries = sp.csr_matrix((values, (which, p + which)), shape=(m, p + m))
    X_aug = sp.vstack([sp.hstack([X, sp.csr_matrix((n, m))]), canaries], format="csr")
    y_aug = np.concatenate([np.asarray(y, dtype=np.float64), labels])
    return X_aug, y_aug


def one_run_audit(fit, X, y, *, epsilon, delta, n_canaries=1000, guesses=None,
                  loss="squared", relation="add-remove", confidence=0.95, random_state=None):
    """Audit a whole fit from one run with canaries (Steinke, Nasr and Jagielski 2023).

    Parameters
    ----------
    fit : callable
        ``fit((X, y), seed)`` runs the fit once and returns its coefficients
        (an array, a ``Result`` or a fitted estimator), one per column of X, as
        :func:`sparsedp.audit.audit`'s mechanisms.
    X, y : the training data without canaries
        The canaries are appended (:func:`canary_dataset`).
    epsilon, delta : float
        The fit's claim (what it was given), for its whole run.
    n_canaries : int, default=1000
        m.
    guesses : int, optional
        r, the canaries guessed (half "in": the highest scores, half "out": the
        lowest); default ``m / 5``.  Fix it in advance: choosing it after seeing
        the scores voids the bound.
    loss : {"squared", "logistic"}
        The fit's datafit (the canaries' labels).
    relation : {"add-remove", "replace-one"}, default="add-remove"
        A left-out canary is an empty row (valid under both relations) or the
        canary with its sign flipped (replace-one only: twice the signal).
    confidence : float, default=0.95
    random_state : None, int, SeedSequence or Generator
        The coins and the fit's seed.

    Returns
    -------
    OneRunReport
    """
    start = time.perf_counter()
    m = check_integer(n_canaries, "n_canaries", low=2)
    r = (max(2, 2 * (m // 10)) if guesses is None
         else check_integer(guesses, "guesses", low=2, high=m))
    epsilon = check_real(epsilon, "epsilon", include_low=True, allow_inf=True)
    delta = check_real(delta, "delta", high=1.0, include_low=True)
    confidence = check_real(confidence, "confidence", high=1.0)
    coins, run = seed_sequence(random_state).spawn(2)
    included = np.random.default_rng(coins).random(m) < 0.5
    n, p = np.shape(X)
    data = canary_dataset(X, y, included, loss=loss, relation=relation)
    coef = _run_trials(fit, data, [run])[0]
    if coef.shape != (p + m,):
        raise ValueError(f"fit must return one coefficient per column of the data with "
                         f"canaries ({p + m}), got shape {coef.shape}")
    # the canary's term pushes its coefficient up (squared: label > 0; logistic:
    # value and label > 0), so a high coefficient says "in"
    scores = coef[p:]
    order = np.argsort(scores, kind="stable")
    k_in, k_out = r - r // 2, r // 2
    right = int(np.count_nonzero(included[order[m - k_in:]])
                + np.count_nonzero(~included[order[:k_out]]))
    bound = one_run_epsilon(m, r, right, delta, confidence)
    return OneRunReport(bound, epsilon, delta, confidence, m, r, right,
                        time.perf_counter() - start)
