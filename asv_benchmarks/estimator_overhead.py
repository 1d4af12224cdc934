"""Estimator overhead on dorothea: the default fits vs the functional call they make.

Run ``python asv_benchmarks/estimator_overhead.py [rounds]`` (default 15).  Real
dorothea (800 x 100,000, CSC, int32 indices; ``SPARSEDP_DATA`` or
``../shared/data``), the getting-started fits: ``DPLogisticRegression(penalty,
alpha=1e-3, epsilon=1, smoothness=np.full(p, 0.25), random_state=r)`` with

* ``penalty="l1"``, ``solver="auto"`` (DP-GCD, 3 iterations: the default L1 fit);
* ``penalty="l1"``, ``solver="cd"`` (DP-CD, 2 passes);
* ``penalty="l2"``, ``solver="auto"`` (DP-SGD, 20 passes; the estimator appends
  the intercept column, DP-SGD has no native one).

Each estimator fit and the functional call it makes (``est.solver_params_``
reproduces it: the same coefficients, checked) are timed alternately in the
same process, ``rounds`` times each, with a new seed each round.  The
functional call gets X as the caller has it (for DP-SGD the design ``[X, 1]``
built beforehand: its copy is the estimator's overhead).  Printed: the medians,
the median of the paired differences (estimator minus functional, the
overhead), and that overhead relative to the functional call's median.
"""
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

from sparsedp.datasets import load_dorothea
from sparsedp.linear_model import DPLogisticRegression
from sparsedp.solvers import dp_cd, dp_gcd, dp_scd, dp_sgd

FUNCTIONS = {"cd": dp_cd, "gcd": dp_gcd, "sgd": dp_sgd, "scd": dp_scd}
CASES = {
    "L1, solver='auto' (DP-GCD)": dict(penalty="l1"),
    "L1, solver='cd' (DP-CD)": dict(penalty="l1", solver="cd"),
    "L2, solver='auto' (DP-SGD)": dict(penalty="l2"),
}


def functional_call(est, X, y):
    """The solver call ``est.fit(X, y)`` makes (binary y), as a closure."""
    function = FUNCTIONS[est.solver_]
    kw = dict(est.solver_params_)
    design = X
    if not kw.get("fit_intercept", False) and est.fit_intercept:  # appended by the estimator
        design = sp.hstack([X, np.full((X.shape[0], 1), est.intercept_scaling)], format="csc")
    target = np.where(y == est.classes_[1], 1.0, -1.0)

    def call(seed):
        return function(design, target, est._datafit(), est._penalty(), epsilon=est.epsilon,
                        delta=est.delta_, random_state=seed, **kw)
    return call


def main(rounds=15):
    X, y = load_dorothea()
    n, p = X.shape
    print(f"dorothea {X.shape}, nnz {X.nnz}, {X.format} {X.indices.dtype}, logistic, "
          f"epsilon 1, public smoothness; {rounds} rounds, alternating")
    for name, case in CASES.items():
        kw = dict(alpha=1e-3, epsilon=1.0, smoothness=np.full(p, 0.25), **case)
        est = DPLogisticRegression(random_state=0, **kw).fit(X, y)
        call = functional_call(est, X, y)
        res = call(0)
        assert np.array_equal(np.ravel(est.coef_), res.coef[:p])
        est_times, func_times = [], []
        for r in range(1, rounds + 1):
            t = time.perf_counter()
            DPLogisticRegression(random_state=r, **kw).fit(X, y)
            est_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            call(r)
            func_times.append(time.perf_counter() - t)
        te, tf = statistics.median(est_times), statistics.median(func_times)
        overhead = statistics.median(np.subtract(est_times, func_times))
        print(f"{name:28}: estimator {te * 1e3:7.1f} ms, functional {tf * 1e3:7.1f} ms, "
              f"overhead {overhead * 1e3:+5.2f} ms = {100 * overhead / tf:+.1f}%")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
