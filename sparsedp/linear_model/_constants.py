"""The estimators' private defaults: every constant a fit needs, paid for.

With no constants given and a finite epsilon, an estimator estimates what its
solver needs inside the same (epsilon, delta) (docs/defaults.rst, "Private
constants"):

* always, one Gaussian mechanism on per-row log-scale histograms
  (:func:`sparsedp.solvers._scales.private_row_scales`): a bound B on
  ``|X_ij|``, the mean squared row norm (the clip's unit, and DP-SGD's global
  smoothness bound ``beta mean_i ||x_i||^2``), and for the squared loss the
  targets' root mean square;
* DP-CD (and DP-GCD running at least as many iterations as there are
  coordinates): the coordinate-wise constants ``M_j`` from per-feature
  histograms (:func:`~sparsedp.solvers._scales.smoothness_from_histogram`), a
  second Gaussian mechanism;
* DP-GCD with fewer iterations than coordinates: the ``M_j`` of the selected
  coordinates only, after each selection, inside the solver
  (:data:`STEP_SHARE` of its budget, ``feature_bounds=B``).

Each estimate (the per-row scales; the per-feature constants) takes
:data:`CONSTANTS_SHARE` of the GDP budget ``mu^2`` of (epsilon, delta) (``mu``
from :func:`~sparsedp.privacy.calibrate_gaussian`), the fits the rest,
``sqrt(1 - share) mu`` (exact for the Gaussian solvers: the
Gaussian mechanisms compose exactly in GDP); the estimator checks the whole
ledger, estimates and fits, against (epsilon, delta) and lowers the fits'
budget when another composition is worse.
"""
import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._warnings import find_stack_level
from ..privacy import PrivacyLedger, calibrate_gaussian, gdp_epsilon
from ..solvers._dp_gcd import STEP_SHARE
from ..solvers._scales import (ESTIMATE_SHARE, FEATURE_SHARE, private_row_scales,
                               smoothness_from_histogram)

__all__ = ["CONSTANTS_SHARE", "FEATURE_SHARE", "STEP_SHARE", "PrivateConstants",
           "estimate_constants"]

#: the share of the GDP budget ``mu^2`` the per-row scales take (measured,
#: docs/defaults.rst); the per-feature constants take :data:`FEATURE_SHARE`
CONSTANTS_SHARE = ESTIMATE_SHARE


@dataclass
class PrivateConstants:
    """What :func:`estimate_constants` released.

    Attributes
    ----------
    kwargs : dict
        The solver's keyword arguments they set (``smoothness``,
        ``feature_bounds``, ``global_smoothness``).
    trace : float
        ``tr M``, the intercept column's included (the clip's unit).
    target_rms : float or None
        ``rms(y)`` (the squared loss's clip unit), or None.
    ledger : PrivacyLedger
        The estimates' mechanisms.
    epsilon_left : float
        The fits' epsilon at the same delta (GDP ``sqrt(1 - share) mu``).
    feature_bounds : ndarray or None
        Per-feature bounds on ``|X_ij|`` the fit clips X to (with per-feature
        ``M_j``: their estimate misses what lies above), or None.
    target_bound : float or None
        A bound on ``|y_i|`` (the highest detected bin), or None.
    """

    kwargs: dict
    trace: float
    target_rms: float
    ledger: PrivacyLedger
    epsilon_left: float
    feature_bounds: np.ndarray = None
    target_bound: float = None


def estimate_constants(X, y, datafit, spec, smoothness_kw, budget, params, generator):
    """Private estimates of the constants a fit needs (module docstring).

    Parameters
    ----------
    X : canonical CSC matrix
    y : ndarray or None
        The targets, when their scale is needed (the squared loss), else None.
    datafit : Datafit
    spec : SolverSpec
    smoothness_kw : dict
        What the user gave (``smoothness``, ``feature_bounds``): a given value is
        kept.
    budget : float
        The solver's budget (``n_iter`` or ``passes``).
    params : dict
        The estimator's validated parameters (epsilon, delta, intercept).
    generator : numpy.random.Generator

    Returns
    -------
    PrivateConstants
    """
    epsilon, delta = params["epsilon"], params["delta"]
    beta = datafit.beta
    extra = params["fit_intercept"]
    s2 = params["intercept_scaling"] ** 2 if extra else 0.0
    n_columns = X.shape[1] + extra
    mu = 1.0 / calibrate_gaussian(epsilon, delta, 1)
    given = smoothness_kw.get("smoothness")
    coordinate = spec.smoothness == "coordinate" and given is None
    after_selection = coordinate and spec.smoothness_after_selection is not None and \
        spec.smoothness_after_selection(budget, n_columns)
    per_feature = coordinate and not after_selection
    share = CONSTANTS_SHARE + per_feature * FEATURE_SHARE
    z = 1.0 / (math.sqrt(CONSTANTS_SHARE) * mu)  # together: sqrt(share) mu in GDP
    # the solver's relation: the noise is calibrated for replace-one (sensitivity
    # sqrt(2 k)), at least that of add/remove (sqrt(k)), so it is valid for both
    ledger = PrivacyLedger(delta=delta, relation=spec.relation)
    # a child stream: the fit's own draws stay those of the functional call with the
    # same seed (the fit is reproducible from solver_params_ and solver_budget_)
    generator = generator.spawn(1)[0]
    rows = private_row_scales(X, y, z, generator, ledger, relation=spec.relation,
                              norms=not after_selection)
    kwargs = {}
    trace = None if after_selection else beta * (rows.mean_sq_norm + s2)
    bounds = None
    if per_feature:
        z_features = 1.0 / (math.sqrt(FEATURE_SHARE) * mu)
        M, bounds = smoothness_from_histogram(X, beta, z_features, generator, ledger,
                                              rows.bound, relation=spec.relation)
        kwargs["smoothness"] = M
        trace = float(M.sum()) + beta * s2
    elif after_selection:
        kwargs.update(smoothness=STEP_SHARE, feature_bounds=rows.bound)
        bound = max(rows.bound, math.sqrt(s2))
        trace = n_columns * beta * bound * bound  # the solver's prior M_j = beta B^2
    elif spec.smoothness == "coordinate" and np.ndim(given) == 0 and \
            smoothness_kw.get("feature_bounds") is None:
        kwargs["feature_bounds"] = rows.bound  # a fraction given, no bounds
    elif spec.smoothness == "global" and given is None and \
            smoothness_kw.get("global_smoothness") is None:
        kwargs["global_smoothness"] = trace  # ||X||_2^2 <= ||X||_F^2
    if rows.undetected:
        warnings.warn(
            f"the private estimates of the data's scales saw nothing above their noise "
            f"({', '.join(rows.undetected)}: n = {X.shape[0]} rows at epsilon = "
            f"{epsilon:g}); they take unit scales. Give public constants (feature_bounds, "
            f"smoothness, clip, target_bound) for a better fit", UserWarning,
            stacklevel=find_stack_level())
    epsilon_left = gdp_epsilon(math.sqrt(1.0 - share) * mu, delta)
    return PrivateConstants(kwargs, trace, rows.target_rms, ledger, epsilon_left, bounds,
                            rows.target_bound)
