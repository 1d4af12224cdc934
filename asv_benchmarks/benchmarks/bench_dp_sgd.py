"""asv: DP-SGD on the dorothea-shaped problem (batch 1, Poisson): the kernels and the solver."""
import numpy as np

from sparsedp._kernels import kernel_id
from sparsedp._kernels._dp_sgd_fast import Schedule, sgd_eager, sgd_lazy
from sparsedp._kernels._noise import IntegerNoise
from sparsedp._kernels._sampling import Batches
from sparsedp.datafits import Logistic
from sparsedp.penalties import L1, L2
from sparsedp.solvers import dp_sgd
from sparsedp.solvers._dp_sgd import FRAME_MULTIPLIER, frame_schedule
from sparsedp.solvers._release import WalkRelease

from .common import clear_caches, datafit_problem, dorothea_like

#: the kernels' noise multiplier (calibration is timed by DPSGDSolver and bench_accounting)
Z = 1.0
CLIP, STEP_SIZE, SMOOTHNESS = 1.0, 0.1, 1.0
L2_ALPHA, L1_ALPHA = 1e-4, 1e-4


class _Kernel:
    """The arguments ``dp_sgd`` hands its kernels, built the same way (batch 1)."""

    def __init__(self, datafit, steps, l1=0.0, l2=0.0):
        self.datafit, X, self.y = datafit_problem(datafit)
        Xr = X.tocsr()
        self.n, self.p = Xr.shape
        self.rows = (np.ascontiguousarray(Xr.indptr, dtype=np.int64),
                     np.ascontiguousarray(Xr.indices, dtype=np.int32),
                     np.ascontiguousarray(Xr.data, dtype=np.float64))
        self.norms = np.sqrt(np.asarray(Xr.multiply(Xr).sum(axis=1)).ravel())
        self.loss = kernel_id(self.datafit)
        self.steps, self.l1, self.l2 = steps, l1, l2
        self.batches = Batches(self.n, 1.0 / self.n)
        self.prox_step = STEP_SIZE / SMOOTHNESS
        self.step = self.prox_step  # batch 1
        self.generator = np.random.default_rng(0)

    def frame(self):
        """The integer frame's schedule and the release's inverse grid (no penalty or L2)."""
        shrink = 1.0 / (1.0 + self.prox_step * self.l2)
        phi, mult, start, walk_index, halve, bounds = frame_schedule(self.steps, shrink)
        release = WalkRelease(Z, self.batches.max_size, self.p, CLIP, self.steps + 1,
                              data_multipliers=bounds)
        scale = (self.step * release.grid / FRAME_MULTIPLIER * phi if shrink != 1.0
                 else self.step * release.grid * phi)
        return Schedule(scale, mult, start, walk_index, halve, release.walks), release.inv_grid

    def run_lazy(self, schedule, inv_grid, lazy):
        U = np.zeros(self.p, dtype=np.int64)
        sgd_lazy(*self.rows, self.y, self.norms, self.loss, CLIP, U, self.steps, self.batches,
                 schedule, inv_grid, lazy, self.generator)

    def eager(self):
        """The float kernel's integer noise and grid (any elastic net)."""
        release = WalkRelease(Z, self.batches.max_size, self.p, CLIP, self.steps + 1)
        return IntegerNoise("gaussian", float(release.scales[0])), release.grid, release.inv_grid

    def run_eager(self, noise, grid, inv_grid):
        w = np.zeros(self.p)
        sgd_eager(*self.rows, self.y, self.norms, self.loss, CLIP, w, self.steps, self.step,
                  self.prox_step, self.l1, self.l2, self.batches, noise, grid, inv_grid,
                  self.generator)


class DPSGDEpoch:
    """One epoch (n = 800 steps of batch 1) of the integer-frame kernel with lazy noise.

    Each step touches only its row's nonzeros (about 900 of 100,000 columns); the
    other coordinates' noise is drawn when they are next touched, or at the end.
    Every call starts from 0 (the frame's scale is that of step 0).
    """

    params = (["squared", "logistic"], ["none", "l2"])
    param_names = ["datafit", "penalty"]

    def setup(self, datafit, penalty):
        self.kernel = _Kernel(datafit, 800, l2=L2_ALPHA if penalty == "l2" else 0.0)
        self.schedule, self.inv_grid = self.kernel.frame()

    def time_epoch(self, datafit, penalty):
        self.kernel.run_lazy(self.schedule, self.inv_grid, True)


class DPSGDEagerSteps:
    """8 steps of batch 1 with every coordinate's noise drawn every step (O(p) a step).

    ``float_l1``: the eager float kernel (L1, the only path for an L1 penalty);
    ``frame_l2``: the integer frame with ``lazy=False`` (the eager reference of the
    lazy noise).  An epoch is 100 times this.
    """

    params = (["squared", "logistic"], ["float_l1", "frame_l2"])
    param_names = ["datafit", "kernel"]

    def setup(self, datafit, kernel):
        if kernel == "float_l1":
            self.kernel = _Kernel(datafit, 8, l1=L1_ALPHA)
            self.args = self.kernel.eager()
        else:
            self.kernel = _Kernel(datafit, 8, l2=L2_ALPHA)
            self.args = self.kernel.frame()

    def time_8_steps(self, datafit, kernel):
        if kernel == "float_l1":
            self.kernel.run_eager(*self.args)
        else:
            self.kernel.run_lazy(*self.args, False)


class DPSGDSolver:
    """The public ``dp_sgd`` end to end (validation, PLD calibration, walks, kernel):
    logistic + L2 for one pass with lazy noise, logistic + L1 for 8 steps (eager)."""

    params = ["lazy_l2_1_pass", "eager_l1_8_steps"]
    param_names = ["run"]
    timeout = 120

    def setup(self, run):
        self.X, self.y = dorothea_like(logistic=True)

    def time_dp_sgd(self, run):
        if run == "lazy_l2_1_pass":
            penalty, passes = L2(L2_ALPHA), 1
        else:
            penalty, passes = L1(L1_ALPHA), 8 / self.X.shape[0]
        dp_sgd(self.X, self.y, Logistic(), penalty, epsilon=1.0, delta=1e-6, passes=passes,
               clip=CLIP, step_size=STEP_SIZE, global_smoothness=SMOOTHNESS, random_state=0)


class DPSGDFirstFit:
    """A first fit in a process: ``dp_sgd`` logistic + L2 (lazy noise) with every
    cache cleared, so the PLD calibration and the walks' tables are built (a warm
    fit finds both cached; ``DPSGDSolver``).  21 passes reach 4 of the 16 rungs of
    the L2 frame: 4 walks are built (all 16 before), and the calibration's root
    finder evaluates 9 PLD compositions (13 before; since 2026-12-07, 3 on the grid
    after 12 on grids 64 and 8 times coarser).  On the 2-core development machine,
    medians of 5: 1 pass 733 -> 384 ms, 21 passes 786 -> 500 ms; on 2026-12-07 (the
    coarser grids) 1 pass 494 -> 240 ms, 21 passes 545 -> 445 ms."""

    params = [1, 21]
    param_names = ["passes"]
    timeout = 300

    def setup(self, passes):
        self.X, self.y = dorothea_like(logistic=True)

    def time_first_fit(self, passes):
        clear_caches()
        dp_sgd(self.X, self.y, Logistic(), L2(L2_ALPHA), epsilon=1.0, delta=1e-6,
               passes=passes, clip=CLIP, step_size=STEP_SIZE, global_smoothness=SMOOTHNESS,
               random_state=0)
