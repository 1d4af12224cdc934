"""Preprocessing as the papers describe it, with its privacy cost.

The DP-CD paper (Mangold et al., ICML 2022) runs each real data set raw (its
"imbalanced" problems) and standardized (its "balanced" ones, Sections 5.3 and
6.2); the DP-GCD paper standardizes too.  Both treat standardization as public
preprocessing and do not count it in the privacy budget; the DP-CD paper says
so (its footnote 3: "the privacy cost of standardization is rarely accounted
for").  It is not free: see :func:`standardize`.
"""
import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from .._validation import check_real, check_vector


def normalize_rows(X, norm=1.0):
    """Scale every row to Euclidean norm ``norm`` (zero rows stay zero).

    Each row is scaled by a function of that row alone, so a record's change
    changes only its own row: the transform preserves the neighbouring relation
    and costs no privacy budget.  Scale-safe: each row is first divided by its
    largest ``|X_ij|``, so no squared norm overflows or underflows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    norm : float, default=1.0
        The rows' norm, > 0.

    Returns
    -------
    ndarray, or scipy.sparse.csc_array when X is sparse
    """
    norm = check_real(norm, "norm")
    sparse = sp.issparse(X)
    X = check_array(X, accept_sparse="csr", dtype=np.float64, copy=True)
    if sparse:
        biggest = abs(X).max(axis=1).toarray().ravel()
        X = sp.diags_array(_inverse(biggest)) @ X
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        return sp.csc_array(sp.diags_array(_inverse(norms) * norm) @ X)
    X *= _inverse(np.abs(X).max(axis=1, initial=0.0))[:, None]
    X *= (_inverse(np.linalg.norm(X, axis=1)) * norm)[:, None]
    return X


def _inverse(values):
    """1 / values, 0 where values are 0."""
    return np.divide(1.0, values, out=np.zeros_like(values), where=values > 0)


def standardize(X, *, mean=None, scale=None):
    """Centre and scale every column of a dense X: ``(X - mean) / scale``.

    **Privacy cost.**  With the defaults, ``mean`` and ``scale`` are the
    data's own column means and standard deviations.  That is not private:
    these 2p statistics depend on every record, so changing one record moves
    every row of the standardized data, and the solver's guarantee (stated for
    neighbouring data sets that differ in one row) no longer covers the raw
    data.  The pipeline "standardize on the data, then train privately" has no
    finite epsilon unless the statistics themselves are released privately,
    and the papers (DP-CD, Sections 5.3 and 6.2; DP-GCD, Section 5) do not
    count them.  The private ways: pass a ``mean`` and ``scale`` that do not
    depend on the data (domain knowledge, a public data set, the feature's
    known range), or estimate them with a DP mechanism (for features bounded
    in ``[a, b]``, each column mean has sensitivity ``(b - a) / n`` under
    replace-one) and add that release to the budget by composition.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Dense.
    mean : array-like of shape (n_features,), optional
        The centres; default: the columns' means (not private).
    scale : array-like of shape (n_features,), optional
        The scales, > 0; default: the columns' standard deviations (not
        private; a constant column gets scale 1).

    Returns
    -------
    ndarray of shape (n_samples, n_features)
    """
    X = check_array(X, dtype=np.float64)
    p = X.shape[1]
    if mean is None:
        mean = X.mean(axis=0)
    else:
        mean = check_vector(mean, "mean", p)
    if scale is None:
        scale = X.std(axis=0)
        scale[scale == 0] = 1.0
    else:
        scale = check_vector(scale, "scale", p)
        if np.any(scale <= 0):
            raise ValueError("scale must be positive in every column")
    return (X - mean) / scale

