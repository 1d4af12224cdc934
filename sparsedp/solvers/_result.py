"""The result every solver returns: the private output, and non-private diagnostics apart."""
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

__all__ = ["NonPrivateDiagnostics", "Result", "objective"]

_NOT_PRIVATE = ("non-private diagnostic: computed on the training data without "
                "privacy, not covered by the privacy report")


@dataclass(frozen=True, repr=False)
class NonPrivateDiagnostics:
    """Non-private diagnostic: computed on the training data without privacy,
    not covered by the privacy report.

    What a solver computes, on request (``diagnostics=True`` or ``trace=True``;
    always for the non-private :func:`~sparsedp.solvers.exact`), to judge a fit
    in an experiment.  Every value here depends on the training data and was
    computed without noise: publishing any of it (even the objective alone)
    breaks the (epsilon, delta) guarantee of the ledger.

    Attributes
    ----------
    objective : float
        F(coef) on the training data.
    trace : dict or None
        With ``trace=True``: per-checkpoint arrays, ``"objective"`` and
        ``"passes"`` (DP-CD) or ``"iterations"`` (DP-GCD).
    counters : dict
        Data-dependent counts of the run: ``"moves"`` (DP-CD: coordinate
        updates that changed the iterate), ``"fallbacks"`` and ``"refreshes"``
        (DP-GCD), ``"kkt_violation"`` (exact).  Also readable as
        ``diagnostics["moves"]``.
    """

    objective: float
    trace: Optional[dict] = None
    counters: dict = field(default_factory=dict)

    def __getitem__(self, key):
        if key in ("objective", "trace"):
            return getattr(self, key)
        return self.counters[key]

    def __repr__(self):
        return (f"NonPrivateDiagnostics({_NOT_PRIVATE}; objective={self.objective!r}, "
                f"trace={'None' if self.trace is None else list(self.trace)}, "
                f"counters={self.counters!r})")


@dataclass
class Result:
    """Outcome of a solver: the private output, and (on request) non-private diagnostics.

    Only ``coef``, ``n_iter``, ``privacy`` and ``info`` are covered by the
    privacy report: ``info`` holds public constants and functions of the
    private outputs.  ``diagnostics`` is not.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        The returned model w (the private output).
    n_iter : int
        Epochs (exact solver), coordinate updates (DP-CD) or greedy iterations
        (DP-GCD) performed (public: set by the hyper-parameters, or the
        exact solver's stopping rule).
    privacy : PrivacyLedger or None
        What the fit spent, mechanism by mechanism; None for the non-private
        exact solver.
    info : dict
        Public values and private outputs only: noise multipliers and scales,
        clipping thresholds, step sizes, epsilon0, the selection mechanism, and
        DP-GCD's selected coordinates and released gradients.
    converged : bool or None
        Whether the stopping rule was met (exact solver); None otherwise.
    diagnostics : NonPrivateDiagnostics or None
        None unless asked for (``diagnostics=True`` or ``trace=True``; always
        filled by the exact solver).  Non-private diagnostic: computed on the
        training data without privacy, not covered by the privacy report.
    intercept : float
        The intercept b of the model ``X @ coef + b`` (private output):
        ``intercept_scaling`` times the public intercept column's coefficient
        with ``fit_intercept=True`` (DP-CD, DP-GCD), else 0.
    """

    coef: np.ndarray
    n_iter: int
    privacy: Any = None
    info: dict = field(default_factory=dict)
    converged: Optional[bool] = None
    diagnostics: Optional[NonPrivateDiagnostics] = None
    intercept: float = 0.0


def objective(X, y, coef, datafit, penalty=None):
    """F(coef) = (1/n) sum_i loss(x_i . coef, y_i) + penalty(coef).

    On the training data of a private fit this is a non-private diagnostic: it
    is not covered by the privacy report, and publishing it breaks the guarantee.

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    coef : ndarray of shape (n_features,)
    datafit : Squared or Logistic
    penalty : L1, L2, ElasticNet or None
    """
    from ..penalties import as_penalty
    return datafit.value(X @ coef, y) + as_penalty(penalty).value(coef)
