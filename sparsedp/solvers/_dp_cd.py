"""DP-CD: differentially private proximal randomized coordinate descent.

Algorithm 1 of Mangold, Bellet, Salmon, Tommasi, "Differentially Private
Coordinate Descent for Composite Empirical Risk Minimization" (ICML 2022), with
coordinate-wise clipping (Section 5.1), optionally private smoothness constants
(DP-CD-P, Section 5.2 / Appendix F) and exact Gaussian accounting.
"""
import math
import numbers

import numpy as np

from .._dp_cd_fast import (
    CoordinateBlocks, RandomStreams, dp_cd_steps)
from .._noise import NOISE_ETA, IntegerNoise, grid_for, grid_scale
from .._planted import active
from .._validation import check_X_y, check_random_state
from ..accounting import PrivacyLedger, calibrate_gaussian
from ..penalties import as_penalty
from ._exact import check_datafit
from ._result import NonPrivateDiagnostics, Result
from ._smoothness import clip_thresholds, resolve_smoothness

__all__ = ["dp_cd"]


def _check_positive(value, name, allow_inf=False):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value) or value <= 0 or (math.isinf(value) and not allow_inf):
        kind = "positive" if allow_inf else "positive and finite"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return value


def check_privacy_budget(epsilon, delta):
    """Validate (epsilon, delta): epsilon > 0 (``inf`` allowed), delta in (0, 1)."""
    epsilon = _check_positive(epsilon, "epsilon", allow_inf=True)
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real) \
            or not 0.0 < float(delta) < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return epsilon, float(delta)


def dp_cd(X, y, datafit, penalty=None, *, epsilon, delta, passes, clip, step_size=1.0,
          outer=1, smoothness=None, feature_bounds=None, smoothness_mechanism="laplace",
          averaging=True, selection="uniform", random_state=None, trace=False,
          trace_every=1.0, diagnostics=False):
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
    smallest value (:func:`~sparsedp.accounting.calibrate_gaussian`).  The
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
    smoothness : None, array of shape (n_features,) or float in (0, 1)
        None: computed from the data, with a ``PrivacyLeakWarning`` (and a leak
        in the privacy report, whose epsilon is then ``inf``: the fit is not
        private); array: public constants; float: the fraction of
        epsilon spent estimating them privately (DP-CD-P, Laplace mechanism).
    feature_bounds : None, float or array, optional
        Public bound on ``|X_ij|`` per feature, used by the private estimate of
        the smoothness constants (None: twice the data's largest ``|X_ij|`` per
        feature, as in the paper, with a ``PrivacyLeakWarning``).
    smoothness_mechanism : {"laplace", "gaussian"}, default="laplace"
        How DP-CD-P releases the constants.  ``"laplace"`` (the paper's) spends
        the fraction ``smoothness`` of epsilon (basic composition with the rest);
        ``"gaussian"`` spends that fraction of the GDP budget ``mu^2`` and
        composes exactly with the gradient releases (noise grows as sqrt(p)
        instead of p: much less for many features).
    averaging : bool, default=True
        Periodic averaging (Algorithm 1, line 9); False returns the last inner
        iterate of each outer loop.  Both are post-processing: same privacy.
    selection : {"uniform", "shuffle"}, default="uniform"
        How coordinates are picked: uniformly at random at every step
        (Algorithm 1), or by passes over fresh random permutations (every
        coordinate once per pass; no coordinate is left out by chance).  The
        order never depends on the data, so the privacy guarantee is the same.
        With few passes prefer ``"shuffle"``: after 2 uniform passes a coordinate
        is never drawn with probability e^-2 (on the Sparse LASSO benchmark,
        relative error 0.35 against 0.26 on fresh seeds).
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
        ``coef`` (the private output), ``n_iter`` (coordinate updates T K),
        ``privacy`` (a :class:`~sparsedp.accounting.PrivacyLedger`), ``info``
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
    datafit = check_datafit(datafit)
    penalty = as_penalty(penalty)
    epsilon, delta = check_privacy_budget(epsilon, delta)
    X, y = check_X_y(X, y, datafit)
    passes = _check_positive(passes, "passes")
    clip = _check_positive(clip, "clip", allow_inf=True)
    step_size = _check_positive(step_size, "step_size")
    trace_every = _check_positive(trace_every, "trace_every")
    if isinstance(outer, (bool, np.bool_)) or not isinstance(outer, numbers.Integral) \
            or outer < 1:
        raise ValueError(f"outer must be an integer >= 1, got {outer!r}")
    if selection not in ("uniform", "shuffle"):
        raise ValueError(f"selection must be 'uniform' or 'shuffle', got {selection!r}")
    if math.isinf(clip) and math.isfinite(epsilon):
        raise ValueError(
            "clip=inf leaves the gradient's sensitivity unbounded: a finite clip is "
            "required when epsilon is finite")
    n, p = X.shape
    T = int(outer)
    K = max(1, int(round(passes * p / T)))
    generator = check_random_state(random_state)
    ledger = PrivacyLedger(delta=delta)

    # every integer noise draw has a law within exp(+-eta) of the ideal law,
    # eta <= NOISE_ETA: the ideal mechanisms get (epsilon - 2 H, delta e^-H),
    # H = eta * draws (PrivacyLedger.add_sampler_error); draws: T K gradients
    # and p smoothness constants if they are estimated
    private_m = smoothness is not None and np.ndim(smoothness) == 0
    slack = NOISE_ETA * (T * K + p * private_m) if math.isfinite(epsilon) else 0.0
    eps_ideal, delta_opt = epsilon - 2.0 * slack, delta * math.exp(-slack)
    if eps_ideal <= 0:
        raise ValueError(f"epsilon = {epsilon} is below the sampler's slack {2 * slack:.3g}")
    M, eps_opt, mu_left = resolve_smoothness(
        X, datafit, smoothness, eps_ideal, feature_bounds, generator, ledger,
        delta=delta_opt, mechanism=smoothness_mechanism)
    C = clip_thresholds(M, clip)
    if math.isfinite(epsilon):
        if mu_left is None:
            z = calibrate_gaussian(eps_opt, delta_opt, T * K)
        else:  # exact GDP split; nudged up so that rounding never helps
            z = math.sqrt(T * K) / mu_left * (1.0 + 1e-12)
        # the release on a public grid: G_j (a sum of at most n clipped terms,
        # before the division by n) -> g_j (rint(G_j / g_j) + K), K discretised
        # Gaussian of sd z S; g_j = 2 C_j rho / S (sparsedp._noise)
        rho, points, scale = grid_scale(z / 2.0 if active("noise_halved") else z, n)
        noise = IntegerNoise("gaussian", scale)
        # the grid of coordinate j over C_j: that of a sensitivity 2 (2 C_j / C_j);
        # the kernel divides the inverse by C_j (one more rounding, covered by
        # grid_for's rounding down)
        grid_per_clip, inv_grid_per_clip = (
            float(a) for a in grid_for(1.0 if active("sensitivity_halved") else 2.0,
                                       rho, points))
        mode = "grid"
        if active("raw_float_noise"):
            mode, grid_per_clip = "raw", 2.0 * z
        sigma = z * rho * 2.0 * C / n
        ledger.add_gaussian(
            "coordinate gradients (discretised Gaussian on a grid, L2 sensitivity "
            "2 C_j rho / n of the computed sum, sigma_j = z * 2 C_j rho / n)", z,
            count=T * K)
        ledger.add_sampler_error("coordinate gradients' integer noise", noise.eta,
                                 count=T * K)
        info_noise = {"grid": grid_per_clip * C / n, "grid_points": points,
                      "float_sum_factor": rho}
    else:
        z, noise, mode, grid_per_clip, inv_grid_per_clip = 0.0, None, "none", 0.0, 0.0
        sigma = np.zeros(p)
        info_noise = {}
    steps = np.divide(step_size, M, out=np.zeros(p), where=M > 0)

    w = np.zeros(p)
    blocks = CoordinateBlocks(X, steps, C, w)  # holds the kernel's iterate theta
    streams = RandomStreams(p, *split_generator(generator), selection=selection,
                            noise=noise)
    every = max(1, int(round(trace_every * p)))
    passes_done, values = [], []
    moves = 0
    for t in range(T):
        blocks.set_theta(w)
        blocks.reset_average()
        margin = X @ w
        deriv = datafit.derivative(margin, y)
        k = 0
        while k < K:
            todo = min(K - k, every - (t * K + k) % every) if trace else K
            moves += dp_cd_steps(
                datafit.kind, blocks, y, margin, deriv, mode, grid_per_clip,
                inv_grid_per_clip, averaging, k, todo, penalty.l1, penalty.l2, streams,
                clip_terms=not active("no_clipping"))
            k += todo
            if trace and ((t * K + k) % every == 0 or (t == T - 1 and k == K)):
                current = blocks.get_average(k) if averaging else blocks.get_theta()
                passes_done.append((t * K + k) / p)
                values.append(datafit.value(X @ current, y) + penalty.value(current))
        w = blocks.get_average(K) if averaging else blocks.get_theta()

    info = {"noise_multiplier": z, "smoothness": M, "clip_thresholds": C,
            "noise_scales": sigma, "step_sizes": steps, "inner_steps": K,
            "outer": T, **info_noise}
    diag = None
    if diagnostics or trace:  # non-private: computed on the data, not released
        tr = {"passes": np.array(passes_done), "objective": np.array(values)} \
            if trace else None
        diag = NonPrivateDiagnostics(
            objective=datafit.value(X @ w, y) + penalty.value(w), trace=tr,
            counters={"moves": moves})
    return Result(coef=w, n_iter=T * K, privacy=ledger, info=info, diagnostics=diag)


def split_generator(generator):
    """Two independent child generators: coordinate indices, then noise.

    SFC64 bit generators (chosen when the kernel drew its normals through
    numpy's library: 11 ns each instead of 13 with PCG64; with the kernel's
    inlined ziggurat both cost 4-5 ns, and SFC64 stays so that fits stay
    reproducible), each seeded by a SeedSequence whose entropy (4 x 63 bits) is drawn
    from ``generator``'s own stream.  The streams thus follow the generator's
    state: the same state gives the same fit, and a generator that was advanced,
    jumped or used for a previous fit gives fresh streams (two fits never share
    noise unless their generators are in the same state).
    """
    seeds = generator.integers(0, 2**63, size=(2, 4))
    return tuple(np.random.Generator(np.random.SFC64(np.random.SeedSequence(s)))
                 for s in seeds)
