"""asv: DP-GCD iterations, the noisy max alone, and the solver end to end."""
import numpy as np

from sparsedp._kernels import kernel_id
from sparsedp._kernels._dp_gcd_fast import GreedyKernel
from sparsedp._validation import check_X_y
from sparsedp.datafits import Logistic
from sparsedp.penalties import L1
from sparsedp.random import NoisyMax
from sparsedp.solvers import calibrate_dp_gcd, dp_gcd
from sparsedp.solvers._dp_gcd import SCORE_FLOAT_FACTOR
from sparsedp.solvers._release import GridRelease

from .common import clear_caches, dorothea_like, read_only


def greedy_kernel_args(X, y, datafit, lam, clip, selection, n_iter):
    """The arguments of a DP-GCD kernel (but its generator) set up as ``dp_gcd`` does
    (public M_j, epsilon = 1, GS-r, L1, gradients released on their grid), for
    canonical ``X``, ``y``."""
    n, p = X.shape
    M = datafit.smoothness(X)
    C = np.sqrt(M / M.sum()) * clip
    eps0 = calibrate_dp_gcd(1.0, 1.0 / n ** 2, n_iter, selection)
    scale = 2.0 * (2.0 * clip / (n * np.sqrt(M.sum())) * SCORE_FLOAT_FACTOR) / eps0
    steps = np.divide(1.0, M, out=np.zeros(p), where=M > 0)
    release = GridRelease("laplace", 1.0 / eps0, n, 2.0 * C)
    return (X, y, kernel_id(datafit), M, C, steps, lam, 0.0, "gs-r", selection, scale, "grid",
            release.noise, release.grid, release.inv_grid)


class DPGCDIterations:
    """20 DP-GCD iterations (logistic + L1, GS-r) on the dorothea-shaped problem."""

    params = (["exponential", "laplace"],)
    param_names = ["selection"]

    def setup(self, selection):
        X, y = dorothea_like(logistic=True)
        X, y = check_X_y(X, y, Logistic())
        self.args = greedy_kernel_args(X, y, Logistic(), 1e-3, 1.0, selection, 20)

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
    """The public ``dp_gcd`` end to end on the dorothea-shaped problem (logistic + L1,
    lambda = 0.00996, GS-r, report-noisy-max, epsilon = 1, delta = 1 / n^2, public
    M_j = 1/4): validation, calibration, packing, CSR copy and the iterations.

    ``cold``: the calibration's caches cleared first (a first call); ``warm``: a
    call repeated with the same budget (the calibration memoised).
    """

    params = ([10, 1000], ["cold", "warm"])
    param_names = ["n_iter", "calibration"]
    timeout = 120

    def setup(self, n_iter, calibration):
        X, y = dorothea_like(logistic=True)
        self.X, self.y = X, y
        self.M = np.full(X.shape[1], 0.25)  # public: |X_ij| <= 1
        self.delta = 1.0 / X.shape[0] ** 2
        if calibration == "warm":
            self.fit(n_iter)

    def fit(self, n_iter):
        dp_gcd(self.X, self.y, Logistic(), L1(0.00996), epsilon=1.0, delta=self.delta,
               n_iter=n_iter, clip=1.0, rule="gs-r", selection="laplace",
               smoothness=self.M, random_state=0)

    def time_dp_gcd(self, n_iter, calibration):
        if calibration == "cold":
            clear_caches()
        self.fit(n_iter)


class DPGCDRecords:
    """A short DP-GCD fit (10 iterations, as in a sweep) on the dorothea-shaped
    problem: ``fresh``, X writeable (the row and column records built by every fit);
    ``kept``, X read-only as a :class:`sparsedp.experiments.Problem` holds it (the
    records built once per process and kept); ``kept+start``, X and y read-only (the
    clipped gradient at w = 0 kept too, for the same thresholds: another run of a
    grid point, with a copy of the noisy max built on it); ``kept+constants``, the
    smoothness constants M read-only too (the thresholds, steps and grids derived
    from them kept: a Problem's fits)."""

    params = ["fresh", "kept", "kept+start", "kept+constants"]
    param_names = ["records"]
    timeout = 120

    def setup(self, records):
        X, y = dorothea_like(logistic=True)
        if records != "fresh":
            X = read_only(X)
        if records.startswith("kept+"):
            y = np.array(y)
            y.setflags(write=False)
        self.X, self.y = X, y
        self.M = np.full(X.shape[1], 0.25)
        if records == "kept+constants":
            self.M.setflags(write=False)
        self.time_fit(records)  # calibration memoised, records kept (when they are)

    def time_fit(self, records):
        dp_gcd(self.X, self.y, Logistic(), L1(0.00996), epsilon=1.0, delta=1e-6,
               n_iter=10, clip=1.0, smoothness=self.M, random_state=0)
