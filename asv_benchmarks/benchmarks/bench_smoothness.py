"""asv: the smoothness constants M_j, from the data and privately estimated."""
import numpy as np

from sparsedp.datafits import Logistic
from sparsedp.solvers import dp_cd
from sparsedp.solvers._smoothness import private_smoothness

from .common import datafit_problem, dorothea_like


class Smoothness:
    """M_j of the dorothea-shaped problem: from the data (``Datafit.smoothness``) and
    the private estimates (clipped column sums released on a grid, Laplace or Gaussian)."""

    params = ["squared", "logistic"]
    param_names = ["datafit"]

    def setup(self, datafit):
        self.datafit, self.X, self.y = datafit_problem(datafit)
        self.bounds = np.ones(self.X.shape[1])  # public: |X_ij| <= 1

    def time_from_data(self, datafit):
        self.datafit.smoothness(self.X)

    def time_private_laplace(self, datafit):
        private_smoothness(self.X, self.datafit, 0.1, self.bounds, np.random.default_rng(0))

    def time_private_gaussian(self, datafit):
        private_smoothness(self.X, self.datafit, 0.1, self.bounds, np.random.default_rng(0),
                           mechanism="gaussian", noise_multiplier=10.0)


class DPCDPrivateSmoothness:
    """The public ``dp_cd`` (1 pass) spending 10% of epsilon on the estimate of M_j."""

    def setup(self):
        self.X, self.y = dorothea_like(logistic=True)

    def time_dp_cd_1_pass(self):
        dp_cd(self.X, self.y, Logistic(), None, epsilon=1.0, delta=1e-5, passes=1,
              clip=1.0, smoothness=0.1, feature_bounds=1.0, random_state=0)


class PrivateDefaults:
    """The private defaults' estimates (docs/defaults.rst, "Private constants") on the
    dorothea-shaped problem: the per-row scales (two noisy log-scale histograms), the
    per-feature histograms of M_j (p x 161 counts), and an estimator's whole fit with
    nothing given but epsilon (DP-GCD: the bound, then one iteration with its step
    estimate after the selection)."""

    def setup(self):
        from sparsedp.privacy import PrivacyLedger
        self.X, self.y = dorothea_like(logistic=True)
        self.ledger = PrivacyLedger

    def time_row_scales(self):
        from sparsedp.solvers._scales import private_row_scales
        private_row_scales(self.X, None, 10.0, np.random.default_rng(0),
                           self.ledger(delta=1e-6))

    def time_feature_histograms(self):
        from sparsedp.solvers._scales import smoothness_from_histogram
        smoothness_from_histogram(self.X, 0.25, 10.0, np.random.default_rng(0),
                                  self.ledger(delta=1e-6), 1.0)

    def time_estimator_private_default(self):
        from sparsedp import DPLogisticRegression
        DPLogisticRegression(penalty="l1", alpha=0.01, classes=[-1.0, 1.0],
                             random_state=0).fit(self.X, self.y)
