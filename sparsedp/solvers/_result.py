"""The result every solver returns."""
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

__all__ = ["Result", "objective"]


@dataclass
class Result:
    """Outcome of a solver.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        The returned model w.
    objective : float
        F(coef) = (1/n) sum_i loss(x_i . coef, y_i) + penalty(coef).
    n_iter : int
        Epochs (exact solver), coordinate updates (DP-CD) or greedy iterations
        (DP-GCD) performed.
    privacy : PrivacyLedger or None
        What the fit spent, mechanism by mechanism; None for the non-private
        exact solver.
    trace : dict or None
        With ``trace=True``: per-checkpoint arrays (e.g. ``"passes"`` and
        ``"objective"``) for plots.
    converged : bool or None
        Whether the stopping rule was met (exact solver); None otherwise.
    info : dict
        Solver-specific diagnostics (e.g. the final KKT violation).
    """

    coef: np.ndarray
    objective: float
    n_iter: int
    privacy: Any = None
    trace: Optional[dict] = None
    converged: Optional[bool] = None
    info: dict = field(default_factory=dict)


def objective(X, y, coef, datafit, penalty=None):
    """F(coef) = (1/n) sum_i loss(x_i . coef, y_i) + penalty(coef).

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
