"""DP-SGD: convergence without noise, noise law, lazy = eager in law, clipping, accounting, errors."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from problems import make_sparse_problem
from sparsedp.datafits import Hinge, Logistic, Squared
from sparsedp.exceptions import PrivacyLeakWarning
from sparsedp.penalties import L1, L2
from sparsedp.privacy.pld import sampled_gaussian_epsilon_pld
from sparsedp.privacy.rdp import calibrate_sampled_gaussian
from sparsedp.solvers import dp_sgd
from sparsedp.solvers._dp_sgd import frame_schedule, FRAME_MULTIPLIER, FRAME_RUNGS

INF = float("inf")


def problem(n=120, p=15, density=0.3, seed=0, labels="binary"):
    return make_sparse_problem(n, p, density=density, seed=seed, n_active=p,
                               labels="coin" if labels == "binary" else "regression",
                               values="uniform-legacy")


def full_batch(X, y, datafit, penalty, passes, **kw):
    """Noiseless, unclipped, every row every step: proximal gradient descent."""
    return dp_sgd(X, y, datafit, penalty, epsilon=INF, delta=1e-6, passes=passes, clip=INF,
                  step_size=1.0, batch_size=X.shape[0], random_state=0, **kw)


def test_noiseless_logistic_l2_matches_sklearn():
    from sklearn.linear_model import LogisticRegression
    X, y = problem()
    alpha = 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        res = full_batch(X, y, Logistic(), L2(alpha), passes=3000)
    ref = LogisticRegression(C=1.0 / (alpha * X.shape[0]), fit_intercept=False, tol=1e-12,
                             max_iter=10000).fit(X, y)
    np.testing.assert_allclose(res.coef, ref.coef_.ravel(), atol=1e-6)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_noiseless_lasso_matches_sklearn(sampling):
    from sklearn.linear_model import Lasso
    X, y = problem(labels="real")
    lam = 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        res = full_batch(X, y, Squared(), L1(lam), passes=5000, sampling=sampling)
    # ours: (1/n) ||Xw - y||^2 + lam ||w||_1 = 2 * Lasso's objective at alpha = lam / 2
    ref = Lasso(alpha=lam / 2, fit_intercept=False, tol=1e-14, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(res.coef, ref.coef_, atol=1e-6)


def test_noiseless_least_squares_matches_lstsq():
    X, y = problem(labels="real", density=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        res = full_batch(X, y, Squared(), None, passes=5000)
    ref = np.linalg.lstsq(X.toarray(), y, rcond=None)[0]
    np.testing.assert_allclose(res.coef, ref, atol=1e-6)


def noise_only(penalty, lazy, seeds=200, p=30, steps_passes=2, batch=10):
    """Rows of zeros: every gradient is 0, the coefficients are the noise alone."""
    n = 100
    X = sp.csc_matrix((n, p))
    y = np.ones(n)
    coefs = [dp_sgd(X, y, Logistic(), penalty, epsilon=1.0, delta=1e-5, passes=steps_passes,
                    clip=1.0, step_size=1.0, global_smoothness=1.0, batch_size=batch, lazy=lazy,
                    random_state=seed) for seed in range(seeds)]
    return np.array([r.coef for r in coefs]), coefs[-1]


def test_noise_sd_matches_calibration_no_penalty():
    """sd(coef_j) = c sigma sqrt(T), sigma = z C: 6,000 samples, 4% (about 4.5 standard errors)."""
    coefs, res = noise_only(None, True)
    info = res.info
    assert info["noise_sd"] == pytest.approx(info["noise_multiplier"] * 1.0, rel=1e-3)
    theory = info["step"] * info["noise_sd"] * math.sqrt(info["steps"])
    assert coefs.std() == pytest.approx(theory, rel=0.04)
    assert abs(coefs.mean()) < 4 * theory / math.sqrt(coefs.size)


@pytest.mark.parametrize("penalty, lazy", [(None, True), (None, False), (L1(1e-6), False)],
                         ids=["lazy", "eager-frame", "eager-l1"])
def test_coordinates_noises_are_independent(penalty, lazy):
    """Each coordinate has its own noise (issue 35): on rows of zeros the p = 30
    coefficients of a fit are independent with a common variance s^2, so the
    difference of two neighbours has variance 2 s^2 (200 fits x 29 differences: the
    ratio's standard error is 2 %, tolerance 10 %) and the sum of all p has p s^2
    (200 fits: standard error 10 %, tolerance 50 %).  A draw shared by the
    coordinates leaves each coordinate's law intact and makes the first ratio 0 and
    the second p.  The three paths: the lazy walk, the eager walk in the integer frame
    (no L1), the float iterate of ``sgd_eager`` (L1, whose prox acts coordinate by
    coordinate and keeps the coordinates independent)."""
    coefs, _ = noise_only(penalty, lazy)
    s2 = coefs.var(axis=0, ddof=1).mean()
    differences = np.diff(coefs, axis=1)
    assert differences.var(ddof=1) / (2 * s2) == pytest.approx(1.0, abs=0.10)
    sums = coefs.sum(axis=1)
    assert sums.var(ddof=1) / (coefs.shape[1] * s2) == pytest.approx(1.0, abs=0.5)


def test_noise_sd_l2_frame_between_z_and_rung_bound():
    """With L2 the noise of step t decays as a^(T - t); the frame adds at most 2**(1/16) more."""
    alpha = 0.5
    coefs, res = noise_only(L2(alpha), True)
    info = res.info
    a = 1.0 / (1.0 + info["step"] * info["batch_size"] * alpha)
    T = info["steps"]
    theory = info["step"] * info["noise_sd"] * math.sqrt(sum(a ** (2 * (i + 1)) for i in range(T)))
    sd = coefs.std()
    assert theory * 0.96 < sd < theory * 2 ** (1 / FRAME_RUNGS) * 1.04


def test_calibration_spends_the_budget_tightly():
    X, y = problem()
    res = dp_sgd(X, y, Logistic(), L2(0.01), epsilon=1.0, delta=1e-5, passes=3, clip=1.0,
                 global_smoothness=1.0, batch_size=10, random_state=0)
    z, q, T = res.info["noise_multiplier"], res.info["sampling_rate"], res.info["steps"]
    assert res.privacy.epsilon <= 1.0
    assert res.privacy.epsilon > 0.99
    assert sampled_gaussian_epsilon_pld(z, q, T, 1e-5 * (1 - 1e-6)) <= 1.0
    # 1% less noise overspends the ideal budget
    assert sampled_gaussian_epsilon_pld(z * 0.99, q, T, 1e-5) > 0.99
    # and the PLD needs less noise than RDP
    assert z < calibrate_sampled_gaussian(1.0, 1e-5, q, T)


def test_poisson_calibration_takes_rdp_where_it_is_tighter():
    """Over millions of steps at a tiny rate the RDP bound needs less noise than the
    PLD's (both valid): the calibration takes it, and the ledger still spends <= epsilon."""
    from sparsedp.privacy import PrivacyLedger
    from sparsedp.privacy.pld import calibrate_sampled_gaussian_pld
    from sparsedp.solvers._release import batch_noise_multiplier
    n = 45_312
    q, T, delta = 1.0 / n, 2_265_600, 1.0 / n ** 2
    z = batch_noise_multiplier("poisson", 1.0, delta, q, T)
    z_pld = calibrate_sampled_gaussian_pld(1.0, delta, q, T)
    assert z == pytest.approx(calibrate_sampled_gaussian(1.0, delta, q, T)) and z < z_pld
    ledger = PrivacyLedger(delta=delta, relation="add-remove")
    ledger.add_sampled_gaussian("batch sums", z, q, count=T)
    assert ledger.epsilon <= 1.0
    # where the PLD is tighter (test above) it is the one taken
    assert batch_noise_multiplier("poisson", 1.0, 1e-5, 0.1, 30) == pytest.approx(
        calibrate_sampled_gaussian_pld(1.0, 1e-5, 0.1, 30))


@pytest.mark.parametrize("penalty", [None, L2(0.2)])
def test_lazy_and_eager_agree_in_distribution(penalty):
    """Two-sample KS per coordinate on 300 fits each (fixed seeds): p-values above 1e-3."""
    X, y = problem(n=40, p=6, density=0.4, seed=3)
    kw = dict(epsilon=2.0, delta=1e-5, passes=2, clip=0.5, step_size=0.5, global_smoothness=1.0,
              batch_size=4)
    lazy = np.array([dp_sgd(X, y, Logistic(), penalty, lazy=True, random_state=s, **kw).coef
                     for s in range(300)])
    eager = np.array([dp_sgd(X, y, Logistic(), penalty, lazy=False, random_state=10 ** 6 + s,
                             **kw).coef for s in range(300)])
    for j in range(X.shape[1]):
        assert stats.ks_2samp(lazy[:, j], eager[:, j]).pvalue > 1e-3


def test_lazy_eager_same_law_has_power():
    """The same KS test rejects the eager run with its noise halved (planted bug)."""
    from faults import injected
    X, y = problem(n=40, p=6, density=0.4, seed=3)
    kw = dict(epsilon=0.5, delta=1e-5, passes=2, clip=0.5, step_size=0.5, global_smoothness=1.0,
              batch_size=4)
    a = np.array([dp_sgd(X, y, Logistic(), None, random_state=s, **kw).coef for s in range(300)])
    with injected("noise_halved"):
        b = np.array([dp_sgd(X, y, Logistic(), None, lazy=False, random_state=s + 7 ** 8,
                             **kw).coef for s in range(300)])
    assert min(stats.ks_2samp(a[:, j], b[:, j]).pvalue for j in range(X.shape[1])) < 1e-3


@pytest.mark.parametrize("seed", range(5))
def test_clipping_bounds_the_batch_sum_on_random_neighbours(seed):
    """One noiseless full-batch step from 0: coef = -c G; removing a row moves G by <= C."""
    rng = np.random.default_rng(seed)
    n, p = 30, 12
    X = sp.random(n, p, density=0.5, random_state=seed, format="csr") * 10.0
    y = rng.normal(scale=100.0, size=n)
    C = 0.7
    kw = dict(epsilon=INF, delta=1e-6, passes=1, clip=C, step_size=1.0, global_smoothness=1.0,
              batch_size=n - 1, sampling="fixed", random_state=0)
    # fixed batches of n - 1 rows out of n - 1 rows: every row, one step
    i = int(rng.integers(n))
    keep = np.delete(np.arange(n), i)
    other = np.delete(np.arange(n), (i + 1) % n)
    g1 = dp_sgd(X[keep], y[keep], Squared(), None, **kw)
    g2 = dp_sgd(X[other], y[other], Squared(), None, **kw)
    c = g1.info["step"]
    diff = np.linalg.norm((g1.coef - g2.coef) / c)
    assert diff <= 2 * C * (1 + 1e-12)  # replace-one: 2C
    assert diff > 0.5 * C  # the labels saturate the clipping: the bound is nearly met
    # add/remove (Poisson at rate 1: every row): the sums differ by one clipped term, <= C
    kw.update(sampling="poisson")
    full = dp_sgd(X, y, Squared(), None, **dict(kw, batch_size=n))
    less = dp_sgd(X[keep], y[keep], Squared(), None, **kw)
    diff = np.linalg.norm(full.coef / full.info["step"] - less.coef / less.info["step"])
    assert C * 0.5 < diff <= C * (1 + 1e-12)


def test_trace_records_one_iterate_per_pass():
    X, y = problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        res = full_batch(X, y, Logistic(), L2(0.01), passes=50, trace=True)
    tr = res.diagnostics.trace
    assert tr["coef"].shape == (50, X.shape[1])
    np.testing.assert_allclose(tr["passes"], np.arange(1, 51))
    np.testing.assert_array_equal(tr["coef"][-1], res.coef)
    assert np.all(np.diff(tr["objective"]) <= 1e-15)  # gradient descent: monotone


def test_reproducible_and_seed_dependent():
    X, y = problem()
    kw = dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0, global_smoothness=1.0, batch_size=8)
    a = dp_sgd(X, y, Logistic(), L2(0.1), random_state=5, **kw).coef
    b = dp_sgd(X, y, Logistic(), L2(0.1), random_state=5, **kw).coef
    c = dp_sgd(X, y, Logistic(), L2(0.1), random_state=6, **kw).coef
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_report_states_relation_sampling_and_accountant():
    X, y = problem()
    kw = dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0, global_smoothness=1.0, batch_size=8,
              random_state=0)
    poisson = dp_sgd(X, y, Logistic(), None, **kw)
    assert poisson.privacy.relation == "add-remove"
    assert "Poisson" in str(poisson.privacy) and "PLD" in str(poisson.privacy)
    fixed = dp_sgd(X, y, Logistic(), None, sampling="fixed", **kw)
    assert fixed.privacy.relation == "replace-one"
    assert "without replacement" in str(fixed.privacy)
    assert fixed.privacy.epsilon <= 1.0
    # sampling without replacement is accounted with more noise than Poisson at the same rate
    assert fixed.info["noise_multiplier"] > poisson.info["noise_multiplier"]


def test_computed_smoothness_is_a_recorded_leak():
    X, y = problem()
    with pytest.warns(PrivacyLeakWarning, match="smoothness"):
        res = dp_sgd(X, y, Logistic(), None, epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
                     smoothness="leak", random_state=0)
    assert res.privacy.epsilon == INF
    beta = 0.25 * np.linalg.norm(X.toarray(), 2) ** 2 / X.shape[0]
    assert res.info["smoothness"] == pytest.approx(beta, rel=1e-8)


def test_frame_schedule_multipliers_and_halvings():
    phi, mult, start, walk_index, halve, bounds = frame_schedule(2000, 0.999)
    assert np.all((phi > 0.5) & (phi <= 1.0))
    # w = s(t) U with s(t+1) = a s(t) except at halvings, where s doubles
    ratio = phi[1:] / phi[:-1]
    halved = np.flatnonzero(np.abs(ratio - 0.999) > 1e-9) + 1
    np.testing.assert_allclose(ratio[halved - 1], 2 * 0.999, rtol=1e-9)
    assert set(halved) == set(start[:-1][halve.astype(bool)])
    # the data multiplier tracks 1 / phi: the step is exact to 1 / (2 M)
    assert np.all(np.abs(mult * phi[:-1] - FRAME_MULTIPLIER) <= 0.5 + 1e-9)
    segment = np.searchsorted(start, np.arange(2000), side="right") - 1
    assert np.all(mult <= np.array(bounds)[walk_index[segment]])


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(delta=1.0), ValueError, "delta"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(batch_size=1000), ValueError, "batch_size"),
    (dict(sampling="shuffle"), ValueError, "sampling"),
    (dict(passes=0.0), ValueError, "passes"),
    (dict(smoothness=-1.0), ValueError, "smoothness"),
    (dict(clip=INF), ValueError, "clip"),
    (dict(penalty=L1(0.1), lazy=True), ValueError, "lazy"),
    (dict(datafit=Hinge()), TypeError, "not smooth"),
])
def test_bad_input(kwargs, error, match):
    X, y = problem()
    args = dict(datafit=Logistic(), penalty=None, epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
                global_smoothness=1.0)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        dp_sgd(X, y, args.pop("datafit"), args.pop("penalty"), **args)


def test_labels_outside_the_domain():
    X, y = problem()
    with pytest.raises(ValueError, match="label"):
        dp_sgd(X, y * 2.0, Logistic(), None, epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
               global_smoothness=1.0)


def test_smoothness_means_what_it_means_in_dp_cd():
    """``smoothness`` takes public coordinate-wise constants M_j (their sum bounds the
    global smoothness: the fit equals one at ``global_smoothness=sum(M)``); a float
    (a share of epsilon in dp_cd) is refused, as is giving both."""
    X, y = make_sparse_problem(n=60, p=20, logistic=True, seed=3)
    M = np.linspace(0.1, 0.5, 20)
    kw = dict(epsilon=1.0, delta=1e-5, passes=2, clip=1.0, batch_size=6, random_state=5)
    by_constants = dp_sgd(X, y, Logistic(), L2(0.01), smoothness=M, **kw)
    by_bound = dp_sgd(X, y, Logistic(), L2(0.01), global_smoothness=float(np.sum(M)), **kw)
    np.testing.assert_array_equal(by_constants.coef, by_bound.coef)
    assert by_constants.info["smoothness"] == float(np.sum(M))
    assert by_constants.privacy.epsilon <= 1.0
    with pytest.raises(ValueError, match="dp_sgd has no private smoothness estimate"):
        dp_sgd(X, y, Logistic(), L2(0.01), smoothness=0.1, **kw)
    with pytest.raises(ValueError, match="not both"):
        dp_sgd(X, y, Logistic(), L2(0.01), smoothness=M, global_smoothness=1.0, **kw)
    with pytest.raises(ValueError, match=r"array of shape \(20,\)"):
        dp_sgd(X, y, Logistic(), L2(0.01), smoothness=M[:-1], **kw)


@pytest.mark.parametrize("sampling, batch_size, penalty, with_init, trace", [
    ("fixed", 1, L2(0.05), False, False),
    ("fixed", 1, None, True, True),
    ("poisson", 1, L2(0.05), True, False),   # sizes 0, 1, 2, ...: both paths in one run
    ("poisson", 2, None, False, True),
])
def test_single_row_steps_release_as_the_general_path(monkeypatch, sampling, batch_size,
                                                      penalty, with_init, trace):
    """A step whose batch is one row takes the kernel's single-row path (one walk to
    release, no gradient sums in the records): the fit is that of the general path
    (``single_row_path=False``) bit for bit, iterate and trace, with a starting point
    and with the L2 frame's multipliers."""
    import sparsedp.solvers._dp_sgd as module
    X, y = make_sparse_problem(n=60, p=40, density=0.3, seed=4)
    labels = np.where(y > np.median(y), 1.0, -1.0)
    kernel = module.sgd_lazy

    def fit(single):
        monkeypatch.setattr(module, "sgd_lazy", lambda *a, **k: kernel(
            *a, **k, single_row_path=single))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            return dp_sgd(X, labels, Logistic(), penalty, epsilon=2.0, delta=1e-5,
                          passes=3, clip=1.0, step_size=0.5, batch_size=batch_size,
                          sampling=sampling, global_smoothness=0.25, lazy=True,
                          random_state=7, trace=trace,
                          coef_init=np.linspace(-0.2, 0.2, 40) if with_init else None)
    fast, general = fit(True), fit(False)
    assert np.any(fast.coef != 0)
    np.testing.assert_array_equal(fast.coef, general.coef)
    if trace:
        np.testing.assert_array_equal(fast.diagnostics.trace["coef"],
                                      general.diagnostics.trace["coef"])


@pytest.mark.parametrize("l2, rungs", [(1e-4, 3), (0.005, FRAME_RUNGS), (0.5, 1), (0.0359, 12)])
def test_walks_built_for_the_rungs_the_schedule_reaches(monkeypatch, l2, rungs):
    """Only the rungs the public schedule reaches get walks (their tables take about
    20 ms each); the others' entries are None.  The fit is the one with every walk
    built, bit for bit: the renumbered walks draw the same integers.  Over the 600
    steps the shrinkage ``1 / (1 + 2 l2)`` a step stays under a fifth of a halving
    with l2 = 1e-4 (rungs 0..2), halves 8.6 times with 0.005 (all 16 rungs), and
    halves every step with 0.5 (rung 0 alone); with 0.0359 it advances a tenth of a
    halving a step and skips rungs (0, 1, 3, 4, 5, 6, 8, ...): the built walks are
    renumbered."""
    import sparsedp.solvers._dp_sgd as module
    X, y = make_sparse_problem(n=60, p=40, density=0.3, seed=4)
    labels = np.where(y > np.median(y), 1.0, -1.0)
    built = []

    class Recorded(module.WalkRelease):
        def __init__(self, *args, everything=False, **kwargs):
            if everything:
                kwargs["used"] = None
            super().__init__(*args, **kwargs)
            built.append(self.walks)

    def fit(everything):
        monkeypatch.setattr(module, "WalkRelease",
                            lambda *a, **k: Recorded(*a, everything=everything, **k))
        return dp_sgd(X, labels, Logistic(), L2(l2), epsilon=2.0, delta=1e-5, passes=10,
                      clip=1.0, step_size=0.5, global_smoothness=0.25, lazy=True,
                      random_state=3)
    pruned, full = fit(False), fit(True)
    schedule = frame_schedule(600, 1.0 / (1.0 + 2.0 * l2))  # step 0.5 / 0.25, 600 steps
    assert len(np.unique(schedule[3])) == rungs
    assert [w is not None for w in built[0]] == [r in set(schedule[3]) for r in range(16)]
    assert all(w is not None for w in built[1])
    np.testing.assert_array_equal(pruned.coef, full.coef)
    assert pruned.intercept == full.intercept
