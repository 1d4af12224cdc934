"""The exact solver: agreement with scikit-learn, input forms, iterates, stopping."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sparsedp._kernels import kernel_id
from sparsedp.datafits import Logistic, Squared
from sparsedp.penalties import L1, L2, ElasticNet
from sparsedp.solvers import exact, objective
from sparsedp._kernels import _cd_fast

from problems import make_sparse_problem

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import Lasso, LogisticRegression  # noqa: E402

REL = 1e-7
# scikit-learn 1.8 chooses LogisticRegression's penalty by l1_ratio alone (penalty= is
# deprecated); before, penalty="l1" is needed (l1_ratio is read for "elasticnet" only)
L1_LOGISTIC = (dict(l1_ratio=1.0) if tuple(map(int, sklearn.__version__.split(".")[:2])) >= (1, 8)
               else dict(penalty="l1"))


def lam_max(X, y, datafit):
    """Smallest L1 strength for which w = 0 is optimal."""
    return np.max(np.abs(datafit.gradient(X, np.zeros(X.shape[0]), y)))


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("frac", [0.5, 0.1, 0.02])
def test_lasso_agrees_with_sklearn(dense, frac):
    X, y = make_sparse_problem(n=80, p=120, density=0.1, seed=4)
    lam = frac * lam_max(X, y, Squared())
    Xin = X.toarray() if dense else X
    ours = exact(Xin, y, Squared(), L1(lam))
    assert ours.converged
    # Our F = 2 * sklearn's objective with alpha = lam / 2.
    sk = Lasso(alpha=lam / 2, fit_intercept=False, tol=1e-14, max_iter=100_000)
    sk.fit(Xin, y)
    f_sk = objective(X, y, sk.coef_, Squared(), L1(lam))
    assert ours.diagnostics.objective == pytest.approx(f_sk, rel=REL)
    assert ours.diagnostics.objective <= f_sk * (1 + 1e-12)  # and we are not worse
    np.testing.assert_allclose(ours.coef, sk.coef_, atol=1e-6)


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("frac", [0.5, 0.1])
def test_l1_logistic_agrees_with_sklearn(dense, frac):
    X, y = make_sparse_problem(n=100, p=60, density=0.2, seed=5, logistic=True)
    n = X.shape[0]
    lam = frac * lam_max(X, y, Logistic())
    Xin = X.toarray() if dense else X
    ours = exact(Xin, y, Logistic(), L1(lam), tol=1e-11)
    assert ours.converged
    # sum_i loss + (1/C) ||w||_1  =  n * F  with C = 1 / (n lam)
    sk = LogisticRegression(C=1.0 / (n * lam), **L1_LOGISTIC, solver="liblinear",
                            fit_intercept=False, tol=1e-12, max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk.fit(Xin, y)
    f_sk = objective(X, y, sk.coef_.ravel(), Logistic(), L1(lam))
    assert ours.diagnostics.objective == pytest.approx(f_sk, rel=REL)
    assert ours.diagnostics.objective <= f_sk * (1 + 1e-9)


@pytest.mark.parametrize("alpha", [1e-1, 1e-3])
def test_l2_logistic_agrees_with_sklearn(alpha):
    X, y = make_sparse_problem(n=100, p=30, density=0.3, seed=6, logistic=True)
    n = X.shape[0]
    ours = exact(X, y, Logistic(), L2(alpha), tol=1e-11)
    assert ours.converged
    # sum_i loss + 1/(2C) ||w||^2  =  n * F  with C = 1 / (n alpha)
    sk = LogisticRegression(C=1.0 / (n * alpha), l1_ratio=0.0, solver="lbfgs",
                            fit_intercept=False, tol=1e-14, max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk.fit(X, y)
    f_sk = objective(X, y, sk.coef_.ravel(), Logistic(), L2(alpha))
    assert ours.diagnostics.objective == pytest.approx(f_sk, rel=REL)
    np.testing.assert_allclose(ours.coef, sk.coef_.ravel(), atol=1e-5)


def test_elastic_net_satisfies_optimality_conditions():
    X, y = make_sparse_problem(n=50, p=70, density=0.15, seed=8)
    pen = ElasticNet(0.05, 0.7)
    res = exact(X, y, Squared(), pen)
    grad = Squared().gradient(X, X @ res.coef, y)
    assert np.max(pen.subdiff_distance(res.coef, grad)) <= 1e-10
    # and a perturbation of any coordinate never decreases F
    for j in range(0, 70, 7):
        for h in (1e-4, -1e-4):
            w = res.coef.copy()
            w[j] += h
            assert objective(X, y, w, Squared(), pen) >= res.diagnostics.objective - 1e-14


def test_no_penalty_least_squares_matches_lstsq():
    X, y = make_sparse_problem(n=60, p=10, density=0.6, seed=9)
    res = exact(X, y, Squared(), None, tol=1e-12)
    w, *_ = np.linalg.lstsq(X.toarray(), y, rcond=None)
    np.testing.assert_allclose(res.coef, w, atol=1e-8)


@pytest.mark.parametrize("datafit,logistic", [(Squared(), False), (Logistic(), True)])
def test_kernel_iterates_identical_on_int32_int64_and_dense(datafit, logistic):
    X32, y = make_sparse_problem(n=40, p=25, density=0.3, seed=10, logistic=logistic)
    X64 = sp.csc_array((X32.data, X32.indices.astype(np.int64),
                        X32.indptr.astype(np.int64)), shape=X32.shape)
    lip = datafit.smoothness(X32)
    results = []
    for X in (X32, X64, sp.csc_array(X32.toarray())):
        w, z = np.zeros(25), np.zeros(40)
        iterates = []
        for _ in range(5):
            _cd_fast.cd_epochs(kernel_id(datafit), X.data, X.indices, X.indptr, y, w, z,
                               lip, 0.01, 0.0, 1)
            iterates.append(w.copy())
        results.append(np.array(iterates))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
    # and the solver gives the same answer from every input form
    fits = [exact(X, y, datafit, L1(0.01)).coef
            for X in (X32, X64, X32.toarray(), sp.csr_array(X32), sp.coo_array(X32))]
    for coef in fits[1:]:
        np.testing.assert_array_equal(coef, fits[0])


def test_margin_is_maintained_incrementally():
    X, y = make_sparse_problem(n=40, p=25, density=0.3, seed=11)
    w, z = np.zeros(25), np.zeros(40)
    _cd_fast.cd_epochs(kernel_id(Squared()), X.data, X.indices, X.indptr, y, w, z,
                       Squared().smoothness(X), 0.05, 0.0, 7)
    np.testing.assert_allclose(z, X @ w, atol=1e-12)


def test_result_fields_and_max_epochs():
    X, y = make_sparse_problem(seed=12)
    res = exact(X, y, Squared(), L1(1e-6), tol=1e-300, max_epochs=3)
    assert res.n_iter == 3 and res.converged is False
    assert res.privacy is None and res.coef.shape == (X.shape[1],)
    d = res.diagnostics  # the exact solver is not private: diagnostics always filled
    assert d.objective == pytest.approx(objective(X, y, res.coef, Squared(), L1(1e-6)))
    assert d["kkt_violation"] > 0 and res.info == {}
    assert "non-private diagnostic" in repr(d)
    assert not hasattr(res, "objective")  # only res.diagnostics.objective
    assert res.diagnostics.trace is None


def test_empty_columns_stay_zero():
    X, y = make_sparse_problem(n=30, p=10, density=0.4, seed=13)
    X = sp.hstack([X, sp.csc_array((30, 3))], format="csc")
    res = exact(X, y, Squared(), L1(0.01))
    assert np.all(res.coef[-3:] == 0) and res.converged


def test_coef_init_starts_where_asked():
    """From the optimum it stops at the first check (one block of check_every epochs);
    from elsewhere it reaches the same optimum; a bad start is refused by name."""
    X, y = make_sparse_problem(n=80, p=30, seed=6)
    ref = exact(X, y, Squared(), L1(0.01), tol=1e-12)
    warm = exact(X, y, Squared(), L1(0.01), tol=1e-12, coef_init=ref.coef)
    assert warm.converged and warm.n_iter == 5 < ref.n_iter
    far = exact(X, y, Squared(), L1(0.01), tol=1e-12, coef_init=np.full(30, 3.0))
    np.testing.assert_allclose(far.coef, ref.coef, atol=1e-9)
    with pytest.raises(ValueError, match=r"coef_init must have shape \(30,\)"):
        exact(X, y, Squared(), L1(0.01), coef_init=np.zeros(29))


def test_callback_follows_every_check():
    """callback(epochs, violation) after each KKT check: epochs in steps of check_every,
    the last call the result's own epochs and violation; a non-callable is refused."""
    X, y = make_sparse_problem(n=200, p=40, seed=3)
    calls = []
    res = exact(X, y, Squared(), L1(1e-2), check_every=3,
                callback=lambda epochs, violation: calls.append((epochs, violation)))
    assert [e for e, _ in calls] == list(range(3, res.n_iter + 1, 3))
    assert calls[-1] == (res.n_iter, res.diagnostics["kkt_violation"])
    assert all(v > 1e-10 for _, v in calls[:-1])
    with pytest.raises(TypeError, match="callback must be callable"):
        exact(X, y, Squared(), L1(1e-2), callback=3)
