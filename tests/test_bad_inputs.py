"""Every public solver and loader rejects bad input with a clear error (issue 18's list).

Each case names the argument and what is wrong with it; none may crash, hang or
return NaN.  The solvers validate through one module (sparsedp._validation), so
the same mistake gets the same message everywhere.
"""
import gzip
import math

import numpy as np
import pytest
import scipy.sparse as sp

from problems import make_sparse_problem
from sparsedp.datafits import Logistic, Squared
from sparsedp.datasets import load_dorothea, normalize_rows
from sparsedp.penalties import L1, L2
from sparsedp.solvers import calibrate_dp_gcd, dp_cd, dp_gcd, dp_scd, dp_sgd, exact

X0, Y0 = make_sparse_problem(n=20, p=10)
M0 = np.ones(10)
PRIVATE = {
    "dp_cd": (dp_cd, dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0, smoothness=M0,
                          random_state=0)),
    "dp_gcd": (dp_gcd, dict(epsilon=1.0, delta=1e-5, n_iter=3, clip=1.0, smoothness=M0,
                            random_state=0)),
}
SOLVERS = {**PRIVATE, "exact": (exact, {})}

# (argument, bad value, exception, message): the same for every private solver
BUDGET_CASES = [
    ("epsilon", "1.0", TypeError, "epsilon must be a real number"),
    ("epsilon", True, TypeError, "epsilon must be a real number"),
    ("epsilon", 0.0, ValueError, "epsilon == 0.0, must be > 0"),
    ("epsilon", -1.0, ValueError, "must be > 0"),
    ("epsilon", math.nan, ValueError, "epsilon must be a number, got nan"),
    ("epsilon", 1e-300, ValueError, "below the samplers' slack"),
    ("delta", 0.0, ValueError, "delta == 0.0, must be > 0"),
    ("delta", 1.0, ValueError, "delta == 1.0, must be < 1"),
    ("delta", "1e-5", TypeError, "delta must be a real number"),
    ("clip", -1.0, ValueError, "clip == -1.0, must be > 0"),
    ("clip", math.inf, ValueError, "finite clip is required"),
    ("step_size", 0, ValueError, "step_size == 0.0, must be > 0"),
    ("smoothness", "0.1", TypeError, "smoothness must be a real number"),
    ("smoothness", 1.5, ValueError, "fraction of epsilon"),
    ("smoothness", np.full(10, 1e-320), ValueError, "step_size / smoothness overflows"),
    ("smoothness", np.full(3, 1.0), ValueError, r"shape \(10,\)"),
    ("random_state", "seed", TypeError, "random_state must be"),
    ("trace", "yes", TypeError, "trace must be True or False"),
]


@pytest.mark.parametrize("solver", PRIVATE)
@pytest.mark.parametrize("name,value,error,match", BUDGET_CASES)
def test_private_solvers_reject_bad_budget_and_options(solver, name, value, error, match):
    fit, kwargs = PRIVATE[solver]
    with pytest.raises(error, match=match):
        fit(X0, Y0, Squared(), L1(0.1), **{**kwargs, name: value})


@pytest.mark.parametrize("solver,name,value,error,match", [
    ("dp_cd", "passes", "2", TypeError, "passes must be a real number"),
    ("dp_cd", "outer", 2.5, ValueError, "outer must be an integer, got 2.5"),
    ("dp_cd", "outer", 11, ValueError, "larger than the number of updates"),
    ("dp_cd", "averaging", "no", TypeError, "averaging must be True or False"),
    ("dp_cd", "order", "cyclic", ValueError, "order must be one of"),
    ("dp_gcd", "n_iter", 0, ValueError, "n_iter == 0, must be >= 1"),
    ("dp_gcd", "n_iter", 2.5, ValueError, "n_iter must be an integer"),
    ("dp_gcd", "rule", "gs-x", ValueError, "rule must be one of"),
    ("dp_gcd", "refresh_every", True, TypeError, "refresh_every must be"),
    ("exact", "max_epochs", 2.5, ValueError, "max_epochs must be an integer"),
    ("exact", "check_every", 0, ValueError, "check_every == 0, must be >= 1"),
    ("exact", "tol", -1.0, ValueError, "tol == -1.0, must be > 0"),
])
def test_solver_options_are_checked(solver, name, value, error, match):
    fit, kwargs = SOLVERS[solver]
    with pytest.raises(error, match=match):
        fit(X0, Y0, Squared(), L1(0.1), **{**kwargs, name: value})


def _bad_data():
    X = X0.toarray()
    unsorted = sp.csc_array(X0)
    return [
        (X * np.nan, Y0, ValueError, "X contains NaN or infinite"),
        (X, np.r_[Y0[:-1], np.inf], ValueError, "y contains NaN or infinite"),
        (X[:0], Y0[:0], ValueError, "X is empty"),
        (X, Y0[:-1], ValueError, "inconsistent numbers of samples"),
        (X.astype(str), Y0, TypeError, "X must be numeric"),
        (X * 1e-155, Y0, ValueError, "smoothness constant underflows"),
        (X * 1e160, Y0, ValueError, "its square overflows"),
        (X, Y0 * 1e160, ValueError, "the loss overflows"),
        (sp.csc_array((unsorted.data, unsorted.indices + 100, unsorted.indptr),
                      shape=unsorted.shape), Y0, ValueError, "row indices must lie"),
    ]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("case", range(9))
def test_solvers_reject_bad_data(solver, case):
    fit, kwargs = SOLVERS[solver]
    X, y, error, match = _bad_data()[case]
    with pytest.raises(error, match=match):
        fit(X, y, Squared(), L1(0.1), **kwargs)


@pytest.mark.parametrize("solver", SOLVERS)
def test_labels_outside_the_loss_domain(solver):
    fit, kwargs = SOLVERS[solver]
    with pytest.raises(ValueError, match=r"labels in \{-1, \+1\}"):
        fit(X0, Y0, Logistic(), L1(0.1), **kwargs)


@pytest.mark.parametrize("solver", SOLVERS)
def test_extreme_but_valid_scales_give_finite_output(solver):
    """The largest and smallest accepted scales run and return finite coefficients."""
    fit, kwargs = SOLVERS[solver]
    for s in (1e-139, 1e139):
        X = X0 * s
        kw = dict(kwargs)
        if "smoothness" in kw:
            kw["smoothness"] = Squared().smoothness(X)
        res = fit(X, Y0, Squared(), L1(0.1 * s), **kw)
        assert np.all(np.isfinite(res.coef))


def test_a_noise_too_small_for_an_exact_integer_grid_is_refused():
    """rint(G / g) + J must be an exact double: at epsilon = 1e300 the grid would
    need more than 2**50 points per unit of the sum (privacy would rest on
    rounded integers), so the fit is refused; 1e9 still runs on an exact grid."""
    fit, kwargs = PRIVATE["dp_cd"]
    with pytest.raises(ValueError, match="too small for a release of 20 terms"):
        fit(X0, Y0, Squared(), L1(0.1), **{**kwargs, "epsilon": 1e300})
    res = fit(X0, Y0, Squared(), L1(0.1), **{**kwargs, "epsilon": 1e9})
    assert res.info["grid_points"] * 20 <= 2 ** 50


def test_calibrate_dp_gcd_checks_its_arguments():
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        calibrate_dp_gcd("1", 1e-5, 10)
    with pytest.raises(ValueError, match="n_iter == 0"):
        calibrate_dp_gcd(1.0, 1e-5, 0)
    with pytest.raises(ValueError, match="selection must be one of"):
        calibrate_dp_gcd(1.0, 1e-5, 10, selection="gumbel")


def test_normalize_rows_is_scale_safe():
    X = np.array([[1e200, 1e200], [0.0, 0.0], [1e-200, 0.0], [3.0, 4.0]])
    want = np.array([[2 ** -0.5, 2 ** -0.5], [0, 0], [1, 0], [0.6, 0.8]])
    np.testing.assert_allclose(normalize_rows(X), want, rtol=1e-15)
    np.testing.assert_allclose(normalize_rows(sp.csr_array(X)).toarray(), want, rtol=1e-15)
    with pytest.raises(ValueError, match="norm == 0.0, must be > 0"):
        normalize_rows(X, norm=0.0)
    with pytest.raises(ValueError, match="NaN"):
        normalize_rows(X * np.nan)


def _write(path, text):
    with gzip.open(path, "wt") as f:
        f.write(text)


@pytest.mark.parametrize("data, labels, match", [
    ("", "", "is empty"),
    ("1 5\n2\n", "1\n", "1 labels for 2 rows"),
    ("1 5\n2\n", "1\n0\n", "labels must be -1 or \\+1"),
    ("1 100001\n2\n", "1\n-1\n", "feature indices"),
])
def test_load_dorothea_rejects_empty_and_mismatched_files(tmp_path, data, labels, match):
    folder = tmp_path / "dorothea"
    folder.mkdir()
    _write(folder / "dorothea_train.data.gz", data)
    _write(folder / "dorothea_train.labels.gz", labels)
    with pytest.raises(ValueError, match=match):
        load_dorothea(data_home=tmp_path)


def test_load_dorothea_reads_a_small_file(tmp_path):
    folder = tmp_path / "dorothea"
    folder.mkdir()
    _write(folder / "dorothea_train.labels.gz", "1\n-1\n")
    _write(folder / "dorothea_train.data.gz", "1 5\n2\n")
    X, y = load_dorothea(data_home=tmp_path)
    assert X.shape == (2, 100_000) and X.nnz == 3 and y.tolist() == [1.0, -1.0]


# DP-SGD and DP-SCD: the same bad data and budgets (DP-SCD's penalty must be L2)
BATCH_SOLVERS = {
    "dp_sgd": (dp_sgd, dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0, global_smoothness=1.0,
                            random_state=0), L1(0.1)),
    "dp_scd": (dp_scd, dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0, batch_size=2,
                            random_state=0), L2(0.1)),
}
BATCH_BUDGET_CASES = [case for case in BUDGET_CASES
                      if case[0] in ("epsilon", "delta", "clip", "random_state", "trace")]


@pytest.mark.parametrize("solver", BATCH_SOLVERS)
@pytest.mark.parametrize("case", range(9))
def test_batch_solvers_reject_bad_data(solver, case):
    fit, kwargs, penalty = BATCH_SOLVERS[solver]
    X, y, error, match = _bad_data()[case]
    with pytest.raises(error, match=match):
        fit(X, y, Squared(), penalty, **kwargs)


@pytest.mark.parametrize("solver", BATCH_SOLVERS)
@pytest.mark.parametrize("name,value,error,match", BATCH_BUDGET_CASES)
def test_batch_solvers_reject_bad_budget(solver, name, value, error, match):
    fit, kwargs, penalty = BATCH_SOLVERS[solver]
    with pytest.raises(error, match=match):
        fit(X0, Y0, Squared(), penalty, **{**kwargs, name: value})


@pytest.mark.parametrize("solver", BATCH_SOLVERS)
def test_batch_solvers_labels_outside_the_loss_domain(solver):
    fit, kwargs, penalty = BATCH_SOLVERS[solver]
    with pytest.raises(ValueError, match=r"labels in \{-1, \+1\}"):
        fit(X0, Y0, Logistic(), penalty, **kwargs)
