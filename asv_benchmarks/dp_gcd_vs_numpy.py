"""A whole DP-GCD fit against numpy: ``python asv_benchmarks/dp_gcd_vs_numpy.py``.

The problem: real dorothea (train, 800 x 100,000, ``sparsedp.datasets.load_dorothea``),
logistic loss + L1 with lambda = 0.00996, rule GS-r, report-noisy-max (Laplace
noise on the scores), epsilon = 1, delta = 1 / n^2, clip 1, 1,000 iterations,
public smoothness constants M_j = 1/4 (the bound for |X_ij| <= 1).

``sparsedp.solvers.dp_gcd`` is timed as a whole (validation, calibration, setup,
iterations): a *cold* call, after clearing every calibration cache (what a first
call pays), and a *warm* call, repeated with the same budget.

The numpy side is the same algorithm written directly, per iteration: the clipped
full gradient ``g_j = (1/n) sum_i clip(X_ij loss'(z_i, y_i), C_j)`` (over the CSC
entries), ``p`` Laplace draws on the GS-r scores ``sqrt(M_j) |prox(w_j - g_j / M_j) -
w_j|``, the argmax, the noisy coordinate gradient, the proximal step and the update
of the margins over the column.  Its setup is timed with it; its calibration is not
(it takes dp_gcd's ``epsilon0``, computed beforehand), which can only favour numpy.
A second numpy variant computes the gradient as ``X.T @ loss'(z) / n`` without
clipping (less work than the algorithm needs: a bound on numpy's speed).

Every figure is a median over rounds, the sides interleaved in each round, in one
process; the ratios are numpy time / dp_gcd time.  Options: ``--rounds R``
(default 5), ``--n-iter T`` (default 1000), ``--clip C`` (default 1).
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

from sparsedp.datafits import Logistic
from sparsedp.datasets import load_dorothea
from sparsedp.penalties import L1
from sparsedp.solvers import calibrate_dp_gcd, dp_gcd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmarks.common import clear_caches  # noqa: E402

LAMBDA = 0.00996
EPSILON = 1.0


def fit_sparsedp(X, y, M, n_iter, clip, seed):
    res = dp_gcd(X, y, Logistic(), L1(LAMBDA), epsilon=EPSILON, delta=1.0 / X.shape[0] ** 2,
                 n_iter=n_iter, clip=clip, rule="gs-r", selection="laplace", smoothness=M,
                 random_state=seed)
    return res.coef


def fit_numpy(X, y, M, n_iter, clip, epsilon0, seed, clipped=True):
    """DP-GCD (GS-r, L1, report-noisy-max, Laplace gradient release) in numpy.

    ``X`` a CSC matrix, ``M`` the public smoothness constants (all > 0),
    ``epsilon0`` the per-step budget of each of the 2 ``n_iter`` mechanisms.
    ``clipped=False`` computes the gradient as ``X.T @ loss'(z) / n`` instead.
    """
    rng = np.random.default_rng(seed)
    n, p = X.shape
    data, indices, indptr = X.data, X.indices, X.indptr
    C = np.sqrt(M / M.sum()) * clip                   # per-coordinate clipping
    entry_C = np.repeat(C, np.diff(indptr))           # C_j of every stored entry
    minus_entry_C = -entry_C
    # X.T as CSR over X's own index arrays: its data, overwritten with the clipped
    # terms X_ij loss'_i, times a vector of ones sums each column's terms
    terms_T = sp.csr_array((np.empty_like(data), indices, indptr), shape=(p, n))
    terms, ones = terms_T.data, np.ones(n)
    sqrt_M, steps = np.sqrt(M), 1.0 / M
    score_sensitivity = 2.0 * clip / (n * math.sqrt(M.sum()))
    b_score = 2.0 * score_sensitivity / epsilon0       # report-noisy-max scale
    b_grad = 2.0 * C / (n * epsilon0)                 # Laplace scale of g_j's release
    w, z = np.zeros(p), np.zeros(n)
    for _ in range(n_iter):
        d = -y / (1.0 + np.exp(y * z))                # logistic loss'(z_i, y_i)
        if clipped:
            np.multiply(data, d[indices], out=terms)
            np.minimum(terms, entry_C, out=terms)
            np.maximum(terms, minus_entry_C, out=terms)
            g = terms_T @ ones / n
        else:
            g = X.T @ d / n
        u = w - g * steps                             # GS-r: prox of the L1 step
        prox = np.sign(u) * np.maximum(np.abs(u) - LAMBDA * steps, 0.0)
        scores = sqrt_M * np.abs(prox - w)
        j = int(np.argmax(scores + rng.laplace(0.0, b_score, p)))
        noisy = g[j] + rng.laplace(0.0, b_grad[j])
        u_j = w[j] - steps[j] * noisy
        new = math.copysign(max(abs(u_j) - steps[j] * LAMBDA, 0.0), u_j)
        lo, hi = indptr[j], indptr[j + 1]
        z[indices[lo:hi]] += (new - w[j]) * data[lo:hi]
        w[j] = new
    return w


def objective(X, y, w):
    z = X @ w
    return float(np.mean(np.logaddexp(0.0, -y * z)) + LAMBDA * np.abs(w).sum())


def timed(fun):
    t0 = time.perf_counter()
    out = fun()
    return time.perf_counter() - t0, out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n-iter", type=int, default=1000)
    parser.add_argument("--clip", type=float, default=1.0)
    args = parser.parse_args(argv)
    from sparsedp._progress import set_stage
    set_stage("loading dorothea")
    X, y = load_dorothea()
    n, p = X.shape
    set_stage("the process's first dp_gcd call")
    M = np.full(p, 0.25)  # public: |X_ij| <= 1, beta = 1/4
    T, clip = args.n_iter, args.clip

    first, _ = timed(lambda: fit_sparsedp(X, y, M, T, clip, 0))  # the process's first call
    epsilon0 = calibrate_dp_gcd(EPSILON, 1.0 / n ** 2, T, "laplace")
    times = {"cold": [], "warm": [], "numpy": [], "numpy_matvec": []}
    objectives = {"sparsedp": [], "numpy": []}
    for r in range(args.rounds):
        seed = r + 1
        set_stage(f"round {r + 1} of {args.rounds}: dp_gcd cold, warm, then numpy "
                  f"({T} iterations each)")
        clear_caches()
        t, w = timed(lambda: fit_sparsedp(X, y, M, T, clip, seed))
        times["cold"].append(t)
        objectives["sparsedp"].append(objective(X, y, w))
        times["warm"].append(timed(lambda: fit_sparsedp(X, y, M, T, clip, seed))[0])
        t, w = timed(lambda: fit_numpy(X, y, M, T, clip, epsilon0, seed))
        times["numpy"].append(t)
        objectives["numpy"].append(objective(X, y, w))
        times["numpy_matvec"].append(
            timed(lambda: fit_numpy(X, y, M, T, clip, epsilon0, seed, clipped=False))[0])
    cal = []
    set_stage("calibrate_dp_gcd, cold")
    for _ in range(args.rounds):
        clear_caches()
        cal.append(timed(lambda: calibrate_dp_gcd(EPSILON, 1.0 / n ** 2, T, "laplace"))[0])

    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"dorothea {n} x {p} (nnz {X.nnz}), logistic + L1 (lambda {LAMBDA}), GS-r, "
          f"report-noisy-max, epsilon {EPSILON:g}, delta 1/n^2, clip {clip:g}, "
          f"{T} iterations, median of {args.rounds} rounds")
    print(f"sparsedp dp_gcd, first call of the process     {1e3 * first:9.1f} ms")
    print(f"sparsedp dp_gcd, cold (calibration caches cleared) {1e3 * med['cold']:5.1f} ms"
          f"   of which calibrate_dp_gcd alone {1e3 * np.median(cal):.1f} ms")
    print(f"sparsedp dp_gcd, warm (repeated call)          {1e3 * med['warm']:9.1f} ms")
    print(f"numpy, clipped gradient (the same algorithm)   {1e3 * med['numpy']:9.1f} ms"
          f"   ({1e3 * med['numpy'] / T:.2f} ms/iteration, calibration not counted)")
    print(f"numpy, X.T @ v gradient without clipping       {1e3 * med['numpy_matvec']:9.1f} ms"
          f"   ({1e3 * med['numpy_matvec'] / T:.2f} ms/iteration)")
    for key, label in (("numpy", "numpy (clipped)"), ("numpy_matvec", "numpy (X.T @ v)")):
        for side in ("cold", "warm"):
            r = np.array(times[key]) / np.array(times[side])
            print(f"ratio {label} / dp_gcd {side}: {np.median(r):6.1f}x "
                  f"(rounds {r.min():.1f}-{r.max():.1f})")
    print(f"objective F(w) after the fit, median: dp_gcd {np.median(objectives['sparsedp']):.5f}, "
          f"numpy {np.median(objectives['numpy']):.5f} (F(0) = {math.log(2):.5f})")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("dp_gcd_vs_numpy.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
