"""asv: the estimators on the dorothea-shaped problem, and the functional call they make.

The difference of the two is the estimator's overhead (validation, the intercept
column, the solver's arguments, the report); ``asv_benchmarks/estimator_overhead.py``
prints it as a ratio on real dorothea.
"""
import numpy as np
import scipy.sparse as sp

from sparsedp.datafits import Logistic
from sparsedp.linear_model import DPLogisticRegression
from sparsedp.penalties import L1
from sparsedp.solvers import dp_gcd

from .common import dorothea_like

KW = dict(epsilon=1.0, delta=1e-6, clip=1.0, step_size=1.0)


class LogisticL1GCD:
    """DPLogisticRegression(penalty="l1", solver="gcd") vs dp_gcd, 100 iterations."""

    params = ["estimator", "functional"]
    param_names = ["api"]

    def setup(self, api):
        self.X, y = dorothea_like(logistic=True)
        self.y = np.where(y > 0, 1, 0)
        n, p = self.X.shape
        self.M = np.full(p, 0.25)
        self.A = sp.hstack([self.X, np.ones((n, 1))], format="csc")
        self.yb = np.where(self.y > 0, 1.0, -1.0)

    def time_fit(self, api):
        if api == "estimator":
            DPLogisticRegression(penalty="l1", alpha=1e-3, solver="gcd", n_iter=100,
                                 smoothness=self.M, random_state=0, **KW).fit(self.X, self.y)
        else:
            dp_gcd(self.A, self.yb, Logistic(), L1(1e-3), n_iter=100,
                   smoothness=np.append(self.M, 0.25), random_state=0, **KW)
