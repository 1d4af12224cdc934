"""The scikit-learn estimators: against the functional API and the exact solver, the
budget split of one-vs-rest, inputs, warnings, scikit-learn's estimator checks."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from problems import make_sparse_problem
from sparsedp import (DPElasticNet, DPLasso, DPLinearSVC, DPLogisticRegression, DPRidge,
                      PrivacyLeakWarning)
from sparsedp.datafits import Logistic, Squared
from sparsedp.linear_model import CD_MIN_RATIO, choose_solver, default_delta
from sparsedp.penalties import L1, L2
from sparsedp.privacy import calibrate_gaussian, gdp_epsilon
from sparsedp.solvers import dp_cd, dp_gcd, dp_scd, dp_sgd, exact
from sparsedp.solvers._scales import clip_to_bounds

INF = float("inf")


def regression(n=200, p=30, density=0.3, seed=0):
    return make_sparse_problem(n, p, density=density, seed=seed, n_active=p, offset=0.5,
                               values="uniform")


def classification(n=300, p=20, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.4, format="csr", rng=seed)
    W = rng.standard_normal((p, classes)) * 3
    y = np.asarray(X @ W).argmax(axis=1)
    return X, np.array(["abcdefg"[c] for c in y])


def public_smoothness(X, datafit, extra=0.0):
    return datafit.smoothness(X) + extra


# ---- against the functional API and the exact solutions ---------------------------------

def test_dorothea_estimator_equals_functional_api():
    """Real dorothea: the estimator gives the functional API's coefficients (same seed)."""
    from sparsedp.datasets import load_dorothea
    try:
        X, y = load_dorothea()
    except FileNotFoundError:
        pytest.skip("dorothea not available (SPARSEDP_DATA)")
    M = np.full(X.shape[1], 0.25)  # public: binary features, logistic beta = 1/4
    kw = dict(epsilon=1.0, delta=1e-6, clip=0.5, step_size=0.5, smoothness=M,
              selection="laplace")
    est = DPLogisticRegression(penalty="l1", alpha=1e-3, solver="gcd", n_iter=50,
                               classes=[-1, 1], fit_intercept=False, random_state=7,
                               **kw).fit(X, y)
    res = dp_gcd(X, y, Logistic(), L1(1e-3), n_iter=50, random_state=7, **kw)
    np.testing.assert_array_equal(est.coef_.ravel(), res.coef)
    assert est.privacy_.epsilon == res.privacy.epsilon <= 1.0
    assert list(est.classes_) == [-1, 1] and est.n_iter_[0] == 50
    # CSR input, converted once, gives the same fit
    est_csr = DPLogisticRegression(penalty="l1", alpha=1e-3, solver="gcd", n_iter=50,
                                   classes=[-1, 1], fit_intercept=False, random_state=7,
                                   **kw).fit(X.tocsr(), y)
    np.testing.assert_array_equal(est_csr.coef_, est.coef_)


@pytest.mark.parametrize("solver", ["cd", "gcd", "sgd"])
def test_same_draws_as_functional_api(solver):
    X, y = regression()
    M = Squared().smoothness(X)
    kw = dict(epsilon=2.0, delta=1e-5, clip=1.0, step_size=0.5)
    steps = {"cd": dict(passes=3), "gcd": dict(n_iter=20),
             "sgd": dict(passes=2, batch_size=1)}[solver]
    est = DPRidge(alpha=0.1, solver=solver, smoothness=M, fit_intercept=False,
                  random_state=3, **kw, **steps).fit(X, y)
    f = {"cd": dp_cd, "gcd": dp_gcd, "sgd": dp_sgd}[solver]
    fkw = ({"passes": 3} if solver == "cd" else {"n_iter": 20} if solver == "gcd"
           else {"passes": 2, "global_smoothness": float(M.sum())})
    extra = {"cd": {"averaging": False, "order": "shuffle"}}.get(solver, {})
    res = f(X, y, Squared(), L2(0.1), random_state=3, **kw,
            **(({} if solver == "sgd" else {"smoothness": M}) | fkw), **extra)
    np.testing.assert_array_equal(est.coef_, res.coef)


def test_noiseless_ridge_with_intercept_is_exact_on_the_augmented_design():
    X, y = regression()
    est = DPRidge(alpha=0.05, epsilon=INF, solver="cd", passes=300, step_size=1.0,
                  intercept_scaling=2.0)
    est.fit(X, y)
    A = sp.hstack([X, np.full((X.shape[0], 1), 2.0)], format="csc")
    ref = exact(A, y, Squared(), L2(0.05), tol=1e-12).coef
    np.testing.assert_allclose(est.coef_, ref[:-1], atol=1e-6)
    assert est.intercept_ == pytest.approx(2.0 * ref[-1], abs=1e-6)
    np.testing.assert_allclose(est.predict(X), A @ ref, atol=1e-5)
    assert math.isinf(est.privacy_.epsilon)  # no noise: the report says not private


def test_noiseless_logistic_matches_sklearn():
    from sklearn.linear_model import LogisticRegression
    X, y = classification()
    y2 = (y == "a")
    n, alpha = X.shape[0], 0.01
    est = DPLogisticRegression(alpha=alpha, epsilon=INF, solver="cd", passes=500,
                               fit_intercept=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        est.fit(X, y2)
    ref = LogisticRegression(C=1.0 / (alpha * n), fit_intercept=False, tol=1e-12,
                             max_iter=10_000).fit(X, y2)
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    assert est.classes_.tolist() == [False, True]


def test_noiseless_lasso_l1_path_through_gcd_and_cd():
    X, y = regression(p=40)
    A = sp.hstack([X, np.ones((X.shape[0], 1))], format="csc")
    ref = exact(A, y, Squared(), L1(0.05), tol=1e-12).coef
    for solver, steps in (("cd", dict(passes=400, step_size=1.0)),
                          ("gcd", dict(n_iter=4000, step_size=1.0))):
        est = DPLasso(alpha=0.05, epsilon=INF, solver=solver, **steps)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            est.fit(X, y)
        np.testing.assert_allclose(np.r_[est.coef_, est.intercept_], ref, atol=1e-5)


# ---- privacy: budget, split, report, leaks ----------------------------------------------

def test_one_vs_rest_budget_split_is_the_gdp_split_and_composes_to_epsilon():
    X, y = classification(classes=3)
    M = np.full(X.shape[1], 0.25)
    clf = DPLogisticRegression(epsilon=1.0, delta=1e-5, solver="cd", passes=2,
                               classes=["a", "b", "c"], smoothness=M,
                               random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, X.shape[1]) and clf.intercept_.shape == (3,)
    report = clf.privacy_
    assert report.get_epsilon(1e-5) <= 1.0
    assert report.get_epsilon(1e-5) >= 0.98  # the split spends (nearly) all of it
    # each fit: the epsilon of mu / sqrt(3)-GDP, mu that of (1, 1e-5)
    mu = 1.0 / calibrate_gaussian(1.0, 1e-5, 1)
    each = gdp_epsilon(mu / math.sqrt(3), 1e-5)
    z = [info["noise_multiplier"] for info in clf.solver_info_]
    assert z[0] == z[1] == z[2]
    steps = 2 * (X.shape[1] + 1)
    assert z[0] == pytest.approx(calibrate_gaussian(each, 1e-5, steps), rel=1e-3)
    text = str(report)
    assert all(f"class {c}: coordinate gradients" in text for c in "abc")


def test_one_vs_rest_falls_back_to_basic_composition_when_needed():
    X, y = classification(classes=3)
    M = np.full(X.shape[1], 0.25)
    clf = DPLogisticRegression(penalty="l1", epsilon=1.0, delta=1e-5, solver="gcd",
                               n_iter=30, classes=["a", "b", "c"], smoothness=M,
                               random_state=0).fit(X, y)
    assert clf.privacy_.get_epsilon(1e-5) <= 1.0


def test_default_delta_is_one_over_n_squared():
    X, y = regression(n=150)
    est = DPRidge(solver="cd", passes=1, smoothness=Squared().smoothness(X),
                  clip=1.0, random_state=0).fit(X, y)
    assert est.delta_ == default_delta(150) == 1.0 / 150 ** 2
    assert est.privacy_.delta == pytest.approx(1.0 / 150 ** 2)
    with pytest.raises(ValueError, match="n_samples = 1"):
        default_delta(1)


def test_leak_warning_only_with_leak_constants():
    X, y = regression()
    with pytest.warns(PrivacyLeakWarning):
        est = DPRidge(solver="cd", passes=1, leak_constants=True, random_state=0).fit(X, y)
    assert math.isinf(est.privacy_.epsilon)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", UserWarning)  # 200 rows: unit scales, warned
        est = DPRidge(solver="cd", passes=1, random_state=0).fit(X, y)  # private defaults
    assert est.privacy_.epsilon <= 1.0 and not est.privacy_.leaks
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est = DPRidge(solver="cd", passes=1, smoothness=0.2, feature_bounds=1.0,
                      target_bound=5.0, random_state=0).fit(X, y)  # |X_ij| <= 1, |y| <= 5
    assert est.privacy_.epsilon <= 1.0 and "smoothness" in str(est.privacy_).lower()


def test_default_clip_is_kappa_times_the_gradient_scale_at_zero():
    from sparsedp.linear_model import default_kappa
    X, y = classification()
    M = np.full(X.shape[1], 0.25)
    clf = DPLogisticRegression(solver="cd", passes=1, classes=[False, True], smoothness=M,
                               random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf.fit(X, y == "a")
    trace = M.sum() + 0.25  # the intercept column's constant included
    unit = math.sqrt(trace / 0.25) * 0.5  # sqrt(mean ||x||^2 bound) * |loss'(0)|
    kappa = default_kappa("cd", X.shape[0], 1 * (X.shape[1] + 1), 1.0, clf.delta_)
    assert clf.solver_params_["clip"] == pytest.approx(kappa * unit)
    # the squared loss: the targets' scale from target_bound (public) ...
    Xr, yr = regression()
    Mr = Squared().smoothness(Xr)
    est = DPLasso(alpha=0.01, solver="gcd", n_iter=5, smoothness=Mr, target_bound=3.0,
                  fit_intercept=False, random_state=0).fit(Xr, yr)
    unit = math.sqrt(Mr.sum() / 2.0) * 2.0 * 3.0
    kappa = default_kappa("gcd", Xr.shape[0], 5, 1.0, est.delta_)
    assert est.solver_params_["clip"] == pytest.approx(kappa * unit)
    assert est.privacy_.epsilon <= 1.0
    # ... or privately estimated (the default: no leak, one more mechanism) ...
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", UserWarning)  # 200 rows: unit scales, warned
        est = DPLasso(alpha=0.01, solver="gcd", n_iter=5, smoothness=Mr,
                      fit_intercept=False, random_state=0).fit(Xr, yr)
    assert est.privacy_.epsilon <= 1.0
    assert [m.name for m in est.privacy_.entries][0].startswith("constants: data scales")
    # ... or from the data: a leak, warned and recorded
    with pytest.warns(PrivacyLeakWarning, match="rms"):
        est = DPLasso(alpha=0.01, solver="gcd", n_iter=5, smoothness=Mr, leak_constants=True,
                      fit_intercept=False, random_state=0).fit(Xr, yr)
    unit = math.sqrt(Mr.sum() / 2.0) * 2.0 * np.sqrt(np.mean(yr ** 2))
    assert est.solver_params_["clip"] == pytest.approx(kappa * unit)
    assert math.isinf(est.privacy_.epsilon) and "targets" in str(est.privacy_)


def test_default_budget_rule():
    from sparsedp.linear_model import default_budget
    assert default_budget("gcd", 800, 100_000) == {"n_iter": 1, "step_size": 1.0}
    assert default_budget("gcd", 15_000, 20_000) == {"n_iter": 25, "step_size": 1.0}
    assert default_budget("gcd", 20_640, 8) == {"n_iter": 69, "step_size": 1.0}
    assert default_budget("gcd", 45_312, 8)["n_iter"] == 100
    assert default_budget("gcd", 45_312, 8, epsilon=INF)["n_iter"] == 100
    assert default_budget("cd", 20_640, 8)["passes"] == 20.0
    assert default_budget("cd", 800, 100_000)["passes"] == 2.0
    X, y = classification()  # 300 x 20: DP-CD, 20 passes, exponential mechanism for DP-GCD
    clf = DPLogisticRegression(solver="cd", smoothness=np.full(20, 0.25),
                               random_state=0).fit(X, y == "a")
    assert clf.solver_ == "cd" and clf.solver_params_["passes"] == 20.0
    clf = DPLogisticRegression(solver="gcd", smoothness=np.full(20, 0.25),
                               random_state=0).fit(X, y == "a")
    assert "selection" not in clf.solver_params_  # DP-GCD's own default: one answer
    assert clf.solver_info_[0]["selection"] == "exponential"


def test_default_kappa_rule():
    from sparsedp.linear_model import default_kappa
    mu = 1.0 / calibrate_gaussian(1.0, 1e-6, 1)
    assert default_kappa("cd", 2_000, 400, 1.0, 1e-6) == pytest.approx(
        0.11 * (2_000 * mu / 20.0) ** 0.65)
    # more data or budget: a larger clip; more releases: a smaller one; clamped
    assert default_kappa("cd", 2000, 10, 1.0, 1e-6) > default_kappa("cd", 200, 10, 1.0, 1e-6)
    assert default_kappa("cd", 200, 10, 2.0, 1e-6) > default_kappa("cd", 200, 10, 1.0, 1e-6)
    assert default_kappa("cd", 200, 10**6, 1.0, 1e-6) < default_kappa("cd", 200, 10, 1.0, 1e-6)
    assert default_kappa("cd", 10, 10**8, 0.01, 1e-6) == 0.1  # clamped to [0.1, 5]
    assert default_kappa("cd", 10**9, 1, 10.0, 1e-6) == 5.0
    assert default_kappa("gcd", 10, 10, 1.0, 1e-6) == default_kappa(
        "sgd", 10**6, 10, 5.0, 1e-6) == 1.0
    with pytest.raises(ValueError, match="DP-SCD's clip has no unit"):
        default_kappa("scd", 10, 10, 1.0, 1e-6)


def test_report_prints_and_converts_to_dict():
    X, y = classification()
    clf = DPLinearSVC(solver="cd", passes=1, smoothness=np.full(X.shape[1], 2.0),
                      random_state=0).fit(X, y)
    d = clf.privacy_.to_dict()
    assert d["epsilon"] == pytest.approx(clf.privacy_.epsilon)
    assert d["delta"] == pytest.approx(clf.delta_)
    assert "Total" in str(clf.privacy_)


# ---- inputs -----------------------------------------------------------------------------

def test_sparse_input_is_never_densified():
    """1,000 x 10,000,000 (80 GB dense): fits in well under a second of extra memory."""
    rng = np.random.default_rng(0)
    n, p = 1000, 10_000_000
    rows = rng.integers(0, n, 5000)
    cols = rng.integers(0, p, 5000)
    X = sp.csr_array((np.ones(5000), (rows, cols)), shape=(n, p))
    y = np.where(rng.random(n) < 0.5, 0, 1)
    clf = DPLogisticRegression(penalty="l1", solver="gcd", n_iter=5, feature_bounds=1.0,
                               smoothness=0.1, random_state=0).fit(X, y)
    assert clf.coef_.shape == (1, p) and clf.predict(X[:5]).shape == (5,)


def test_non_canonical_csc_is_canonicalised():
    X, y = regression()
    X = sp.csc_array(X)
    M = Squared().smoothness(X)
    ref = DPRidge(solver="cd", passes=2, smoothness=M, random_state=0).fit(X, y).coef_
    # the same matrix stored with unsorted, duplicated row indices
    data, indices, indptr = [], [], [0]
    for j in range(X.shape[1]):
        rows = X.indices[X.indptr[j]:X.indptr[j + 1]][::-1]
        vals = X.data[X.indptr[j]:X.indptr[j + 1]][::-1]
        data += [*(vals / 2), *(vals / 2)]
        indices += [*rows, *rows]
        indptr.append(len(indices))
    Y = sp.csc_array((np.array(data), np.array(indices, dtype=np.int32),
                      np.array(indptr, dtype=np.int32)), shape=X.shape)
    assert not Y.has_canonical_format
    got = DPRidge(solver="cd", passes=2, smoothness=M, random_state=0).fit(Y, y).coef_
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"), (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"), (dict(solver="newton"), "solver"),
    (dict(solver="scd", alpha=0.0), "scd"), (dict(clip=-1.0), "clip"),
    (dict(passes=0), "passes"), (dict(smoothness=np.ones(3)), "smoothness"),
    (dict(smoothness=1.5), "smoothness"), (dict(fit_intercept="yes"), "fit_intercept"),
    (dict(solver_options=[1]), "solver_options"),
])
def test_bad_parameters_name_the_parameter(kwargs, match):
    X, y = regression()
    with pytest.raises((ValueError, TypeError), match=match):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            DPRidge(**kwargs).fit(X, y)


def test_bad_data():
    X, y = regression()
    Xd = X.toarray()
    Xd[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPRidge().fit(Xd, y)
    y_bad = y.copy()
    y_bad[3] = np.inf
    with pytest.raises(ValueError, match="NaN|infinity"):
        DPRidge().fit(X, y_bad)
    with pytest.raises(ValueError, match="0 sample"):
        DPRidge().fit(sp.csc_array((0, 5)), np.zeros(0))
    with pytest.raises(ValueError, match="0 feature"):
        DPRidge().fit(sp.csc_array((5, 0)), np.zeros(5))
    with pytest.raises(ValueError, match="Complex|complex"):
        DPRidge().fit(Xd.astype(complex), y)
    with pytest.raises(ValueError, match="one class"):
        DPLogisticRegression().fit(X, np.ones(X.shape[0]))
    with pytest.raises(ValueError, match="continuous|Unknown label"):
        DPLogisticRegression().fit(X, y)


@pytest.mark.parametrize("fmt", ["csc", "csr"])
def test_sparse_fast_validation_checks_y_as_scikit_learn(fmt):
    # float64 CSC / CSR skip check_array; y is still checked as check_X_y checks it
    from sklearn.exceptions import DataConversionWarning
    X, y = regression()
    X = X.asformat(fmt)
    ref = DPRidge(random_state=0, target_bound=3.0).fit(X, y)
    with pytest.warns(DataConversionWarning):
        col = DPRidge(random_state=0, target_bound=3.0).fit(X, y.reshape(-1, 1))
    np.testing.assert_array_equal(col.coef_, ref.coef_)
    assert col.n_features_in_ == X.shape[1] and not hasattr(col, "feature_names_in_")
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        DPRidge().fit(X, y[:-1])
    y_bad = y.copy()
    y_bad[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPRidge().fit(X, y_bad)
    with pytest.raises(ValueError, match="[Cc]omplex"):
        DPRidge().fit(X, y.astype(complex))
    obj = DPRidge(random_state=0, target_bound=3.0).fit(X, y.astype(object))
    np.testing.assert_array_equal(obj.coef_, ref.coef_)


def test_solver_constraints():
    X, y = classification()
    with pytest.raises(ValueError, match="penalty='l2'"):
        DPLinearSVC(loss="hinge", penalty="l1").fit(X, y)
    with pytest.raises(ValueError, match="solver='cd' cannot fit"):
        DPLinearSVC(loss="hinge", solver="cd").fit(X, y)
    with pytest.raises(ValueError, match="scd"):
        DPLasso(solver="scd").fit(*regression())
    with pytest.raises(ValueError, match="dp_scd needs an L2 penalty"):
        DPLasso(solver="scd").fit(*regression())
    with pytest.raises(ValueError, match="dp_cd needs a smooth datafit"):
        DPLinearSVC(loss="hinge", solver="cd").fit(X, y)
    # each solver-specific parameter goes to the solvers that take it, else an error
    with pytest.raises(ValueError, match=r"selection does not apply to solver='cd' \(DP-CD\)"):
        DPRidge(solver="cd", selection="laplace").fit(*regression())
    with pytest.raises(ValueError, match="rule does not apply to solver='sgd'"):
        DPRidge(solver="sgd", rule="gs-s").fit(*regression())
    with pytest.raises(ValueError, match="step_size does not apply to solver='scd'"):
        DPRidge(solver="scd", step_size=1.0).fit(*regression())
    with pytest.raises(ValueError, match="batch_size does not apply to solver='gcd'"):
        DPLasso(solver="gcd", batch_size=8).fit(*regression())
    with pytest.raises(ValueError, match=r"n_iter does not apply to solver='cd' \(DP-CD runs for "
                                         r"passes\)"):
        DPLasso(solver="cd", n_iter=5).fit(*regression())
    with pytest.raises(ValueError, match="passes does not apply to solver='gcd'"):
        DPLasso(solver="gcd", passes=5).fit(*regression())


def test_ridge_by_dp_scd_is_its_functional_fit():
    """DP-SCD fits what its spec accepts (ridge too): the estimator's fit is the
    functional call with the estimator's keyword arguments."""
    X, y = regression()
    est = DPRidge(alpha=0.1, solver="scd", fit_intercept=False, random_state=3,
                  epsilon=2.0).fit(X, y)
    assert est.solver_ == "scd" and est.solver_params_["clip"] == 1.0
    assert est.solver_params_["batch_size"] == min(64, X.shape[0])
    res = dp_scd(X, y, Squared(), L2(0.1), epsilon=2.0, delta=est.delta_, random_state=3,
                 **est.solver_params_)
    np.testing.assert_array_equal(est.coef_, res.coef)


def test_auto_solver_rule():
    # measured (docs/defaults.rst): DP-CD from n/p = CD_MIN_RATIO["l1"] with L1, from
    # CD_MIN_RATIO["l2"] without; below, DP-GCD (L1) or DP-SGD
    assert CD_MIN_RATIO == {"l1": 1000.0, "l2": 10.0}
    assert choose_solver("squared", 1e-3, 1000, 1) == "gcd"
    assert choose_solver("squared", 1e-3, 1001, 1) == "cd"
    assert choose_solver("logistic", 1e-3, 15_000, 50) == "gcd"  # n/p = 300: DP-GCD won
    assert choose_solver("squared", 1e-3, 8000, 8) == "gcd"  # n/p = 1,000: DP-GCD won
    assert choose_solver("squared", 1e-3, 20_640, 8) == "cd"  # California: DP-CD won
    assert choose_solver("squared", 1e-3, 200, 10) == "gcd"
    assert choose_solver("logistic", 0.0, 100, 100) == "sgd"
    assert choose_solver("squared", 0.0, 1000, 100) == "sgd"  # n/p = 10: DP-SGD won 3 of 4
    assert choose_solver("squared", 0.0, 1001, 100) == "cd"
    assert choose_solver("squared", 0.0, 200, 10) == "cd"  # scikit-learn's check data
    assert choose_solver("hinge", 0.0, 100, 10) == "scd"
    assert choose_solver("logistic", 1e-3, 800, 100_000) == "gcd"
    assert choose_solver("squared", 1e-3, 20_000, 8) == "cd"
    assert choose_solver("logistic", 0.0, 800, 100_000) == "sgd"
    assert choose_solver("logistic", 0.0, 45_312, 8) == "cd"
    X, y = classification()
    assert DPLinearSVC(loss="hinge", batch_size=10, random_state=0).fit(X, y).solver_ == "scd"


# ---- scikit-learn behaviour -------------------------------------------------------------

def test_predict_proba_and_decision_function_shapes():
    X, y = classification(classes=3)
    clf = DPLogisticRegression(solver="cd", passes=1, epsilon=5.0,
                               smoothness=np.full(X.shape[1], 0.25), random_state=0).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (X.shape[0], 3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X))
    assert clf.decision_function(X).shape == (X.shape[0], 3)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), P)


def test_warm_start_continues_from_the_previous_fit():
    X, y = regression()
    A = sp.hstack([X, np.ones((X.shape[0], 1))], format="csc")
    ref = exact(A, y, Squared(), L2(0.1), tol=1e-12).coef
    est = DPRidge(alpha=0.1, epsilon=INF, solver="sgd", batch_size=X.shape[0], passes=2,
                  step_size=1.0, warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        errors = []
        for _ in range(4):
            est.fit(X, y)
            errors.append(np.abs(np.r_[est.coef_, est.intercept_] - ref).max())
    assert errors[3] < 0.8 * errors[0]  # gradient descent continued, not restarted
    cold = DPRidge(alpha=0.1, epsilon=INF, solver="sgd", batch_size=X.shape[0], passes=2,
                   step_size=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        cold.fit(X, y)
        cold.fit(X, y)
    assert np.abs(np.r_[cold.coef_, cold.intercept_] - ref).max() == pytest.approx(errors[0])


def test_grid_search_over_a_private_estimator():
    from sklearn.model_selection import GridSearchCV
    X, y = classification(n=400)
    M = np.full(X.shape[1], 0.25)
    search = GridSearchCV(DPLogisticRegression(solver="cd", passes=2, smoothness=M,
                                               classes=["a", "b"], epsilon=5.0,
                                               random_state=0),
                          {"clip": [0.5, 1.0], "step_size": [0.5, 1.0]}, cv=3).fit(X, y)
    assert set(search.best_params_) == {"clip", "step_size"}
    assert search.best_estimator_.privacy_.epsilon <= 5.0


# ---- scikit-learn's estimator checks ----------------------------------------------------

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

_NOISY_ACCURACY = ("a private fit at epsilon = 1 on the check's 100-300 rows is noisy: its "
                   "training accuracy is not always above the check's 0.83")


# The check's regression data are 200 x 10 (n/p = 20): solver="auto" runs DP-GCD for
# an L1 penalty there, whose default budget (3 iterations) gives R^2 0.009 to 0.77 over
# seeds 0-3, below the check's 0.5 at seed 0 (DP-CD: 0.50 to 0.75); DP-GCD's defaults
# at small n are not measured yet (docs/defaults.rst, "solver='auto'"), so the L1
# regressors are checked with DP-CD too, where every check holds.
_NOISY_R2 = ("DP-GCD's default 3 iterations at epsilon = 1 on the check's 200 x 10 data: R^2 "
             "0.009 to 0.77 over seeds, not always above the check's 0.5")


_PRIVATE_R2 = ("the private default constants on the check's 200 x 10 data (n = 200 at "
               "epsilon = 1: no histogram bin stands out of the noise, unit scales): DP-CD's "
               "R^2 0.45 to 0.60 over seeds 0-3 (0.47 to 0.72 with leak_constants=True), not "
               "always above the check's 0.5")


def _expected_failures(estimator):
    if isinstance(estimator, DPLinearSVC) and estimator.loss == "hinge":
        return {"check_classifiers_train": _NOISY_ACCURACY}
    if isinstance(estimator, (DPLasso, DPElasticNet)) and estimator.solver == "auto":
        return {"check_regressors_train": _NOISY_R2}
    if isinstance(estimator, (DPLasso, DPElasticNet, DPRidge)):
        return {"check_regressors_train": _PRIVATE_R2}
    return {}


@pytest.mark.filterwarnings("ignore::sparsedp.exceptions.PrivacyLeakWarning")
@parametrize_with_checks([DPLasso(), DPElasticNet(),
                          DPLasso(solver="cd"), DPElasticNet(solver="cd"), DPRidge(),
                          DPLogisticRegression(), DPLinearSVC(), DPLinearSVC(loss="hinge")],
                         expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_getting_started_example_runs_and_learns():
    """examples/getting_started.py (docs/getting_started.rst): the defaults find the
    10 useful features, and the functional API gives the same coefficients."""
    import runpy
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "examples" / "getting_started.py"
    if not path.exists():
        pytest.skip("examples/ not beside the tests")
    ns = runpy.run_path(str(path))  # asserts estimator == functional API itself
    clf = ns["clf"]
    assert clf.solver_ == "gcd" and clf.n_iter_[0] == 25
    assert set(range(10)) <= set(np.flatnonzero(clf.coef_[0]))
    assert clf.score(ns["X_test"], ns["y_test"]) > 0.8
    assert clf.privacy_.epsilon <= 1.0


# ------------------------------------------------------------------ DP-CD's noise floor

def test_noise_floor_kappa_is_the_closed_form():
    from sparsedp.privacy import calibrate_gaussian
    from sparsedp.solvers._dp_cd import NOISE_FLOOR, noise_floor_kappa
    n, p, T, eps, delta, gamma, beta, d, f0 = 800, 100_000, 200_000, 1.0, 1e-6, 1.0, 0.25, 0.5, \
        math.log(2.0)
    mu = 1.0 / calibrate_gaussian(eps, delta, 1)
    want = n * mu / (d * math.sqrt(T)) * math.sqrt(NOISE_FLOOR * f0 * beta * (2 - gamma)
                                                   / (2 * gamma * min(T, p)))
    assert noise_floor_kappa(n, p, T, eps, delta, gamma, beta, d, f0) == pytest.approx(want)
    # fewer updates than coordinates: only the updated ones settle
    assert noise_floor_kappa(n, p, 500, eps, delta, gamma, beta, d, f0) == pytest.approx(
        n * mu / (d * math.sqrt(500)) * math.sqrt(NOISE_FLOOR * f0 * beta / (2 * 500)))


@pytest.mark.parametrize("capped", [True, False])
def test_dp_cd_default_clip_on_wide_sparse_data_stays_near_w0_only_with_the_cap(
        capped, monkeypatch):
    """p >> n, sparse columns: without the cap DP-CD's default fit is many times worse
    than w = 0 (the noise of each update, over steps 1 / M_j); with it, within F(0) of it."""
    import dataclasses
    from sparsedp.datasets import make_dorothea_like
    from sparsedp.solvers import REGISTRY
    if not capped:
        monkeypatch.setitem(REGISTRY, "dp_cd",
                            dataclasses.replace(REGISTRY["dp_cd"], kappa_cap=None))
    X, y = make_dorothea_like(400, 30_000, column_spread=1.0, random_state=0)[:2]
    y = np.where(y > 0, 1.0, -1.0)
    alpha = np.abs(X.T @ y).max() / (2 * 400) / 10
    est = DPLogisticRegression(penalty="l1", alpha=alpha, solver="cd", classes=[-1.0, 1.0],
                               fit_intercept=False, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    X_fit = X if est.feature_clip_ is None else clip_to_bounds(X, est.feature_clip_)
    w = np.ravel(est.coef_)
    loss = float(np.mean(np.logaddexp(0.0, -y * (X_fit @ w)))) + alpha * np.abs(w).sum()
    if capped:
        assert loss <= 2 * math.log(2.0)  # the floor it allows: excess <= F(0)
    else:
        assert loss > 3 * math.log(2.0)
