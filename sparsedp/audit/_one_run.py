"""One-run auditing: canaries inserted by coin flips, guessed from a single fit.

Steinke, Nasr and Jagielski, "Privacy auditing with one (1) training run"
(NeurIPS 2023).  ``m`` canaries are each put in the training data or left out by
an independent fair coin; the fit runs once; a guesser scores every canary from
the output and says "in" for the ``k`` highest scores and "out" for the ``k``
lowest (abstaining on the rest).  An (epsilon, delta)-DP fit cannot make the
guesser much better than epsilon-randomised response (:func:`sparsedp.audit.
one_run_epsilon`), so the number of right guesses bounds epsilon from below,
from one run instead of thousands.

The canaries are white-box, built for sparse linear models: rows over columns
appended to X (features no other row has), with saturating labels or values, so
that each clipped term is at its clip.  Two kinds:

* ``canaries="column"``: canary ``i`` has a single nonzero, in a column of its
  own; its score is that coefficient.  Exact for a solver whose every step can
  touch every coefficient (DP-SGD: a canary's coordinate holds its whole signal);
* ``canaries="dense"``: every canary has a nonzero in each of ``canary_features``
  shared columns, with public random signs ``s_i`` (drawn independently of the
  coins); its score is ``s_i . coef`` over those columns.  For a solver that
  spreads its budget over its coordinates (DP-CD updates each one ``passes``
  times, a ``1 / sqrt(p)`` share of its privacy loss), the score adds up the
  canary's signal over every coordinate it touches; the other canaries' signs are
  nearly orthogonal to it and add noise of order ``sqrt(m / canary_features)``.

The two datasets of a coin flip differ in that one row:

* ``relation="add-remove"``: present or empty (an empty row contributes no
  term): neighbours under add/remove with n public (DP-SGD, DP-SCD), and under
  replace-one too;
* ``relation="replace-one"``: the row with its sign flipped (labels for the
  squared loss, values for the logistic loss): neighbours under replace-one only
  (DP-CD, DP-GCD, fixed-size batches), and twice the signal.
"""
import dataclasses
import time

import numpy as np
import scipy.sparse as sp

from .._validation import check_integer, check_option, check_real
from ._audit import Verdict, _run_trials, seed_sequence
from ._bounds import one_run_epsilon
from ._pairs import SATURATE

__all__ = ["OneRunReport", "canary_dataset", "one_run_audit"]

RELATIONS = ("add-remove", "replace-one")
KINDS = ("column", "dense")


@dataclasses.dataclass
class OneRunReport(Verdict):
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
    canaries : str
        Their kind ("column" or "dense").
    seconds : float
    """
    epsilon_lower_bound: float
    claimed_epsilon: float
    delta: float
    confidence: float
    n_canaries: int
    guesses: int
    correct: int
    canaries: str = "column"
    seconds: float = 0.0

    def __str__(self):
        return (f"one-run audit: epsilon >= {self.epsilon_lower_bound:.4g} at delta = "
                f"{self.delta:g} ({100 * self.confidence:g}% confidence){self.verdict()}; "
                f"{self.correct} of {self.guesses} guesses right, {self.n_canaries} "
                f"{self.canaries} canaries")


def canary_signs(n_canaries, canary_features, random_state):
    """The dense canaries' public signs, shape ``(n_canaries, canary_features)``."""
    rng = np.random.default_rng(random_state)
    return np.where(rng.random((n_canaries, canary_features)) < 0.5, -1.0, 1.0)


def canary_dataset(X, y, included, *, loss="squared", relation="add-remove", signs=None):
    """``(X_aug, y_aug)``: ``X`` with the canaries' columns and rows appended.

    Canary ``i`` is row ``n + i``.  Without ``signs``, one column each: its nonzero
    in column ``p + i``; with ``signs`` (shape ``(m, k)``, entries +-1) dense: its
    nonzeros ``signs[i]`` in the ``k`` columns ``p .. p + k - 1``.  Squared loss:
    values as they are, label :data:`SATURATE`; logistic: values times
    ``SATURATE``, label 1.  Where ``included[i]`` is False the row is empty
    (add-remove; its label kept: an empty row contributes no term) or has its sign
    flipped (replace-one).  Returns CSR.
    """
    check_option(loss, "loss", ("squared", "logistic"))
    check_option(relation, "relation", RELATIONS)
    X = sp.csr_matrix(X)
    n, p = X.shape
    included = np.asarray(included, dtype=bool)
    m = included.size
    pattern = sp.identity(m, format="csr") if signs is None else sp.csr_matrix(signs)
    if pattern.shape[0] != m:
        raise ValueError(f"signs must have one row per canary ({m}), got {pattern.shape[0]}")
    sign = np.where(included, 1.0, -1.0)
    if relation == "add-remove":
        pattern = sp.diags(included.astype(np.float64)) @ pattern
        flip = np.ones(m)
    else:
        flip = sign
    if loss == "squared":
        rows, labels = pattern, SATURATE * flip
    else:
        rows, labels = sp.diags(SATURATE * flip) @ pattern, np.ones(m)
    k = pattern.shape[1]
    X_aug = sp.vstack([sp.hstack([X, sp.csr_matrix((n, k))]),
                       sp.hstack([sp.csr_matrix((m, p)), rows])], format="csr")
    X_aug.eliminate_zeros()  # a left-out canary's row is empty, not stored zeros
    y_aug = np.concatenate([np.asarray(y, dtype=np.float64), labels])
    return X_aug, y_aug


def one_run_audit(fit, X, y, *, epsilon, delta, n_canaries=1000, guesses=None,
                  loss="squared", relation="add-remove", canaries="column",
                  canary_features=None, confidence=0.95, random_state=None):
    """Audit a whole fit from one run with canaries (Steinke, Nasr and Jagielski 2023).

    Parameters
    ----------
    fit : callable
        ``fit((X, y), seed)`` runs the fit once and returns its coefficients
        (an array, a ``Result`` or a fitted estimator; an intercept is not
        scored), one per column of X, as :func:`sparsedp.audit.audit`'s mechanisms.
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
    canaries : {"column", "dense"}, default="column"
        One column a canary, or ``canary_features`` shared columns with random
        signs (module docstring): "dense" for coordinate methods.
    canary_features : int, optional
        The dense canaries' columns (default ``m``).
    confidence : float, default=0.95
    random_state : None, int, SeedSequence or Generator
        The coins, the dense canaries' signs and the fit's seed.

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
    check_option(canaries, "canaries", KINDS)
    k = m if canary_features is None else check_integer(canary_features, "canary_features")
    coins, signs_seed, run = seed_sequence(random_state).spawn(3)
    included = np.random.default_rng(coins).random(m) < 0.5
    signs = canary_signs(m, k, signs_seed) if canaries == "dense" else None
    n, p = np.shape(X)
    data = canary_dataset(X, y, included, loss=loss, relation=relation, signs=signs)
    coef = _run_trials(fit, data, [run], intercept=False)[0]
    width = m if signs is None else k
    if coef.shape != (p + width,):
        raise ValueError(f"fit must return one coefficient per column of the data with "
                         f"canaries ({p + width}), got shape {coef.shape}")
    # a canary's terms push its coefficients along its signs (squared: label > 0;
    # logistic: value and label > 0), so a high score says "in"
    scores = coef[p:] if signs is None else signs @ coef[p:]
    order = np.argsort(scores, kind="stable")
    k_in, k_out = r - r // 2, r // 2
    right = int(np.count_nonzero(included[order[m - k_in:]])
                + np.count_nonzero(~included[order[:k_out]]))
    bound = one_run_epsilon(m, r, right, delta, confidence)
    return OneRunReport(bound, epsilon, delta, confidence, m, r, right, canaries,
                        time.perf_counter() - start)
