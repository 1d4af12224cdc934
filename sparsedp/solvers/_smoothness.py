"""Coordinate-wise smoothness constants for the private solvers: public, leaked or private.

Every private coordinate method needs ``M_j = (1/n) sum_i beta X_ij^2``, for its
step sizes ``gamma / M_j`` and its clipping thresholds ``sqrt(M_j / tr M) C``.
Computed from the data they are not private; :func:`resolve_smoothness` takes
them public, estimates them privately (DP-CD-P, Appendix F of Mangold et al.
2022), or computes them with a :class:`~sparsedp.exceptions.PrivacyLeakWarning`
and a leak recorded on the ledger.
"""
import math
import numbers
import warnings

import numpy as np

from .._validation import check_real
from .._warnings import find_stack_level
from ..exceptions import PrivacyLeakWarning
from ._release import GridRelease

__all__ = ["resolve_smoothness", "private_smoothness", "clip_thresholds", "estimate_bounds",
           "check_fraction"]


def _leak(ledger, name, description):
    """Warn (PrivacyLeakWarning, naming the user's line) and record a leak on the ledger."""
    warnings.warn(f"{name}: {description}", PrivacyLeakWarning,
                  stacklevel=find_stack_level())
    ledger.add_leak(name, description)


def _columns_of(X, intercept, function):
    """``function`` (a per-column reduction) over the columns of ``[X, intercept]``,
    computed on each part (``intercept``: the (n, 1) public column, or None)."""
    if intercept is None:
        return function(X)
    return np.concatenate([function(X), function(intercept)])


def _clipped_sums(X, datafit, bounds):
    """sum_i min(beta X_ij^2, b_j) for every column j (n terms in [0, b_j] each)."""
    n, p = X.shape
    sq = X.copy()
    sq.data = np.minimum(datafit.beta * sq.data ** 2,
                         bounds[np.repeat(np.arange(p), np.diff(X.indptr))])
    return np.asarray(sq.sum(axis=0)).ravel()


def private_smoothness(X, datafit, epsilon, feature_bounds, generator, *,
                       mechanism="laplace", noise_multiplier=None, intercept=None):
    """Private estimate of ``M_j`` (DP-CD-P): Laplace (epsilon-DP) or Gaussian.

    Per-sample constants ``beta X_ij^2`` are clipped to ``b_j = beta B_j^2``
    (``B_j`` a public bound on ``|X_ij|``) and summed; under replace-one
    neighbours each sum moves by at most ``b_j`` (the clipped values lie in
    ``[0, b_j]``), so the vector ``(sum_j / b_j)_j`` has L1 sensitivity ``p``
    and L2 sensitivity ``sqrt(p)``.  Each sum is released on its public grid
    ``g_j = b_j rho / S`` (:mod:`sparsedp._kernels._noise`: ``rho`` covers the
    floating-point sum; rounded sums of neighbours differ by at most S grid
    points per coordinate), as ``g_j (rint(sum_j / g_j) + K_j)``:

    * ``"laplace"``: K_j discrete Laplace of scale ``p S / epsilon`` (the integer
      vector has L1 sensitivity ``p S``): epsilon-DP; noise scale ``p b_j rho /
      (n epsilon)`` on the average (the paper's ``2 b_j p / (n epsilon)`` is
      twice too much);
    * ``"gaussian"``: K_j discretised Gaussian of sd ``z sqrt(p) S`` (L2
      sensitivity ``sqrt(p) S``): a Gaussian mechanism of multiplier z
      (``noise_multiplier``, ``1/z``-GDP), far less noise when p is large.

    Post-processing: an estimate is raised to its noise scale when below it and
    capped at ``b_j``.  Below its noise scale an estimate cannot be told from
    noise, and the two errors are not alike: overestimating ``M_j`` only shortens
    the step ``gamma / M_j``, underestimating it (down to ``b_j / n`` for a
    heavy-tailed feature whose public bound is loose) makes coordinate descent
    overshoot by the same factor.  The clipped averages never exceed ``b_j``.

    ``intercept`` (an (n, 1) column, or None): the estimate for ``[X,
    intercept]`` (one more coordinate, last), without building it.

    Returns
    -------
    M : ndarray of shape (n_features,)
    scale : ndarray of shape (n_features,)
        The noise scale (Laplace scale or Gaussian standard deviation) per
        coordinate, on the average.
    eta : float
        The integer sampler's relative error (``PrivacyLedger.add_sampler_error``,
        one draw per coordinate).
    """
    n, p = X.shape[0], X.shape[1] + (intercept is not None)
    bounds = datafit.beta * np.asarray(feature_bounds, dtype=np.float64) ** 2
    sums = _clipped_sums(X, datafit, bounds[:X.shape[1]])
    if intercept is not None:
        sums = np.append(sums, _clipped_sums(intercept, datafit, bounds[-1:]))
    if mechanism == "laplace":
        multiplier, law = p / epsilon, "laplace"
    elif mechanism == "gaussian":
        multiplier, law = noise_multiplier * math.sqrt(p), "gaussian"
    else:
        raise ValueError(f"mechanism must be 'laplace' or 'gaussian', got {mechanism!r}")
    release = GridRelease(law, multiplier, n, bounds)
    scale = release.scales / n
    released = release.noise.release(sums, release.inv_grid, release.grid, generator)
    return np.minimum(np.maximum(released / n, scale), bounds), scale, release.noise.eta


def check_fraction(smoothness):
    """``smoothness`` as a float: the fraction of the budget spent estimating the
    constants, in (0, 1), or a ValueError saying so."""
    if isinstance(smoothness, numbers.Real) and not 0.0 < smoothness < 1.0:
        raise ValueError(
            f"smoothness as a float is the fraction of epsilon spent estimating "
            f"the constants, in (0, 1); got {smoothness!r}")
    return check_real(smoothness, "smoothness", high=1.0)


def estimate_bounds(X, feature_bounds, ledger, intercept=None, *, multiplier=None,
                    generator=None):
    """The bounds on ``|X_ij|`` of a private smoothness estimate, one per coordinate
    (the intercept column's, its public constant, last).

    ``feature_bounds`` None: the rows' largest ``|X_ij|`` estimated privately
    (:func:`~sparsedp.solvers._scales.private_row_scales`), a Gaussian mechanism
    of multiplier ``multiplier`` recorded on ``ledger`` (the caller accounts for
    it); without ``multiplier`` (epsilon = inf) the data's own.
    """
    from ._scales import private_row_scales
    p = X.shape[1]
    if feature_bounds is None and multiplier is None:
        feature_bounds = np.asarray(abs(X).max(axis=0).todense()).ravel()
    elif feature_bounds is None:
        feature_bounds = private_row_scales(X, None, multiplier, generator, ledger,
                                            name="bound on |X_ij|", norms=False).bound
    if intercept is not None:
        feature_bounds = np.append(np.broadcast_to(
            np.asarray(feature_bounds, dtype=np.float64), (p,)), intercept.data[0])
    bounds = np.broadcast_to(np.asarray(feature_bounds, dtype=np.float64),
                             (p + (intercept is not None),))
    if not (np.all(np.isfinite(bounds)) and np.all(bounds >= 0)):
        raise ValueError("feature_bounds must be finite and non-negative")
    return bounds


def default_smoothness(X, datafit, feature_bounds, epsilon, delta, generator, ledger,
                       intercept=None):
    """``smoothness=None`` with a finite epsilon: private per-feature constants.

    The per-feature noisy histograms (:func:`~sparsedp.solvers._scales.
    smoothness_from_histogram`, ``FEATURE_SHARE`` of the GDP budget ``mu^2`` of
    (epsilon, delta)) and, without ``feature_bounds``, the private bound of the
    rows' largest ``|X_ij|`` (``ESTIMATE_SHARE``): each a Gaussian mechanism,
    recorded on ``ledger``.  The per-feature bounds (within ``feature_bounds``) are those the
    solver must clip X to: ``M_j`` describes the clipped data.

    Returns
    -------
    M : ndarray (the intercept column's public constant last)
    bounds : ndarray of shape (n_features,)
    mu_left : float
        The GDP budget left, ``sqrt(1 - parts share) mu`` (exact for a Gaussian
        solver; the others compose the ledger's Gaussians in their calibration).
    """
    from ..privacy import calibrate_gaussian
    from ._scales import (ESTIMATE_SHARE, FEATURE_SHARE, estimate_multiplier,
                          smoothness_from_histogram)
    B = float(np.max(estimate_bounds(X, feature_bounds, ledger,
                                     multiplier=estimate_multiplier(epsilon, delta),
                                     generator=generator)))
    M, bounds = smoothness_from_histogram(X, datafit.beta,
                                          estimate_multiplier(epsilon, delta, FEATURE_SHARE),
                                          generator, ledger, B)
    if feature_bounds is not None:
        bounds = np.minimum(bounds, np.broadcast_to(
            np.asarray(feature_bounds, dtype=np.float64), bounds.shape))
    if intercept is not None:
        s = intercept.data[0]
        M = np.append(M, datafit.beta * s * s)
    share = FEATURE_SHARE + (feature_bounds is None) * ESTIMATE_SHARE
    mu = 1.0 / calibrate_gaussian(epsilon, delta, 1)
    return M, bounds, math.sqrt(1.0 - share) * mu


def resolve_smoothness(X, datafit, smoothness, epsilon, feature_bounds, generator,
                       ledger, *, delta=None, mechanism="laplace", intercept=None):
    """The smoothness constants a private solver uses, and the budget left.

    Parameters
    ----------
    X : canonical CSC matrix
    datafit : Squared or Logistic
    smoothness : None, array of shape (n_features,), or float in (0, 1)
        None: computed from the data (leak, warned and recorded); array: public
        constants; float: the fraction of the budget spent estimating them with
        :func:`private_smoothness` (of epsilon for ``"laplace"``, of the GDP budget
        ``mu^2`` for ``"gaussian"``).
    epsilon : float
        The whole budget (``inf``: nothing is private, nothing is warned).
    feature_bounds : None, float or array of shape (n_features,)
        Public bound on ``|X_ij|`` per feature, for the private estimate.  None:
        twice the largest ``|X_ij|`` of each column, as in the paper's
        experiments (a leak, warned and recorded).
    generator : numpy.random.Generator
    ledger : PrivacyLedger
        Receives the mechanism or the leaks.
    delta : float, optional
        Needed by ``"gaussian"`` (the GDP budget of (epsilon, delta)).
    mechanism : {"laplace", "gaussian"}
    intercept : (n, 1) CSC array or None
        The public intercept column ``s * 1`` (:class:`~sparsedp.solvers._base.Problem`):
        one more coordinate, last, as if X were ``[X, intercept]`` (never
        built).  An array ``smoothness`` and ``feature_bounds`` then describe X's
        columns only: the column's constant ``beta s^2`` and bound ``s`` are
        public and appended here; a private estimate or a leak treats it as
        the last column of the data (the same values as on ``[X, intercept]``).

    Returns
    -------
    M : ndarray of shape (n_features,)
    epsilon_left : float
        For the rest of the algorithm, by basic composition (``"laplace"``).
    mu_left : float or None
        With ``"gaussian"``: the GDP budget left for Gaussian mechanisms (the
        rest of the algorithm must be a Gaussian mechanism of at most this
        ``mu``); None otherwise.
    """
    from ..privacy import calibrate_gaussian
    p = X.shape[1]
    if mechanism not in ("laplace", "gaussian"):
        raise ValueError(f"smoothness_mechanism must be 'laplace' or 'gaussian', "
                         f"got {mechanism!r}")
    if smoothness is None or (isinstance(smoothness, str) and smoothness == "leak"):
        if math.isfinite(epsilon):
            _leak(ledger, "smoothness constants",
                  "M_j computed from the data without privacy budget (smoothness='leak'); "
                  "leave smoothness None for a private estimate, or pass public constants")
        return _columns_of(X, intercept, datafit.smoothness), epsilon, None, delta
    if np.ndim(smoothness) == 0:
        fraction = check_fraction(smoothness)
        if not math.isfinite(epsilon):
            return _columns_of(X, intercept, datafit.smoothness), epsilon, None, delta
        if feature_bounds is None:  # a private bound, apart by basic composition
            from ..privacy import gdp_epsilon
            from ._scales import ESTIMATE_SHARE, estimate_multiplier
            z = estimate_multiplier(epsilon, delta)
            delta_b = ESTIMATE_SHARE * delta
            epsilon_b = gdp_epsilon(1.0 / z, delta_b)
            if not epsilon_b < epsilon:
                raise ValueError("the budget is too small for a private bound on |X_ij|: "
                                 "give feature_bounds")
            bounds = estimate_bounds(X, None, ledger, intercept, multiplier=z,
                                     generator=generator)
            epsilon, delta = epsilon - epsilon_b, delta - delta_b
        else:
            bounds = estimate_bounds(X, feature_bounds, ledger, intercept)
        if mechanism == "laplace":
            eps_m = fraction * epsilon
            M, _, eta = private_smoothness(X, datafit, eps_m, bounds, generator,
                                           intercept=intercept)
            ledger.add_laplace(
                "smoothness constants (discrete Laplace on a grid, scale p b_j rho / "
                "(n eps'), L1 sensitivity p b_j rho / n)", 1.0 / eps_m, count=1)
            ledger.add_sampler_error("smoothness constants' integer noise", eta, count=M.size)
            return M, epsilon - eps_m, None, delta
        # Gaussian: split the GDP budget mu^2 of (epsilon, delta) exactly
        mu = 1.0 / calibrate_gaussian(epsilon, delta, 1)
        z_m = 1.0 / (math.sqrt(fraction) * mu)
        M, _, eta = private_smoothness(X, datafit, None, bounds, generator,
                                       mechanism="gaussian", noise_multiplier=z_m,
                                       intercept=intercept)
        ledger.add_gaussian(
            "smoothness constants (discretised Gaussian on a grid, L2 sensitivity "
            "sqrt(p) b_j rho / n, sigma_j = z sqrt(p) b_j rho / n)", z_m, count=1)
        ledger.add_sampler_error("smoothness constants' integer noise", eta, count=M.size)
        return M, epsilon, math.sqrt(1.0 - fraction) * mu, delta
    if isinstance(smoothness, str):
        raise ValueError(f"smoothness must be None, 'leak', a fraction in (0, 1) or an array "
                         f"of shape ({p},); got {smoothness!r}")
    M = check_smoothness_constants(smoothness, p)
    if intercept is not None:  # public: beta s^2
        s = intercept.data[0]
        M = np.append(M, datafit.beta * s * s)
    return M, epsilon, None, delta


def check_smoothness_constants(smoothness, p):
    """Public coordinate-wise constants as a float64 array of shape (p,), finite and
    non-negative, or a ValueError."""
    M = np.asarray(smoothness, dtype=np.float64)
    if M.shape != (p,):
        raise ValueError(
            f"smoothness must be None, a fraction in (0, 1) or an array of shape "
            f"({p},); got shape {M.shape}")
    if not (np.all(np.isfinite(M)) and np.all(M >= 0)):
        raise ValueError("smoothness constants must be finite and non-negative")
    return M


def gradient_scale(trace_m, beta, derivative_rms):
    """The per-sample gradient scale at 0, ``sqrt(tr M / beta) * rms(loss'(0, y))``:
    ``tr M / beta`` is the mean squared row norm (the unit of the estimators' and
    the grids' clipping thresholds, docs/defaults.rst)."""
    return math.sqrt(trace_m / beta) * derivative_rms


def clip_thresholds(M, clip):
    """Coordinate-wise thresholds ``C_j = sqrt(M_j / tr M) * C`` (Section 5.1)."""
    trace = M.sum()
    if not math.isfinite(clip):
        return np.full(M.shape, np.inf)
    if trace <= 0:
        return np.zeros_like(M)
    return np.sqrt(M / trace) * clip
