"""Estimator overhead on a dorothea fit: ``DPLogisticRegression.fit`` vs the solver alone.

Run ``python asv_benchmarks/estimator_overhead.py``.  Real dorothea (800 x
100,000, CSC; ``SPARSEDP_DATA`` or ``../shared/data``), epsilon 1, public
smoothness constants (binary features: ``M_j = 1/4``).  For each solver, the
estimator (validation, intercept column, solver choice, report) and the
functional call it makes (the same problem, the intercept column built
beforehand) are timed alternately, ``rounds`` times; medians, and the overhead
``(t_estimator - t_solver) / t_solver``, with and without the intercept column
(one more copy of the nonzeros, made by the estimator).
"""
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

from sparsedp.datafits import Logistic
from sparsedp.datasets import load_dorothea
from sparsedp.linear_model import DPLogisticRegression
from sparsedp.penalties import L1, L2
from sparsedp.solvers import dp_cd, dp_gcd, dp_sgd

CASES = {
    "gcd": (dict(penalty="l1", alpha=1e-3, n_iter=200), dp_gcd, L1(1e-3),
            dict(n_iter=200, selection="exponential")),
    "cd": (dict(penalty="l2", alpha=1e-3, max_passes=2), dp_cd, L2(1e-3),
           dict(passes=2, averaging=False, order="shuffle")),
    "sgd": (dict(penalty="l2", alpha=1e-3, max_passes=20, batch_size=64), dp_sgd, L2(1e-3),
            dict(passes=20, batch_size=64)),
}


def main(rounds=7):
    X, y = load_dorothea()
    n, p = X.shape
    M = np.full(p, 0.25)
    A = sp.hstack([X, np.ones((n, 1))], format="csc")
    common = dict(epsilon=1.0, delta=1.0 / n ** 2, clip=1.0, step_size=1.0)
    print(f"dorothea {X.shape}, nnz {X.nnz}, logistic, epsilon 1, public smoothness")
    for solver, (est_kw, func, penalty, func_kw) in CASES.items():
        for intercept in (True, False):
            design, m = (A, np.append(M, 0.25)) if intercept else (X, M)
            est_times, func_times, built_times = [], [], []
            for r in range(rounds):
                est = DPLogisticRegression(solver=solver, smoothness=M, random_state=r,
                                           fit_intercept=intercept, **common, **est_kw)
                t = time.perf_counter()
                est.fit(X, y)
                est_times.append(time.perf_counter() - t)
                t = time.perf_counter()
                func(design, y, Logistic(), penalty, random_state=r, **common, **func_kw,
                     smoothness=float(m.sum()) if func is dp_sgd else m)
                func_times.append(time.perf_counter() - t)
                if intercept:  # the same fit through the functional API: the caller builds A
                    t = time.perf_counter()
                    built = sp.hstack([X, np.ones((n, 1))], format="csc")
                    func(built, y, Logistic(), penalty, random_state=r, **common, **func_kw,
                         smoothness=float(m.sum()) if func is dp_sgd else m)
                    built_times.append(time.perf_counter() - t)
            te, tf = statistics.median(est_times), statistics.median(func_times)
            print(f"solver={solver!r:6} fit_intercept={intercept!s:5}: estimator {te * 1e3:7.1f} "
                  f"ms, solver alone {tf * 1e3:7.1f} ms, overhead {(te - tf) * 1e3:+5.1f} ms = "
                  f"{100 * (te - tf) / tf:+.1f}%")
            if intercept:
                tb = statistics.median(built_times)
                print(f"{'':35}functional API building the intercept column itself "
                      f"{tb * 1e3:7.1f} ms: estimator {100 * (te - tb) / tb:+.1f}%")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
