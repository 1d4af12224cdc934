"""asv: DP-GCD iterations, the noisy max alone, and the solver end to end."""
import numpy as np

from sparsedp._kernels import kernel_id
from sparsedp.solvers._release import GridRelease
from sparsedp._kernels._dp_gcd_fast import GreedyKernel, NoisyMax
from sparsedp._validation import check_X_y
from sparsedp.datafits import Logistic
from sparsedp.penalties import L1
from sparsedp.solvers import calibrate_dp_gcd, dp_gcd

from .common import dorothea_like


class DPGCDIterations:
    """20 DP-GCD iterations (logistic + L1, GS-r) on the dorothea-shaped problem."""

    params = (["exponential", "laplace"],)
    param_names = ["selection"]

    def setup(self, selection):
        X, y = dorothea_like(logistic=True)
        X, y = check_X_y(X, y, Logistic())
        n, p = X.shape
        M = Logistic().smoothness(X)
        clip = 1.0
        C = np.sqrt(M / M.sum()) * clip
        eps0 = calibrate_dp_gcd(1.0, 1.0 / n ** 2, 20, selection)
        scale = 2 * (2 * clip / (n * np.sqrt(M.sum()))) / eps0
        steps = np.divide(1.0, M, out=np.zeros(p), where=M > 0)
        release = GridRelease("laplace", 1.0 / eps0, n, 2 * C)  # as dp_gcd
        self.args = (X, y, kernel_id(Logistic()), M, C, steps, 1e-3, 0.0, "gs-r", selection,
                     scale, "grid", release.noise, release.grid, release.inv_grid,
                     release.scales / n)

    def time_20_iterations(self, selection):
        kernel = GreedyKernel(*self.args, np.random.default_rng(0))
        kernel.run(20)


class NoisyMaxDraw:
    """1,000 noisy-max draws over p = 100,000 scores (few contenders on top)."""

    params = (["exponential", "laplace"],)
    param_names = ["selection"]

    def setup(self, selection):
        rng = np.random.default_rng(0)
        scores = rng.exponential(0.1, 100_000)
        self.max = NoisyMax(scores, 0.05, selection, np.random.default_rng(1))

    def time_1000_draws(self, selection):
        self.max.draw(1000)


class DPGCDSolver:
    """The public ``dp_gcd`` end to end (validation, packing, CSR copy, 10 iterations)."""

    def setup(self):
        X, y = dorothea_like(logistic=True)
        self.X, self.y = X, y
        self.M = np.full(X.shape[1], 0.25)
        calibrate_dp_gcd(1.0, 1e-5, 10)  # cached: not what is timed

    def time_dp_gcd_10_iterations(self):
        dp_gcd(self.X, self.y, Logistic(), L1(1e-3), epsilon=1.0, delta=1e-5, n_iter=10,
               clip=1.0, smoothness=self.M, random_state=0)
