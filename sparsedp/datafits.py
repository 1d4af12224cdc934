"""Datafits: the per-sample losses of F(w) = (1/n) sum_i loss(x_i . w, y_i) + penalty(w).

A datafit works on the margin ``z = X @ w``.  It gives the loss, its
derivative in the margin, the per-sample smoothness ``beta`` (a bound on the
second derivative, so that the coordinate-wise smoothness constants are
``M_j = (1/n) sum_i beta * X_ij^2``) and a bound on ``|loss'|`` (so that the
per-sample coordinate gradient is bounded by ``bound * max_i |X_ij|``).

The compiled kernels branch on the class's declared ``kernel_id``
(:func:`sparsedp._kernels.kernel_id`: a subclass that declares none is refused
by name); these classes are the Python side of the same definitions (vectorised numpy), used for objective values,
checks and the pure-Python rules.
"""
import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ._kernels import KernelId

__all__ = ["Hinge", "Logistic", "Squared", "SquaredHinge"]


class _Datafit:
    #: the compiled kernel of this loss (each concrete class declares its own)
    kernel_id = None
    #: per-sample smoothness: sup of loss''(z, y)
    beta = np.nan
    #: sup over z, y of abs(loss'(z, y)) (np.inf if unbounded)
    derivative_bound = np.inf
    #: whether the kernels hold its closed-form dual coordinate step (DP-SCD's)
    dual = False

    @property
    def smooth(self):
        """Whether ``beta`` is finite (what the primal solvers need)."""
        return bool(np.isfinite(self.beta))

    def loss(self, z, y):
        """Per-sample loss at margins ``z``."""
        raise NotImplementedError

    def derivative(self, z, y):
        """Per-sample derivative of the loss in the margin."""
        raise NotImplementedError

    def value(self, z, y):
        """Mean loss (1/n) sum_i loss(z_i, y_i)."""
        return float(np.mean(self.loss(z, y)))

    def gradient(self, X, z, y):
        """Gradient of the mean loss in w: X.T @ loss'(z, y) / n."""
        return X.T @ self.derivative(z, y) / X.shape[0]

    def smoothness(self, X):
        """Coordinate-wise smoothness M_j = (1/n) sum_i beta X_ij^2.

        Computed from the data: not private.  Private solvers either take
        public constants, spend budget on them, or warn.
        """
        if sp.issparse(X):  # O(nnz) on canonical CSC, no squared copy of X
            X = sp.csc_array(X)
            if not X.has_canonical_format:  # duplicates add up before squaring
                X = X.copy()
                X.sum_duplicates()
            full = np.diff(X.indptr) > 0  # reduceat over the non-empty columns
            sq = np.zeros(X.shape[1])
            if X.nnz:
                with np.errstate(over="ignore"):  # beyond 1e154: inf, as it is
                    sq[full] = np.add.reduceat(X.data ** 2, X.indptr[:-1][full])
        else:
            with np.errstate(over="ignore"):
                sq = (np.asarray(X, dtype=float) ** 2).sum(axis=0)
        return self.beta * sq / X.shape[0]

    def check_y(self, y):
        """Raise ValueError if a label lies outside the loss's domain."""

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


def _check_binary_labels(self, y):
    """Raise ValueError unless every label is -1 or +1 (the classification losses)."""
    y = np.asarray(y)
    bad = ~np.isin(y, (-1.0, 1.0))
    if bad.any():
        values = np.unique(y[bad])[:5]
        raise ValueError(
            f"{type(self).__name__} datafit needs labels in {{-1, +1}}; got "
            f"{values.tolist()}{' ...' if bad.sum() > 5 else ''}")


class Squared(_Datafit):
    """Squared loss ``loss(z, y) = (z - y)^2`` (the papers' LASSO scaling).

    Note the absence of scikit-learn's 1/2: ``F`` with ``L1(alpha)`` equals
    twice scikit-learn's Lasso objective with ``alpha / 2``.  Smoothness
    ``beta = 2``; the derivative ``2 (z - y)`` is unbounded, so private solvers
    need clipping.
    """

    kernel_id = KernelId.SQUARED
    dual = True
    beta = 2.0
    derivative_bound = np.inf

    def loss(self, z, y):
        return (np.asarray(z) - y) ** 2

    def derivative(self, z, y):
        return 2.0 * (np.asarray(z) - y)


class Logistic(_Datafit):
    """Logistic loss ``loss(z, y) = log(1 + exp(-y z))``, labels ``y`` in {-1, +1}.

    Smoothness ``beta = 1/4``; ``|loss'| <= 1``.  Evaluated without overflow
    (``logaddexp``) for any margin.
    """

    kernel_id = KernelId.LOGISTIC
    dual = True
    beta = 0.25
    derivative_bound = 1.0

    def loss(self, z, y):
        return np.logaddexp(0.0, -y * np.asarray(z))

    def derivative(self, z, y):
        return -y * expit(-y * np.asarray(z))

    check_y = _check_binary_labels


class SquaredHinge(_Datafit):
    """Squared hinge loss ``loss(z, y) = max(0, 1 - y z)^2``, labels in {-1, +1}.

    Smooth (``beta = 2``), for the primal solvers (a linear SVM with squared
    hinge, scikit-learn's ``LinearSVC(loss="squared_hinge")``); the derivative
    ``-2 y max(0, 1 - y z)`` is unbounded, so private solvers need clipping.
    """

    kernel_id = KernelId.SQUARED_HINGE
    beta = 2.0
    derivative_bound = np.inf
    check_y = _check_binary_labels

    def loss(self, z, y):
        return np.maximum(0.0, 1.0 - y * np.asarray(z)) ** 2

    def derivative(self, z, y):
        return -2.0 * y * np.maximum(0.0, 1.0 - y * np.asarray(z))


class Hinge(_Datafit):
    """Hinge loss ``loss(z, y) = max(0, 1 - y z)``, labels in {-1, +1}.

    Not smooth: for dual solvers (DP-SCD); the primal solvers (exact, DP-CD,
    DP-GCD) refuse it with a TypeError.  ``derivative`` is the subgradient
    ``-y 1[y z < 1]``.
    """

    kernel_id = KernelId.HINGE
    dual = True
    beta = np.inf
    derivative_bound = 1.0
    check_y = _check_binary_labels

    def loss(self, z, y):
        return np.maximum(0.0, 1.0 - y * np.asarray(z))

    def derivative(self, z, y):
        return np.where(y * np.asarray(z) < 1.0, -np.asarray(y, dtype=float), 0.0)
