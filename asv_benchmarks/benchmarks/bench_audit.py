"""asv: the privacy audit (``sparsedp.audit``): its bounds and its learners, and a whole
audit of a small DP-CD fit.

An audit's cost is its runs (the mechanism's, measured by the solvers' benchmarks)
plus the learning and bounding of events on the outputs, timed here on outputs of a
known law; the one-run bound inverts a binomial tail by root finding.
"""
import numpy as np

from sparsedp.audit import audit, audit_samples, one_run_epsilon, worst_case_pairs
from sparsedp.datafits import Squared
from sparsedp.solvers import dp_cd


class AuditSamples:
    """Learn and bound the events on 2 x 100,000 outputs (scalars, or 16-vectors whose
    coordinates share their noise: the joint learner's work)."""

    params = (["scalar", "vector"],)
    param_names = ["outputs"]

    def setup(self, outputs):
        rng = np.random.default_rng(0)
        n = 100_000
        if outputs == "scalar":
            self.d, self.d2 = rng.normal(0.0, 1.0, n), rng.normal(1.0, 1.0, n)
        else:
            shared = rng.normal(size=(2, n, 1))
            self.d = shared[0] + rng.normal(size=(n, 16))
            self.d2 = shared[1] + rng.normal(size=(n, 16)) + np.eye(16)[0]

    def time_audit_samples(self, outputs):
        audit_samples(self.d, self.d2, delta=1e-5, epsilon=1.0)

    def track_lower_bound(self, outputs):
        return audit_samples(self.d, self.d2, delta=1e-5, epsilon=1.0).epsilon_lower_bound


class OneRunEpsilon:
    """The one-run bound of 1,000 canaries and 200 guesses (Steinke et al. 2023)."""

    def time_one_run_epsilon(self):
        one_run_epsilon(1000, 200, 150, 1e-5, 0.95)


def _fit(data, seed):
    X, y = data
    return dp_cd(X, y, Squared(), epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
                 smoothness=np.ones(X.shape[1]), order="shuffle", averaging=False,
                 random_state=seed)


class AuditFit:
    """A whole audit: 2 worst-case pairs x 2 datasets x 200 runs of a DP-CD fit."""

    def setup(self):
        self.pairs = worst_case_pairs("dp_cd", n_samples=16, n_features=4)

    def time_audit(self):
        audit(_fit, self.pairs, epsilon=1.0, delta=1e-5, n_trials=200, random_state=0)
