"""Demo: the ``sparsedp-demo`` command (or ``python -m sparsedp.demo`` outside the source tree).

A private comparison at (epsilon, delta) = (1, 1/n^2) on a synthetic sparse
logistic problem with p >> n (4,000 x 100,000 binary, 5 informative features):
the exact solver gives F*, then DP-CD (one pass) and DP-GCD (5 greedy
iterations) fit the model privately.  The smoothness constants are public
(binary features: ``M_j <= 1/4``) and every hyper-parameter, lambda included,
is fixed in advance from the problem's public description
(:func:`public_lambda`): nothing is tuned on the data.

What the fits release is their ``coef`` and privacy report.  F, F*, the
relative errors and the counts of right / wrong nonzeros (against the exact
solution) are computed on the training data without privacy: the demo prints
them, labelled "non-private diagnostic", to show how good the private models
are; publishing them would break the guarantee.

It shows the regime DP-GCD was made for: with p >> n, DP-CD's noise reaches
every coordinate it visits, so at epsilon = 1 it cannot improve on w = 0 (and
leaves thousands of wrong nonzeros), while DP-GCD spends its budget on a few
greedily chosen coordinates and recovers the informative ones.
"""
import math
import time

import numpy as np
import scipy.sparse as sp

from sparsedp.datafits import Logistic
from sparsedp.penalties import L1
from sparsedp.solvers import dp_cd, dp_gcd, exact


DENSITY = 0.002  # of the uninformative binary features: part of the public design


def make_problem(n=4000, p=100_000, n_informative=5, seed=0):
    """Binary CSC features (density ``DENSITY``), a few denser informative ones, +-1 labels."""
    rng = np.random.default_rng(seed)
    noise = sp.random(n, p - n_informative, density=DENSITY, format="csc", rng=rng,
                      data_rvs=np.ones)
    informative = sp.random(n, n_informative, density=0.3, format="csc", rng=rng,
                            data_rvs=np.ones)
    X = sp.hstack([informative, noise]).tocsc()
    w = np.r_[rng.choice([-3.0, 3.0], n_informative), np.zeros(p - n_informative)]
    z = X @ w + 0.3 * rng.normal(size=n)
    return X, np.where(z > np.median(z), 1.0, -1.0)


def public_lambda(n, p, density=DENSITY, alpha=0.05):
    """The L1 strength of the demo, from the problem's public description only.

    Public: n records, p binary features (``x_ij`` in {0, 1}) of which the
    uninformative ones have density ``density``, balanced +-1 labels, logistic
    loss.  At ``w = 0`` the logistic derivative is ``-y_i / 2``, so coordinate
    ``j`` of the gradient of F is ``-(1 / 2n) S_j`` with ``S_j = sum_i y_i x_ij``.
    For a feature independent of the labels, ``S_j`` is a sum of n (nearly)
    independent terms in [-1, 1] of mean 0 and variance ``density``; Bernstein's
    inequality and a union bound over the p features give ``|S_j| <= t`` for all
    of them with probability at least ``1 - alpha``, where ``t`` solves
    ``t^2 = 2 L (n density + t / 3)``, ``L = log(2 p / alpha)``.  With
    ``lambda = t / (2n)`` (0.0027 for the demo's 4,000 x 100,000 at density
    0.002) no uninformative feature has a gradient above lambda at ``w = 0``
    (the L1 penalty keeps it at zero there) with that probability, while a
    feature that explains the labels has a gradient far above it.  The choice
    reads no record: the data set's own gradients are never looked at.
    """
    L = math.log(2.0 * p / alpha)
    t = L / 3.0 + math.sqrt((L / 3.0) ** 2 + 2.0 * L * n * density)
    return t / (2.0 * n)


def main():
    import sys
    print("sparsedp-demo is deprecated and will be removed: use `sparsedp compare` "
          "(sparsedp compare --help)", file=sys.stderr)
    X, y = make_problem()
    n, p = X.shape
    datafit = Logistic()
    lam = public_lambda(n, p)  # a priori: no record is read (see public_lambda)
    penalty = L1(lam)
    epsilon, delta = 1.0, 1.0 / n ** 2
    smoothness = np.full(p, datafit.beta)  # public: |X_ij| <= 1
    print(f"Logistic + L1 on {n} x {p} sparse binary (nnz={X.nnz}), lambda={lam:.3g} "
          f"(fixed a priori), (epsilon, delta) = ({epsilon:g}, {delta:.3g})")
    print("F, F*, relative errors and right / wrong nonzeros (against the exact solution) "
          "are non-private diagnostics:\ncomputed on the training data without privacy, "
          "not covered by the privacy report.")

    start = time.perf_counter()
    ref = exact(X, y, datafit, penalty, tol=1e-8)
    f_star = ref.diagnostics.objective
    support = set(np.flatnonzero(ref.coef))
    print(f"{'exact (not private)':<22} {time.perf_counter() - start:6.2f} s  "
          f"non-private diagnostic: F* = {f_star:.6f}, {len(support)} nonzeros")
    print(f"{'w = 0':<22} {'':8}  non-private diagnostic: F  = {np.log(2):.6f}, "
          f"relative error {(np.log(2) - f_star) / f_star:.4f}")

    def report(name, res, took):
        found = set(np.flatnonzero(res.coef))
        d = res.diagnostics
        rel = (d.objective - f_star) / f_star
        print(f"{name:<22} {took:6.2f} s  private output: {len(found)} nonzeros, spent "
              f"({res.privacy.epsilon:.4f}, {res.privacy.delta:.3g})-DP\n"
              f"{'':<22} {'':8}  non-private diagnostic: F  = {d.objective:.6f}, "
              f"relative error {rel:.4f}, nonzeros {len(found & support)} right / "
              f"{len(found - support)} wrong")

    for name, fit in (
            ("DP-CD (1 pass)", lambda s: dp_cd(
                X, y, datafit, penalty, epsilon=epsilon, delta=delta, passes=1,
                clip=1.0, step_size=0.1, smoothness=smoothness, random_state=s,
                diagnostics=True)),
            ("DP-GCD (5 iterations)", lambda s: dp_gcd(
                X, y, datafit, penalty, epsilon=epsilon, delta=delta, n_iter=5,
                clip=100.0, step_size=3.0, smoothness=smoothness, random_state=s,
                diagnostics=True))):
        start = time.perf_counter()
        res = fit(0)
        report(name, res, time.perf_counter() - start)
    print("p >> n: DP-CD's noise reaches every coordinate it visits; DP-GCD spends the "
          "budget on a few greedy ones (docs/dp_gcd.rst).")


if __name__ == "__main__":
    main()
