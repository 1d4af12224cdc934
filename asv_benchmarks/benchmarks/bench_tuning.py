"""asv: the private search (``PrivateSearch``) on the dorothea-shaped problem.

Its cost is the calibration (one fit a candidate on a public matrix of the training
rows' shape, a few budgets) plus ``K`` trials; ``time_calibration`` isolates the
first, ``time_search`` is the whole search (K drawn from seed 0).
"""
import numpy as np

from sparsedp.linear_model import DPLogisticRegression
from sparsedp.model_selection import PrivateSearch

from .common import dorothea_like

GRID = {"n_iter": [1, 2], "step_size": [1.0]}


class DPGCDSearch:
    """PrivateSearch over DP-GCD (1 or 2 iterations), epsilon = 1 in total."""

    def setup(self):
        self.X, y = dorothea_like(logistic=True)
        self.y = np.where(y > 0, 1.0, -1.0)
        self.estimator = DPLogisticRegression(penalty="l1", alpha=1e-3, solver="gcd",
                                              classes=[-1.0, 1.0], fit_intercept=False)

    def time_search(self):
        PrivateSearch(self.estimator, GRID, epsilon=1.0, random_state=0).fit(self.X, self.y)

    def time_calibration(self):
        n, p = self.X.shape
        m = n // 10
        search = PrivateSearch(self.estimator, GRID, epsilon=1.0)
        search._calibrate([{"n_iter": 1, "step_size": 1.0}, {"n_iter": 2, "step_size": 1.0}],
                          1.0 / n ** 2, (n - m, p), np.resize([-1.0, 1.0], n - m), m, 5.0, 0.0)
