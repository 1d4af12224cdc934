"""DP-CD: differentially private proximal randomized coordinate descent.

Algorithm 1 of Mangold, Bellet, Salmon, Tommasi, "Differentially Private
Coordinate Descent for Composite Empirical Risk Minimization" (ICML 2022), with
coordinate-wise clipping (Section 5.1), optionally private smoothness constants
(DP-CD-P, Section 5.2 / Appendix F) and exact Gaussian accounting.
"""
import math

import numpy as np

from .._kernels._dp_cd_fast import CoordinateBlocks, RandomStreams, dp_cd_steps
from .._kernels._immutable import kept_derived
from .._kernels import kernel_id
from .._validation import check_bool, check_integer, check_option, check_real
from ..datafits import Squared
from ..privacy import calibrate_gaussian
from ._base import KernelOutput, PrivateSolver, split_generator
from ._release import GridRelease
from ._spec import Hyperparameter, SolverSpec

__all__ = ["dp_cd"]

ORDERS = ("uniform", "shuffle")


class DPCD(PrivateSolver):
    """DP-CD on the :class:`~sparsedp.solvers._base.PrivateSolver` skeleton."""

    def check_options(self, problem, *, passes, outer, averaging, order, trace_every):
        passes = check_real(passes, "passes")
        outer = check_integer(outer, "outer")
        updates = passes * problem.p
        if outer > updates:
            raise ValueError(
                f"outer = {outer} is larger than the number of updates passes * "
                f"n_features = {updates:g}: every outer loop needs at least one update")
        return {"outer": outer, "inner": max(1, int(round(updates / outer))),
                "averaging": check_bool(averaging, "averaging"),
                "order": check_option(order, "order", ORDERS),
                "trace_every": check_real(trace_every, "trace_every")}

    def integer_draws(self, problem, options):
        return options["outer"] * options["inner"]

    def calibrate(self, problem, constants, budget, ledger, options):
        steps = options["outer"] * options["inner"]
        if not budget.private:
            return None
        if budget.mu is None:
            z = calibrate_gaussian(budget.epsilon, budget.delta, steps)
        else:  # exact GDP split; nudged up so that rounding never helps
            z = math.sqrt(steps) / budget.mu * (1.0 + 1e-12)
        # the grid of coordinate j in units of C_j: that of a sensitivity 2 (the
        # sum moves by 2 C_j); the kernel multiplies by C_j and divides the
        # inverse by it (one more rounding, covered by grid_for's rounding down)
        release = GridRelease("gaussian", z, problem.n, 2.0)
        ledger.add_gaussian(
            "coordinate gradients (discretised Gaussian on a grid, L2 sensitivity "
            "2 C_j rho / n of the computed sum, sigma_j = z * 2 C_j rho / n)", z,
            count=steps)
        ledger.add_sampler_error("coordinate gradients' integer noise",
                                 release.noise.eta, count=steps)
        return release

    def run(self, problem, constants, release, generator, options, trace):
        X, y, datafit, penalty = problem.X, problem.y, problem.datafit, problem.penalty
        p = problem.p
        T, K, averaging = options["outer"], options["inner"], options["averaging"]
        if release is None:
            mode, noise, grid, inv_grid = "none", None, 0.0, 0.0
        else:
            mode, noise = "grid", release.noise
            grid, inv_grid = float(release.grid), float(release.inv_grid)
        w = np.zeros(p) if options["coef_init"] is None else options["coef_init"].copy()
        blocks = CoordinateBlocks(X, constants.steps, constants.thresholds, w,  # holds theta
                                  intercept_scaling=problem.intercept_scaling)
        streams = RandomStreams(p, *split_generator(generator), selection=options["order"],
                                noise=noise)
        try:  # the blocks' layout is kept for the next fit on an immutable X
            every = max(1, int(round(options["trace_every"] * p)))
            passes_done, values, moves = [], [], 0
            for t in range(T):
                if t:  # the new blocks start at w, their average empty; X @ w from the
                    margin = np.empty(problem.n)  # blocks in the same walk (its values)
                    blocks.restart(w, margin)
                else:  # X @ 0 is +0.0 in every row, as scipy computes it
                    margin = problem.margin(w) if w.any() else np.zeros(problem.n)
                deriv = datafit.derivative(margin, y)
                k = 0
                while k < K:
                    todo = min(K - k, every - (t * K + k) % every) if trace else K
                    moves += dp_cd_steps(
                        kernel_id(datafit), blocks, y, margin, deriv, mode, grid, inv_grid,
                        averaging, k, todo, penalty.l1, penalty.l2, streams)
                    k += todo
                    if trace and ((t * K + k) % every == 0 or (t == T - 1 and k == K)):
                        current = blocks.get_average(k) if averaging else blocks.get_theta()
                        passes_done.append((t * K + k) / p)
                        values.append(problem.objective(current))
                w = blocks.get_average(K) if averaging else blocks.get_theta()
        finally:
            blocks.release()

        C = constants.thresholds
        info = {"noise_multiplier": 0.0 if release is None else release.multiplier,
                "smoothness": constants.smoothness, "clip_thresholds": C,
                "noise_scales": np.zeros(p) if release is None
                else kept_derived(C, ("noise scales", release.scales, problem.n),
                                  lambda: release.scales * C / problem.n),
                "step_sizes": constants.steps, "inner_steps": K, "outer": T}
        if release is not None:
            info.update(grid=kept_derived(C, ("grid", grid, problem.n),
                                          lambda: grid * C / problem.n),
                        grid_points=release.points,
                        float_sum_factor=release.rho)
        tr = ({"passes": np.array(passes_done), "objective": np.array(values)}
              if trace else None)
        return KernelOutput(coef=w, n_iter=T * K, info=info, counters={"moves": moves},
                            trace=tr)


def dp_cd(X, y, datafit, penalty=None, *, epsilon, delta, passes, clip, step_size=1.0,
          outer=1, smoothness=None, feature_bounds=None, smoothness_mechanism="laplace",
          averaging=True, order="uniform", random_state=None, trace=False,
          trace_every=1.0, diagnostics=False, coef_init=None,
          fit_intercept=False, intercept_scaling=1.0, intercept_init=None):
    """Differentially private proximal randomized coordinate descent (DP-CD).

    Minimises ``F(w) = (1/n) sum_i loss(x_i . w, y_i) + penalty(w)`` under
    (epsilon, delta)-DP, replace-one neighbours.  ``outer = T`` outer loops of
    ``K = round(passes * p / T)`` inner steps each; a step picks ``j`` uniformly,
    releases the clipped coordinate gradient with Gaussian noise and takes a
    proximal step with ``gamma_j = step_size / M_j``; each outer iterate is the
    average of its inner iterates (or the last one, ``averaging=False``).

    Privacy: per-sample gradient terms ``X_ij loss'(x_i . w, y_i)`` are clipped
    to ``C_j = sqrt(M_j / tr M) * clip``, so the released coordinate gradient
    has L2 sensitivity ``2 C_j / n``; its noise is ``N(0, (z 2 C_j / n)^2)`` with
    one multiplier ``z`` for every step.  The T K adaptive releases compose to a
    single Gaussian mechanism (``sqrt(TK)/z``-GDP), so ``z`` is the exact
    smallest value (:func:`~sparsedp.privacy.calibrate_gaussian`).  The
    coordinate choice and the averaging use no data.

    Parameters
    ----------
    X : sparse matrix/array or ndarray of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    datafit : Squared or Logistic
    penalty : L1, L2, ElasticNet or None
    epsilon : float
        Privacy budget, > 0; ``inf`` runs the same algorithm without noise.
    delta : float in (0, 1)
    passes : float
        Total coordinate updates divided by p (T K = passes * p).
    clip : float
        The clipping hyper-parameter C (``inf`` only with ``epsilon=inf``).
    step_size : float, default=1.0
        gamma in ``gamma_j = gamma / M_j``.
    outer : int, default=1
        T, the number of outer loops (1: the convex setting).
    smoothness : None, "leak", array of shape (n_features,) or float in (0, 1)
        None (the default): estimated privately inside the budget from
        per-feature noisy log-scale histograms (docs/defaults.rst, "Private
        constants"; each estimate a Gaussian mechanism on the ledger, composed
        exactly with the gradient releases), and X clipped for the run to the
        private per-feature bounds ``info["feature_clip"]`` (the constants
        describe the clipped data; clip X so at prediction);
        ``"leak"``: computed from the data, with a ``PrivacyLeakWarning`` and a
        leak in the privacy report, whose epsilon is then ``inf`` (the papers'
        experiments); array: public constants; float: the fraction of epsilon
        spent estimating them privately (DP-CD-P, Laplace mechanism).
    feature_bounds : None, float or array, optional
        Public bound on ``|X_ij|`` per feature, used by the private estimates of
        the smoothness constants (None: a private bound, one more estimate).
    smoothness_mechanism : {"laplace", "gaussian"}, default="laplace"
        How DP-CD-P releases the constants.  ``"laplace"`` (the paper's) spends
        the fraction ``smoothness`` of epsilon (basic composition with the rest);
        ``"gaussian"`` spends that fraction of the GDP budget ``mu^2`` and
        composes exactly with the gradient releases (noise grows as sqrt(p)
        instead of p: much less for many features).
    averaging : bool, default=True
        Periodic averaging (Algorithm 1, line 9); False returns the last inner
        iterate of each outer loop.  Both are post-processing: same privacy.
    order : {"uniform", "shuffle"}, default="uniform"
        How coordinates are picked: uniformly at random at every step
        (Algorithm 1), or by passes over fresh random permutations (every
        coordinate once per pass; no coordinate is left out by chance).  The
        order never depends on the data, so the privacy guarantee is the same.
        With few passes prefer ``"shuffle"``: after 2 uniform passes a coordinate
        is never drawn with probability e^-2 (on the Sparse LASSO benchmark,
        relative error 0.35 against 0.26 on fresh seeds).
    coef_init : array of shape (n_features,), optional
        The starting point (default 0).  Public: a user's choice or the output
        of an earlier private fit (a warm start is post-processing of it, but
        the two fits on the same data compose: add up their privacy reports).
    fit_intercept : bool, default=False
        Fit an intercept b, the model ``X @ coef + b``, as liblinear does: one
        more coordinate, the public column ``intercept_scaling * 1`` appended
        to X, penalised, clipped, noised and counted like the others (the fit
        is that on ``[X, intercept_scaling * 1]``, the same numbers for the
        same seed, but the column is handled inside the solver's own layout of
        X: no copy of X is made).  Its smoothness constant ``beta *
        intercept_scaling**2`` and its bound ``intercept_scaling`` are public:
        ``smoothness`` (an array) and ``feature_bounds`` describe X's columns
        only.  ``n_iter`` and the privacy report count the extra coordinate
        (``passes * (n_features + 1)`` updates).
    intercept_scaling : float, default=1.0
        The intercept column's constant s, in [1e-140, 1e140]; ``b = s w_b``.
        A larger s lets b move further at the same penalty.
    intercept_init : float, optional
        The starting intercept (default 0; public, as ``coef_init``).
    random_state : None, int, SeedSequence or numpy Generator
        Source of the coordinate choices and of the noise (reproducible).
    trace : bool, default=False
        Record the objective of the would-be output every ``trace_every`` passes,
        in ``res.diagnostics.trace`` (implies ``diagnostics=True``).  A
        non-private diagnostic, computed on the training data without noise.
    trace_every : float, default=1.0
    diagnostics : bool, default=False
        Also compute :class:`~sparsedp.solvers.NonPrivateDiagnostics`: the
        objective F at ``coef`` on the training data and the number of moving
        steps.  They are not part of the released output and not covered by the
        privacy report: whoever publishes them (or anything computed from them,
        e.g. a relative error) breaks the (epsilon, delta) guarantee.

    Returns
    -------
    Result
        ``coef`` (the private output, shape (n_features,)), ``intercept`` (b,
        0 without ``fit_intercept``), ``n_iter`` (coordinate updates T K),
        ``privacy`` (a :class:`~sparsedp.privacy.PrivacyLedger`), ``info``
        (public values: ``noise_multiplier``, ``smoothness``,
        ``clip_thresholds``, ``noise_scales``, ``step_sizes``, ``inner_steps``,
        ``outer``) and ``diagnostics`` (None unless ``diagnostics`` or
        ``trace``; else non-private: ``objective``, ``trace`` with ``"passes"``
        and ``"objective"``, ``counters["moves"]``, the steps that changed the
        iterate).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sparsedp.datafits import Squared
    >>> from sparsedp.penalties import L1
    >>> X = sp.random(200, 50, density=0.2, format="csc", rng=0)
    >>> y = X @ np.r_[np.ones(5), np.zeros(45)]
    >>> M = Squared().smoothness(X)          # pretend public
    >>> res = dp_cd(X, y, Squared(), L1(0.01), epsilon=1.0, delta=1e-5, passes=5,
    ...             clip=1.0, smoothness=M, random_state=0)
    >>> round(res.privacy.epsilon, 6) <= 1.0
    True
    """
    return DPCD().fit(
        X, y, datafit, penalty, epsilon=epsilon, delta=delta, clip=clip,
        step_size=step_size, smoothness=smoothness, feature_bounds=feature_bounds,
        smoothness_mechanism=smoothness_mechanism, random_state=random_state,
        trace=trace, diagnostics=diagnostics, passes=passes, outer=outer,
        averaging=averaging, order=order, trace_every=trace_every, coef_init=coef_init,
        fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
        intercept_init=intercept_init)


#: ``solver="auto"`` runs DP-CD when n/p exceeds this ratio, for a penalty with an
#: L1 part ("l1": else DP-GCD) and without ("l2": else DP-SGD); measured at epsilon
#: 0.3, 1 and 3 (:func:`sparsedp.linear_model.choose_solver`, docs/defaults.rst)
CD_MIN_RATIO = {"l1": 1000.0, "l2": 10.0}
#: the estimators' default clip is ``kappa * unit``, ``kappa = CD_KAPPA_FACTOR
#: (n mu / sqrt(T))**CD_KAPPA_POWER`` within ``KAPPA_RANGE`` (:func:`default_kappa`)
CD_KAPPA_FACTOR = 0.11
CD_KAPPA_POWER = 0.65
KAPPA_RANGE = (0.1, 5.0)
#: the estimators' step on the squared loss (M_j its exact curvature: gamma = 1 would
#: follow the noise fully; 0.3 measured best on California, 1 on the logistic loss)
SQUARED_CD_STEP = 0.3


def default_kappa(n_samples, releases, epsilon, delta):
    """DP-CD's default clip in units of the per-sample gradient scale at 0.

    ``kappa = 0.11 (n mu / sqrt(T))**0.65`` within ``KAPPA_RANGE`` (0.1 to 5),
    with ``T`` the coordinate updates and ``mu`` the Gaussian-DP parameter of
    (epsilon, delta): the noise of an update relative to a gradient at the clip
    is ``~ kappa sqrt(T) / (n mu)``, and the measured best kappa grows with ``n
    mu / sqrt(T)`` (0.3 to 0.4 on 200 to 450 rows, 4 to 5 on California and
    Electricity with the private constants; docs/defaults.rst).  Only public
    values enter.
    """
    mu = 1.0 / calibrate_gaussian(epsilon, delta, 1)
    kappa = CD_KAPPA_FACTOR * (n_samples * mu / math.sqrt(max(releases, 1))) ** CD_KAPPA_POWER
    return min(max(kappa, KAPPA_RANGE[0]), KAPPA_RANGE[1])


#: the noise floor the default clip allows, in units of the loss at 0
NOISE_FLOOR = 1.0


def noise_floor_kappa(n_samples, n_features, releases, epsilon, delta, step, beta,
                      derivative, zero_loss):
    """A cap on DP-CD's default kappa: the noise's own floor at most F(0).

    An update of coordinate ``j`` adds ``gamma / M_j`` times a Gaussian of
    standard deviation ``sigma_j = 2 C_j sqrt(T) / (n mu)``, ``C_j = C sqrt(M_j
    / tr M)``.  On a quadratic of curvature ``M_j`` along each coordinate, the
    iterates settle around the optimum with an excess objective of ``gamma
    sigma_j^2 / (2 M_j (2 - gamma))`` per coordinate, the same for every ``j``
    (``sigma_j^2 / M_j = 4 C^2 T / (n mu)^2 / tr M``); over ``min(T, p)``
    coordinates that were updated, ``2 gamma C^2 T min(T, p) / ((n mu)^2 tr M
    (2 - gamma))``.  Kept below ``NOISE_FLOOR F(0)``, with ``C = kappa unit``,
    ``unit^2 = tr M derivative^2 / beta``:

    ``kappa <= (n mu / (derivative sqrt(T))) sqrt(NOISE_FLOOR F(0) beta (2 - gamma)
    / (2 gamma min(T, p)))``.

    It binds where p is not small against n (many coordinates, few updates
    each, every one mostly noise: dorothea's shape, where the uncapped default
    took DP-CD to 4,000 times the error of w = 0); on the shapes DP-CD is
    chosen for (n > 1,000 p with L1, 10 p without) it is several times the
    default.  Public values only.
    """
    mu = 1.0 / calibrate_gaussian(epsilon, delta, 1)
    updated = max(1.0, min(float(releases), float(n_features)))
    gamma = min(float(step), 1.999)
    room = NOISE_FLOOR * zero_loss * beta * (2.0 - gamma) / (2.0 * gamma * updated)
    return n_samples * mu / (derivative * math.sqrt(max(releases, 1))) * math.sqrt(room)


SPEC = SolverSpec(
    name="dp_cd", key="cd", label="DP-CD", function=dp_cd, budget="passes",
    relation="replace-one",
    datafit_requires=(("smooth", "a smooth datafit (finite beta)"),), penalty_requires=(),
    smoothness="coordinate",
    budget_grid=Hyperparameter("passes", (1, 2, 5), (1, 2, 5, 10, 20, 50)),
    hyperparameters=(
        Hyperparameter("clip", (0.01, 0.1, 1.0), (0.01, 0.03, 0.1, 0.3, 1.0, 3.0), per_unit=True),
        Hyperparameter("step_size", (0.1, 1.0), (0.1, 0.3, 1.0))),
    # every further pass only adds noise when p >= n (docs/defaults.rst)
    default_budget=lambda n, p, epsilon: 2.0 if p >= n else 20.0,
    default_step=lambda n, p, datafit: SQUARED_CD_STEP if isinstance(datafit, Squared) else 1.0,
    default_kappa=default_kappa,
    kappa_cap=noise_floor_kappa,
    releases=lambda passes, n_columns: passes * n_columns,
    auto=lambda datafit, l1, n, p: (datafit.smooth
                                    and n > CD_MIN_RATIO["l1" if l1 > 0.0 else "l2"] * p),
    options={"averaging": False, "order": "shuffle"})
