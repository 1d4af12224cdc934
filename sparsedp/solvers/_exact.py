"""The exact (non-private) solver: the reference optimum F* of every experiment."""
import numpy as np

from .._kernels._cd_fast import cd_epochs, kkt_violation
from .._kernels import kernel_id
from .._validation import check_integer, check_real
from ._base import check_coef_init, check_problem
from ._result import NonPrivateDiagnostics, Result

__all__ = ["exact"]


def exact(X, y, datafit, penalty=None, *, tol=1e-10, max_epochs=10_000,
          check_every=5, coef_init=None, callback=None):
    """Minimise F(w) = (1/n) sum_i loss(x_i . w, y_i) + penalty(w) accurately.

    Cyclic proximal coordinate descent with step ``1 / M_j`` per coordinate
    (exact coordinate minimisation for the squared loss), stopped when the
    KKT violation ``max_j dist(-grad_j F, d penalty(w_j))`` falls below ``tol``.

    Parameters
    ----------
    X : sparse matrix/array or ndarray of shape (n_samples, n_features)
        Converted once to canonical CSC (float64, sorted indices).
    y : array-like of shape (n_samples,)
    datafit : Squared or Logistic
    penalty : L1, L2, ElasticNet or None
    tol : float, default=1e-10
        Stopping threshold on the KKT violation (gradient scale).
    max_epochs : int, default=10_000
    check_every : int, default=5
        Epochs between two KKT checks (a check costs one epoch).
    coef_init : array of shape (n_features,), optional
        The starting point (default 0), as in the private solvers.
    callback : callable, optional
        Called after each KKT check as ``callback(epochs, violation)`` (progress
        bars; the values are computed on the data, non-private).

    Returns
    -------
    Result
        ``coef``, ``n_iter`` (epochs), ``converged`` and ``diagnostics`` (always
        filled: a :class:`~sparsedp.solvers.NonPrivateDiagnostics` with
        ``objective`` = F(coef) and ``counters["kkt_violation"]``); ``privacy``
        is None and nothing is private: every value is computed on the data.
    """
    problem = check_problem(X, y, datafit, penalty)
    X, y, datafit, penalty = problem.X, problem.y, problem.datafit, problem.penalty
    tol = check_real(tol, "tol")
    max_epochs = check_integer(max_epochs, "max_epochs")
    check_every = check_integer(check_every, "check_every")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")
    n, p = X.shape
    lipschitz = datafit.smoothness(X)
    init = check_coef_init(coef_init, p)
    w = np.zeros(p) if init is None else init
    margin = X @ w
    args = (kernel_id(datafit), X.data, X.indices, X.indptr, y)
    epochs, violation = 0, np.inf
    while epochs < max_epochs:
        todo = min(check_every, max_epochs - epochs)
        cd_epochs(*args, w, margin, lipschitz, penalty.l1, penalty.l2, todo)
        epochs += todo
        margin = X @ w  # refresh: no drift from incremental updates
        violation = kkt_violation(*args, w, margin, penalty.l1, penalty.l2)
        if callback is not None:
            callback(epochs, violation)
        if violation <= tol:
            break
    if not np.all(np.isfinite(w)):
        raise ValueError("exact: the iterates overflowed (X, y or the penalty is "
                         "badly scaled); rescale the data")
    value = datafit.value(margin, y) + penalty.value(w)
    return Result(coef=w, n_iter=epochs, converged=bool(violation <= tol),
                  diagnostics=NonPrivateDiagnostics(
                      objective=value, counters={"kkt_violation": violation}))
