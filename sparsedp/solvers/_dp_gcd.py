"""DP-GCD: differentially private (proximal) greedy coordinate descent.

Algorithms 1 and 2 of Mangold, Bellet, Salmon, Tommasi, "High-Dimensional
Private Empirical Risk Minimization by Greedy Coordinate Descent" (AISTATS
2023), with the selection made a valid noisy max for every rule (noise on a
score of bounded sensitivity, Laplace at scale ``2 Delta / eps0`` or the
exponential mechanism) and the whole run accounted at the tightest valid method.
"""
import functools
import math

import numpy as np

from .._kernels._dp_gcd_fast import GreedyKernel
from .._kernels._immutable import kept_derived
from .._kernels import kernel_id
from .._validation import check_integer, check_option, check_privacy_budget
from ..privacy import PrivacyLedger, calibrate, calibrate_gaussian
from ._base import (CoordinateConstants, KernelOutput, PrivateSolver, check_memory,
                    coordinate_constants)
from ._release import GridRelease
from ._scales import estimate_multiplier
from ._smoothness import check_fraction, clip_thresholds, estimate_bounds
from ._spec import Hyperparameter, SolverSpec

__all__ = ["dp_gcd", "calibrate_dp_gcd", "STEP_SHARE"]

#: ``smoothness=None`` with fewer iterations than coordinates: the share of the
#: solver's GDP budget spent on the selected coordinates' constants (measured on
#: dorothea, docs/defaults.rst "Private constants")
STEP_SHARE = 0.05
SELECTIONS = ("exponential", "laplace")
GRADIENT_NOISES = ("laplace", "gaussian")
RULES = ("gs-r", "gs-s", "gs-q")
#: the noisy max of ``selection=None`` (dp_gcd, calibrate_dp_gcd and the estimators):
#: measured better whenever the two mechanisms' epsilon0 differ (docs/defaults.rst), and
#: free of report-noisy-max's total-variation slack at large epsilon
DEFAULT_SELECTION = "exponential"
# The noise of the selection is calibrated for the scores' sensitivity times this:
# room for the kept gradient's rounding drift (at most 2**-14 of a coordinate
# gradient's sensitivity on each side, GreedyKernel) and for the floating-point
# evaluation of the scores (docs/privacy.rst, "Floating point").
SCORE_FLOAT_FACTOR = 1.0 + 2.0 ** -10
# The noisy max's samplers under floating point (docs/privacy.rst, "Noisy max under
# floating point"): every index probability of the exponential mechanism is within
# exp(+-2**-38) of the ideal law; report-noisy-max is within total variation
# laplace_selection_tv(p) of it.
EXPONENTIAL_SELECTION_ETA = 2.0 ** -38


def laplace_selection_tv(n_candidates):
    """Total-variation bound of one report-noisy-max draw over ``n_candidates``."""
    m = max(int(n_candidates), 1)
    return 2.0 ** -52 * (1725.0 + 14.5 * math.log(m)) + m * 2.0 ** -66


def _value_multiplier(epsilon0, selection, gradient_noise):
    """Noise multiplier of the released gradient: Laplace ``1/eps0`` or Gaussian z.

    The Gaussian release gets the zCDP cost of the selection step: ``1 / (2 z^2)
    = eps0^2 / 8`` (exponential, bounded range) or ``eps0^2 / 2`` (Laplace).
    """
    if gradient_noise == "laplace":
        return 1.0 / epsilon0
    return (2.0 if selection == "exponential" else 1.0) / epsilon0


def _ledger(epsilon0, n_iter, selection, gradient_noise, delta, *, score_sensitivity=None,
            ledger=None, step_multiplier=None, prior=()):
    """The mechanisms of ``n_iter`` DP-GCD iterations at per-step ``epsilon0``
    (and, with ``step_multiplier``, the Gaussian estimate of each selected
    coordinate's smoothness constant; ``prior``: the ``(multiplier, count)`` of the
    Gaussian estimates made before the run, on a new ledger only)."""
    if ledger is None:
        ledger = PrivacyLedger(delta=delta)
        for z, count in prior:
            ledger.add_gaussian("a private estimate before the run", z, count=count)
    if step_multiplier is not None:
        ledger.add_gaussian(
            "smoothness constant of each selected coordinate (discretised Gaussian on a "
            "grid, L2 sensitivity beta B^2 / n, sigma = z beta B^2 / n)", step_multiplier,
            count=n_iter)
    # the selection's noise on each score: scale 2 Delta / eps0 (Gumbel for the
    # exponential mechanism, Laplace for report-noisy-max), printed in the report
    noise = {} if score_sensitivity is None else {"noise_multiplier": 2.0 / epsilon0}
    if selection == "exponential":
        ledger.add_bounded_range(
            "coordinate selection (exponential mechanism on the rule's score, "
            "P(j) ∝ exp(eps0 s_j / (2 Delta)))", epsilon0, count=n_iter,
            sensitivity=score_sensitivity, **noise)
    else:
        ledger.add_pure(
            "coordinate selection (report-noisy-max, Lap(2 Delta / eps0) on the "
            "rule's score)", epsilon0, count=n_iter, sensitivity=score_sensitivity,
            **noise, **({"noise_law": "laplace"} if noise else {}))
    b = _value_multiplier(epsilon0, selection, gradient_noise)
    if gradient_noise == "laplace":
        ledger.add_laplace(
            "coordinate gradient (Laplace, L1 sensitivity 2 C_j / n, scale "
            "2 C_j / (n eps0))", b, count=n_iter)
    else:
        ledger.add_gaussian(
            "coordinate gradient (Gaussian, L2 sensitivity 2 C_j / n, "
            "sigma_j = z 2 C_j / n)", b, count=n_iter)
    return ledger


@functools.lru_cache(maxsize=4096)
def _calibrate(epsilon, delta, n_iter, selection, gradient_noise, step_multiplier=None,
               prior=()):
    return calibrate(lambda e0: _ledger(e0, n_iter, selection, gradient_noise, delta,
                                        step_multiplier=step_multiplier, prior=prior),
                     epsilon, delta, epsilon / (2 * n_iter), noise=False)


def step_estimate_multiplier(epsilon, delta, n_iter, fraction):
    """z of the ``n_iter`` Gaussian estimates of the selected coordinates'
    smoothness constants: together ``sqrt(fraction) mu``-GDP, ``mu`` the GDP
    parameter of (epsilon, delta) (a ``fraction`` of the GDP budget ``mu^2``)."""
    mu = 1.0 / calibrate_gaussian(epsilon, delta, 1)
    return math.sqrt(n_iter) / (math.sqrt(fraction) * mu)


def calibrate_dp_gcd(epsilon, delta, n_iter, selection=None, gradient_noise="laplace"):
    """Largest per-step epsilon0 such that ``n_iter`` DP-GCD iterations are (epsilon, delta)-DP.

    Each iteration is one selection (exponential mechanism: epsilon0-DP and
    epsilon0-bounded-range; or Laplace report-noisy-max: epsilon0-DP) and one
    release of the coordinate gradient (Laplace: epsilon0-DP; Gaussian: a
    Gaussian mechanism with the selection's zCDP cost).  The ``2 n_iter``
    mechanisms are accounted by :class:`~sparsedp.privacy.PrivacyLedger`: the
    minimum of the optimal composition of pure-DP mechanisms (Kairouz et al.),
    advanced composition, zCDP, RDP and their splits; epsilon0 is its largest
    value within budget (:func:`sparsedp.privacy.calibrate`, on the safe side).

    Parameters
    ----------
    epsilon : float
    delta : float in (0, 1)
    n_iter : int
    selection : {"exponential", "laplace"} or None
        None: the exponential mechanism (as in :func:`dp_gcd`).
    gradient_noise : {"laplace", "gaussian"}

    Returns
    -------
    epsilon0 : float
    """
    epsilon, delta = check_privacy_budget(epsilon, delta)
    n_iter = check_integer(n_iter, "n_iter")
    selection = DEFAULT_SELECTION if selection is None else check_option(
        selection, "selection", SELECTIONS)
    check_option(gradient_noise, "gradient_noise", GRADIENT_NOISES)
    if math.isinf(epsilon):
        return math.inf
    return _calibrate(epsilon, delta, int(n_iter), selection, gradient_noise)


class DPGCD(PrivateSolver):
    """DP-GCD on the :class:`~sparsedp.solvers._base.PrivateSolver` skeleton."""

    def check_options(self, problem, *, n_iter, rule, selection, gradient_noise,
                      refresh_every):
        n_iter = check_integer(n_iter, "n_iter")
        # the released selections and values (int64 + float64 + the selected indices)
        check_memory(24 * n_iter, f"dp_gcd with n_iter={n_iter}", "fewer iterations")
        return {"n_iter": n_iter,
                "rule": check_option(rule, "rule", RULES),
                "selection": DEFAULT_SELECTION if selection is None
                else check_option(selection, "selection", SELECTIONS),
                "gradient_noise": check_option(gradient_noise, "gradient_noise",
                                               GRADIENT_NOISES),
                "refresh_every": check_integer(refresh_every, "refresh_every")}

    def integer_draws(self, problem, options):
        return options["n_iter"]

    SLACK_SOURCES = ("report-noisy-max's floating-point total variation, charged as "
                     "(1 + e^epsilon) tv: a smaller epsilon or selection='exponential' "
                     "avoids it")

    def sampler_slack(self, problem, options, epsilon, delta, estimates):
        """Adds the selections': the exponential mechanism's index law is within
        ``exp(+-2**-38)`` of the ideal, report-noisy-max's within total variation
        :func:`laplace_selection_tv` (docs/privacy.rst, "Noisy max under floating
        point"), paid from delta as ``(1 + e^epsilon) tau`` per draw."""
        eta, _ = super().sampler_slack(problem, options, epsilon, delta, estimates)
        n_iter = options["n_iter"]
        tv = 0.0 if options["selection"] == "exponential" else (
            n_iter * laplace_selection_tv(problem.p))
        return eta + EXPONENTIAL_SELECTION_ETA * n_iter, tv

    def constants(self, problem, smoothness, clip, step_size, budget, feature_bounds,
                  generator, ledger, mechanism, options):
        """A private estimate (``smoothness`` a fraction) with fewer iterations than
        coordinates is made after each selection, for the selected coordinate only
        (:func:`dp_gcd`); otherwise as every coordinate method."""
        after_selection = (np.ndim(smoothness) == 0 and not isinstance(smoothness, str)
                           and budget.private
                           and SPEC.smoothness_after_selection(options["n_iter"], problem.p))
        if not after_selection:
            return coordinate_constants(problem, smoothness, clip, step_size, budget,
                                        feature_bounds, generator, ledger, mechanism)
        fraction = STEP_SHARE if smoothness is None else check_fraction(smoothness)
        # without feature_bounds a private bound, composed in calibrate (prior)
        B = estimate_bounds(problem.X, feature_bounds, ledger, problem.intercept_column,
                            multiplier=estimate_multiplier(budget.epsilon, budget.delta),
                            generator=generator)
        bound = problem.datafit.beta * float(np.max(B)) ** 2
        M = np.full(problem.p, bound)  # the prior of the scores and thresholds
        steps = np.full(problem.p, step_size / bound)
        estimate = {"fraction": fraction, "bound": bound, "gamma": step_size}
        return CoordinateConstants(M, clip_thresholds(M, clip), steps, clip,
                                   estimate), budget

    def calibrate(self, problem, constants, budget, ledger, options):
        M = constants.smoothness
        trace_m = kept_derived(M, ("trace",), lambda: float(M.sum()))
        if trace_m <= 0:
            raise ValueError("every smoothness constant is zero (X has no nonzero): "
                             "nothing to optimise")
        # A coordinate with M_j = 0 (an empty column) can never move: it is left
        # out of the noisy max.  Post-processing of M, which is public, a private
        # estimate, or the warned leak: the candidate set reveals nothing more.
        live = kept_derived(M, ("live",), lambda: np.flatnonzero(M > 0))
        plan = {"live": live, "selection": options["selection"]}
        if not budget.private:
            plan.update(epsilon0=math.inf,
                        sensitivity=0.0, scale=0.0, release=None)
            return plan
        n_iter, gradient_noise = options["n_iter"], options["gradient_noise"]
        selection = plan["selection"]
        step_release = z_step = None
        if constants.estimate is not None:
            z_step = step_estimate_multiplier(budget.epsilon, budget.delta, n_iter,
                                              constants.estimate["fraction"])
            step_release = GridRelease("gaussian", z_step, problem.n,
                                       constants.estimate["bound"])
        # the private estimates already on the ledger (the defaults' Gaussians) compose
        # with the run: eps0 is calibrated for the whole
        prior = tuple((m.noise_multiplier, m.count) for m in ledger.entries
                      if m.kind == "gaussian")
        eps0 = _calibrate(budget.epsilon, budget.delta, n_iter, selection, gradient_noise,
                          z_step, prior)
        # the scores' sensitivity, with room for the kept gradient's rounding
        # drift and the scores' floating-point evaluation (SCORE_FLOAT_FACTOR)
        sensitivity = (2.0 * constants.clip / (problem.n * math.sqrt(trace_m))
                       * SCORE_FLOAT_FACTOR)
        scale = 2.0 * sensitivity / eps0
        law = "laplace" if gradient_noise == "laplace" else "gaussian"
        thresholds = constants.thresholds
        release = GridRelease(law, _value_multiplier(eps0, selection, gradient_noise),
                              problem.n, kept_derived(thresholds, ("twice",),
                                                      lambda: 2.0 * thresholds))
        _ledger(eps0, n_iter, selection, gradient_noise, budget.delta,
                score_sensitivity=sensitivity, ledger=ledger, step_multiplier=z_step)
        if step_release is not None:
            ledger.add_sampler_error("selected coordinates' smoothness, integer noise",
                                     step_release.noise.eta, count=n_iter)
        ledger.add_sampler_error("coordinate gradients' integer noise",
                                 release.noise.eta, count=n_iter)
        if selection == "exponential":
            ledger.add_sampler_error("selections (exponential mechanism)",
                                     EXPONENTIAL_SELECTION_ETA, count=n_iter)
        else:
            ledger.add_sampler_tv("selections (report-noisy-max)",
                                  laplace_selection_tv(live.size), count=n_iter)
        plan.update(selection=selection, epsilon0=eps0, sensitivity=sensitivity,
                    scale=scale, release=release, step_release=step_release)
        return plan

    def run(self, problem, constants, plan, generator, options, trace):
        X, y, datafit, penalty = problem.X, problem.y, problem.datafit, problem.penalty
        p, n_iter, live, release = problem.p, options["n_iter"], plan["live"], plan["release"]
        if release is None:
            kernel_selection, release_mode, noise = "argmax", "none", None
            grid = inv_grid = noise_scales = np.zeros(p)
        else:
            kernel_selection, noise = plan["selection"], release.noise
            release_mode = "grid"
            grid, inv_grid = release.grid, release.inv_grid
            noise_scales = kept_derived(release.scales, ("per sample", problem.n),
                                        lambda: release.scales / problem.n)
        C = constants.thresholds
        dead = live.size < p
        init = options["coef_init"]

        def kept(a):
            return a[live] if dead else a

        scaling = problem.intercept_scaling
        if scaling is not None and live[-1] != X.shape[1]:
            scaling = None  # the intercept column never moves: left out as any M_j = 0
        features = live[:live.size - (scaling is not None)]
        kernel = GreedyKernel(_columns(X, features) if dead else X, y, kernel_id(datafit),
                              *(kept(a) for a in (constants.smoothness, C, constants.steps)),
                              penalty.l1, penalty.l2, options["rule"], kernel_selection,
                              plan["scale"], release_mode, noise,
                              kept(grid), kept(inv_grid),
                              generator, options["refresh_every"],
                              coef_init=None if init is None else kept(init),
                              intercept_scaling=scaling,
                              step_estimate=_step_estimate(problem, constants, plan))
        tr = None
        if trace:
            values = [datafit.value(kernel.margins, y)]
            chosen, released = [], []
            for _ in range(n_iter):
                s, r = kernel.run(1)
                chosen.append(s)
                released.append(r)
                values.append(datafit.value(kernel.margins, y)
                              + penalty.value(kernel.coef))
            selected, released = np.concatenate(chosen), np.concatenate(released)
            tr = {"iterations": np.arange(n_iter + 1), "objective": np.array(values)}
        else:
            selected, released = kernel.run(n_iter)
        if dead:
            w = np.zeros(p) if init is None else init.copy()  # an empty column never moves
            w[live] = kernel.coef
        else:
            w = kernel.coef  # a copy
        step_smoothness = None
        if plan.get("step_release") is not None:
            step_smoothness = np.full(p, np.nan)
            step_smoothness[live] = kernel.step_smoothness
        info = {"epsilon0": plan["epsilon0"], "selection": plan["selection"],
                "rule": options["rule"], "selection_scale": plan["scale"],
                "score_sensitivity": plan["sensitivity"],
                "gradient_noise": options["gradient_noise"], "noise_scales": noise_scales,
                "smoothness": constants.smoothness, "step_smoothness": step_smoothness,
                "clip_thresholds": C,
                "step_sizes": constants.steps, "selected": live[selected],
                "released": released,
                "grid": kept_derived(grid, ("per sample", problem.n), lambda: grid / problem.n),
                "grid_points": 0 if release is None else release.points,
                "float_sum_factor": 1.0 if release is None else release.rho}
        return KernelOutput(coef=w, n_iter=n_iter, info=info,
                            counters={"fallbacks": kernel.noisy_max.n_fallbacks,
                                      "refreshes": kernel.n_refreshes}, trace=tr)


def _step_estimate(problem, constants, plan):
    """The kernel's ``step_estimate`` (None without the private estimate after
    selection): the release, the bound ``beta B^2``, the floor (the estimate's noise
    scale on the average: below it an estimate cannot be told from noise, and an
    underestimated M_j overshoots) and gamma."""
    release = plan.get("step_release")
    if release is None:
        return None
    bound = constants.estimate["bound"]
    floor = min(float(release.scales) / problem.n, bound)
    return (release.noise, float(release.grid), float(release.inv_grid),
            problem.datafit.beta, bound, floor, constants.estimate["gamma"])


def _columns(X, columns):
    """``X[:, columns]`` for sorted ``columns``; O(p) when the others are empty."""
    counts = np.diff(X.indptr)
    if counts.sum() - counts[columns].sum():
        return X[:, columns]
    indptr = np.concatenate([X.indptr[:1], X.indptr[columns + 1]])
    return type(X)((X.data, X.indices, indptr), shape=(X.shape[0], columns.size))


def dp_gcd(X, y, datafit, penalty=None, *, epsilon, delta, n_iter, clip, step_size=1.0,
           rule="gs-r", selection=None, smoothness=None, feature_bounds=None,
           gradient_noise="laplace", random_state=None, trace=False,
           refresh_every=1000, diagnostics=False, coef_init=None, fit_intercept=False,
           intercept_scaling=1.0, intercept_init=None):
    """Differentially private (proximal) greedy coordinate descent (DP-GCD).

    Minimises ``F(w) = (1/n) sum_i loss(x_i . w, y_i) + penalty(w)`` under
    (epsilon, delta)-DP, replace-one neighbours, from ``w = 0``.  Each of the
    ``n_iter`` iterations

    1. selects a coordinate j by a noisy max of the rule's score (below);
    2. releases the clipped coordinate gradient ``g_j = (1/n) sum_i
       clip(X_ij loss'(x_i . w, y_i), C_j)`` with Laplace (or Gaussian) noise,
       L1 (= L2) sensitivity ``2 C_j / n``;
    3. takes the proximal step ``w_j <- prox_{gamma_j psi_j}(w_j - gamma_j
       noisy g_j)``, ``gamma_j = step_size / M_j``.

    Scores, from the clipped gradient and the public iterate, with
    ``C_j = sqrt(M_j / tr M) * clip``:

    * ``"gs-s"``: ``dist(-g_j, d psi_j(w_j)) / sqrt(M_j)`` (GS-L without penalty);
    * ``"gs-r"``: ``sqrt(M_j) |prox_{psi_j / M_j}(w_j - g_j / M_j) - w_j|``;
    * ``"gs-q"``: ``sqrt(2 h_j)``, ``h_j`` the decrease of the 1-D model
      ``g_j d + M_j d^2 / 2 + psi_j(w_j + d) - psi_j(w_j)`` (an increasing
      transform of the GS-q rule, same noiseless argmax).

    Each is ``1/sqrt(M_j)``-Lipschitz in ``g_j``, so every score has sensitivity
    ``Delta = 2 clip / (n sqrt(tr M))``.  The noise is added to the score (not to
    the gradient before the rule: that is not a valid noisy max for GS-r/GS-q).

    Parameters
    ----------
    X, y, datafit, penalty, delta
        As in :func:`~sparsedp.solvers.dp_cd`.
    epsilon : float
        Privacy budget, > 0; ``inf`` runs plain greedy CD (argmax, no noise).
    n_iter : int
        Number of greedy iterations T.
    clip : float
        The clipping hyper-parameter C (``inf`` only with ``epsilon=inf``).
    step_size : float, default=1.0
        gamma in ``gamma_j = gamma / M_j``.
    rule : {"gs-r", "gs-s", "gs-q"}, default="gs-r"
    selection : {"exponential", "laplace"} or None
        The noisy max: the exponential mechanism (Gumbel-max, ``P(j) ∝ exp(eps0
        s_j / (2 Delta))``, epsilon0-DP and epsilon0-bounded-range) or Laplace
        report-noisy-max (``Lap(2 Delta / eps0)``, epsilon0-DP for scores that are
        not monotone in the data).  None: the exponential mechanism (measured
        better whenever the two mechanisms' epsilon0 differ, docs/defaults.rst;
        no total-variation slack).  ``info["selection"]`` says which ran.
    smoothness : None, "leak", array of shape (n_features,) or float in (0, 1)
        As in :func:`dp_cd` (None: private estimates, ``"leak"``: from the data,
        an array: public, a float: a fraction of the budget), except that with
        fewer iterations than coordinates (``n_iter < p``) a private estimate
        (None, or a fraction) is made after each selection, for the selected
        coordinate only: its ``sum_i min(beta X_ij^2, beta B^2)`` released with
        Gaussian noise (sensitivity ``beta B^2``), raised to its noise scale and
        capped at ``beta B^2``, its step ``step_size`` over it
        (``info["step_smoothness"]``); the selection and the clipping take the
        uniform prior ``M_j = beta B^2``.  None spends :data:`STEP_SHARE` of the
        GDP budget on these estimates, a float that fraction.
    feature_bounds : None, float or array
        Public bound on ``|X_ij|`` for the private estimates of M_j (None: a
        private bound, one more estimate composed with the run).
    gradient_noise : {"laplace", "gaussian"}, default="laplace"
        Noise of the released gradient (Gaussian: same zCDP cost as the selection).
    random_state : None, int, SeedSequence or numpy Generator
    trace : bool, default=False
        Record the objective after every iteration, in
        ``res.diagnostics.trace`` (implies ``diagnostics=True``).  A non-private
        diagnostic, computed on the training data without noise.
    refresh_every : int, default=1000
        Iterations between full recomputations of the incrementally kept gradient.
    coef_init : array of shape (n_features,), optional
        The starting point (default 0; public, as in :func:`dp_cd`).
    fit_intercept : bool, default=False
        Fit an intercept b (``X @ coef + b``) as one more coordinate, the public
        column ``intercept_scaling * 1``, selected, clipped and noised like the
        others, packed in the kernel's own records of X (no copy of X): as in
        :func:`dp_cd`, the same numbers as a fit on ``[X, intercept_scaling *
        1]``; ``smoothness`` and ``feature_bounds`` describe X's columns only.
    intercept_scaling : float, default=1.0
        The intercept column's constant s (``b = s w_b``), in [1e-140, 1e140].
    intercept_init : float, optional
        The starting intercept (default 0).
    diagnostics : bool, default=False
        Also compute :class:`~sparsedp.solvers.NonPrivateDiagnostics`: the
        objective F at ``coef`` on the training data and the kernel's
        data-dependent counters.  They are not part of the released output and
        not covered by the privacy report: whoever publishes them (or anything
        computed from them, e.g. a relative error) breaks the (epsilon, delta)
        guarantee.

    Returns
    -------
    Result
        ``coef`` (shape (n_features,)), ``intercept`` (b; 0 without
        ``fit_intercept``), ``n_iter``, ``privacy`` (a
        :class:`~sparsedp.privacy.PrivacyLedger`), ``info`` (public values and
        private outputs: ``epsilon0``, ``selection``, ``rule``,
        ``selection_scale`` b, ``score_sensitivity``, ``gradient_noise``,
        ``noise_scales`` (of the gradient), ``smoothness``, ``clip_thresholds``,
        ``step_sizes``, ``selected`` and ``released`` (the private outputs of each
        iteration)) and ``diagnostics`` (None unless ``diagnostics`` or
        ``trace``; else non-private: ``objective``, ``trace`` with
        ``"iterations"`` and ``"objective"``, ``counters["fallbacks"]`` and
        ``counters["refreshes"]``, which depend on the data).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.random(100, 1000, density=0.05, format="csc", rng=0)
    >>> y = np.where(X[:, [0]].toarray().ravel() > 0, 1.0, -1.0)
    >>> from sparsedp.datafits import Logistic
    >>> from sparsedp.penalties import L1
    >>> M = np.full(1000, 0.25)               # public: |X_ij| <= 1
    >>> res = dp_gcd(X, y, Logistic(), L1(1e-3), epsilon=1.0, delta=1e-4,
    ...              n_iter=5, clip=1.0, smoothness=M, random_state=0)
    >>> res.privacy.epsilon <= 1.0
    True
    """
    return DPGCD().fit(
        X, y, datafit, penalty, epsilon=epsilon, delta=delta, clip=clip,
        step_size=step_size, smoothness=smoothness, feature_bounds=feature_bounds,
        random_state=random_state, trace=trace, diagnostics=diagnostics, n_iter=n_iter,
        rule=rule, selection=selection, gradient_noise=gradient_noise,
        refresh_every=refresh_every, coef_init=coef_init, fit_intercept=fit_intercept,
        intercept_scaling=intercept_scaling, intercept_init=intercept_init)


def default_n_iter(n_samples, n_features, epsilon):
    """The estimators' DP-GCD iterations: ``n epsilon / 300`` within [3, 100] when
    ``n_samples > n_features``, else ``n epsilon / 600`` within [1, 100].

    Measured at epsilon = 1 (docs/defaults.rst): the best were 1 to 3 on
    dorothea and the 1,000-row synthetic problems, 10 to 50 at n = 15,000, 30
    on California, 100 on Electricity: each iteration's noisy max needs a
    gradient gap growing with the iterations, which only many rows or a large
    budget pay for.
    """
    if math.isinf(epsilon):
        return 100
    if n_samples > n_features:
        return int(min(max(round(n_samples * epsilon / 300.0), 3), 100))
    # p >= n: each noisy max over many coordinates, with the private constants' share
    # (docs/defaults.rst, "Private constants": dorothea wants 1)
    return int(min(max(round(n_samples * epsilon / 600.0), 1), 100))


SPEC = SolverSpec(
    name="dp_gcd", key="gcd", label="DP-GCD", function=dp_gcd, budget="n_iter",
    relation="replace-one",
    datafit_requires=(("smooth", "a smooth datafit (finite beta)"),), penalty_requires=(),
    smoothness="coordinate",
    budget_grid=Hyperparameter("n_iter", (1, 2, 5, 10, 20), (1, 2, 5, 10, 20, 50, 100)),
    # in units of the rows' gradient scale; with fewer iterations than coordinates the
    # private default's uniform prior wants about sqrt(p B^2 / mean ||x||^2) of them
    # (10.5 on dorothea): the grids reach 10 and 30
    hyperparameters=(
        Hyperparameter("clip", (0.3, 1.0, 3.0, 10.0), (0.1, 0.3, 1.0, 3.0, 10.0, 30.0),
                       per_unit=True),
        Hyperparameter("step_size", (1.0, 3.0), (0.3, 1.0, 3.0))),
    default_budget=default_n_iter,
    default_step=lambda n, p, datafit: 1.0,
    # measured best 1 on dorothea and the synthetic problems, 1 to 1.5 at n =
    # 15,000, 3 on California and Electricity, where 1 is within 1.5x
    default_kappa=lambda n, releases, epsilon, delta: 1.0,
    releases=lambda n_iter, n_columns: n_iter,
    smoothness_after_selection=lambda n_iter, n_columns: n_iter < n_columns,
    auto=lambda datafit, l1, n, p: datafit.smooth and l1 > 0.0,
    options={})
