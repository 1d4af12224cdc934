"""Shared protocol of the utility experiments (the papers' tuning and error metric)."""
import math

import numpy as np

from sparsedp.penalties import L1
from sparsedp.privacy import calibrate_gaussian, gaussian_epsilon
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


def paper_noise_multiplier(epsilon, delta, steps):
    """The noise multiplier of the DP-CD paper's accounting for ``steps`` Gaussian releases.

    Mangold et al. (ICML 2022), Appendix B: the releases compose to
    ``(alpha, steps alpha / (2 z^2))``-RDP, converted by Mironov's Proposition 3
    (``eps = rdp + log(1/delta) / (alpha - 1)``) at the best real order (Remark B.4),
    which is ``eps = steps / (2 z^2) + sqrt(2 steps log(1/delta)) / z`` (Eq. 18; the
    paper's experiments evaluate it numerically, Remark 3.2).  Solved here for z:
    ``u = 1/z`` is the positive root of ``(steps/2) u^2 + sqrt(2 steps log(1/delta)) u
    - eps``.
    """
    a, b = steps / 2.0, math.sqrt(2.0 * steps * math.log(1.0 / delta))
    u = 2.0 * epsilon / (b + math.sqrt(b * b + 4.0 * a * epsilon))
    z = 1.0 / u
    # check against the definition: the minimum over real orders of the RDP bound
    alpha = 1.0 + z * math.sqrt(2.0 * math.log(1.0 / delta) / steps)
    eps_at = steps * alpha / (2.0 * z * z) + math.log(1.0 / delta) / (alpha - 1.0)
    assert abs(eps_at - epsilon) <= 1e-9 * epsilon, (eps_at, epsilon)
    return z


def epsilon_with_paper_noise(epsilon, delta, steps):
    """The epsilon at which the library's exact calibration gives the paper's noise.

    ``dp_cd(epsilon=epsilon_with_paper_noise(epsilon, delta, TK))`` runs Algorithm 1
    with the noise multiplier the paper's accounting (:func:`paper_noise_multiplier`)
    gives for ``epsilon``: the paper's algorithm, run by our kernel.
    """
    z = paper_noise_multiplier(epsilon, delta, steps)
    eps = gaussian_epsilon(z, steps, delta)
    assert abs(calibrate_gaussian(eps, delta, steps) / z - 1.0) < 1e-9
    return eps
