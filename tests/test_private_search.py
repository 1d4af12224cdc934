"""Private selection: the random-stopping accounting, the number of trials' law,
and :class:`sparsedp.model_selection.PrivateSearch` end to end."""
import json
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

import sparsedp.model_selection as model_selection
from sparsedp import DPLasso, DPLogisticRegression
from sparsedp.model_selection import PrivateSearch, registry_grid
from problems import FixedModel, make_sparse_problem
from sparsedp.privacy import DEFAULT_ORDERS, PrivacyLedger, rdp_gaussian, rdp_laplace, rdp_to_dp
from sparsedp.privacy.selection import (RandomStopping, expected_trials, ledger_rdp,
                                        liu_talwar_epsilon, rdp_random_stopping,
                                        sample_trials, trials_gamma, trials_pmf)

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting import dp_event  # noqa: E402
from dp_accounting.rdp import RdpAccountant  # noqa: E402

LAWS = [(10.0, 1.0), (5.0, 0.0), (20.0, 0.5), (3.0, 2.0), (10.0, math.inf), (1.5, 1.0)]


# ---- accounting against dp-accounting's RepeatAndSelectDpEvent --------------------------
@pytest.mark.parametrize("mean, shape", LAWS)
@pytest.mark.parametrize("z", [0.7, 2.0, 10.0])
def test_random_stopping_never_below_dp_accounting(z, mean, shape):
    """Our epsilon of the best of K Gaussian trials against dp-accounting's for the same
    event and orders: the same theorem, within 1e-9 relative.  Theirs finds gamma by
    bisection to a relative 1e-9, rounded down (a larger epsilon); ours to the last bit,
    rounded down too (``E K >= mean``): ours is never below theirs by more than that
    tolerance's effect."""
    for delta in (1e-5, 1e-9):
        ours = rdp_to_dp(DEFAULT_ORDERS, rdp_random_stopping(rdp_gaussian(z), mean, shape),
                         delta)
        acc = RdpAccountant(list(DEFAULT_ORDERS))
        acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(z), mean, shape))
        theirs = acc.get_epsilon(delta)
        assert ours >= theirs * (1 - 1e-9)
        assert ours == pytest.approx(theirs, rel=1e-9)
        if shape in (1.0, math.inf):  # no gamma to find: the same to rounding
            assert ours >= theirs * (1 - 1e-13)


@pytest.mark.parametrize("mean, shape", [(10.0, 1.0), (4.0, 0.0), (3.0, math.inf)])
def test_random_stopping_of_a_laplace_trial(mean, shape):
    """A non-Gaussian curve (the Laplace mechanism's, ours): dp-accounting's theorem on
    the same curve and orders gives the same selection curve (to its gamma tolerance).
    The same curve for both: dp-accounting's own Laplace curve was looser before 0.6."""
    from dp_accounting.rdp import rdp_privacy_accountant
    curve = rdp_laplace(2.0)
    ours = rdp_random_stopping(curve, mean, shape)
    theirs = np.asarray(rdp_privacy_accountant._compute_rdp_repeat_and_select(
        list(DEFAULT_ORDERS), list(curve), mean, shape))
    # theirs makes the Poisson curve monotone in the order only for the truncated
    # negative binomial; ours for both (a bound at a higher order holds at a lower one)
    theirs = np.minimum.accumulate(theirs[::-1])[::-1]
    assert np.all(ours >= theirs * (1 - 1e-9))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_random_stopping_costs_more_than_one_trial_and_less_than_composition():
    one = rdp_to_dp(DEFAULT_ORDERS, rdp_gaussian(5.0), 1e-6)
    best = rdp_to_dp(DEFAULT_ORDERS, rdp_random_stopping(rdp_gaussian(5.0), 10.0, 1.0), 1e-6)
    ten = rdp_to_dp(DEFAULT_ORDERS, 10 * rdp_gaussian(5.0), 1e-6)
    assert one < best < ten
    # the curve is non-decreasing in the order
    curve = rdp_random_stopping(rdp_gaussian(5.0), 10.0, 1.0)
    assert np.all(np.diff(curve) >= 0)


def test_liu_talwar():
    assert liu_talwar_epsilon(0.25) == 0.75
    with pytest.raises(ValueError, match="epsilon0 must be >= 0"):
        liu_talwar_epsilon(-1.0)


@pytest.mark.parametrize("mean, shape, match", [
    (1.0, 1.0, "mean number of trials must be a finite number > 1"),
    (math.inf, 1.0, "mean number of trials"),
    (10.0, -1.0, "shape of the trials' law must be >= 0"),
    (10.0, math.nan, "shape of the trials' law"),
])
def test_bad_laws_are_refused(mean, shape, match):
    with pytest.raises(ValueError, match=match):
        rdp_random_stopping(rdp_gaussian(1.0), mean, shape)


# ---- the law of the number of trials -----------------------------------------------------
@pytest.mark.parametrize("mean, shape", LAWS)
def test_gamma_gives_the_mean(mean, shape):
    pmf = trials_pmf(np.arange(0, 20_000), mean, shape)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-9)
    assert (np.arange(0, 20_000) * pmf).sum() == pytest.approx(mean, rel=1e-9)
    if not math.isinf(shape):
        assert expected_trials(trials_gamma(mean, shape), shape) == pytest.approx(mean, rel=1e-12)
        assert pmf[0] == 0.0  # truncated: at least one trial


def _chi2_pvalue(draws, mean, shape):
    """Chi-square test of draws against the law, cells of expected count >= 20."""
    top = int(draws.max()) + 1
    expected = trials_pmf(np.arange(top), mean, shape) * draws.size
    observed = np.bincount(draws, minlength=top).astype(float)
    cells, o_cells, acc_e, acc_o = [], [], 0.0, 0.0
    for e, o in zip(expected, observed):
        acc_e, acc_o = acc_e + e, acc_o + o
        if acc_e >= 20:
            cells.append(acc_e)
            o_cells.append(acc_o)
            acc_e = acc_o = 0.0
    cells[-1] += acc_e + draws.size * (1 - trials_pmf(np.arange(top), mean, shape).sum())
    o_cells[-1] += acc_o
    return stats.chisquare(o_cells, cells).pvalue


@pytest.mark.parametrize("mean, shape", LAWS)
def test_sampled_trials_follow_their_law(mean, shape):
    """20,000 draws (seed 0) against the law: chi-square p-value above 1e-3; a fixed
    number of trials (the mean, rounded) is rejected far below it."""
    rng = np.random.default_rng(0)
    draws = np.array([sample_trials(rng, mean, shape) for _ in range(20_000)])
    assert _chi2_pvalue(draws, mean, shape) > 1e-3
    fixed = np.full(20_000, int(round(mean)))
    assert _chi2_pvalue(fixed, mean, shape) < 1e-12


# ---- the search ------------------------------------------------------------------------
def test_the_search_runs_its_law_of_trials():
    """The number of trial fits of 1,500 searches (seeds 0-1499) against the geometric
    law of mean 4: chi-square p-value above 1e-3."""
    X, y = np.array([[1.0], [0.0], [1.0], [0.0]]), np.array([1.0, 1.0, -1.0, 1.0])
    search = PrivateSearch(FixedModel(), {"w": [1.0, -1.0]}, epsilon=1.0, delta=1e-6,
                           mean_trials=4.0, trials_shape=1.0, holdout=0.5)
    counts = []
    for seed in range(1_500):
        FixedModel.trial_fits = 0
        search.set_params(random_state=seed).fit(X, y)
        counts.append(FixedModel.trial_fits)
    assert _chi2_pvalue(np.array(counts), 4.0, 1.0) > 1e-3


def _data(n=2_000, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    w = np.array([2.0, -1.5, 0, 0, 1.0, 0])[:p]
    t = X @ w + 0.5 * rng.standard_normal(n)
    return sp.csc_array(X), t, np.where(t > 0, 1.0, -1.0)


def test_search_is_within_its_budget_and_reports_it():
    X, t, _ = _data()
    est = DPLasso(alpha=0.01, solver="cd", fit_intercept=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = PrivateSearch(est, {"passes": [5, 20], "step_size": [0.3]}, epsilon=1.0,
                               random_state=0).fit(X, t)
    assert search.privacy_.epsilon <= 1.0
    assert search.privacy_.epsilon > 0.97  # the per-trial budget is not wasted
    (record,) = search.privacy_.entries
    assert isinstance(record, RandomStopping)
    assert "random stopping" in str(search.privacy_)
    # the report's curve is the random stopping of the recorded trial curve
    assert (record.mean_trials, record.shape) == (5.0, 0.0)  # the defaults: logarithmic
    curve = rdp_random_stopping(np.asarray(record.trial_rdp), 5.0, 0.0)
    assert rdp_to_dp(DEFAULT_ORDERS, curve, search.privacy_.delta) == pytest.approx(
        search.privacy_.epsilon, rel=1e-9)
    # a trial: the fit's ledger on public data, and the score: never below either
    assert search.trial_epsilon_ < 1.0
    fit = DPLasso(alpha=0.01, solver="cd", fit_intercept=False, passes=20, step_size=0.3,
                  epsilon=search.trial_epsilon_, delta=search.privacy_.delta, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit.fit(X[:1800], t[:1800])
    assert np.all(np.asarray(record.trial_rdp) >= ledger_rdp(fit.privacy_) * (1 - 1e-9))
    assert search.best_params_ in ({"passes": 5, "step_size": 0.3},
                                   {"passes": 20, "step_size": 0.3})
    assert search.predict(X).shape == (X.shape[0],)


def test_samplers_total_variation_is_reported():
    """DP-GCD's report-noisy-max selections carry a total-variation slack: the search's
    report carries E K times a trial's, and its epsilon stays within the request."""
    X, _, labels = _data(n=1_000)
    est = DPLogisticRegression(penalty="l1", alpha=1e-3, classes=[-1.0, 1.0], solver="gcd",
                               selection="laplace", fit_intercept=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = PrivateSearch(est, {"n_iter": [2, 5]}, epsilon=1.0, random_state=0).fit(
            X, labels)
        trial = DPLogisticRegression(penalty="l1", alpha=1e-3, classes=[-1.0, 1.0],
                                     solver="gcd", selection="laplace",
                                     fit_intercept=False, n_iter=5,
                                     epsilon=search.trial_epsilon_, random_state=0).fit(X, labels)
    tv_trial = sum(tau * count for _, tau, count in trial.privacy_.sampler_tvs)
    assert tv_trial > 0
    (name, tau, count), = search.privacy_.sampler_tvs
    assert tau * count >= expected_trials(trials_gamma(5.0, 0.0), 0.0) * tv_trial * (1 - 1e-12)
    assert search.privacy_.epsilon <= 1.0


def test_search_learns_and_picks_the_better_candidate():
    """A candidate that learns against one that cannot (1 pass at step 0.01): over
    seeds 0-4 the search's model beats w = 0 on held-out data every time."""
    X, _, labels = _data(n=4_000)
    est = DPLogisticRegression(penalty="l2", alpha=1e-4, classes=[-1.0, 1.0],
                               solver="cd", fit_intercept=False)
    for seed in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = PrivateSearch(est, {"passes": [1, 20], "step_size": [0.01, 1.0]},
                                   epsilon=1.0, random_state=seed).fit(X, labels)
        assert (search.predict(X) == labels).mean() > 0.8


def test_registry_grid_keeps_to_the_defaults():
    """The registry's values within a factor 2.5 of the defaults (20 passes, step 0.3
    squared / 1 logistic; DP-GCD 1 iteration, step 1; DP-SGD 20 passes)."""
    assert registry_grid(DPLasso(solver="cd"), 20_000, 8) == {
        "passes": [10, 20, 50], "step_size": [0.3]}
    assert registry_grid(DPLogisticRegression(solver="cd"), 20_000, 8) == {
        "passes": [10, 20, 50], "step_size": [1.0]}
    assert registry_grid(DPLogisticRegression(penalty="l1"), 800, 100_000) == {  # auto: GCD
        "n_iter": [1, 2], "step_size": [1.0]}
    assert registry_grid(DPLogisticRegression(solver="sgd"), 40_000, 8) == {
        "passes": [10, 20], "step_size": [1.0]}
    assert registry_grid(DPLasso(solver="cd"), 20_000, 8, grid="quick") == {
        "passes": [20], "step_size": [0.3]}  # only the default within the span


def test_poisson_without_trials_has_no_model():
    X, y = np.array([[1.0], [0.0], [1.0], [0.0]]), np.array([1.0, 1.0, -1.0, 1.0])
    for seed in range(200):  # K ~ Poisson(1.2): P(K = 0) = 0.30
        search = PrivateSearch(FixedModel(), {"w": [1.0]}, mean_trials=1.2,
                               trials_shape=math.inf, holdout=0.5, random_state=seed).fit(X, y)
        if search.best_estimator_ is None:
            with pytest.raises(ValueError, match="ran no trial"):
                search.predict(X)
            return
    pytest.fail("no search without a trial in 200 seeds")


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0.0}, "epsilon"),
    ({"delta": 1.5}, "delta"),
    ({"mean_trials": 1.0}, "mean_trials must be > 1"),
    ({"trials_shape": -1.0}, "trials_shape must be >= 0"),
    ({"holdout": 0.0}, "holdout"),
    ({"holdout": 1e-9}, "leaves no row to score"),
    ({"score_clip": -1.0}, "score_clip"),
])
def test_bad_parameters_are_refused(kwargs, match):
    X, y = np.array([[1.0], [0.0], [1.0], [0.0]]), np.array([1.0, 1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match=match):
        PrivateSearch(FixedModel(), {"w": [1.0]}, **kwargs).fit(X, y)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="X must be 2-D and y of shape"):
        PrivateSearch(FixedModel(), {"w": [1.0]}).fit(np.ones((4, 1)), np.ones(3))


def test_a_data_dependent_ledger_is_refused():
    """A candidate whose ledger on the data exceeds its ledger on public data breaks
    the accounting's premise: the search refuses to release anything."""
    class Leaky(FixedModel):
        def fit(self, X, y):
            super().fit(X, y)
            if not sp.issparse(X):  # the data (dense here), not the public matrix
                self.privacy_.add_gaussian("extra", 1.0)
            return self

    X, y = np.array([[1.0], [1.0], [1.0], [1.0]]), np.array([1.0, 1.0, -1.0, 1.0])
    with pytest.raises(RuntimeError, match="data-dependent accounting"):
        PrivateSearch(Leaky(), {"w": [1.0]}, holdout=0.25, random_state=0).fit(X, y)


def test_the_score_noise_is_its_multiplier(monkeypatch):
    """The score's release: a discretised Gaussian of sd ``z rho b`` on the clipped sum
    (2,000 releases of a fixed sum, seed 0; sd within 5 %)."""
    captured = []
    real = model_selection.GridRelease

    class Spy(real):
        def __init__(self, *args):
            super().__init__(*args)
            captured.append(self)

    monkeypatch.setattr(model_selection, "GridRelease", Spy)
    X, y = np.array([[1.0], [0.0], [1.0], [0.0]]), np.array([1.0, 1.0, -1.0, 1.0])
    search = PrivateSearch(FixedModel(), {"w": [1.0]}, epsilon=1.0, delta=1e-6, holdout=0.5,
                           random_state=0).fit(X, y)
    release = captured[-1]
    assert release.multiplier == pytest.approx(search.score_multiplier_)
    rng = np.random.default_rng(0)
    out = np.array([release.noise.release(np.array([1.0]), release.inv_grid, release.grid,
                                          rng)[0] for _ in range(2_000)])
    b = 2.0 * math.log(2.0)
    assert out.std() == pytest.approx(search.score_multiplier_ * release.rho * b, rel=0.05)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_data_is_refused(bad):
    """NaN or inf in X: the candidate's own validation refuses it, before any release."""
    X, t, _ = _data(n=200)
    X = X.toarray()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="(?i)nan|inf"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            PrivateSearch(DPLasso(alpha=0.01, solver="cd", fit_intercept=False),
                          {"passes": [5]}, random_state=0).fit(X, t)


def test_infinite_epsilon_is_refused():
    X, y = np.array([[1.0], [0.0], [1.0], [0.0]]), np.array([1.0, 1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="epsilon"):
        PrivateSearch(FixedModel(), {"w": [1.0]}, epsilon=np.inf).fit(X, y)


# ------------------------------------------------------------------ the runner's search

def test_run_private_search_rows_are_the_searches_themselves():
    """run_private_search: one row per (problem, solver, run), each the search of its
    own task seed, within the budget; its error recomputed from a direct search."""
    from sparsedp.datafits import Logistic
    from sparsedp.experiments import PRIVATE_SEARCH, Problem, run_private_search, task_seed
    from sparsedp.penalties import L1
    X, y = make_sparse_problem(n=300, p=20, seed=5, logistic=True)
    M = Logistic().smoothness(X)
    problem = Problem("log", X, y, Logistic(), L1(0.01), smoothness=M)
    delta = 1e-5
    with pytest.warns(UserWarning, match="not run: dp_scd on 'log'"):
        rows = run_private_search(problem, ["gcd", "dp_scd"], epsilon=1.0, delta=delta,
                                  n_runs=2, seed=7)
    assert [(r["solver"], r["run"]) for r in rows] == [("dp_gcd", 0), ("dp_gcd", 1)]
    for row in rows:
        assert row["seed"] == task_seed(7, "log", "dp_gcd", PRIVATE_SEARCH, row["run"], 1.0,
                                        delta)
        assert 0.9 < row["search_epsilon"] <= 1.0
        est = DPLogisticRegression(penalty="l1", alpha=0.01, solver="gcd",
                                   classes=[-1.0, 1.0], fit_intercept=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = PrivateSearch(est, epsilon=1.0, delta=delta,
                                   random_state=row["seed"]).fit(X, y)
        coef = np.ravel(search.best_estimator_.coef_)
        f = np.mean(np.logaddexp(0.0, -y * (X @ coef))) + 0.01 * np.abs(coef).sum()
        assert row["objective"] == pytest.approx(f, rel=1e-9)
        assert row["rel_error"] == pytest.approx((f - problem.f_star) / problem.f_star)
        assert json.loads(row["best_params"]) == search.best_params_
    assert rows[0]["seed"] != rows[1]["seed"]
    # two workers: the same searches (their seeds are the tasks')
    pytest.importorskip("joblib")
    with pytest.warns(UserWarning, match="not run: dp_scd"):
        parallel = run_private_search(problem, ["gcd", "dp_scd"], epsilon=1.0, delta=delta,
                                      n_runs=2, seed=7, n_jobs=2)
    assert [{k: v for k, v in r.items() if k != "time"} for r in parallel] == \
        [{k: v for k, v in r.items() if k != "time"} for r in rows]
    with pytest.raises(ValueError, match="n_jobs must be a nonzero integer"):
        run_private_search(problem, ["gcd"], epsilon=1.0, delta=delta, n_jobs=0)
    with pytest.raises(ValueError, match="finite epsilon"):
        run_private_search(problem, ["gcd"], epsilon=math.inf, delta=delta)
