"""Private hyper-parameter search: the whole search inside one (epsilon, delta).

:class:`PrivateSearch` tunes a private estimator by random stopping (Papernot
and Steinke, ICLR 2022; :mod:`sparsedp.privacy.selection`):

1. a public random split of the rows (a permutation drawn from
   ``random_state``): ``holdout`` of them score, the rest train;
2. ``K`` trials, ``K`` drawn from a truncated negative binomial (geometric by
   default) of mean ``mean_trials``, independently of the data; each trial draws
   a candidate uniformly from the grid, fits it privately on the training rows
   at the per-trial budget, and scores it on the held-out rows: the mean of the
   per-example loss clipped to ``[0, b]`` (sensitivity ``b`` on the sum under
   replace-one) released with a discretised Gaussian on a public grid
   (floating-point safe, :class:`~sparsedp.solvers._release.GridRelease`), plus
   the model's penalty (a function of the model);
3. the best score wins; only the winner (its model, its parameters, its noisy
   score) is released, never the other trials nor their number.

**Accounting.**  A trial is its fit's mechanisms on the training rows and the
score on the held-out rows: disjoint rows, so the trial's RDP curve is the
larger of the two at each order (parallel composition).  The fit's curve is
that of its ledger, the largest over the grid: every candidate's ledger is a
function of public values (shapes, budget, hyper-parameters), computed by
fitting it on a public matrix of the training rows' shape (one unit entry a
row), and each real trial's ledger is checked against it.  The per-trial budget is the largest
whose random-stopping curve converts to at most (epsilon, delta);
``privacy_`` holds the one record (:class:`~sparsedp.privacy.selection.RandomStopping`).
"""
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted

from ._validation import check_random_state, check_real
from .privacy import DEFAULT_ORDERS, PrivacyLedger, calibrate_gaussian, gdp_epsilon, rdp_to_dp
from .privacy.ledger import cached_epsilons
from .privacy.selection import (RandomStopping, expected_trials, ledger_rdp, ledger_tv,
                                rdp_random_stopping, sample_trials, trials_gamma)
from .solvers._release import GridRelease

__all__ = ["PrivateSearch", "registry_grid"]

#: the search's budgets and steps lie within this factor of the estimator's defaults
SPAN = 2.5
_LAWS = {0.0: "logarithmic, ", 1.0: "geometric, ", math.inf: "Poisson, "}
#: the per-trial budget is searched down to this relative precision
_BUDGET_RTOL = 0.01


def registry_grid(estimator, n_samples, n_features, epsilon=1.0, grid="full"):
    """The parameter grid of ``estimator``'s solver from the solver registry.

    The solver's hyper-parameters' ``full`` (or ``quick``) values
    (:data:`~sparsedp.solvers.REGISTRY`), those with an estimator's default
    (the budget, the step) restricted to within a factor :data:`SPAN` of the
    default for this shape, loss and epsilon (the measured best,
    docs/defaults.rst), the default added where the grid lacks it.  Those in units of the gradient scale (``per_unit``, the
    clip) stay at the estimator's default: their unit is a private estimate the
    search does not see.  Under random stopping every candidate drawn costs
    the same, and a grid of poor candidates (DP-CD at 1 pass on 20,000 rows)
    makes a poor search whenever few trials are drawn.
    """
    from .linear_model import choose_solver
    from .solvers import get_spec
    solver = estimator.solver
    if solver == "auto":
        penalty = estimator._penalty()
        solver = choose_solver(estimator._loss, penalty.l1 if penalty else 0.0,
                               n_samples, n_features)
    spec = get_spec(solver)
    defaults = {spec.budget_grid.name: spec.default_budget(n_samples, n_features, epsilon)}
    if spec.default_step is not None:
        defaults["step_size"] = spec.default_step(n_samples, n_features, estimator._datafit())
    out = {}
    for h in (spec.budget_grid,) + tuple(spec.hyperparameters):
        if h.per_unit:
            continue
        values = set(getattr(h, grid))
        if h.name in defaults:
            d = defaults[h.name]
            values = {v for v in values if d / SPAN <= v <= d * SPAN} | {d}
        out[h.name] = sorted(values)
    return out


class PrivateSearch(BaseEstimator):
    """Private hyper-parameter search over a private estimator (module docstring).

    Parameters
    ----------
    estimator : DPLinearModel
        The estimator to tune (a regressor or a binary classifier, with
        ``classes`` declared); its ``epsilon``, ``delta`` and
        ``random_state`` are set by the search.
    param_grid : dict or list of dicts, optional
        As scikit-learn's ``GridSearchCV``; None: :func:`registry_grid`.
    epsilon : float, default=1.0
        The whole search's epsilon.
    delta : float, optional
        The whole search's delta (default ``1 / n**2``).
    mean_trials : float, default=5.0
        ``E K``, the mean number of trials (> 1).
    trials_shape : float, default=0.0
        The law of ``K``: 0 logarithmic (the least overhead: a trial's GDP
        budget is 67 % of the whole at mean 5, 59 % geometric), 1 geometric, in
        (0, inf) truncated negative binomial, ``inf`` Poisson (``K = 0``
        possible: nothing fitted).  Measured: docs/tuning.rst.
    holdout : float, default=0.1
        The fraction of the rows that score the candidates.
    score_clip : float, optional
        ``b``, the bound the per-example losses are clipped to.  None: twice the
        loss at 0 for the classifiers (``2 log 2`` logistic, 2 hinge losses);
        ``B^2`` for the squared loss, ``B`` the candidate's ``target_bound_``
        (the loss at 0 of the largest target: measured on standardised
        California, ``2 rms(y)^2`` chose 3 to 5 times worse models).
    random_state : None, int or numpy Generator

    Attributes
    ----------
    best_estimator_ : estimator or None
        The winner, fitted on the training rows (None when ``K = 0``).
    best_params_ : dict or None
    best_score_ : float
        Its noisy held-out objective (private).
    privacy_ : PrivacyLedger
        One record, the whole search.
    trial_epsilon_ : float
        One trial's fit budget (epsilon at ``delta``).
    score_multiplier_ : float
        The score's noise multiplier (sd over ``b``).
    """

    def __init__(self, estimator, param_grid=None, *, epsilon=1.0, delta=None,
                 mean_trials=5.0, trials_shape=0.0, holdout=0.1, score_clip=None,
                 random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.mean_trials = mean_trials
        self.trials_shape = trials_shape
        self.holdout = holdout
        self.score_clip = score_clip
        self.random_state = random_state

    # ---- accounting ----------------------------------------------------------------
    def _trial_curve(self, candidates, eps_c, delta, train_shape, y_dummy, m):
        """The largest RDP curve of a trial over the grid at fit budget ``eps_c``
        (and the score's on ``m`` rows, its sampler's slack included)."""
        n, p = train_shape  # public values: one unit entry a row, cycling over the columns
        X0 = sp.csc_array((np.ones(n), (np.arange(n), np.arange(n) % p)), shape=(n, p))
        curve = np.zeros(DEFAULT_ORDERS.shape)
        tv = 0.0
        for params in candidates:
            est = clone(self.estimator).set_params(**params, epsilon=eps_c, delta=delta,
                                                   random_state=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X0, y_dummy)
            curve = np.maximum(curve, ledger_rdp(est.privacy_))
            tv = max(tv, ledger_tv(est.privacy_))
        mu = 1.0 / calibrate_gaussian(eps_c, delta, 1)
        eta = GridRelease("gaussian", 1.0 / mu, m, 1.0).noise.eta
        score = (DEFAULT_ORDERS * mu * mu / 2.0  # the score's Gaussian, multiplier 1 / mu
                 + (2.0 * DEFAULT_ORDERS - 1.0) * eta / (DEFAULT_ORDERS - 1.0))
        return np.maximum(curve, score), tv, 1.0 / mu

    def _total(self, curve, tv, delta, mean, shape):
        """The search's epsilon at ``delta`` from one trial's curve."""
        rdp = rdp_random_stopping(curve, mean, shape)
        if tv == 0.0:
            return rdp_to_dp(DEFAULT_ORDERS, rdp, delta)
        trials = mean if math.isinf(shape) else expected_trials(trials_gamma(mean, shape),
                                                               shape)
        eps = rdp_to_dp(DEFAULT_ORDERS, rdp, delta / 2.0)
        if (1.0 + math.exp(eps)) * trials * tv > delta / 2.0:
            return math.inf
        return eps

    def _calibrate(self, candidates, delta, train_shape, y_dummy, m, mean, shape):
        """The largest per-trial fit budget within (epsilon, delta), its trial curve,
        (the score multiplier, a trial's samplers' total variation), the search's
        epsilon."""
        def total(eps_c):
            curve, tv, z = self._trial_curve(candidates, eps_c, delta, train_shape, y_dummy,
                                             m)
            return self._total(curve, tv, delta, mean, shape), curve, (z, tv)

        # the Gaussian guess: a trial mu-GDP
        lo, hi = 1e-6, 50.0
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            rdp = rdp_random_stopping(DEFAULT_ORDERS * mid * mid / 2.0, mean, shape)
            if rdp_to_dp(DEFAULT_ORDERS, rdp, delta) > self.epsilon:
                hi = mid
            else:
                lo = mid
        eps_c = gdp_epsilon(lo, delta)
        # then the search's epsilon, increasing in eps_c and about a power of it:
        # secant steps on (log eps_c, log epsilon), kept inside the bracket
        best = None
        target = self.epsilon * (1.0 - _BUDGET_RTOL / 2.0)
        low = high = None  # (eps_c, its search's epsilon)
        for _ in range(12):
            got, curve, z = total(eps_c)
            if got <= self.epsilon:
                best = (eps_c, curve, z, got)
                low = (eps_c, got)
                if got >= self.epsilon * (1.0 - _BUDGET_RTOL):
                    break
            else:
                high = (eps_c, got)
            if low is not None and high is not None:
                if high[0] - low[0] <= _BUDGET_RTOL * low[0]:
                    break
                slope = (math.log(high[1] / low[1]) / math.log(high[0] / low[0])
                         if low[1] > 0.0 and math.isfinite(high[1]) else 0.0)
                step = math.log(target / low[1]) / slope if slope > 0.0 else 0.0
                eps_c = low[0] * math.exp(step)
                if not low[0] < eps_c < high[0]:
                    eps_c = math.sqrt(low[0] * high[0])
            elif high is not None:  # at most a tenth per step (a search's epsilon can
                # be inf: the samplers' total variation above delta)
                eps_c = high[0] * min(max(target / high[1], 0.1), 1.0 - _BUDGET_RTOL)
            else:
                eps_c = low[0] * max(target / max(low[1], 1e-12), 1.0 + _BUDGET_RTOL)
        if best is None:
            raise ValueError(f"no per-trial budget keeps the search within epsilon = "
                             f"{self.epsilon:g}: raise epsilon or lower mean_trials")
        return best

    # ---- the search ----------------------------------------------------------------
    def _check(self, n):
        epsilon = check_real(self.epsilon, "epsilon")
        delta = 1.0 / (n * n) if self.delta is None else check_real(self.delta, "delta",
                                                                    high=1.0)
        mean = check_real(self.mean_trials, "mean_trials")
        if not mean > 1.0:
            raise ValueError(f"mean_trials must be > 1, got {self.mean_trials!r}")
        shape = float(self.trials_shape)
        if not shape >= 0.0:
            raise ValueError(f"trials_shape must be >= 0 (0 logarithmic, 1 geometric, inf "
                             f"Poisson), got {self.trials_shape!r}")
        holdout = check_real(self.holdout, "holdout", high=1.0)
        if self.score_clip is not None:
            check_real(self.score_clip, "score_clip")
        return epsilon, delta, mean, shape, holdout

    def _score_parts(self, est, X, y):
        """Per-example losses of a fitted candidate on (X, y), its clip and penalty."""
        datafit = est._datafit()
        margins = np.ravel(est._decision(X))
        if hasattr(est, "classes_"):
            if len(est.classes_) != 2:
                raise ValueError("PrivateSearch scores regressors and binary classifiers")
            y = np.where(y == est.classes_[1], 1.0, -1.0)
        losses = datafit.loss(margins, y)
        if self.score_clip is not None:
            b = float(self.score_clip)
        elif hasattr(est, "classes_"):
            b = 2.0 * float(datafit.loss(np.zeros(1), np.ones(1))[0])
        else:
            s = est.target_bound_
            if s is None:
                raise ValueError("the squared loss's score needs score_clip, or a candidate "
                                 "with a public target_bound or private constants")
            b = float(s) ** 2
        penalty = est._penalty()
        return losses, b, 0.0 if penalty is None else float(penalty.value(np.ravel(est.coef_)))

    def fit(self, X, y):
        """Run the search on (X, y); returns self."""
        with cached_epsilons():  # the trials refit few settings: their epsilons once each
            return self._fit(X, y)

    def _fit(self, X, y):
        X = sp.csr_array(X) if sp.issparse(X) else np.asarray(X)
        y = np.asarray(y)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ValueError(f"X must be 2-D and y of shape (n_samples,), got {X.shape} "
                             f"and {y.shape}")
        n, p = X.shape
        epsilon, delta, mean, shape, holdout = self._check(n)
        generator = check_random_state(self.random_state)
        m = int(round(holdout * n))
        if not 1 <= m < n:
            raise ValueError(f"holdout={self.holdout!r} leaves no row to score or to train "
                             f"on ({n} rows)")
        order = generator.permutation(n)
        hold, train = np.sort(order[:m]), np.sort(order[m:])
        grid = self.param_grid if self.param_grid is not None else registry_grid(
            self.estimator, n - m, p, epsilon)
        candidates = list(ParameterGrid(grid))
        classes = getattr(self.estimator, "classes", None)
        y_dummy = (np.resize(np.asarray(classes), n - m) if classes is not None
                   else np.ones(n - m))
        eps_c, curve, (z, tv), total = self._calibrate(candidates, delta, (n - m, p), y_dummy,
                                                       m, mean, shape)
        self.trial_epsilon_, self.score_multiplier_ = eps_c, z
        K = sample_trials(generator, mean, shape)
        X_train, y_train, X_hold, y_hold = X[train], y[train], X[hold], y[hold]
        best = (math.inf, None, None)
        releases = {}  # the score's release per clip b
        for _ in range(K):
            params = candidates[int(generator.integers(len(candidates)))]
            est = clone(self.estimator).set_params(
                **params, epsilon=eps_c, delta=delta, random_state=generator.spawn(1)[0])
            est.fit(X_train, y_train)
            if np.any(ledger_rdp(est.privacy_) > curve * (1.0 + 1e-9) + 1e-12):
                raise RuntimeError(f"the ledger of {params} on the data exceeds its ledger on "
                                   f"public data of the same shape: a data-dependent "
                                   f"accounting, which the search cannot cover")
            losses, b, penalty = self._score_parts(est, X_hold, y_hold)
            if b not in releases:
                releases[b] = GridRelease("gaussian", z, m, b)
            release = releases[b]
            total_loss = math.fsum(np.minimum(np.maximum(losses, 0.0), b))
            noisy = release.noise.release(np.array([total_loss]), release.inv_grid,
                                          release.grid, generator)[0]
            score = noisy / m + penalty
            if score < best[0]:
                best = (score, est, params)
        self.best_score_, self.best_estimator_, self.best_params_ = best
        relation = "replace-one"
        if self.best_estimator_ is not None:
            relation = self.best_estimator_.privacy_.relation
        ledger = PrivacyLedger(delta=delta, relation=relation)
        law = _LAWS.get(shape, f"truncated negative binomial of shape {shape:g}, ")
        ledger.add(RandomStopping(
            name=f"private search over {len(candidates)} candidates: trials {law}"
                 f"mean {mean:g}; a trial fits on {n - m} rows at epsilon {eps_c:.4g} and "
                 f"scores on {m} held-out rows (losses clipped to [0, b], discretised "
                 f"Gaussian z = {z:.4g})",
            trial_rdp=tuple(curve), mean_trials=mean, shape=shape, trial_epsilon=eps_c,
            relation=relation))
        if tv > 0.0:  # the samplers' total variation, once per expected trial
            trials = mean if math.isinf(shape) else expected_trials(
                trials_gamma(mean, shape), shape)
            ledger.add_sampler_tv("the trials' samplers (E K x one trial's total variation)",
                                  trials * tv)
        self.privacy_ = ledger
        self.n_features_in_ = p
        return self

    # ---- the winner ----------------------------------------------------------------
    def _winner(self):
        check_is_fitted(self, "privacy_")
        if self.best_estimator_ is None:
            raise ValueError("the search ran no trial (K = 0 under the Poisson law): there is "
                             "no model")
        return self.best_estimator_

    def predict(self, X):
        """The winner's predictions."""
        return self._winner().predict(X)

    def decision_function(self, X):
        """The winner's decision function."""
        return self._winner().decision_function(X)
