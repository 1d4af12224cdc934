"""asv: DP-SCD, one epoch of the kernel (lazy or eager noise) on the dorothea-shaped
problem, and the public ``dp_scd`` end to end."""
import numpy as np

from sparsedp._kernels import kernel_id
from sparsedp._kernels._dp_scd_fast import coordinate_states, dp_scd_steps
from sparsedp._kernels._sampling import Batches
from sparsedp.datafits import Logistic
from sparsedp.penalties import L2
from sparsedp.solvers import dp_scd
from sparsedp.solvers._dp_cd import split_generator
from sparsedp.solvers._base import csr_rows
from sparsedp.solvers._release import WalkRelease, batch_noise_multiplier

from .common import dorothea_like

LAMBDA = 1e-4


class DPSCDEpoch:
    """One epoch (n / L Poisson steps) of the DP-SCD kernel, logistic + L2.

    ``lazy``: a coordinate gets the walk's sum of the steps it missed when a
    sampled row reads it (O(nnz of the batch) a step); ``eager``: every
    coordinate gets its draw every step (O(p) a step).
    """

    params = (["lazy", "eager"], [100, 1])
    param_names = ["noise", "batch_size"]
    timeout = 300

    def setup(self, noise, batch_size):
        X, y = dorothea_like(logistic=True)
        n, p = X.shape
        self.y = y
        # the rows as dp_scd converts them (int32 column indices)
        self.indptr, self.indices, self.data, self.norms = csr_rows(X)
        self.steps = n // batch_size
        rate = batch_size / n
        z = batch_noise_multiplier("poisson", 1.0, 1.0 / n ** 2, rate, 10 * self.steps)
        self.batches = Batches(n, rate)
        self.release = WalkRelease(z, self.batches.max_size, p, 1.0, 10 * self.steps + 1)
        self.batch_size, self.lambda_n = batch_size, LAMBDA * n
        self.mode = 2 if noise == "lazy" else 1
        # state carries over between repeats (an epoch from wherever the last ended)
        self.alpha = np.zeros(n)
        self.state = coordinate_states(p)
        self.zetas = np.zeros(n)
        self.batch = np.zeros(n, dtype=np.int64)
        self.sampler, self.noise = split_generator(np.random.default_rng(0))
        self.t = 0
        self.loss = int(kernel_id(Logistic()))

    def time_epoch(self, noise, batch_size):
        dp_scd_steps(self.loss, self.data, self.indices, self.indptr, self.y, self.norms,
                     self.alpha, self.state, self.zetas, self.batch, self.batches, self.t,
                     self.steps, self.batch_size, self.lambda_n, 1.0, self.mode,
                     self.release.walks[0], self.release.grid, self.release.inv_grid, False,
                     self.sampler, self.noise)
        self.t += self.steps


class DPSCDSolver:
    """The public ``dp_scd`` end to end (validation, calibration, 5 epochs, L = 100)."""

    def setup(self):
        self.X, self.y = dorothea_like(logistic=True)

    def time_dp_scd_5_passes(self):
        dp_scd(self.X, self.y, Logistic(), L2(LAMBDA), epsilon=1.0, delta=1e-6, passes=5,
               clip=1.0, batch_size=100, random_state=0)
