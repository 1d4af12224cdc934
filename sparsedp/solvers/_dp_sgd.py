"""DP-SGD: proximal stochastic gradient descent with per-sample clipping.

The baseline of both papers (Abadi et al. 2016; Bassily et al. 2014): each step
samples a batch, clips each sampled row's gradient ``loss'(x_i . w, y_i) x_i``
to L2 norm C, sums, adds Gaussian noise of standard deviation ``z C`` to every
coordinate and takes a proximal step of size ``c = gamma / (beta B)`` (B the
expected batch size, beta the datafit's global smoothness).

Neighbouring relation and accounting.  Poisson sampling (each row with
probability ``q = B / n``, drawn in O(B) as a binomial size and a uniform subset,
:mod:`sparsedp._kernels._sampling`) under add/remove neighbours: the batch sum has L2 sensitivity C,
and the T steps are T Poisson-subsampled Gaussian mechanisms, accounted by the
privacy loss distribution (:mod:`sparsedp.privacy.pld`; RDP as a cross-check
and fallback).  Fixed-size batches (``sampling="fixed"``, B rows without
replacement) under replace-one neighbours: sensitivity 2C, accounted by the
RDP of sampling without replacement (Wang, Balle and Kasiviswanathan 2019);
fixed-size batches must not be accounted as Poisson ones (Lebeda et al. 2024).

Floating point.  Every step releases the integer vector ``k = rint(G / g)``
plus integer noise (:class:`~sparsedp.solvers._release.WalkRelease`); the
iterate is a function of these integers and public constants.  With no
penalty or an L2 penalty the iterate is kept as ``w = s(t) U`` with ``U`` an
exact integer vector (the L2 shrinkage lives in the public scale s(t)), so the
noise of coordinates no batch row touches can be drawn lazily (docs/dp_sgd.rst).
"""
import math
import warnings

import numpy as np

from .._kernels import kernel_id
from .._kernels._dp_sgd_fast import Schedule, sgd_eager, sgd_lazy
from .._kernels._noise import IntegerNoise
from .._validation import check_bool, check_real
from .._warnings import find_stack_level
from ..exceptions import PrivacyLeakWarning
from ..privacy import calibrate_gaussian
from ._base import (Budget, KernelOutput, check_coef_init, check_memory, check_problem, csr_rows,
                    split_generator)
from ._batch import BatchSolver
from ._release import RESERVED_STEP_ETA, WalkRelease
from ._scales import N_BINS, private_row_scales
from ._smoothness import check_smoothness_constants
from ._spec import Hyperparameter, SolverSpec

__all__ = ["dp_sgd"]

#: integer multiplier of the L2 frame at a halving (step sizes exact to 1 / (2 M));
#: small enough that the walks stay narrow (NARROW_WALK_SCALE) on a fine grid
FRAME_MULTIPLIER = 2 ** 10
#: walks per halving of the L2 frame: the noise is at most about 2**(1/16) above z (4.6% with the
#: bounds rounded up at FRAME_MULTIPLIER 2**10)
FRAME_RUNGS = 16


def global_smoothness_of(X, datafit):
    """beta ||X||_2^2 / n: the datafit's global smoothness (computed from the data)."""
    from scipy.sparse.linalg import svds
    n = X.shape[0]
    if min(X.shape) == 1 or X.nnz == 0:
        top = float(np.sqrt((X.multiply(X)).sum())) if min(X.shape) == 1 else 0.0
    else:
        top = float(svds(X.astype(np.float64), k=1, return_singular_vectors=False,
                         random_state=0)[0])
    return datafit.beta * top * top / n


def frame_schedule(steps, shrink):
    """The public frame of the integer iterate under L2 shrinkage ``a = shrink``.

    Returns ``phi`` (length steps + 1: ``w = (c g / M_0) phi(t) U``), the
    multipliers ``M_t = round(M_0 / phi(t))``, the segments (start, rung,
    halve) and the rungs' multiplier bounds ``ceil(M_0 2**((r + 1) / 16))``.
    With ``shrink = 1`` (no penalty): M = 1, one segment.
    """
    if shrink == 1.0:
        return (np.ones(steps + 1), np.ones(steps, dtype=np.int64),
                np.array([0, steps + 1]), np.array([0]), np.array([0], dtype=np.uint8), [1])
    m0 = FRAME_MULTIPLIER
    # phi(t) = a^t 2^k(t) in (1/2, 1]: k(t) halvings so far, x = -t log2(a)
    x = -np.arange(steps + 1) * math.log2(shrink)
    halvings = np.floor(x)
    frac = x - halvings
    phi = np.exp2(-frac)
    halve_at = np.concatenate([[False], np.diff(halvings) > 0])
    multiplier = np.rint(m0 / phi[:steps]).astype(np.int64)
    rung = np.clip(np.floor(FRAME_RUNGS * frac[:steps]), 0, FRAME_RUNGS - 1).astype(np.int64)
    bounds = [int(math.ceil(m0 * 2.0 ** ((r + 1) / FRAME_RUNGS))) + 1
              for r in range(FRAME_RUNGS)]
    if np.any(multiplier > np.array(bounds)[rung]):
        raise RuntimeError("frame multiplier above its rung's bound")
    change = np.flatnonzero((np.diff(rung) != 0) | halve_at[1:steps]) + 1
    start = np.concatenate([[0], change, [steps + 1]])
    return (phi, multiplier, start, rung[start[:-1]] if steps else np.array([0]),
            halve_at[start[:-1]].astype(np.uint8), bounds)


#: the share of (epsilon, delta) the private global smoothness bound takes (basic
#: composition: a Gaussian estimate composes with the subsampled releases only in a
#: slow PLD calibration)
BATCH_ESTIMATE_SHARE = 0.05


class DPSGD(BatchSolver):
    """DP-SGD on the :class:`~sparsedp.solvers._batch.BatchSolver` skeleton."""

    RELEASED = "clipped batch gradient sums"

    def check_problem(self, X, y, datafit, penalty, fit_intercept, intercept_scaling):
        return check_problem(X, y, datafit, penalty, fit_intercept,
                             intercept_scaling).with_column()

    def check_options(self, problem, sampling, trace, *, step_size, smoothness,
                      global_smoothness, lazy, coef_init, intercept_init):
        init = check_coef_init(coef_init, problem.p, intercept_init, problem.intercept_scaling)
        step_size = check_real(step_size, "step_size")
        l1 = problem.penalty.l1
        if lazy == "auto":
            lazy = l1 == 0.0
        lazy = check_bool(lazy, "lazy")
        if lazy and l1 != 0.0:
            raise ValueError("lazy noise needs no penalty or an L2 penalty: the L1 prox has no "
                             "exact lazy form (use lazy=False)")
        steps, p = sampling.steps, problem.p
        # the step schedule (scale, multiplier: 16 bytes a step) and, with a trace, p
        # floats a pass
        check_memory(16 * (steps + 1) + (8 * p * (sampling.passes + 1) if trace else 0),
                     f"dp_sgd with {steps} steps", "fewer passes or a larger batch_size")
        return {"init": init, "step_size": step_size, "smoothness": smoothness,
                "global_smoothness": global_smoothness, "lazy": lazy}

    def private_constants(self, problem, sampling, options, ledger, budget, generator):
        """``smoothness`` and ``global_smoothness`` None with a finite epsilon: the
        global smoothness bound ``beta mean_i ||x_i||^2 >= beta ||X||_2^2 / n``
        estimated privately (:func:`~sparsedp.solvers._scales.private_row_scales`,
        the rows of ``[X, s * 1]``), a Gaussian mechanism ``(share epsilon, share
        delta)``-DP under the run's relation (``share`` :data:`BATCH_ESTIMATE_SHARE`),
        the rest of the budget left to the batches by basic composition.
        ``smoothness="leak"``: computed from the data (a leak)."""
        if isinstance(options["smoothness"], str):
            if options["smoothness"] != "leak":
                raise ValueError(f"smoothness must be None, 'leak' or an array of public "
                                 f"constants, got {options['smoothness']!r}")
            return {**options, "smoothness": None}, budget
        if options["smoothness"] is not None or options["global_smoothness"] is not None \
                or not budget.private:
            return options, budget
        share = BATCH_ESTIMATE_SHARE
        z = calibrate_gaussian(share * budget.epsilon, share * budget.delta, 1)
        rows = private_row_scales(problem.X, None, z, generator, ledger,
                                  name="global smoothness bound", relation=sampling.relation)
        left = Budget((1.0 - share) * budget.epsilon, (1.0 - share) * budget.delta)
        return {**options, "global_smoothness": problem.datafit.beta * rows.mean_sq_norm,
                "estimate_draws": 2 * N_BINS}, left

    def public_constants(self, problem, sampling, options, ledger):
        """The step size ``gamma / beta`` (beta public, or a recorded leak) and the
        exact integer frame's schedule (no L1 part: the L2 shrinkage in a public
        scale, :func:`frame_schedule`)."""
        beta = self._smoothness(problem, options["smoothness"], options["global_smoothness"],
                                ledger)
        prox_step = options["step_size"] / beta if beta > 0 else 0.0  # on F's scale
        frame = problem.penalty.l1 == 0.0  # the exact integer frame; else the float iterate
        shrink = 1.0 / (1.0 + prox_step * problem.penalty.l2) if frame else 1.0
        return {**options, "beta": beta, "prox_step": prox_step,
                "step": prox_step / sampling.batch_size,  # on the batch's sum
                "frame": frame, "shrink": shrink,
                "schedule": frame_schedule(sampling.steps, shrink)}

    def walk_draws(self, problem, sampling, options):
        return sampling.steps * problem.p

    def release(self, problem, sampling, options, z, sensitivity):
        walk_index, bounds = options["schedule"][3], options["schedule"][-1]
        # every rung's bound sizes the grid; only the rungs the schedule reaches get
        # walks (a run whose L2 shrinkage stays under a halving reaches few of 16)
        release = WalkRelease(z, sampling.batches.max_size, problem.p, sensitivity,
                              sampling.steps + 1,
                              data_multipliers=bounds if options["frame"] else (1,),
                              used=np.unique(walk_index) if options["frame"] else None)
        if release.step_eta > RESERVED_STEP_ETA:
            raise RuntimeError("walk tables coarser than the reserved slack")
        return release

    def run(self, problem, sampling, options, clip, release, generator, trace):
        n, p, steps, batches = problem.n, problem.p, sampling.steps, sampling.batches
        l1, l2 = problem.penalty.l1, problem.penalty.l2
        init, step, prox_step = options["init"], options["step"], options["prox_step"]
        shrink, lazy = options["shrink"], options["lazy"]
        phi, mult, start, walk_index, halve, _ = options["schedule"]
        indptr, indices, data, norms = csr_rows(problem.X)
        every = max(1, int(round(n / sampling.batch_size))) if trace else 0
        records = np.zeros((int(steps // every) if trace else 0, p))
        loss = kernel_id(problem.datafit)

        if release is None:  # epsilon = inf: the same steps without noise, float iterate
            w = np.zeros(p) if init is None else init.copy()
            sgd_eager(indptr, indices, data, problem.y, norms, loss, clip, w, steps, step,
                      prox_step, l1, l2, batches, None, 0.0, 0.0, generator, records, every)
        elif options["frame"]:
            U = np.zeros(p, dtype=np.int64)
            scale = step * release.grid / FRAME_MULTIPLIER * phi if shrink != 1.0 \
                else step * release.grid * phi
            index, walks = release.walks_for(walk_index)  # the built walks, renumbered
            schedule = Schedule(scale, mult, start, index, halve, walks)
            release.check_range(steps, batches.max_size, int(mult.max()))
            sampler, noise = split_generator(generator)  # the noise from SFC64
            sgd_lazy(indptr, indices, data, problem.y, norms, loss, clip, U, steps,
                     batches, schedule, release.inv_grid, lazy, sampler,
                     records, every, init, shrink, noise_generator=noise)
            w = scale[steps] * U.astype(np.float64)
            if init is not None:
                w += shrink ** float(steps) * init
        else:
            w = np.zeros(p) if init is None else init.copy()
            noise = IntegerNoise("gaussian", float(release.scales[0]))
            sgd_eager(indptr, indices, data, problem.y, norms, loss, clip, w, steps, step,
                      prox_step, l1, l2, batches, noise, release.grid,
                      release.inv_grid, generator, records, every)
        info = {"noise_multiplier": 0.0 if release is None else release.multiplier,
                "steps": steps, "sampling_rate": sampling.rate, "sampling": sampling.sampling,
                "relation": sampling.relation, "smoothness": options["beta"],
                "step": step, "lazy": lazy, "batch_size": sampling.batch_size,
                "noise_sd": 0.0 if release is None else release.noise_sd}
        if release is not None:
            info.update(grid=release.grid, grid_points=release.points,
                        float_sum_factor=release.rho)
        tr = None
        if trace:  # non-private: the iterates once per pass and their objective
            tr = {"coef": records, "objective": np.array([problem.objective(r) for r in records]),
                  "passes": (np.arange(len(records)) + 1) * every * sampling.batch_size / n}
        return KernelOutput(coef=w, n_iter=steps, info=info, counters={}, trace=tr)

    @staticmethod
    def _smoothness(problem, smoothness, global_smoothness, ledger):
        """beta, the bound on the global smoothness the step size is scaled by: public
        (``global_smoothness``, or the sum of public coordinate-wise constants, since
        ``||X||_2^2 <= ||X||_F^2``), else computed from the data (a recorded leak)."""
        if smoothness is not None and global_smoothness is not None:
            raise ValueError("give smoothness (public M_j) or global_smoothness, not both")
        if global_smoothness is not None:
            return check_real(global_smoothness, "global_smoothness")
        if smoothness is not None:
            if np.ndim(smoothness) != 1:
                raise ValueError("dp_sgd has no private smoothness estimate: smoothness takes "
                                 "public coordinate-wise constants M_j (an array of shape "
                                 "(n_features,)); a public bound on the global smoothness goes "
                                 "to global_smoothness")
            s = problem.intercept_scaling
            M = check_smoothness_constants(smoothness, problem.p - (s is not None))
            if s is not None:  # the intercept column's constant is public: beta s^2
                M = np.append(M, problem.datafit.beta * s * s)
            return float(np.sum(M))
        description = ("the global smoothness beta ||X||_2^2 / n, computed from the data for "
                       "the step size (smoothness='leak'); leave smoothness None for a private "
                       "estimate, or pass global_smoothness")
        warnings.warn(f"smoothness: {description}", PrivacyLeakWarning,
                      stacklevel=find_stack_level())
        ledger.add_leak("smoothness", description)
        return global_smoothness_of(problem.X, problem.datafit)


def dp_sgd(X, y, datafit, penalty=None, *, epsilon, delta, passes, clip, step_size=1.0,
           batch_size=1, sampling="poisson", smoothness=None, global_smoothness=None,
           lazy="auto", random_state=None, trace=False, diagnostics=False, coef_init=None,
           fit_intercept=False, intercept_scaling=1.0, intercept_init=None):
    """Differentially private proximal SGD with per-sample clipping.

    Minimises ``datafit(X w, y) + penalty(w)`` with ``T = round(passes n / B)``
    steps ``w <- prox_{c psi}(w - c (sum_i clip(grad_i, C) + N(0, z^2 C^2 I)))``,
    ``c = step_size / (beta B)``.

    Parameters
    ----------
    X : {sparse matrix, ndarray} of shape (n, p)
    y : ndarray of shape (n,)
    datafit : Squared, Logistic or SquaredHinge
    penalty : None, L1, L2 or ElasticNet
    epsilon : float
        ``inf`` runs the same steps without noise.
    delta : float
    passes : float
        Expected number of passes over the n rows.
    clip : float
        C, the L2 norm each per-sample gradient is clipped to.
    step_size : float, default=1.0
        gamma in ``gamma / beta``.
    batch_size : int, default=1
        B: expected (Poisson) or exact (fixed) batch size.
    sampling : {"poisson", "fixed"}, default="poisson"
        Poisson (add/remove neighbours, PLD accounting) or fixed-size batches
        without replacement (replace-one, RDP of sampling without replacement).
    smoothness : None, "leak" or array of shape (n_features,), optional
        Public coordinate-wise smoothness constants ``M_j`` (as in :func:`dp_cd`):
        their sum bounds the global smoothness (``||X||_2^2 <= ||X||_F^2``).  A
        float is refused.  ``"leak"``: the global smoothness computed from the
        data (a recorded leak).
    global_smoothness : float, optional
        A public bound on the datafit's global smoothness ``beta ||X||_2^2 /
        n`` (tighter than the sum of the ``M_j``).  With neither, the bound
        ``beta mean_i ||x_i||^2`` is estimated privately (a noisy log-scale
        histogram of the rows' squared norms, :data:`BATCH_ESTIMATE_SHARE` of
        (epsilon, delta) by basic composition).
    lazy : {"auto", True, False}, default="auto"
        Lazy noise (no penalty or L2: O(nnz of the batch) a step); "auto" uses
        it whenever the penalty allows.
    random_state : None, int or numpy.random.Generator
    trace, diagnostics : bool, default=False
        Non-private diagnostics (the trace records the iterate once per pass).
    coef_init : array of shape (n_features,), optional
        The starting point (default 0; public, as in :func:`dp_cd`).
    fit_intercept : bool, default=False
        Fit an intercept as the coefficient of the public column
        ``intercept_scaling * 1`` appended to X (one copy of X's arrays; as in
        :func:`dp_cd`, penalised as the other coefficients); ``Result.intercept``.
    intercept_scaling : float, default=1.0
    intercept_init : float, optional
        The intercept's starting point (with ``fit_intercept``).

    Returns
    -------
    Result
    """
    return DPSGD().fit(X, y, datafit, penalty, epsilon=epsilon, delta=delta, passes=passes,
                       clip=clip, step_size=step_size, batch_size=batch_size, sampling=sampling,
                       smoothness=smoothness, global_smoothness=global_smoothness, lazy=lazy,
                       random_state=random_state, trace=trace, diagnostics=diagnostics,
                       coef_init=coef_init, fit_intercept=fit_intercept,
                       intercept_scaling=intercept_scaling, intercept_init=intercept_init)


SPEC = SolverSpec(
    name="dp_sgd", key="sgd", label="DP-SGD", function=dp_sgd, budget="passes",
    relation="add-remove",
    datafit_requires=(("smooth", "a smooth datafit (finite beta)"),), penalty_requires=(),
    smoothness="global",
    budget_grid=Hyperparameter("passes", (1, 5), (1, 2, 5, 10, 20)),
    hyperparameters=(
        Hyperparameter("clip", (0.1, 1.0), (0.01, 0.1, 1.0, 3.0), per_unit=True),
        Hyperparameter("step_size", (0.01, 0.1, 1.0), (0.001, 0.01, 0.1, 1.0))),
    default_budget=lambda n, p, epsilon: 20.0,
    default_step=lambda n, p, datafit: 1.0,
    default_kappa=lambda n, releases, epsilon, delta: 1.0,
    releases=lambda passes, n_columns: passes * n_columns,
    auto=lambda datafit, l1, n, p: datafit.smooth and l1 == 0.0,
    # the expected batch size measured best (at most n)
    options={"batch_size": 64})
