"""asv: DP-CD, one pass (p noisy coordinate steps) on the dorothea-shaped problem."""
import numpy as np

from sparsedp._kernels import kernel_id
from sparsedp._kernels._dp_cd_fast import (
    CoordinateBlocks, RandomStreams, dp_cd_steps)
from sparsedp._kernels._noise import IntegerNoise, grid_scale
from sparsedp._validation import check_X_y
from sparsedp.datafits import Logistic, Squared
from sparsedp.penalties import L1
from sparsedp.privacy import calibrate_gaussian
from sparsedp.solvers import dp_cd
from sparsedp.solvers._dp_cd import split_generator

from .common import dorothea_like, read_only


class DPCDPass:
    """One pass of the DP-CD kernel (logistic/squared + L1), in two regimes, with
    uniform coordinates (Algorithm 1) or shuffled passes.

    ``sparse``: the L1 step keeps most coordinates at 0 (few margin updates);
    ``moving``: no penalty, every step moves theta (margin and derivative
    refreshed over the column: the logistic case pays one exp per nonzero).
    """

    params = (["squared", "logistic"], ["sparse", "moving"], ["uniform", "shuffle"])
    param_names = ["datafit", "regime", "selection"]

    def setup(self, datafit, regime, selection):
        self.datafit = Squared() if datafit == "squared" else Logistic()
        X, y = dorothea_like(logistic=datafit == "logistic")
        self.X, self.y = check_X_y(X, y, self.datafit)
        n, p = self.X.shape
        M = self.datafit.smoothness(self.X)
        C = np.sqrt(M / M.sum())
        z = calibrate_gaussian(1.0, 1e-5, p)
        rho, points, scale = grid_scale(z, n)  # the release on a grid, as dp_cd
        self.grid_per_clip = 2.0 * rho / points
        noise = IntegerNoise("gaussian", scale)
        self.steps = np.divide(1.0, M, out=np.zeros(p), where=M > 0)
        self.l1 = 1e-3 if regime == "sparse" else 0.0
        # state carries over between repeats (a pass from wherever the last ended)
        self.blocks = CoordinateBlocks(self.X, self.steps, C, np.zeros(p))
        self.margin = np.zeros(n)
        self.deriv = self.datafit.derivative(self.margin, self.y)
        self.streams = RandomStreams(p, *split_generator(np.random.default_rng(0)),
                                     selection=selection, noise=noise)  # as dp_cd

    def time_pass(self, datafit, regime, selection):
        p = self.X.shape[1]
        dp_cd_steps(kernel_id(self.datafit), self.blocks, self.y, self.margin,
                    self.deriv, "grid", self.grid_per_clip, 1.0 / self.grid_per_clip,
                    True, 0, p, self.l1, 0.0, self.streams)


class DPCDSolver:
    """The public ``dp_cd`` end to end (validation, calibration, packing, 5 passes)."""

    def setup(self):
        X, y = dorothea_like(logistic=True)
        self.X, self.y = X, y
        self.M = Logistic().smoothness(check_X_y(X, y, Logistic())[0])

    def time_dp_cd_5_passes(self):
        dp_cd(self.X, self.y, Logistic(), L1(1e-3), epsilon=1.0, delta=1e-5, passes=5,
              clip=1.0, smoothness=self.M, random_state=0)


class DPCDBlocks:
    """The kernel's blocks of the dorothea-shaped X (``CoordinateBlocks``): packed
    afresh (``fresh``, X writeable: every fit), or taken from a released instance
    (``kept``, X read-only as a :class:`sparsedp.experiments.Problem` holds it: a
    sweep's fits after the first), and a short DP-CD fit (0.1 pass, as in a sweep)
    either way."""

    params = ["fresh", "kept"]
    param_names = ["blocks"]

    def setup(self, blocks):
        X, y = dorothea_like()
        if blocks == "kept":
            X = read_only(X)
        self.X, self.y = X, y
        p = X.shape[1]
        self.steps, self.clips, self.theta = np.ones(p), np.ones(p), np.zeros(p)
        self.M = np.full(p, 0.3)
        self.time_pack(blocks)  # a first layout to keep (when it is kept)
        self.time_short_fit(blocks)

    def time_pack(self, blocks):
        CoordinateBlocks(self.X, self.steps, self.clips, self.theta).release()

    def time_short_fit(self, blocks):
        dp_cd(self.X, self.y, Squared(), L1(0.1), epsilon=1.0, delta=1e-6, passes=0.1,
              clip=0.1, smoothness=self.M, random_state=0)
