"""The common machinery of the private linear estimators.

An estimator is thin over the functional API (:mod:`sparsedp.solvers`): it
validates its parameters and the data, picks the solver, maps its parameters to
the solver's, and keeps the private output (``coef_``, ``intercept_``) and the
privacy report (``privacy_``).  Nothing here looks at the data beyond what the
solvers account for.

Overhead (docs/estimators.rst, "Overhead"): the data are validated once, by the
solvers' own :func:`~sparsedp._validation.check_X` (scikit-learn's
``validate_data`` only checks the container: its O(nnz) finiteness check is
left to ``check_X``), and every solver call takes the checked matrix as is.
The public intercept column is the solvers' own (``fit_intercept``): DP-CD and
DP-GCD hold it in their layouts of X, DP-SGD and DP-SCD append it (one copy of
X's arrays).
"""
import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import (assert_all_finite, check_consistent_length,
                                      check_is_fitted, column_or_1d, validate_data)

from .._validation import (check_bool, check_integer, check_option, check_real,
                           check_random_state, check_X)
from .._warnings import find_stack_level
from ..exceptions import PrivacyLeakWarning
from ..datafits import Hinge, Logistic, Squared, SquaredHinge
from ..penalties import L1, L2, ElasticNet, as_penalty
from ..privacy import PrivacyLedger, calibrate_gaussian, gdp_epsilon
from ..solvers import REGISTRY, get_spec
from ..solvers._base import check_intercept, constant_column
from ..solvers._smoothness import gradient_scale
from ..solvers._dp_cd import CD_MIN_RATIO
from ..solvers._scales import clip_to_bounds
from ._constants import estimate_constants

#: re-tries of the per-fit budget when the fits and the estimates compose above epsilon
MAX_BUDGET_TRIES = 8

__all__ = ["SOLVERS", "CD_MIN_RATIO", "DEFAULT_SOLVER_OPTIONS", "choose_solver", "default_budget",
           "default_delta", "default_kappa"]

#: The estimators' ``solver`` values: "auto" and the keys of the registry's solvers
SOLVERS = ("auto",) + tuple(spec.key for spec in REGISTRY.values())

#: Options of each solver that the estimators set unless ``solver_options`` does
#: (each spec's ``options``, measured: docs/defaults.rst).
DEFAULT_SOLVER_OPTIONS = {spec.key: dict(spec.options) for spec in REGISTRY.values()}

#: The datafit of each ``loss`` name of :func:`choose_solver`
_DATAFITS = {"squared": Squared(), "logistic": Logistic(), "squared_hinge": SquaredHinge(),
             "hinge": Hinge()}
#: The estimators' solver-specific parameters: each goes to the solvers that take it
_SOLVER_SPECIFIC = ("step_size", "batch_size", "rule", "selection")


def default_budget(solver, n_samples, n_features, epsilon=1.0):
    """The default length and step of a run: ``{"passes" or "n_iter", "step_size"}``.

    The solver's spec (:class:`~sparsedp.solvers.SolverSpec`: ``default_budget``,
    ``default_step``), measured at epsilon = 1 (docs/defaults.rst).  DP-GCD:
    ``n epsilon / 300`` iterations within [3, 100] when ``n_samples >
    n_features``, else ``n epsilon / 600`` within [1, 100], step 1.  DP-CD: 2 passes when ``n_features >= n_samples``
    (every further one only adds noise), else 20, step 1 (0.3 on the squared
    loss; with the default clip of :func:`default_kappa`, which shrinks as the
    passes grow).  DP-SGD: 20 passes, step 1; DP-SCD: 20 passes (no step).
    """
    spec = get_spec(solver)
    out = {spec.budget: spec.default_budget(n_samples, n_features, epsilon)}
    if spec.default_step is not None:
        out["step_size"] = spec.default_step(n_samples, n_features, None)
    return out


def default_delta(n_samples):
    """The default delta, ``1 / n**2`` (at least 2 samples)."""
    if n_samples < 2:
        raise ValueError(f"delta=None means 1 / n_samples**2, which needs at least 2 samples "
                         f"(got n_samples = {n_samples}); pass delta explicitly")
    return 1.0 / float(n_samples) ** 2


def default_kappa(solver, n_samples, releases, epsilon, delta):
    """The default clipping threshold in units of the per-sample gradient scale at 0.

    The solver's spec (``default_kappa``).  DP-CD: ``kappa = 0.11 (n mu /
    sqrt(T))**0.65`` within [0.1, 5], with ``T`` the coordinate updates (``releases``)
    and ``mu`` the Gaussian-DP parameter of (epsilon, delta)
    (:func:`sparsedp.solvers._dp_cd.default_kappa`); the estimators also cap it
    by DP-CD's noise floor (:func:`sparsedp.solvers._dp_cd.noise_floor_kappa`:
    binding where p is not small against n).  DP-GCD and DP-SGD: 1
    (DP-GCD's measured best: 1 on dorothea and the synthetic problems, 1 to
    1.5 at n = 15,000, 3 on California and Electricity, where 1 is within
    1.5x).  DP-SCD has no unit (its default clip is 1): ValueError.  Only
    public values enter.
    """
    spec = get_spec(solver)
    if spec.default_kappa is None:
        raise ValueError(f"{spec.label}'s clip has no unit: its default clip is "
                         f"{spec.default_clip}")
    return spec.default_kappa(n_samples, releases, epsilon, delta)


def choose_solver(loss, l1, n_samples, n_features):
    """The solver ``solver="auto"`` runs (docs/defaults.rst, "solver='auto'").

    The first solver of :data:`~sparsedp.solvers.REGISTRY` whose spec's
    ``auto`` rule holds.  Measured (``experiments/defaults.py``,
    ``experiments/auto_boundary.py`` and ``experiments/auto_rule.py``: each
    solver's best over its grid, n/p from 1 to 5,664):

    * the hinge loss: DP-SCD (the only solver for a non-smooth loss);
    * a penalty with an L1 part (``l1 > 0``): DP-CD when ``n_samples >
      CD_MIN_RATIO["l1"] * n_features`` (1,000), else DP-GCD.  At epsilon 0.3,
      1 and 3, DP-GCD won nearly every synthetic and subsampled-California
      shape up to n/p = 1,000 (by up to 11 times); DP-CD won full California
      (n/p = 2,580, epsilon 1), the synthetic problems at n/p = 1,000 and
      epsilon 1 (1.3 to 1.5 times), and dorothea's columns subsampled to n/p =
      10 to 100, where w* is dense (by up to 4.4 times: this rule's largest
      measured loss, the smallest worst case of any ratio; 300 lost 5.3 times
      at epsilon 0.3);
    * no L1 part: DP-CD when ``n_samples > CD_MIN_RATIO["l2"] * n_features``
      (10), else DP-SGD.  Over two logistic and two squared-loss families at
      epsilon 0.3, 1 and 3, the synthetic ones want DP-SGD at nearly every
      ratio up to 300, Electricity DP-CD from n/p = 30 and raw California
      DP-CD everywhere (DP-SGD up to 30 times worse from n/p = 100): every
      boundary up to 30 loses at worst 11.8 times, from 100 on 22 to 30
      times; 10 has the best mean with 30 (1.44, 1.43; n > p 1.56).

    The boundary depends on the problem, not on n/p alone (the sparsity of
    w*, the separability of the data): the ratios give the smallest
    worst-case loss over the problems measured, not a law.

    Parameters
    ----------
    loss : {"squared", "logistic", "squared_hinge", "hinge"}
    l1 : float
        The penalty's L1 strength.
    n_samples, n_features : int

    Returns
    -------
    str
        The solver's key (``"cd"``, ``"gcd"``, ``"sgd"``, ``"scd"``).
    """
    datafit = _DATAFITS[check_option(loss, "loss", tuple(_DATAFITS))]
    for spec in REGISTRY.values():
        if spec.auto is not None and spec.auto(datafit, l1, n_samples, n_features):
            return spec.key
    raise ValueError(f"no solver fits the {loss} loss")  # every loss has one


def _check_y(X, y, numeric):
    """y as scikit-learn's ``check_X_y`` returns it (1-d, finite, as long as X; object
    arrays as float64 for a regressor), with its errors."""
    y = column_or_1d(y, warn=True)
    assert_all_finite(y, input_name="y")
    if np.iscomplexobj(y):
        raise ValueError("Complex data not supported")
    check_consistent_length(X, y)
    if numeric and y.dtype.kind == "O":
        y = y.astype(np.float64)
    if numeric:
        _check_numeric(y)
    return y


def _check_numeric(y):
    """A regressor's targets are numbers (strings are refused, not squared)."""
    if y.dtype.kind not in "biuf":
        raise ValueError(f"y must be numeric for a regressor, got dtype {y.dtype}")


def _compose(ledgers, names, delta):
    """One ledger of several fits on the same data (every mechanism of each)."""
    if len(ledgers) == 1:
        return ledgers[0]
    return PrivacyLedger.compose(ledgers, names=names, delta=delta)


def _per_fit_budget(epsilon, delta, k):
    """(epsilon, delta) of each of ``k`` fits whose composition should spend
    (epsilon, delta): the Gaussian (GDP) split, ``mu / sqrt(k)`` each."""
    if k == 1 or math.isinf(epsilon):
        return epsilon, delta
    mu = 1.0 / calibrate_gaussian(epsilon, delta, 1)
    return gdp_epsilon(mu / math.sqrt(k), delta), delta


class DPLinearModel(BaseEstimator):
    """Base class of the private linear estimators (not for direct use).

    Subclasses define ``_loss`` (``"squared"``, ``"logistic"``,
    ``"squared_hinge"`` or ``"hinge"``), :meth:`_datafit` and :meth:`_penalty`;
    the solvers that fit them are those whose spec accepts the model
    (:meth:`sparsedp.solvers.SolverSpec.unmet`).
    """

    #: ``rms(loss'(0, y))`` when it is public (None: the squared loss, from ``target_bound``)
    _derivative_scale = None

    # ---- to be defined by each estimator -------------------------------------------
    def _datafit(self):
        raise NotImplementedError

    def _penalty(self):
        raise NotImplementedError

    # ---- parameters ----------------------------------------------------------------
    def _check_params(self, n_samples, n_features):
        """The validated common parameters, as a dict (``"spec"``: the solver's)."""
        params = {}
        params["epsilon"] = check_real(self.epsilon, "epsilon", allow_inf=True)
        params["delta"] = (default_delta(n_samples) if self.delta is None
                           else check_real(self.delta, "delta", high=1.0))
        solver = check_option(self.solver, "solver",
                              ("auto",) + tuple(spec.key for spec in REGISTRY.values()))
        penalty = self._penalty()
        if solver == "auto":
            solver = choose_solver(self._loss, penalty.l1 if penalty else 0.0,
                                   n_samples, n_features)
        spec = get_spec(solver)
        unmet = spec.unmet(self._datafit(), as_penalty(penalty))
        if unmet is not None:
            fits = [s.key for s in REGISTRY.values()
                    if s.unmet(self._datafit(), as_penalty(penalty)) is None]
            raise ValueError(f"solver={solver!r} cannot fit {type(self).__name__} with these "
                             f"parameters ({unmet}); use one of {tuple(fits)}")
        params["solver"], params["spec"], params["penalty"] = solver, spec, penalty
        params["fit_intercept"] = check_bool(self.fit_intercept, "fit_intercept")
        params["intercept_scaling"] = check_intercept(True, self.intercept_scaling)
        if params["fit_intercept"] and not spec.takes("fit_intercept"):
            raise ValueError(f"solver={solver!r} ({spec.label}) fits no intercept: use "
                             f"fit_intercept=False")
        params["warm_start"] = check_bool(self.warm_start, "warm_start")
        params["verbose"] = check_integer(self.verbose, "verbose", low=0)
        check_bool(self.leak_constants, "leak_constants")
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise TypeError(f"solver_options must be None or a dict, got "
                            f"{type(self.solver_options).__name__}")
        return params

    def _solver_kwargs(self, params, X, targets, generator):
        """The functional solver's keyword arguments (all but the data and budget), the
        leaks of the defaults computed from the data (``[(name, description)]``, only
        with ``leak_constants``), and the private estimates of the constants (a
        :class:`PrivateConstants`, or None when nothing was estimated)."""
        spec, solver = params["spec"], params["solver"]
        n_samples, n_features = X.shape[0], self.n_features_in_
        n_columns = n_features + params["fit_intercept"]  # the coordinates, intercept's too
        kw = dict(spec.options)
        if "batch_size" in kw:
            kw["batch_size"] = min(kw["batch_size"], n_samples)
        for name in _SOLVER_SPECIFIC:
            value = getattr(self, name)
            if value is None:
                continue
            if not spec.takes(name):
                raise ValueError(f"{name} does not apply to solver={solver!r} ({spec.label}); "
                                 f"leave it None")
            kw[name] = value
        kw.update(self.solver_options or {})
        smoothness_kw, trace_bound = self._smoothness_kwargs(params, n_features)
        if params["fit_intercept"]:
            kw.update(fit_intercept=True, intercept_scaling=params["intercept_scaling"])
        for budget in {s.budget for s in REGISTRY.values()} - {spec.budget}:
            if getattr(self, budget) is not None:
                raise ValueError(f"{budget} does not apply to solver={solver!r} ({spec.label} "
                                 f"runs for {spec.budget}); leave it None")
        value = getattr(self, spec.budget)
        kw[spec.budget] = (spec.default_budget(n_samples, n_features, params["epsilon"])
                           if value is None else check_real(value, spec.budget))
        if spec.default_step is not None and "step_size" not in kw:
            kw["step_size"] = spec.default_step(n_samples, n_features, self._datafit())
        constants, target_rms = None, None
        if self.leak_constants and smoothness_kw.get("smoothness", 0) is None \
                and smoothness_kw.get("global_smoothness") is None:
            smoothness_kw["smoothness"] = "leak"  # computed by the solver: a recorded leak
        if self._estimates_needed(params, smoothness_kw, trace_bound):
            constants = estimate_constants(
                X, targets[0] if self._derivative_scale is None else None, self._datafit(),
                spec, smoothness_kw, kw[spec.budget], params, generator)
            smoothness_kw.update(constants.kwargs)
            trace_bound, target_rms = constants.trace, constants.target_rms
        kw.update(smoothness_kw)
        leaks = []
        if self.clip is not None:
            kw["clip"] = self.clip
        elif math.isinf(params["epsilon"]):
            kw["clip"] = math.inf
        elif spec.default_kappa is None:
            kw["clip"] = spec.default_clip
        else:
            unit, leaks, derivative = self._clip_unit(trace_bound, X, targets, params,
                                                      target_rms)
            releases = spec.releases(kw[spec.budget], n_columns)
            kappa = spec.default_kappa(n_samples, releases, params["epsilon"], params["delta"])
            if spec.kappa_cap is not None and derivative > 0.0:
                datafit = self._datafit()
                zero_loss = (derivative ** 2 / 4.0 if self._derivative_scale is None
                             else float(datafit.loss(np.zeros(1), np.ones(1))[0]))
                kappa = min(kappa, spec.kappa_cap(
                    n_samples, n_columns, releases, params["epsilon"], params["delta"],
                    kw.get("step_size", 1.0), datafit.beta, derivative, zero_loss))
            kw["clip"] = kappa * unit
        return kw, leaks, constants

    def _estimates_needed(self, params, smoothness_kw, trace_bound):
        """Whether a constant the fit needs is neither given nor public, and is to be
        estimated privately (a finite epsilon, ``leak_constants`` False)."""
        if math.isinf(params["epsilon"]) or self.leak_constants:
            return False
        spec = params["spec"]
        unknown_m = "smoothness" in smoothness_kw and (
            smoothness_kw["smoothness"] is None or (
                np.ndim(smoothness_kw["smoothness"]) == 0
                and smoothness_kw.get("feature_bounds") is None))
        unit = self.clip is None and spec.default_kappa is not None
        unknown_unit = unit and (trace_bound is None or (
            self._derivative_scale is None and getattr(self, "target_bound", None) is None))
        return unknown_m or unknown_unit

    def _clip_unit(self, trace_bound, X, targets, params, target_rms=None):
        """The per-sample gradient scale at 0, ``sqrt(tr M / beta) * rms(loss'(0, y))``
        (the unit of the clipping threshold: docs/defaults.rst), its leaks, and
        the scale of ``|loss'(0, y)|`` it used.

        ``tr M / beta`` is the mean squared row norm: ``trace_bound`` is its public
        bound (``trace_bound``, :meth:`_smoothness_kwargs`), None computes it from the
        data (a leak).  ``rms(loss'(0, y))`` is ``_derivative_scale`` (1/2 logistic, 2
        squared hinge); for the squared loss ``2 * target_bound`` (public), else
        ``2 * rms(y)`` from the data (a leak).
        """
        datafit = self._datafit()
        leaks = []
        if trace_bound is None:
            M = datafit.smoothness(X)
            if params["fit_intercept"]:  # as on [X, s * 1]
                M = np.append(M, datafit.smoothness(constant_column(
                    X.shape[0], params["intercept_scaling"], X.indices.dtype)))
            trace_bound = float(M.sum())
            leaks.append(("clipping threshold", "the default clip's scale, sqrt(tr M / beta), "
                          "computed from the data (leak_constants=True); leave "
                          "leak_constants False for a private estimate"))
        derivative = self._derivative_scale
        if derivative is None:  # the squared loss: 2 |y|
            bound = getattr(self, "target_bound", None)
            if bound is not None:
                derivative = 2.0 * check_real(bound, "target_bound")
            elif target_rms is not None:  # a private estimate
                derivative = 2.0 * target_rms
            else:
                derivative = 2.0 * float(np.sqrt(np.mean(np.square(targets[0]))))
                leaks.append(("clipping threshold (targets)", "the default clip's scale, "
                              "2 rms(y), computed from the targets (leak_constants=True); "
                              "leave leak_constants False for a private estimate"))
        unit = gradient_scale(trace_bound, datafit.beta, derivative)
        if not unit > 0:
            unit = 1.0  # X or y is 0: any clip gives the same fit
        return unit, leaks, derivative

    def _smoothness_kwargs(self, params, n_features):
        """``smoothness`` (and ``feature_bounds``) for the solver, and a public bound
        on ``tr M`` (None if there is none), the intercept column's constant
        included (the solver appends the column's public values to the arrays)."""
        spec, smoothness, bounds = params["spec"], self.smoothness, self.feature_bounds
        extra = params["fit_intercept"]
        s = params["intercept_scaling"]
        beta = self._datafit().beta
        trace_bound = None  # sum_j M_j, from public constants or (an upper bound) public bounds
        if smoothness is not None and np.ndim(smoothness) == 1:
            M = np.asarray(smoothness, dtype=np.float64)
            if M.shape != (n_features,):
                raise ValueError(f"smoothness must be a float in (0, 1) or an array of shape "
                                 f"({n_features},), got shape {M.shape}")
            # the intercept column's constant is public: beta * scaling**2 (the solver
            # appends it)
            trace_bound = float(np.sum(M)) + (beta * s * s if extra else 0.0)
            smoothness = M
        elif smoothness is not None:
            if isinstance(smoothness, (bool, np.bool_)) or not isinstance(
                    smoothness, numbers.Real):
                raise TypeError(f"smoothness must be None, a float in (0, 1) or an array, "
                                f"got {smoothness!r}")
            check_real(smoothness, "smoothness", high=1.0)
        if bounds is not None and np.ndim(bounds) == 1:
            b = np.asarray(bounds, dtype=np.float64)
            if b.shape != (n_features,):
                raise ValueError(f"feature_bounds must be a float or an array of shape "
                                 f"({n_features},), got shape {b.shape}")
            bounds = np.append(b, s) if extra else b
        elif bounds is not None and extra:
            bounds = np.append(np.full(n_features, check_real(bounds, "feature_bounds")), s)
        if trace_bound is None and bounds is not None:
            b = np.broadcast_to(np.asarray(bounds, dtype=np.float64), (n_features + extra,))
            trace_bound = beta * float(np.sum(b * b))
        if extra:  # the solver appends the column's public values
            if bounds is not None and np.ndim(self.feature_bounds) == 0:
                bounds = self.feature_bounds
            elif bounds is not None:
                bounds = bounds[:n_features]
        solver = params["solver"]
        if spec.smoothness is None:
            if smoothness is not None or bounds is not None:
                raise ValueError(f"smoothness and feature_bounds do not apply to "
                                 f"solver={solver!r}")
            return {}, trace_bound
        if spec.smoothness == "global":
            if bounds is not None:
                raise ValueError(f"feature_bounds does not apply to solver={solver!r}; give "
                                 f"public smoothness constants or None")
            if smoothness is None:
                return {"smoothness": None}, trace_bound
            if np.ndim(smoothness) == 0:
                raise ValueError(f"solver={solver!r} has no private smoothness estimate: give "
                                 f"public constants (an array) or None")
            # ||X||_2^2 <= ||X||_F^2: sum_j M_j bounds the global smoothness beta ||X||^2 / n
            return {"global_smoothness": trace_bound}, trace_bound
        return {"smoothness": smoothness, "feature_bounds": bounds}, trace_bound

    # ---- fitting -------------------------------------------------------------------
    _input = dict(accept_sparse=("csc", "csr", "coo"), dtype=np.float64,
                  accept_large_sparse=True)

    def _validate_fit(self, X, y):
        if getattr(getattr(X, "dtype", None), "kind", None) == "c":  # before scipy's casts
            raise ValueError("Complex data not supported: X must be real")
        # NaN / inf: check_X's O(nnz) check (in _design), not scikit-learn's too
        if (sp.issparse(X) and X.format in ("csc", "csr") and X.dtype == np.float64
                and min(X.shape) > 0):
            # already what check_array would return: only n_features_in_ (and no feature
            # names) from validate_data, and y checked as check_X_y checks it
            validate_data(self, X, skip_check_array=True)
            return X, _check_y(X, y, numeric=not self._classifier())
        X, y = validate_data(self, X, y, y_numeric=not self._classifier(),
                             ensure_all_finite=False, **self._input)
        if not self._classifier():
            _check_numeric(y)
        return X, y

    def _validate(self, X):
        return validate_data(self, X, reset=False, **self._input)

    @staticmethod
    def _classifier():
        return False

    def _design(self, X, params):
        """The solvers' design matrix: X checked once (:func:`check_X`: canonical CSC,
        one conversion; every solver call then takes it as is)."""
        return check_X(X)

    def _run(self, params, X, y, epsilon, delta, kw, generator, init):
        """One solver call; returns ``(coef, intercept, result)``.

        ``init``: None or the warm start ``(coef, intercept)``.
        """
        datafit, penalty = self._datafit(), kw.pop("penalty")
        common = dict(epsilon=epsilon, delta=delta, random_state=generator)
        if init is not None:
            common["coef_init"] = init[0]
            if params["fit_intercept"]:
                common["intercept_init"] = init[1]
        result = params["spec"].function(X, y, datafit, penalty, **common, **kw)
        return result.coef, result.intercept, result

    def _fit_targets(self, X, targets, params, names):
        """Fit one model per target vector; the budget split over them (module doc).

        Returns the coefficients (k, n_features), the intercepts (k,), the
        iteration counts, the composed ledger and the solvers' results.
        """
        k = len(targets)
        epsilon, delta = params["epsilon"], params["delta"]
        generator = check_random_state(self.random_state)
        kw, leaks, constants = self._solver_kwargs(params, X, targets, generator)
        for name, description in leaks:
            warnings.warn(f"{name}: {description}", PrivacyLeakWarning,
                          stacklevel=find_stack_level())
        self.solver_params_ = dict(kw)
        kw["penalty"] = params["penalty"]
        seeds = [generator] if k == 1 else generator.spawn(k)  # k = 1: the functional API's draws
        init = self._warm_coef(params, k)
        solver = params["solver"]
        if init is not None and not params["spec"].takes("coef_init"):
            warnings.warn(f"warm_start is ignored by solver={solver!r} (it takes no starting "
                          f"point)", UserWarning, stacklevel=find_stack_level())
            init = None

        start = seeds[0].bit_generator.state  # a re-tried first fit draws the same bits

        def fit(c, budget):
            if c == 0:
                seeds[0].bit_generator.state = start
            return self._run(params, X, targets[c], *budget, dict(kw), seeds[c],
                             None if init is None else (init[0][c], init[1][c]))

        self.feature_clip_ = None if constants is None else constants.feature_bounds
        # the bound on |y| the fit knew (public, or its private estimate): what a
        # private score of the model clips its squared errors to
        self.target_bound_ = getattr(self, "target_bound", None)
        if self.target_bound_ is None and constants is not None:
            self.target_bound_ = constants.target_bound
        if self.feature_clip_ is not None:
            X = clip_to_bounds(X, self.feature_clip_)  # what M_j describes
        prior = None if constants is None else constants.ledger
        each = _per_fit_budget(epsilon if constants is None else constants.epsilon_left,
                               delta, k)
        fits = [fit(0, each)]
        for _ in range(MAX_BUDGET_TRIES):
            total = self._total_epsilon(fits[0][2].privacy, k, delta, prior)
            if total <= epsilon:
                break
            if k > 1 and prior is None:
                each = (epsilon / k, delta / k)  # basic composition: always within budget
            else:  # the estimates' share composes worse than the GDP split: less for the
                # fits, by about the excess (the total grows about as fast as the fits' part)
                each = (each[0] - 1.1 * (total - epsilon) - 1e-9 * epsilon, each[1])
            fits = [fit(0, each)]
        else:
            raise RuntimeError(f"no per-fit budget found within epsilon = {epsilon}")
        self.solver_budget_ = each
        fits += [fit(c, each) for c in range(1, k)]
        results = [r for _, _, r in fits]
        for r in results:
            for name, description in leaks:
                r.privacy.add_leak(name, description)
        parts = [r.privacy for r in results]
        ledger = (_compose(parts, names, delta) if prior is None
                  else _compose([prior] + parts, ["constants"] + list(names), delta))
        if params["verbose"]:
            print(f"{type(self).__name__}: solver={solver!r}, {k} fit(s) at "
                  f"(epsilon, delta) = ({each[0]:.4g}, {each[1]:.3g}) each\n{ledger}")
        coefs = np.array([coef for coef, _, _ in fits])
        intercepts = np.array([b for _, b, _ in fits], dtype=np.float64)
        return coefs, intercepts, np.array([r.n_iter for r in results]), ledger, results

    @staticmethod
    def _total_epsilon(ledger, k, delta, prior=None):
        """The epsilon of k copies of ``ledger`` (and the ``prior`` estimates) composed
        (-inf when not private anyway, epsilon = inf or a leak: no split helps)."""
        if not ledger.private:
            return -math.inf
        parts = [ledger] * k + ([] if prior is None else [prior])
        return _compose(parts, [str(c) for c in range(len(parts))], delta).get_epsilon(delta)

    def _warm_coef(self, params, k):
        """The previous fit's ``(coefs (k, n_features), intercepts (k,))``, if warm
        (the intercepts None without ``fit_intercept``)."""
        if not (params["warm_start"] and hasattr(self, "coef_")):
            return None
        if np.size(self.coef_) != k * self.n_features_in_:
            return None
        coef = np.asarray(self.coef_, dtype=np.float64).reshape(k, -1)
        if not params["fit_intercept"]:
            return coef, [None] * k
        return coef, np.asarray(self.intercept_, dtype=np.float64).reshape(k)

    def _set_fitted(self, coefs, intercepts, n_iter, ledger, params, results):
        intercept = intercepts if params["fit_intercept"] else np.zeros(coefs.shape[0])
        self.privacy_ = ledger
        self.solver_ = params["solver"]
        self.n_iter_ = n_iter
        self.delta_ = params["delta"]
        self.solver_info_ = [r.info for r in results]
        return coefs, intercept

    # ---- prediction ----------------------------------------------------------------
    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = self._validate(X)
        if getattr(self, "feature_clip_", None) is not None:  # the model's own clipping
            X = clip_to_bounds(sp.csc_array(X), self.feature_clip_)
        coef = np.atleast_2d(self.coef_)
        scores = np.asarray(X @ coef.T).reshape(X.shape[0], -1) + self.intercept_
        return scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = True
        return tags


def store_params(estimator, params):
    """Store an ``__init__``'s arguments unchanged (scikit-learn's rule)."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


def penalty_of(penalty, alpha, l1_ratio):
    """The penalty object of an estimator's ``penalty`` / ``alpha`` / ``l1_ratio``."""
    alpha = check_real(alpha, "alpha", include_low=True)
    if penalty is None or penalty == "none" or alpha == 0.0:
        return None
    if penalty == "l1":
        return L1(alpha)
    if penalty == "l2":
        return L2(alpha)
    if penalty == "elasticnet":
        if l1_ratio is None:
            raise ValueError("penalty='elasticnet' needs l1_ratio in [0, 1]")
        return ElasticNet(alpha, check_real(l1_ratio, "l1_ratio", include_low=True, high=1.0,
                                            include_high=True))
    raise ValueError(f"penalty must be one of (None, 'l1', 'l2', 'elasticnet'), got {penalty!r}")
