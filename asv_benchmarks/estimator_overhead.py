"""Estimator overhead on dorothea: the default fits vs the functional call they make.

Run ``python asv_benchmarks/estimator_overhead.py [rounds]`` (default 21).  Real
dorothea (800 x 100,000, CSC, int32 indices; ``SPARSEDP_DATA`` or
``../shared/data``), the getting-started fits: ``DPLogisticRegression(penalty,
alpha=1e-3, epsilon=1, smoothness=np.full(p, 0.25), random_state=r)`` with

* ``penalty="l1"``, ``solver="auto"`` (DP-GCD, 3 iterations: the default L1 fit);
* ``penalty="l1"``, ``solver="cd"`` (DP-CD, 2 passes);
* ``penalty="l2"``, ``solver="auto"`` (DP-SGD, 20 passes; the estimator appends
  the intercept column, DP-SGD has no native one).

Each estimator fit and the functional call it makes (``est.solver_params_``
reproduces it: the same coefficients, checked) are timed alternately in the
same process, ``rounds`` times each (in turn first: no order bias), with a new
seed each round.  The
functional call gets X as the caller has it (for DP-SGD the design ``[X, 1]``
built beforehand: its copy is the estimator's overhead).  Printed, by wall
clock and by the process's CPU time (less sensitive to other processes on a
shared machine): the medians, the median of the paired differences (estimator
minus functional, the overhead), and that overhead relative to the functional
call's median.
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


def main(rounds=21):
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
        times = {"estimator": [], "functional": []}  # (wall, CPU) per run
        for r in range(1, rounds + 1):
            for first in ((True, False) if r % 2 else (False, True)):  # ABBA: no order bias
                wall, cpu = time.perf_counter(), time.process_time()
                if first:
                    DPLogisticRegression(random_state=r, **kw).fit(X, y)
                else:
                    call(r)
                times["estimator" if first else "functional"].append(
                    (time.perf_counter() - wall, time.process_time() - cpu))
        te, tf = np.array(times["estimator"]), np.array(times["functional"])
        print(f"{name}:")
        for k, clock in enumerate(("wall", "CPU")):
            mf = statistics.median(tf[:, k])
            overhead = statistics.median(te[:, k] - tf[:, k])
            print(f"  {clock:4} estimator {statistics.median(te[:, k]) * 1e3:7.1f} ms, "
                  f"functional {mf * 1e3:7.1f} ms, overhead {overhead * 1e3:+6.2f} ms = "
                  f"{100 * overhead / mf:+.1f}%")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
