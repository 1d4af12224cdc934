"""Shared protocol of the utility experiments (the papers' tuning and error metric)."""
import math

import numpy as np

from sparsedp.penalties import L1
from sparsedp.solvers import exact


def _boundary(X, y, datafit, penalty, k, lam_max, tol, iters=40):
    """Smallest lambda (log-bisection) whose exact solution has at most k nonzeros."""
    lo, hi = math.log(lam_max * 1e-6), math.log(lam_max)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        res = exact(X, y, datafit, penalty(math.exp(mid)), tol=tol)
        if np.count_nonzero(res.coef) > k:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)


def lambda_for_support(X, y, datafit, n_nonzero, *, penalty=L1, tol=1e-10):
    """An L1 strength whose exact solution has exactly ``n_nonzero`` nonzeros.

    The geometric middle of the interval of such strengths (found by two
    log-bisections).  Returns (lam, exact_result).
    """
    n = X.shape[0]
    lam_max = float(np.max(np.abs(X.T @ datafit.derivative(np.zeros(n), y))) / n)
    a = _boundary(X, y, datafit, penalty, n_nonzero, lam_max, tol)
    b = _boundary(X, y, datafit, penalty, n_nonzero - 1, lam_max, tol)
    lam = math.sqrt(a * b)
    res = exact(X, y, datafit, penalty(lam), tol=tol)
    if np.count_nonzero(res.coef) != n_nonzero:
        raise RuntimeError(f"no lambda gives exactly {n_nonzero} nonzeros")
    return lam, res


def relative_error(value, optimum):
    """(F(w) - F*) / F*, the papers' metric."""
    return (value - optimum) / optimum


def tune(run, grid, n_runs=5):
    """Best mean over ``n_runs`` seeds of ``run(seed, **params)`` across ``grid``.

    Returns (best_mean, best_std, best_params).
    """
    best = (math.inf, math.nan, None)
    for params in grid:
        vals = np.array([run(seed, **params) for seed in range(n_runs)])
        if vals.mean() < best[0]:
            best = (float(vals.mean()), float(vals.std()), params)
    return best
