"""The solvers' intercept: the fit on [X, s * 1] (DP-CD and DP-GCD without building it,
DP-SGD and DP-SCD on the column they append)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from problems import make_sparse_problem
from sparsedp._validation import CHECKED, check_X
from sparsedp.datafits import Logistic, Squared
from sparsedp.linear_model import DPLasso, DPLogisticRegression
from sparsedp.penalties import L1, L2
from sparsedp.solvers import dp_cd, dp_gcd, dp_scd, dp_sgd

SOLVERS = {"cd": (dp_cd, dict(passes=3, order="shuffle")), "gcd": (dp_gcd, dict(n_iter=25))}


def _problem(n=90, p=30, seed=1):
    # column 4 empty: DP-GCD leaves it out of the noisy max
    return make_sparse_problem(n, p, density=0.2, seed=seed, labels="coin", values="uniform",
                               empty_columns=[4])


def _smoothness_kwargs(case, p, s, beta):
    """(native kwargs, kwargs of the same fit on [X, s * 1])."""
    if case == "public":
        M = np.linspace(0.05, 0.3, p)
        return dict(smoothness=M), dict(smoothness=np.append(M, beta * s * s))
    if case == "private":
        return (dict(smoothness=0.2, feature_bounds=1.0),
                dict(smoothness=0.2, feature_bounds=np.append(np.ones(p), s)))
    return dict(smoothness=case), dict(smoothness=case)  # "leak"


@pytest.mark.parametrize("solver", sorted(SOLVERS))
# (the private defaults, and a fraction without feature_bounds, estimate on X's rows and
# columns: the appended column is one more feature there, so the fits differ)
@pytest.mark.parametrize("case", ["public", "private", "leak"])
@pytest.mark.parametrize("s", [1.0, 0.25, 8.0])
def test_native_intercept_is_the_fit_on_the_appended_column(solver, case, s):
    function, kw = SOLVERS[solver]
    X, y = _problem()
    A = sp.hstack([X, np.full((X.shape[0], 1), s)], format="csc")
    native, appended = _smoothness_kwargs(case, X.shape[1], s, Logistic().beta)
    common = dict(epsilon=1.0, delta=1e-5, clip=1.0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the leaks of case "leak"
        for seed in range(3):
            got = function(X, y, Logistic(), L1(1e-3), random_state=seed, fit_intercept=True,
                           intercept_scaling=s, **common, **native)
            ref = function(A, y, Logistic(), L1(1e-3), random_state=seed, **common, **appended)
            assert got.coef.shape == (X.shape[1],)
            np.testing.assert_array_equal(got.coef, ref.coef[:-1])
            assert got.intercept == ref.coef[-1] * s
            assert got.n_iter == ref.n_iter
            assert got.privacy.to_dict() == ref.privacy.to_dict()
            assert str(got.privacy) == str(ref.privacy)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_native_intercept_warm_start_trace_and_squared_loss(solver):
    function, kw = SOLVERS[solver]
    X, y = _problem(seed=3)
    y = y + 0.5  # a squared-loss target with an offset
    s = 2.0
    A = sp.hstack([X, np.full((X.shape[0], 1), s)], format="csc")
    M = Squared().smoothness(X)
    w0, b0 = np.linspace(-0.1, 0.1, X.shape[1]), 0.3
    common = dict(epsilon=2.0, delta=1e-5, clip=2.0, random_state=5, trace=True, **kw)
    got = function(X, y, Squared(), L2(0.01), fit_intercept=True, intercept_scaling=s,
                   smoothness=M, coef_init=w0, intercept_init=b0, **common)
    ref = function(A, y, Squared(), L2(0.01), smoothness=np.append(M, Squared().beta * s * s),
                   coef_init=np.append(w0, b0 / s), **common)
    np.testing.assert_array_equal(got.coef, ref.coef[:-1])
    assert got.intercept == ref.coef[-1] * s
    np.testing.assert_array_equal(got.diagnostics.trace["objective"],
                                  ref.diagnostics.trace["objective"])
    assert got.diagnostics.objective == ref.diagnostics.objective


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_no_intercept_by_default(solver):
    function, kw = SOLVERS[solver]
    X, y = _problem()
    res = function(X, y, Logistic(), L1(1e-3), epsilon=1.0, delta=1e-5, clip=1.0,
                   smoothness=np.full(X.shape[1], 0.25), random_state=0, **kw)
    assert res.intercept == 0.0 and res.coef.shape == (X.shape[1],)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
@pytest.mark.parametrize("bad, error, match", [
    (0.0, ValueError, "intercept_scaling"), (-1.0, ValueError, "intercept_scaling"),
    (np.inf, ValueError, "intercept_scaling"), (np.nan, ValueError, "intercept_scaling"),
    (1e200, ValueError, "intercept_scaling"), ("1", TypeError, "intercept_scaling"),
    (True, TypeError, "intercept_scaling")])
def test_bad_intercept_scaling(solver, bad, error, match):
    function, kw = SOLVERS[solver]
    X, y = _problem()
    with pytest.raises(error, match=match):
        function(X, y, Logistic(), L1(1e-3), epsilon=1.0, delta=1e-5, clip=1.0,
                 smoothness=np.full(X.shape[1], 0.25), fit_intercept=True,
                 intercept_scaling=bad, **kw)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_bad_intercept_arguments(solver):
    function, kw = SOLVERS[solver]
    X, y = _problem()
    common = dict(epsilon=1.0, delta=1e-5, clip=1.0, smoothness=np.full(X.shape[1], 0.25),
                  **kw)
    with pytest.raises(TypeError, match="fit_intercept"):
        function(X, y, Logistic(), None, fit_intercept="yes", **common)
    with pytest.raises(ValueError, match="intercept_init needs fit_intercept"):
        function(X, y, Logistic(), None, intercept_init=1.0, **common)
    with pytest.raises(ValueError, match="intercept_init"):
        function(X, y, Logistic(), None, fit_intercept=True, intercept_init=np.nan, **common)
    with pytest.raises(ValueError, match="smoothness"):  # X's columns only
        function(X, y, Logistic(), None, fit_intercept=True,
                 **{**common, "smoothness": np.full(X.shape[1] + 1, 0.25)})


@pytest.mark.parametrize("solver", ["cd", "gcd"])
def test_estimator_uses_the_native_intercept_and_matches_the_functional_call(solver):
    X, y = _problem(n=120, p=40, seed=4)
    p = X.shape[1]
    clf = DPLogisticRegression(penalty="l1", solver=solver, smoothness=np.full(p, 0.25),
                               classes=[-1, 1], intercept_scaling=1.5,
                               random_state=2).fit(X.tocsr(), y)
    assert clf.solver_params_["fit_intercept"] is True
    assert clf.solver_params_["smoothness"].shape == (p,)
    function = SOLVERS[solver][0]
    res = function(X, y, Logistic(), L1(1e-3), epsilon=1.0, delta=clf.delta_, random_state=2,
                   **clf.solver_params_)
    np.testing.assert_array_equal(res.coef, clf.coef_[0])
    assert res.intercept == clf.intercept_[0]
    assert res.privacy.to_dict() == clf.privacy_.to_dict()


BATCH = {"sgd": (dp_sgd, dict(passes=2, batch_size=8, step_size=0.5)),
         "scd": (dp_scd, dict(passes=2, batch_size=8))}


@pytest.mark.parametrize("solver", sorted(BATCH))
@pytest.mark.parametrize("s", [1.0, 0.25, 8.0])
def test_batch_solvers_intercept_is_the_fit_on_the_appended_column(solver, s):
    function, kw = BATCH[solver]
    X, y = _problem()
    A = sp.hstack([X, np.full((X.shape[0], 1), s)], format="csc")
    common = dict(epsilon=1.0, delta=1e-5, clip=1.0, **kw)
    native, appended = {}, {}
    if solver == "sgd":  # public constants: the column's, beta s^2, appended by the solver
        M = np.linspace(0.05, 0.3, X.shape[1])
        native, appended = dict(smoothness=M), dict(smoothness=np.append(M, 0.25 * s * s))
    for seed in range(2):
        got = function(X, y, Logistic(), L2(1e-2), random_state=seed, fit_intercept=True,
                       intercept_scaling=s, **common, **native)
        ref = function(A, y, Logistic(), L2(1e-2), random_state=seed, **common, **appended)
        assert got.coef.shape == (X.shape[1],)
        np.testing.assert_array_equal(got.coef, ref.coef[:-1])
        assert got.intercept == ref.coef[-1] * s
        assert got.privacy.to_dict() == ref.privacy.to_dict()


def test_dp_sgd_intercept_warm_start():
    X, y = _problem(seed=3)
    s, w0, b0 = 2.0, np.linspace(-0.1, 0.1, 30), 0.3
    A = sp.hstack([X, np.full((X.shape[0], 1), s)], format="csc")
    common = dict(epsilon=2.0, delta=1e-5, clip=1.0, passes=2, batch_size=8, random_state=5,
                  global_smoothness=1.0)
    got = dp_sgd(X, y, Logistic(), L1(1e-3), fit_intercept=True, intercept_scaling=s,
                 coef_init=w0, intercept_init=b0, **common)
    ref = dp_sgd(A, y, Logistic(), L1(1e-3), coef_init=np.append(w0, b0 / s), **common)
    np.testing.assert_array_equal(got.coef, ref.coef[:-1])
    assert got.intercept == ref.coef[-1] * s


@pytest.mark.parametrize("solver", ["sgd", "scd"])
def test_estimator_passes_the_intercept_to_the_batch_solvers(solver):
    X, y = _problem(n=120, p=40, seed=4)
    extra = {"smoothness": np.full(40, 0.25)} if solver == "sgd" else {}
    clf = DPLogisticRegression(solver=solver, random_state=0, passes=2, intercept_scaling=1.5,
                               **extra).fit(X, y)
    assert clf.solver_params_["fit_intercept"] is True and clf.intercept_.shape == (1,)
    res = BATCH[solver][0](X, y, Logistic(), L2(1e-3), epsilon=1.0, delta=clf.delta_,
                           random_state=0, **clf.solver_params_)
    np.testing.assert_array_equal(res.coef, clf.coef_[0])
    assert res.intercept == clf.intercept_[0]


def test_check_X_validates_once():
    X, _ = _problem()
    Xc = check_X(X)
    assert Xc is not X and check_X(Xc) is Xc  # marked: returned as is
    assert check_X(X) is not Xc  # the caller's object is never marked
    assert not getattr(Xc.copy(), CHECKED, False)  # a copy is checked afresh
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        check_X(bad)


def test_estimator_reports_nan_in_X_by_name():
    X, y = _problem()
    X = X.copy()
    X.data[3] = np.inf
    for est in (DPLogisticRegression(smoothness=np.full(30, 0.25)),
                DPLasso(smoothness=np.full(30, 0.25), target_bound=1.0)):
        with pytest.raises(ValueError, match="X contains NaN or infinite"):
            est.fit(X, y)


@pytest.mark.parametrize("solver", sorted(BATCH))
@pytest.mark.parametrize("bad, error", [(0.0, ValueError), (np.inf, ValueError),
                                        (np.nan, ValueError), ("1", TypeError)])
def test_batch_solvers_refuse_a_bad_intercept_scaling(solver, bad, error):
    function, kw = BATCH[solver]
    X, y = _problem()
    with pytest.raises(error, match="intercept_scaling"):
        function(X, y, Logistic(), L2(1e-2), epsilon=1.0, delta=1e-5, clip=1.0,
                 fit_intercept=True, intercept_scaling=bad, **kw)
    with pytest.raises(TypeError, match="fit_intercept"):
        function(X, y, Logistic(), L2(1e-2), epsilon=1.0, delta=1e-5, clip=1.0,
                 fit_intercept="yes", **kw)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("nonzeros", [0, 1, 7, 16, 17, 30, 200])
def test_margin_skips_zero_columns_with_scipys_values(nonzeros, index_dtype):
    """Problem.margin (the objective of every diagnostics report) multiplies only
    the columns of w's nonzeros when they are few (one by one up to FEW_COLUMNS,
    else a slice of X): the same float64 values as scipy's ``X @ w`` over all
    columns, bit for bit, signed zeros included, with and without the intercept
    column."""
    from sparsedp.solvers._base import FEW_COLUMNS, Problem, matvec
    assert FEW_COLUMNS == 16  # the cases above straddle it
    rng = np.random.default_rng(nonzeros)
    X = sp.random(60, 200, density=0.2, format="csc", random_state=rng)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    X.data = rng.standard_normal(X.nnz) * 10.0 ** rng.integers(-8, 8, X.nnz)
    w = np.zeros(200)
    idx = rng.choice(200, nonzeros, replace=False)
    w[idx] = rng.standard_normal(nonzeros) * 10.0 ** rng.integers(-8, 8, nonzeros)
    w[rng.choice(200, 20, replace=False)] *= -0.0  # negative zeros among the zeros
    expected = X @ w
    got = matvec(X, w)
    assert got.dtype == np.float64 and got.shape == (60,)
    assert np.array_equal(got.view(np.int64), expected.view(np.int64))
    problem = Problem(X=X, y=np.zeros(60), datafit=Squared(), penalty=L1(0.1),
                      intercept_scaling=2.0)
    v = np.append(w, 0.5)
    z = X @ w
    z += 2.0 * 0.5
    assert np.array_equal(problem.margin(v).view(np.int64), z.view(np.int64))
