"""Bad input gets a clear error; odd-but-valid input gets canonicalised once."""
import numpy as np
import pytest
import scipy.sparse as sp

from sparsedp._validation import check_X, check_random_state
from sparsedp.datafits import Logistic, Squared
from sparsedp.penalties import L1
from sparsedp.solvers import exact

from problems import make_sparse_problem


def test_nan_and_inf_in_X_are_rejected():
    X, y = make_sparse_problem()
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb.data[3] = bad
        with pytest.raises(ValueError, match="X contains NaN or infinite"):
            exact(Xb, y, Squared())
        with pytest.raises(ValueError, match="X contains NaN or infinite"):
            exact(Xb.toarray(), y, Squared())


def test_nan_in_y_is_rejected():
    X, y = make_sparse_problem()
    y = y.copy()
    y[0] = np.nan
    with pytest.raises(ValueError, match="y contains NaN or infinite"):
        exact(X, y, Squared())


def test_shape_mismatch_is_rejected():
    X, y = make_sparse_problem()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        exact(X, y[:-1], Squared())
    with pytest.raises(ValueError, match="y must be 1-D"):
        exact(X, y[:, None], Squared())
    with pytest.raises(ValueError, match="X must be 2-D"):
        exact(np.ones(5), np.ones(5), Squared())


def test_empty_matrix_is_rejected():
    with pytest.raises(ValueError, match="X is empty"):
        exact(sp.csc_array((0, 5)), np.zeros(0), Squared())
    with pytest.raises(ValueError, match="X is empty"):
        exact(np.zeros((4, 0)), np.zeros(4), Squared())


def test_logistic_labels_are_checked():
    X, y = make_sparse_problem(logistic=True)
    with pytest.raises(ValueError, match=r"labels in \{-1, \+1\}"):
        exact(X, (y > 0).astype(float), Logistic())


def test_bad_datafit_penalty_and_dtypes():
    X, y = make_sparse_problem()
    with pytest.raises(TypeError, match="datafit must be"):
        exact(X, y, "squared")
    with pytest.raises(TypeError, match="penalty must be"):
        exact(X, y, Squared(), 0.1)
    with pytest.raises(TypeError, match="X must be numeric"):
        exact(np.array([["a", "b"]]), np.ones(1), Squared())
    with pytest.raises(TypeError, match="X must be real"):
        exact(np.ones((3, 2)) * 1j, np.ones(3), Squared())


def test_non_canonical_csc_is_canonicalised_without_touching_the_input():
    # column 0 holds rows (2, 0, 2): unsorted with a duplicate (summed by scipy's rules)
    data = np.array([1.0, 2.0, 3.0, 4.0])
    indices = np.array([2, 0, 2, 1], dtype=np.int32)
    indptr = np.array([0, 3, 4], dtype=np.int32)
    X = sp.csc_array((data, indices, indptr), shape=(3, 2))
    assert not X.has_canonical_format
    Xc = check_X(X)
    assert Xc.has_canonical_format
    np.testing.assert_array_equal(Xc.toarray(), [[2, 0], [0, 4], [4, 0]])
    np.testing.assert_array_equal(X.indices, indices)  # the user's object is untouched
    y = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(exact(X, y, Squared(), L1(0.01)).coef,
                               exact(X.toarray(), y, Squared(), L1(0.01)).coef)


@pytest.mark.parametrize("indices,indptr,match", [
    ([0, 5, 1], [0, 2, 3], "row indices must lie in \\[0, 3\\), got values in \\[0, 5\\]"),
    ([0, -1, 1], [0, 2, 3], "row indices must lie in \\[0, 3\\)"),
    ([0, 1, 1], [0, 3, 2], "indptr decreases"),
])
def test_csc_structure_out_of_bounds_is_rejected(indices, indptr, match):
    """scipy builds these without a full check; a kernel would write out of bounds."""
    X = sp.csc_array((np.ones(3), np.array(indices, dtype=np.int32),
                      np.array(indptr, dtype=np.int32)), shape=(3, 2))
    y = np.ones(3)
    with pytest.raises(ValueError, match=match):
        check_X(X)
    with pytest.raises(ValueError, match=match):
        exact(X, y, Squared(), L1(0.01))


def test_int64_indices_and_float32_data_are_supported():
    X, y = make_sparse_problem(index_dtype=np.int64)
    Xc = check_X(X)
    assert Xc.indices.dtype == np.int64 and Xc.indptr.dtype == np.int64
    X32 = X.astype(np.float32)
    Xf = check_X(X32)
    assert Xf.dtype == np.float64
    np.testing.assert_array_equal(Xf.data, X32.data.astype(np.float64))
    ref = exact(X32.astype(np.float64), y, Squared(), L1(0.01)).coef
    np.testing.assert_array_equal(exact(X32, y, Squared(), L1(0.01)).coef, ref)


def test_random_state():
    assert isinstance(check_random_state(3), np.random.Generator)
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    with pytest.raises(TypeError, match="random_state must be"):
        check_random_state("seed")
