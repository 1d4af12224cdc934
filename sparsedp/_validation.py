"""Input checks and canonicalisation, done once at the Python boundary.

Every public function validates its arguments here, so that the same mistake
gets the same message everywhere:

- data: :func:`check_X` (canonical CSC for the kernels: float64 data, sorted
  indices without duplicates, ``indices`` and ``indptr`` of one integer dtype,
  C-contiguous arrays, entries of a scale the kernels compute with), :func:`check_y`,
  :func:`check_X_y`.  The matrix :func:`check_X` returns is its own new object,
  marked as checked (:func:`mark_checked`): given to :func:`check_X` again (an
  estimator's one check, then each solver call) it is returned as is, in O(1);
- scalars: :func:`check_real`, :func:`check_integer`, :func:`check_bool`,
  :func:`check_option`, :func:`check_privacy_budget` (built on scikit-learn's
  ``check_scalar``; booleans and strings are never numbers here);
- collections: :func:`check_vector` (one finite value per feature),
  :func:`check_instances` (a non-empty list of objects of one class);
- randomness: :func:`check_random_state` (a numpy ``Generator``).

Nothing is checked inside the loops.
"""
import math
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_scalar

__all__ = ["check_X", "mark_checked", "check_y", "check_X_y", "check_random_state", "check_csc_structure",
           "check_real", "check_integer", "check_bool", "check_option",
           "check_privacy_budget", "check_vector", "check_instances", "SCALE_LIMIT"]

# Largest |X_ij|, and smallest largest-|X_ij| of a nonzero column, that the kernels
# accept: squares, products with labels and sums of n of them stay normal floats
# (1e140^2 = 1e280; 1e-140^2 = 1e-280), so no smoothness constant, step or
# gradient underflows to 0 or overflows to inf.
SCALE_LIMIT = 1e140


def _reject_non_number(value, name, target):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, target):
        kind = "an integer" if target is numbers.Integral else "a real number"
        raise TypeError(f"{name} must be {kind}, got {value!r} "
                        f"({type(value).__name__})")


def check_real(value, name, *, low=0.0, high=math.inf, include_low=False,
               include_high=False, allow_inf=False):
    """Return ``value`` as a float after checking its type and range.

    Parameters
    ----------
    value : object
    name : str
        Used in the messages.
    low, high : float
        Bounds of the accepted interval.
    include_low, include_high : bool
        Whether each bound is accepted.
    allow_inf : bool
        Accept ``+inf`` (when ``high`` is ``inf``).

    Raises
    ------
    TypeError
        A bool, a string or any non-real value.
    ValueError
        NaN, an infinite value (unless allowed) or a value outside the interval.
    """
    _reject_non_number(value, name, numbers.Real)
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got nan")
    if math.isinf(value) and not (allow_inf and value > 0):
        raise ValueError(f"{name} must be finite, got {value!r}")
    bounds = {(True, True): "both", (True, False): "left", (False, True): "right",
              (False, False): "neither"}[include_low, include_high]
    check_scalar(value, name, numbers.Real, min_val=low,
                 max_val=None if math.isinf(high) else high, include_boundaries=bounds)
    return value


def check_integer(value, name, *, low=1, high=None):
    """Return ``value`` as an int ``>= low`` (and ``<= high``).

    A whole float (``1e3``) is accepted; a bool, a string (TypeError) or a
    fractional, infinite or NaN float (ValueError) is not.
    """
    _reject_non_number(value, name, numbers.Real)
    if not isinstance(value, numbers.Integral):
        if not (math.isfinite(value) and float(value).is_integer()):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        value = int(value)
    check_scalar(int(value), name, numbers.Integral, min_val=low, max_val=high)
    return int(value)


def check_bool(value, name):
    """Return ``value`` as a bool; only ``True``, ``False`` and numpy bools pass."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_option(value, name, options):
    """Return ``value`` if it is one of ``options`` (strings), else a ValueError."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {value!r}")
    return value


def check_privacy_budget(epsilon, delta):
    """Validate (epsilon, delta): epsilon > 0 (``inf`` allowed), delta in (0, 1)."""
    epsilon = check_real(epsilon, "epsilon", allow_inf=True)
    delta = check_real(delta, "delta", high=1.0)
    return epsilon, delta


def check_vector(values, name, length):
    """``values`` as a new finite float64 vector of shape ``(length,)``.

    Parameters
    ----------
    values : array-like
    name : str
        Used in the messages.
    length : int
        The required length (typically ``n_features``).

    Returns
    -------
    ndarray of shape (length,)
        A copy: the caller may write to it.

    Raises
    ------
    ValueError
        Another shape, or a NaN or infinite entry.
    """
    vector = np.array(values, dtype=np.float64)
    if vector.shape != (length,):
        raise ValueError(f"{name} must have shape ({length},), got {vector.shape}")
    if not np.all(np.isfinite(vector)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return vector


def check_instances(values, cls, name, *, kind, empty):
    """``values`` as a non-empty list of ``cls`` instances.

    Parameters
    ----------
    values : iterable
    cls : type
    name : str
        The argument's name, used in the messages (``"ledgers[2] must be ..."``).
    kind : str
        What the messages call an instance of ``cls``.
    empty : str
        The message when ``values`` is empty.

    Returns
    -------
    list

    Raises
    ------
    ValueError
        ``values`` is empty.
    TypeError
        An element is not a ``cls``.
    """
    values = list(values)
    if not values:
        raise ValueError(empty)
    for k, value in enumerate(values):
        if not isinstance(value, cls):
            raise TypeError(f"{name}[{k}] must be a {kind}, got {type(value).__name__}")
    return values


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


#: The attribute :func:`mark_checked` sets on the matrices :func:`check_X` made
CHECKED = "_sparsedp_checked"


def mark_checked(Xc):
    """Mark a CSC array as made by :func:`check_X` (or built from one with the
    same guarantees); return it.  Only for arrays this package created and
    does not modify afterwards: :func:`check_X` returns a marked array as is."""
    setattr(Xc, CHECKED, True)
    return Xc


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
        summed and indices sorted on a copy.  A new object (sharing the
        caller's arrays when they need no change), marked as checked: passed
        to :func:`check_X` again, it is returned at once.

    Raises
    ------
    ValueError
        Empty matrix, wrong dimension, NaN or infinite entries, a CSC structure
        out of bounds (row indices outside [0, n_samples), inconsistent indptr).
    TypeError
        Non-numeric or complex data.
    """
    if getattr(X, CHECKED, False) is True and sp.issparse(X) and X.format == "csc":
        return X  # made by check_X: validated once
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
    _check_scale(Xc)
    idx_dtype = np.int64 if (Xc.indices.dtype == np.int64
                             or Xc.indptr.dtype == np.int64) else np.int32
    if Xc.indices.dtype != idx_dtype or Xc.indptr.dtype != idx_dtype:
        Xc = sp.csc_array((Xc.data, Xc.indices.astype(idx_dtype),
                           Xc.indptr.astype(idx_dtype)), shape=Xc.shape)
        Xc.has_canonical_format = True
    if not (Xc.data.flags.c_contiguous and Xc.indices.flags.c_contiguous
            and Xc.indptr.flags.c_contiguous):
        Xc = sp.csc_array((np.ascontiguousarray(Xc.data),
                           np.ascontiguousarray(Xc.indices),
                           np.ascontiguousarray(Xc.indptr)), shape=Xc.shape)
        Xc.has_canonical_format = True  # the same indices, contiguous
    return mark_checked(Xc)


def _check_scale(Xc):
    """Reject entries the kernels cannot square and sum without under/overflow."""
    if not Xc.nnz:
        return
    magnitude = np.abs(Xc.data)
    big = magnitude.max()
    if big > SCALE_LIMIT:
        raise ValueError(
            f"X has an entry of magnitude {big:.3g} > {SCALE_LIMIT:g}: its square "
            "overflows in the smoothness constants and gradients; rescale X")
    if magnitude.min() >= 1.0 / SCALE_LIMIT:
        return  # the common case: one pass over the entries
    starts = Xc.indptr[:-1][np.diff(Xc.indptr) > 0]
    col_max = np.maximum.reduceat(magnitude, starts)
    live = col_max[col_max > 0]
    if live.size and live.min() < 1.0 / SCALE_LIMIT:
        raise ValueError(
            f"X has a column whose largest entry is {live.min():.3g} < "
            f"{1.0 / SCALE_LIMIT:g}: its smoothness constant underflows; rescale X "
            "or drop the column")


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
    if y.size and np.abs(y).max() > SCALE_LIMIT:
        raise ValueError(f"y has an entry of magnitude {np.abs(y).max():.3g} > "
                         f"{SCALE_LIMIT:g}: the loss overflows; rescale y")
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
    if isinstance(random_state, (bool, np.bool_)):  # an Integral, but never a seed here
        raise TypeError(f"random_state must be None, an int, a numpy SeedSequence or a "
                        f"numpy Generator, got the bool {random_state!r}")
    if isinstance(random_state, numbers.Integral) and random_state < 0:
        raise ValueError(f"random_state must be a non-negative int, got {random_state!r}")
    if random_state is None or isinstance(
            random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a numpy SeedSequence or a "
        f"numpy Generator, got {type(random_state).__name__}")
