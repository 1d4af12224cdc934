"""Input checks and canonicalisation, done once at the Python boundary.

Kernels receive a canonical CSC matrix: float64 data, sorted indices without
duplicates, ``indices`` and ``indptr`` of one integer dtype (int32 or int64),
C-contiguous arrays.  Nothing is checked inside the loops.
"""
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = ["check_X", "check_y", "check_X_y", "check_random_state", "check_csc_structure"]


def _csc_of(X):
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got a sparse array of ndim {X.ndim}")
        return sp.csc_array(X)  # converts COO/CSR/... once; no copy if CSC
    X = np.asarray(X)
    if X.dtype == object or not (np.issubdtype(X.dtype, np.number)
                                 or X.dtype == bool):
        raise TypeError(f"X must be numeric, got dtype {X.dtype}")
    if np.iscomplexobj(X):
        raise TypeError("X must be real, got complex values")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got an array of shape {X.shape}")
    return sp.csc_array(X.astype(np.float64, copy=False))


def check_csc_structure(Xc):
    """Reject a CSC structure scipy accepted without a full check: the kernels
    index the margins by row without bounds checks."""
    n, p = Xc.shape
    indptr, indices = Xc.indptr, Xc.indices
    if (indptr.shape != (p + 1,) or indptr[0] != 0
            or indptr[-1] != indices.shape[0] or indices.shape[0] != Xc.data.shape[0]):
        raise ValueError("X is not a consistent CSC matrix: indptr must hold "
                         "n_features + 1 offsets from 0 to the number of nonzeros")
    if np.any(np.diff(indptr) < 0):
        raise ValueError("X is not a consistent CSC matrix: indptr decreases")
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise ValueError(f"X's row indices must lie in [0, {n}), got values in "
                         f"[{indices.min()}, {indices.max()}]")


def check_X(X):
    """Return X as a canonical CSC array ready for the kernels.

    Parameters
    ----------
    X : sparse matrix/array or array-like of shape (n_samples, n_features)
        Any scipy.sparse format (converted to CSC once) or a dense array
        (converted to CSC once; the cost is one pass over the entries).

    Returns
    -------
    X : scipy.sparse.csc_array
        float64 data, sorted unique indices, int32 or int64 index arrays of
        the same dtype.  The caller's object is never modified: duplicates are
        summed and indices sorted on a copy.

    Raises
    ------
    ValueError
        Empty matrix, wrong dimension, NaN or infinite entries, a CSC structure
        out of bounds (row indices outside [0, n_samples), inconsistent indptr).
    TypeError
        Non-numeric or complex data.
    """
    Xc = _csc_of(X)
    n, p = Xc.shape
    if n == 0 or p == 0:
        raise ValueError(f"X is empty: shape {Xc.shape}")
    check_csc_structure(Xc)
    if np.iscomplexobj(Xc.data):
        raise TypeError("X must be real, got complex values")
    if Xc.data.dtype != np.float64:
        if not (np.issubdtype(Xc.data.dtype, np.number) or Xc.data.dtype == bool):
            raise TypeError(f"X must be numeric, got dtype {Xc.data.dtype}")
        Xc = Xc.astype(np.float64)  # exact for float32 and small ints
    if not (Xc.has_canonical_format):
        Xc = Xc.copy()
        Xc.sum_duplicates()  # sorts indices too
    if not np.all(np.isfinite(Xc.data)):
        raise ValueError("X contains NaN or infinite values")
    idx_dtype = np.int64 if (Xc.indices.dtype == np.int64
                             or Xc.indptr.dtype == np.int64) else np.int32
    if Xc.indices.dtype != idx_dtype or Xc.indptr.dtype != idx_dtype:
        Xc = sp.csc_array((Xc.data, Xc.indices.astype(idx_dtype),
                           Xc.indptr.astype(idx_dtype)), shape=Xc.shape)
    if not (Xc.data.flags.c_contiguous and Xc.indices.flags.c_contiguous
            and Xc.indptr.flags.c_contiguous):
        Xc = sp.csc_array((np.ascontiguousarray(Xc.data),
                           np.ascontiguousarray(Xc.indices),
                           np.ascontiguousarray(Xc.indptr)), shape=Xc.shape)
    return Xc


def check_y(y, n_samples=None):
    """Return y as a finite, contiguous float64 1-D array of length n_samples."""
    y = np.asarray(y)
    if y.dtype == object or np.iscomplexobj(y):
        raise TypeError(f"y must be real numbers, got dtype {y.dtype}")
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got an array of shape {y.shape}")
    if y.size == 0:
        raise ValueError("y is empty")
    y = np.ascontiguousarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(
            f"X and y have inconsistent numbers of samples: X has {n_samples} "
            f"rows, y has {y.shape[0]} entries")
    return y


def check_X_y(X, y, datafit=None):
    """Validate X and y together (and y against the datafit's label domain)."""
    X = check_X(X)
    y = check_y(y, X.shape[0])
    if datafit is not None:
        datafit.check_y(y)
    return X, y


def check_random_state(random_state):
    """A numpy Generator from None, an int, a SeedSequence or a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(
            random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence or a "
        f"numpy Generator, got {type(random_state).__name__}")
