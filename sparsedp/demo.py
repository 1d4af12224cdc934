"""Demo: the ``sparsedp-demo`` command (or ``python -m sparsedp.demo`` outside the source tree).

Fits a LASSO on a synthetic dorothea-shaped sparse problem (800 x 100,000
binary, density 0.0091) with the exact solver and prints the objective.
"""
import time

import numpy as np
import scipy.sparse as sp

from sparsedp.datafits import Squared
from sparsedp.penalties import L1
from sparsedp.solvers import exact


def main():
    rng = np.random.default_rng(0)
    n, p = 800, 100_000
    X = sp.random(n, p, density=0.0091, format="csc", rng=rng,
                  data_rvs=np.ones)
    w_true = np.zeros(p)
    w_true[rng.choice(p, 20, replace=False)] = rng.normal(size=20)
    y = X @ w_true + 0.1 * rng.normal(size=n)
    lam = 0.1 * np.max(np.abs(X.T @ y)) * 2 / n
    start = time.perf_counter()
    res = exact(X, y, Squared(), L1(lam), tol=1e-8)
    took = time.perf_counter() - start
    print(f"LASSO on {n} x {p} sparse (nnz={X.nnz}), lambda={lam:.4g}")
    print(f"exact solver: objective F* = {res.objective:.10g}, "
          f"{int(np.count_nonzero(res.coef))} nonzeros, {res.n_iter} epochs, "
          f"KKT violation {res.info['kkt_violation']:.1e}, {took:.2f} s")


if __name__ == "__main__":
    main()
