"""The shape of a coordinate solver's fit: validate, public constants, calibrate, kernel, result.

:class:`PrivateSolver` runs these steps in this order for the coordinate solvers
(DP-CD, DP-GCD; the batch solvers have :class:`~sparsedp.solvers._batch.BatchSolver`);
a new algorithm is a subclass (one Python module) that fills in the steps
specific to it, plus one compiled kernel, and ends with its
:class:`~sparsedp.solvers.SolverSpec`:

1. validate: the data, the model, the budget and the common options here
   (:mod:`sparsedp._validation`), the algorithm's own options in
   :meth:`PrivateSolver.check_options`;
2. reserve the samplers' slack (:meth:`PrivateSolver.sampler_slack`): every
   integer noise draw and every noisy-max draw is within a known factor of its
   ideal law, paid from (epsilon, delta) before anything is calibrated;
3. public constants: the coordinate-wise smoothness constants (public, private
   or a recorded leak), clipping thresholds and step sizes
   (:func:`coordinate_constants`);
4. calibrate (:meth:`PrivateSolver.calibrate`): the noise for the budget left,
   with every mechanism recorded on the ledger;
5. run the kernel (:meth:`PrivateSolver.run`);
6. the :class:`~sparsedp.solvers.Result`, with the non-private diagnostics only
   when asked for.
"""
import math
import os
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from .._validation import (SCALE_LIMIT, check_bool, check_privacy_budget,
                           check_random_state, check_real, check_vector, check_X_y,
                           mark_checked)
from .._kernels import kernel_id
from .._kernels._immutable import kept_derived
from ..privacy import PrivacyLedger
from ..datafits import _Datafit
from ..penalties import as_penalty
from ._result import NonPrivateDiagnostics, Result
from ._release import record_no_noise
from ._smoothness import clip_thresholds, default_smoothness, resolve_smoothness

__all__ = ["Problem", "check_problem", "check_intercept", "constant_column", "Budget", "CoordinateConstants",
           "coordinate_constants", "PrivateSolver", "KernelOutput", "check_clip", "check_coef_init", "csr_rows",
           "result_of", "split_generator"]


def split_generator(generator):
    """Two independent child generators: coordinate indices, then noise.

    SFC64 bit generators, each seeded by a SeedSequence whose entropy (4 x 63
    bits) is drawn from ``generator``'s own stream.  The streams thus follow the
    generator's state: the same state gives the same fit, and a generator that
    was advanced, jumped or used for a previous fit gives fresh streams (two fits
    never share noise unless their generators are in the same state).
    """
    seeds = generator.integers(0, 2**63, size=(2, 4))
    return tuple(np.random.Generator(np.random.SFC64(np.random.SeedSequence(s)))
                 for s in seeds)


def check_datafit(datafit):
    """Return ``datafit`` if it is a datafit instance with a compiled kernel, else a
    TypeError (:func:`sparsedp._kernels.kernel_id`)."""
    if not isinstance(datafit, _Datafit):
        raise TypeError(f"datafit must be a sparsedp.datafits instance such as Squared(), "
                        f"Logistic() or SquaredHinge(), got {datafit!r}")
    kernel_id(datafit)
    if not datafit.smooth:  # the primal solvers' requirement (their specs' "smooth")
        raise TypeError(f"{type(datafit).__name__} is not smooth: the primal solvers (exact, "
                        f"dp_cd, dp_gcd) need a smooth datafit such as SquaredHinge, Squared "
                        f"or Logistic")
    return datafit


@dataclass(frozen=True)
class Problem:
    """A validated problem: canonical CSC ``X``, float64 ``y``, datafit, penalty.

    ``intercept_scaling`` (None: no intercept): the model has one more
    coordinate, last, the public column ``intercept_scaling * 1`` (liblinear's
    intercept: an extra feature, penalised like the others).  The solvers
    handle it in their own layouts of X: ``[X, s * 1]`` is never built.
    """

    X: object
    y: np.ndarray
    datafit: object
    penalty: object
    intercept_scaling: float = None
    #: True when ``X`` already holds the intercept column, last (:meth:`with_column`)
    appended: bool = False

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def p(self):
        """The number of coordinates (X's columns, and the intercept column)."""
        return self.X.shape[1] + (self.intercept_scaling is not None and not self.appended)

    @property
    def intercept_column(self):
        """The public intercept column as an (n, 1) CSC array (O(n)), or None."""
        if self.intercept_scaling is None:
            return None
        return constant_column(self.n, self.intercept_scaling, self.X.indices.dtype)

    def with_column(self):
        """The same problem on ``[X, s * 1]`` built once (one copy of X's arrays): the
        batch solvers' layout, the intercept an ordinary last coordinate (rows and
        their norms include it); :meth:`split` still returns ``(coef, intercept)``."""
        if self.intercept_scaling is None or self.appended:
            return self
        n, _ = self.X.shape
        X, idx = self.X, self.X.indices.dtype
        A = sp.csc_array((np.concatenate([X.data, np.full(n, self.intercept_scaling)]),
                          np.concatenate([X.indices, np.arange(n, dtype=idx)]),
                          np.append(X.indptr, X.indptr[-1] + n).astype(idx, copy=False)),
                         shape=(n, X.shape[1] + 1))
        A.has_canonical_format = True  # X's columns were, the new one is sorted
        return replace(self, X=mark_checked(A), appended=True)

    def clipped(self, bounds):
        """The same problem on X with each column clipped to ``[-bounds_j, bounds_j]``
        (the intercept column, public, untouched)."""
        from ._scales import clip_to_bounds
        return replace(self, X=mark_checked(clip_to_bounds(self.X, bounds)))

    def margin(self, w):
        """``[X, s * 1] @ w``, as scipy computes it (columns in order, the intercept's
        term added last): the same floating-point values (:func:`matvec`)."""
        if self.intercept_scaling is None or self.appended:
            return matvec(self.X, w)
        z = matvec(self.X, w[:-1])
        z += self.intercept_scaling * w[-1]
        return z

    def objective(self, w):
        """F(w) on the training data (non-private)."""
        return self.datafit.value(self.margin(w), self.y) + self.penalty.value(w)

    def split(self, w):
        """``(coef, intercept)`` of a vector of the p coordinates."""
        if self.intercept_scaling is None:
            return w, 0.0
        return w[:-1], float(w[-1] * self.intercept_scaling)


def matvec(X, w):
    """``X @ w`` for a CSC matrix, the same floating-point values as scipy's.

    When most of ``w`` is 0 (a sparse iterate: DP-GCD's, an L1 fit's), only the
    columns of its nonzeros are multiplied: scipy adds the products column by
    column, and a column whose weight is 0 adds a signed zero to each of its rows,
    which changes no row (a row's sum starts at +0.0, and ``+0.0 + -0.0`` is
    +0.0), so skipping those columns gives the same values.  On dorothea's 100,000
    columns an iterate of a few nonzeros costs about 0.1 ms instead of 1 ms.
    """
    support = (w != 0).nonzero()[0]
    if 4 * support.size > w.shape[0]:
        return X @ w
    if support.size > FEW_COLUMNS:
        return X[:, support] @ w[support]
    # a handful of columns (DP-GCD's first iterations): added here, in the order and
    # with the products scipy uses, without the cost of slicing X (0.1 ms)
    z = np.zeros(X.shape[0])
    indptr, indices, data = X.indptr, X.indices, X.data
    for j in support:
        start, end = indptr[j], indptr[j + 1]
        z[indices[start:end]] += data[start:end] * w[j]  # a column's rows are distinct
    return z


#: :func:`matvec` adds the columns of at most this many nonzeros one by one
FEW_COLUMNS = 16


def constant_column(n, value, index_dtype=np.int32):
    """The (n, 1) canonical CSC column ``value * 1``."""
    column = sp.csc_array((np.full(n, float(value)), np.arange(n, dtype=index_dtype),
                           np.array([0, n], dtype=index_dtype)), shape=(n, 1))
    column.has_canonical_format = True
    return column


def check_intercept(fit_intercept, intercept_scaling):
    """None (no intercept), or the intercept column's public constant.

    ``intercept_scaling`` must lie in ``[1 / SCALE_LIMIT, SCALE_LIMIT]``, as
    any column's largest entry (:func:`sparsedp._validation.check_X`).
    """
    if not check_bool(fit_intercept, "fit_intercept"):
        return None
    return check_real(intercept_scaling, "intercept_scaling", low=1.0 / SCALE_LIMIT,
                      include_low=True, high=SCALE_LIMIT, include_high=True)


def check_coef_init(coef_init, p, intercept_init=None, intercept_scaling=None):
    """None, or the starting point as a new finite float64 array of shape (p,).

    The starting point is public (a user's choice, or the private output of an
    earlier fit): starting from it is post-processing of what it reveals.  With
    an intercept column (``intercept_scaling`` not None) ``p`` counts it:
    ``coef_init`` has ``p - 1`` entries and the column's coefficient starts at
    ``intercept_init / intercept_scaling`` (0 if None).
    """
    if intercept_scaling is None:
        if intercept_init is not None:
            raise ValueError("intercept_init needs fit_intercept=True")
        return _check_start(coef_init, p, "coef_init")
    if coef_init is None and intercept_init is None:
        return None
    w = np.zeros(p)
    if coef_init is not None:
        w[:-1] = _check_start(coef_init, p - 1, "coef_init")
    if intercept_init is not None:
        b = check_real(intercept_init, "intercept_init", low=-math.inf)
        w[-1] = b / intercept_scaling
    return w


def _check_start(values, p, name):
    return None if values is None else check_vector(values, name, p)


def check_clip(clip, epsilon):
    """``clip`` > 0; infinite only without noise (epsilon = inf)."""
    clip = check_real(clip, "clip", allow_inf=True)
    if math.isinf(clip) and math.isfinite(epsilon):
        raise ValueError("clip=inf leaves the sensitivity unbounded: a finite clip is required "
                         "when epsilon is finite")
    return clip


def available_memory():
    """Bytes of memory available to a new allocation (Linux: MemAvailable; else the
    physical memory; None where neither is known)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


#: :func:`check_memory` lets arrays this small through without reading the memory
UNCHECKED_BYTES = 1 << 26


def check_memory(nbytes, what, remedy):
    """Refuse, before any work, a run whose arrays of ``nbytes`` take more than half the
    memory available (the data, its copies and the interpreter need the rest).

    Arrays of at most :data:`UNCHECKED_BYTES` are not checked: reading the system's
    memory costs more than the iterations of a short fit.
    """
    if nbytes <= UNCHECKED_BYTES:
        return
    free = available_memory()
    if free is not None and nbytes > free / 2:
        raise ValueError(f"{what} needs {nbytes / 2**30:.3g} GiB for arrays sized by its "
                         f"iterations, more than half the {free / 2**30:.3g} GiB of memory "
                         f"available: {remedy}")


def csr_rows(X, index_dtype=np.int32):
    """The rows of a canonical CSC ``X`` for the stochastic kernels, converted once:
    ``(indptr (int64), indices (index_dtype), data (float64), row L2 norms)``.

    ValueError if a column index does not fit ``index_dtype`` (never silently wrapped).
    """
    if X.shape[1] - 1 > np.iinfo(index_dtype).max:
        raise ValueError(f"X has {X.shape[1]} columns: the stochastic kernels index at most "
                         f"{np.iinfo(index_dtype).max + 1} ({np.dtype(index_dtype).name})")
    Xr = sp.csr_array(X)
    Xr.sort_indices()
    indptr = np.ascontiguousarray(Xr.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(Xr.indices, dtype=index_dtype)
    data = np.ascontiguousarray(Xr.data, dtype=np.float64)
    norms = np.sqrt(np.bincount(np.repeat(np.arange(X.shape[0]), np.diff(indptr)),
                                weights=data ** 2, minlength=X.shape[0]))
    return indptr, indices, data, norms


def check_problem(X, y, datafit, penalty, fit_intercept=False, intercept_scaling=1.0):
    """Validate the data and the model once; return a :class:`Problem`
    (:func:`check_intercept`: the public intercept column)."""
    datafit = check_datafit(datafit)
    penalty = as_penalty(penalty)
    kernel_id(penalty)  # the kernels' penalty: a subclass without its own id is refused
    scaling = check_intercept(fit_intercept, intercept_scaling)
    X, y = check_X_y(X, y, datafit)
    return Problem(X, y, datafit, penalty, scaling)


@dataclass(frozen=True)
class Budget:
    """What the ideal mechanisms may spend, after the samplers' slack.

    ``epsilon`` is what is left after the public constants (basic composition
    with a Laplace estimate); ``mu`` is the GDP budget left when the constants
    were estimated with a Gaussian mechanism (the rest must then be Gaussian),
    else None.  ``private`` is False for ``epsilon = inf`` (no noise at all).
    """

    epsilon: float
    delta: float
    mu: float = None

    @property
    def private(self):
        return math.isfinite(self.epsilon)


@dataclass(frozen=True)
class CoordinateConstants:
    """The public constants of a coordinate method (all of shape (p,)).

    ``smoothness`` M_j, clipping ``thresholds`` ``C_j = sqrt(M_j / tr M) C`` and
    step sizes ``gamma / M_j`` (0 where ``M_j = 0``: such a coordinate never
    moves); ``clip`` is the hyper-parameter C itself.
    """

    smoothness: np.ndarray
    thresholds: np.ndarray
    steps: np.ndarray
    clip: float
    #: None, or a solver's private estimate of the constants during the run
    #: (DP-GCD: ``{"fraction", "bound", "gamma"}``, :mod:`sparsedp.solvers._dp_gcd`)
    estimate: dict = None
    #: None, or the per-feature bounds X is clipped to for the run (the private
    #: default's ``M_j`` describe the clipped data; ``info["feature_clip"]``)
    feature_clip: np.ndarray = None


def coordinate_constants(problem, smoothness, clip, step_size, budget, feature_bounds,
                         generator, ledger, mechanism="laplace"):
    """Smoothness constants (public, private or a recorded leak), thresholds, steps.

    Returns the :class:`CoordinateConstants` and the :class:`Budget` left.
    """
    feature_clip = None
    if smoothness is None and budget.private:  # the private default
        M, feature_clip, mu_left = default_smoothness(
            problem.X, problem.datafit, feature_bounds, budget.epsilon, budget.delta,
            generator, ledger, intercept=problem.intercept_column)
        epsilon_left, delta_left = budget.epsilon, budget.delta
    else:
        M, epsilon_left, mu_left, delta_left = resolve_smoothness(
            problem.X, problem.datafit, smoothness, budget.epsilon, feature_bounds, generator,
            ledger, delta=budget.delta, mechanism=mechanism,
            intercept=problem.intercept_column)
    steps = kept_derived(M, ("steps", step_size), lambda: _steps(M, step_size))
    thresholds = kept_derived(M, ("thresholds", clip), lambda: clip_thresholds(M, clip))
    constants = CoordinateConstants(M, thresholds, steps, clip, feature_clip=feature_clip)
    return constants, Budget(epsilon_left, delta_left, mu_left)


def _steps(M, step_size):
    """``step_size / M_j`` (0 where ``M_j = 0``), or a ValueError if it overflows."""
    with np.errstate(over="ignore"):
        steps = np.divide(step_size, M, out=np.zeros(M.shape[0]), where=M > 0)
    if not np.all(np.isfinite(steps)):
        raise ValueError("step_size / smoothness overflows: the smoothness constants "
                         "must be 0 or at least step_size / 1e300")
    return steps


@dataclass
class KernelOutput:
    """What a solver's :meth:`~PrivateSolver.run` returns.

    ``coef`` and the public or private ``info`` go into the result; ``counters``
    (data-dependent) and ``trace`` only into the non-private diagnostics.
    """

    coef: np.ndarray
    n_iter: int
    info: dict
    counters: dict
    trace: dict = None


class PrivateSolver:
    """Template of a private fit; subclasses implement the steps marked below.

    Subclasses define :meth:`check_options`, :meth:`integer_draws`,
    :meth:`calibrate` and :meth:`run`, and may extend :meth:`sampler_slack`.
    :meth:`fit` is the same for every algorithm.
    """

    def check_options(self, problem, **options):
        """Validate the algorithm's own options; return them as a dict."""
        raise NotImplementedError

    def integer_draws(self, problem, options):
        """Number of integer noise draws the kernel makes (for the sampler slack)."""
        raise NotImplementedError

    #: what the samplers' slack comes from, and what avoids it (the slack errors' hint)
    SLACK_SOURCES = ("the integer noise's draws, each within exp(+-2**-40) of its law: a "
                     "larger epsilon or fewer iterations")

    def sampler_slack(self, problem, options, epsilon, delta, estimates):
        """The samplers' ``(eta, tv)``: multiplicative and total-variation slack.

        Every integer noise draw's law is within ``exp(+-NOISE_ETA)`` of its
        ideal law (:class:`~sparsedp.privacy.PrivacyLedger`,
        ``add_sampler_error``); the kernel's draws and the p draws of a private
        smoothness estimate are counted here.  Subclasses add their noisy max.
        """
        from .._kernels._noise import NOISE_ETA
        draws = self.integer_draws(problem, options) + estimates
        return NOISE_ETA * draws, 0.0

    def constants(self, problem, smoothness, clip, step_size, budget, feature_bounds,
                  generator, ledger, mechanism, options):
        """The :class:`CoordinateConstants` and the :class:`Budget` left
        (:func:`coordinate_constants`; a solver may estimate them otherwise)."""
        return coordinate_constants(problem, smoothness, clip, step_size, budget,
                                    feature_bounds, generator, ledger, mechanism)

    def calibrate(self, problem, constants, budget, ledger, options):
        """The noise for ``budget``; record every mechanism on ``ledger``."""
        raise NotImplementedError

    def run(self, problem, constants, plan, generator, options, trace):
        """Run the kernel; return a :class:`KernelOutput`."""
        raise NotImplementedError

    def fit(self, X, y, datafit, penalty, *, epsilon, delta, clip, step_size, smoothness,
            feature_bounds, random_state, trace, diagnostics, smoothness_mechanism="laplace",
            coef_init=None, fit_intercept=False, intercept_scaling=1.0, intercept_init=None,
            **options):
        """Run the steps in order (module docstring) and return the Result."""
        problem = check_problem(X, y, datafit, penalty, fit_intercept, intercept_scaling)
        epsilon, delta = check_privacy_budget(epsilon, delta)
        clip = check_clip(clip, epsilon)
        step_size = check_real(step_size, "step_size")
        trace = check_bool(trace, "trace")
        diagnostics = check_bool(diagnostics, "diagnostics")
        options = self.check_options(problem, **options)
        options["coef_init"] = check_coef_init(coef_init, problem.p, intercept_init,
                                               problem.intercept_scaling)
        generator = check_random_state(random_state)
        ledger = PrivacyLedger(delta=delta)

        budget = Budget(epsilon, delta)
        if not budget.private:
            record_no_noise(ledger)
        else:
            eta, tv = self.sampler_slack(problem, options, epsilon, delta,
                                         estimate_draws(problem, smoothness, feature_bounds))
            budget = _after_slack(epsilon, delta, eta, tv, self.SLACK_SOURCES)
        constants, budget = self.constants(
            problem, smoothness, clip, step_size, budget, feature_bounds, generator,
            ledger, smoothness_mechanism, options)
        run_on = problem if constants.feature_clip is None else problem.clipped(
            constants.feature_clip)
        plan = self.calibrate(run_on, constants, budget, ledger, options)
        out = self.run(run_on, constants, plan, generator, options, trace)
        out.info["feature_clip"] = constants.feature_clip
        return result_of(problem, out, ledger, diagnostics or trace)


def result_of(problem, out, ledger, diagnostics):
    """The :class:`Result` of a kernel's output; the non-private diagnostics
    (computed on the data, not released) only when asked for."""
    if not np.all(np.isfinite(out.coef)):  # post-processing of the private output
        raise FloatingPointError(
            "the fit's coefficients overflowed (not finite): the step sizes or the "
            "problem's scale are out of floating-point range")
    diag = None
    if diagnostics:
        diag = NonPrivateDiagnostics(objective=problem.objective(out.coef), trace=out.trace,
                                     counters=out.counters)
    coef, intercept = problem.split(out.coef)
    return Result(coef=coef, n_iter=out.n_iter, privacy=ledger, info=out.info,
                  diagnostics=diag, intercept=intercept)


def estimate_draws(problem, smoothness, feature_bounds):
    """Integer draws of the private estimates of the constants (at most): the
    defaults' (``smoothness=None``) a count per bin of every feature's histogram and
    of the rows' bound (after selection: the bound and one draw per iteration, fewer);
    DP-CD-P's (a fraction) one value per coordinate, and the bound's counts without
    ``feature_bounds``; none for public constants."""
    from ._scales import N_BINS
    bound = N_BINS if feature_bounds is None else 0
    if smoothness is None:
        return problem.p * N_BINS + bound
    if np.ndim(smoothness) == 0 and not isinstance(smoothness, str):
        return problem.p + bound
    return 0


def _after_slack(epsilon, delta, eta, tv, sources):
    """The ideal mechanisms' budget once the samplers' floating-point slack is paid.

    ``eta`` (the multiplicative slack H of every draw together) costs ``2 eta`` of
    epsilon and a factor ``e^-eta`` of delta; ``tv`` (total variation) costs
    ``(1 + e^epsilon) tv`` of delta, reserved twice so that the ledger, which charges
    it at the epsilon it reports, finds that epsilon valid (``PrivacyLedger``,
    ``add_sampler_error`` / ``add_sampler_tv``).  A budget the samplers cannot meet
    (the ideal run left with half of delta or less, or no epsilon) is a ValueError
    before any work, naming ``sources`` (what the slack comes from and what avoids it).
    """
    from ..privacy.ledger import slack_delta, tv_charge
    charge = 2.0 * tv_charge(epsilon, tv)
    left = slack_delta(delta - charge, eta) if charge < delta else 0.0
    if not left > delta / 2:
        if charge > 0:
            raise ValueError(
                f"delta = {delta:g} is too small for the samplers' floating-point slack: "
                f"their total variation {tv:.3g} costs (1 + e^epsilon) tv = {charge / 2:.3g} "
                f"of delta at epsilon = {epsilon:g} ({sources})")
        raise ValueError(f"delta = {delta:g} is too small for the samplers' floating-point "
                         f"slack: delta e^-eta (eta = {eta:.3g}) rounds to {left:.3g}; "
                         "choose a larger delta")
    ideal = Budget(epsilon - 2.0 * eta, left)
    if ideal.epsilon <= 0:
        raise ValueError(f"epsilon = {epsilon} is below the samplers' slack "
                         f"{2 * eta:.3g} ({sources})")
    return ideal
