"""The papers' synthetic problems, seeded: each returns ``(X, y, w_true)``.

* ``log1`` / ``log2`` (:func:`make_quasi_sparse`) and ``square``
  (:func:`make_square`): DP-GCD paper (Mangold, Bellet, Salmon, Tommasi,
  AISTATS 2023), Section 5, "Datasets", and Table 1.
* Sparse LASSO (:func:`make_sparse_lasso`): DP-CD paper (Mangold, Bellet,
  Salmon, Tommasi, ICML 2022), Section 6.
* :func:`make_dorothea_like`: a sparse binary design of dorothea's shape and
  density (the real one: :func:`load_dorothea`), at any size.

The papers do not state the noise level of their labels; the defaults here
are ours, and documented.
"""
import numpy as np
import scipy.sparse as sp

from .._validation import check_integer, check_option, check_real
from ._loaders import canonical_csc

_TASKS = ("classification", "regression")


def make_sparse_lasso(n_samples=1000, n_features=1000, n_informative=10,
                      noise=0.1, random_state=0, weights="normal"):
    """The DP-CD paper's "Sparse LASSO" problem: Gaussian design, a few active features.

    DP-CD paper (Mangold et al., ICML 2022), Section 6: n = 1,000 records,
    p = 1,000 independent standard normal features, labels "a noisy sparse
    linear combination of a subset of 10 active features" (the defaults).  The
    paper gives neither the law of the active weights nor the noise level:
    here ``y = X @ w_true + noise * N(0, 1)``, with ``w_true`` having
    ``n_informative`` nonzero entries at random positions, drawn by
    ``weights``: ``"normal"`` N(0, 1); ``"sign"`` +-1 (equal magnitudes);
    ``"uniform"`` a random sign times U[0.5, 1.5].

    The draws, in order, from ``numpy.random.default_rng(random_state)``: X,
    the support, the weights, the noise.

    Parameters
    ----------
    n_samples, n_features, n_informative : int, default=1000, 1000, 10
    noise : float, default=0.1
        Standard deviation of the label noise.
    random_state : int, numpy Generator or None, default=0
    weights : {"normal", "sign", "uniform"}, default="normal"

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    w_true : ndarray of shape (n_features,)
    """
    if weights not in ("normal", "sign", "uniform"):
        raise ValueError(f"weights must be 'normal', 'sign' or 'uniform', got {weights!r}")
    n_samples = check_integer(n_samples, "n_samples")
    n_features = check_integer(n_features, "n_features")
    n_informative = check_integer(n_informative, "n_informative", low=0, high=n_features)
    noise = check_real(noise, "noise", include_low=True)
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((n_samples, n_features))
    w_true = np.zeros(n_features)
    support = rng.choice(n_features, n_informative, replace=False)
    if weights == "normal":
        w_true[support] = rng.standard_normal(n_informative)
    else:
        signs = rng.choice([-1.0, 1.0], n_informative)
        w_true[support] = signs if weights == "sign" else \
            signs * rng.uniform(0.5, 1.5, n_informative)
    y = X @ w_true + noise * rng.standard_normal(n_samples)
    return X, y, w_true


def make_quasi_sparse(n_samples=1000, n_features=100, *, sigma=1.0, n_nonzero=None,
                      noise=1.0, task="classification", random_state=0):
    """The DP-GCD paper's ``log1`` (``sigma=1``) and ``log2`` (``sigma=2``) problems.

    DP-GCD paper (Mangold et al., AISTATS 2023), Section 5, "Datasets": a
    1,000 x 100 design with unit-variance, normally distributed columns;
    ``w_true`` drawn from a log-normal law of parameters mu = 0 and sigma = 1
    (``log1``) or 2 (``log2``), which makes it quasi-sparse (a few entries
    dominate: the larger sigma, the more); labels from ``X @ w_true + noise``.
    The paper fits these with the logistic loss (its Table 4), so the default
    ``task="classification"`` returns the sign of ``X @ w_true + noise``
    (balanced: the design is symmetric); ``task="regression"`` returns the
    real values.  The noise level is not given in the paper: ``noise`` is its
    standard deviation here.

    With ``n_nonzero`` set, only that many entries (at random positions) are
    nonzero: see :func:`make_square`.

    The draws, in order, from ``numpy.random.default_rng(random_state)``: X,
    the support (only when ``n_nonzero`` is set), the log-normal weights, the
    noise.

    Parameters
    ----------
    n_samples, n_features : int, default=1000, 100
    sigma : float, default=1.0
        The log-normal's sigma (1: ``log1``, 2: ``log2``).
    n_nonzero : int, optional
        Nonzero entries of ``w_true`` (default: all).
    noise : float, default=1.0
        Standard deviation of the Gaussian noise added to ``X @ w_true``.
    task : {"classification", "regression"}, default="classification"
    random_state : int, numpy Generator or None, default=0

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels in {-1.0, +1.0} (classification) or real (regression).
    w_true : ndarray of shape (n_features,)
        Nonnegative.
    """
    n_samples = check_integer(n_samples, "n_samples")
    n_features = check_integer(n_features, "n_features")
    sigma = check_real(sigma, "sigma")
    noise = check_real(noise, "noise", include_low=True)
    task = check_option(task, "task", _TASKS)
    if n_nonzero is not None:
        n_nonzero = check_integer(n_nonzero, "n_nonzero", low=0, high=n_features)
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((n_samples, n_features))
    w_true = np.zeros(n_features)
    support = (np.arange(n_features) if n_nonzero is None
               else rng.choice(n_features, n_nonzero, replace=False))
    w_true[support] = rng.lognormal(0.0, sigma, support.size)
    z = X @ w_true + noise * rng.standard_normal(n_samples)
    return X, (z if task == "regression" else np.where(z >= 0.0, 1.0, -1.0)), w_true


def make_square(n_samples=1000, n_features=1000, n_nonzero=10, *, sigma=1.0, noise=1.0,
                random_state=0):
    """The DP-GCD paper's ``square`` problem: 1,000 x 1,000, 10 nonzero true weights.

    DP-GCD paper (Mangold et al., AISTATS 2023), Section 5, "Datasets": "generated
    similarly" to ``log1`` (unit-variance normal design, log-normal weights, here
    of sigma 1), with X of 1,000 x 1,000 and ``w_true`` having only 10 nonzero
    values; the paper fits it with the squared loss and an L1 penalty (its
    Table 4), so the labels are real: ``y = X @ w_true + noise * N(0, 1)``.
    It is :func:`make_quasi_sparse` with ``n_nonzero`` and
    ``task="regression"``, and the same draws.

    Parameters
    ----------
    n_samples, n_features, n_nonzero : int, default=1000, 1000, 10
    sigma : float, default=1.0
        The log-normal's sigma for the nonzero weights.
    noise : float, default=1.0
        Standard deviation of the label noise.
    random_state : int, numpy Generator or None, default=0

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    w_true : ndarray of shape (n_features,)
        ``n_nonzero`` positive entries.
    """
    return make_quasi_sparse(n_samples, n_features, sigma=sigma, n_nonzero=n_nonzero,
                             noise=noise, task="regression", random_state=random_state)


def make_dorothea_like(n_samples=800, n_features=100_000, density=0.0091, n_informative=50,
                       *, noise=0.1, task="classification", positive_fraction=0.5,
                       column_spread=0.0, random_state=0):
    """A sparse binary design of dorothea's shape and density, at any size.

    ``X`` has ``round(density * n_samples * n_features)`` entries equal to 1 at
    uniformly random positions (dorothea's train split: 800 x 100,000, density
    0.91 %, the defaults); ``w_true`` has ``n_informative`` N(0, 1) entries at
    random positions; ``z = X @ w_true + noise * N(0, 1)``.  Classification
    labels are +1 for the ``positive_fraction`` largest ``z`` and -1 for the
    others (dorothea's own fraction of positives is 78 / 800 = 0.0975; the
    default 0.5 gives balanced classes); regression returns ``z``.  This is the
    synthetic stand-in for dorothea used where the real file is not at hand
    (benchmarks, the ``sparsedp compare`` default).

    The draws, in order, from ``numpy.random.default_rng(random_state)``: X
    (:func:`scipy.sparse.random` with that generator), the weights, the support
    (``w[choice] = normal``: Python evaluates the right side first), the noise.

    Parameters
    ----------
    n_samples, n_features : int, default=800, 100000
    density : float in (0, 1], default=0.0091
    n_informative : int, default=50
    noise : float, default=0.1
    task : {"classification", "regression"}, default="classification"
    positive_fraction : float in (0, 1), default=0.5
        Classification only.
    column_spread : float, default=0.0
        0: every entry at a uniformly random position (every column about
        ``density * n_samples`` ones).  Above 0: columns of log-normal densities,
        ``density exp(s Z_j - s^2 / 2)`` (Z_j standard normal, capped at 1, the
        same mean), and the informative features drawn among the columns with
        probabilities proportional to their counts (a feature that matters is one
        that occurs): dorothea's own columns, median 4 ones, 99th percentile 44,
        largest 208, are matched by about 1 (the ``sparsedp compare`` default).
        The draws then: the densities, the entries, the support, the weights, the
        noise.
    random_state : int, numpy Generator or None, default=0

    Returns
    -------
    X : scipy.sparse.csc_array of shape (n_samples, n_features)
        float64 ones, sorted int32 indices where they fit.
    y : ndarray of shape (n_samples,)
    w_true : ndarray of shape (n_features,)
    """
    n_samples = check_integer(n_samples, "n_samples")
    n_features = check_integer(n_features, "n_features")
    density = check_real(density, "density", high=1.0, include_high=True)
    n_informative = check_integer(n_informative, "n_informative", low=0, high=n_features)
    noise = check_real(noise, "noise", include_low=True)
    task = check_option(task, "task", _TASKS)
    positive_fraction = check_real(positive_fraction, "positive_fraction", high=1.0)
    column_spread = check_real(column_spread, "column_spread", include_low=True)
    rng = np.random.default_rng(random_state)
    w_true = np.zeros(n_features)
    if column_spread == 0.0:
        X = canonical_csc(sp.random(n_samples, n_features, density=density, format="csc",
                                    rng=rng, data_rvs=np.ones))
        # (Python evaluates the right side first: the weights, then the support)
        w_true[rng.choice(n_features, n_informative, replace=False)] = rng.normal(
            size=n_informative)
    else:
        X, support = _spread_columns(n_samples, n_features, density, n_informative,
                                     column_spread, rng)
        w_true[support] = rng.normal(size=n_informative)
    z = X @ w_true + noise * rng.normal(size=n_samples)
    if task == "regression":
        return X, z, w_true
    return X, np.where(z >= np.quantile(z, 1.0 - positive_fraction), 1.0, -1.0), w_true


def _spread_columns(n, p, density, n_informative, spread, rng):
    """Binary X with log-normal column densities, and a support drawn proportionally
    to the column counts (:func:`make_dorothea_like`, ``column_spread``)."""
    d = np.minimum(density * np.exp(spread * rng.standard_normal(p) - spread ** 2 / 2), 1.0)
    counts = rng.binomial(n, d)
    cols = np.repeat(np.arange(p), counts)
    rows = rng.integers(0, n, size=cols.size)
    X = sp.csc_array((np.ones(cols.size), (rows, cols)), shape=(n, p))
    X.sum_duplicates()
    X.data[:] = 1.0
    X = canonical_csc(X)
    weights = np.diff(X.indptr).astype(np.float64)
    k = min(n_informative, int(np.count_nonzero(weights)))
    support = rng.choice(p, k, replace=False, p=weights / weights.sum())
    if k < n_informative:
        raise ValueError(f"only {k} nonempty columns for {n_informative} informative features")
    return X, support
