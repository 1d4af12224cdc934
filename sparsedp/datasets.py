"""Loaders for the real benchmark data sets of the papers, and the synthetic ones.

The files are read from ``$SPARSEDP_DATA`` (default: ``../shared/data`` beside
the checkout, or ``data_home``), as stored there (see its MANIFEST.md): nothing
is downloaded.  Loaders return the raw features; scaling is the experiment's
choice (:func:`normalize_rows`, :func:`standardize`).
"""
import gzip
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = [
    "data_home", "load_dorothea", "load_madelon", "load_california",
    "make_sparse_lasso", "normalize_rows", "standardize",
]


def data_home(data_home=None):
    """The folder holding the data sets (``$SPARSEDP_DATA`` or ``../shared/data``)."""
    if data_home is None:
        data_home = os.environ.get("SPARSEDP_DATA")
    if data_home is None:
        candidates = [Path.cwd() / ".." / "shared" / "data",
                      Path(__file__).resolve().parents[2] / "shared" / "data",
                      Path.cwd() / "shared" / "data"]
        for c in candidates:
            if c.is_dir():
                return c.resolve()
        raise FileNotFoundError(
            "data sets not found: set SPARSEDP_DATA to the folder holding "
            "dorothea/, madelon/, california_housing/")
    path = Path(data_home)
    if not path.is_dir():
        raise FileNotFoundError(f"data folder {path} does not exist")
    return path


def _labels(path):
    with gzip.open(path, "rt") as f:
        return np.array([float(line) for line in f if line.strip()])


def load_dorothea(split="train", home=None):
    """DOROTHEA (NIPS 2003): 800 x 100,000 binary CSC (train), labels in {-1, +1}.

    Returns
    -------
    X : scipy.sparse.csc_array, float64, int32 indices, sorted
    y : ndarray of shape (n_samples,)
    """
    if split not in ("train", "valid"):
        raise ValueError(f"split must be 'train' or 'valid', got {split!r}")
    folder = data_home(home) / "dorothea"
    rows, cols = [], []
    with gzip.open(folder / f"dorothea_{split}.data.gz", "rt") as f:
        for i, line in enumerate(f):
            idx = np.array(line.split(), dtype=np.int64) - 1  # 1-based
            rows.append(np.full(idx.size, i))
            cols.append(idx)
    n = i + 1
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    X = sp.csc_array((np.ones(rows.size), (rows, cols)), shape=(n, 100_000))
    X.sum_duplicates()
    return X, _labels(folder / f"dorothea_{split}.labels.gz")


def load_madelon(split="train", home=None):
    """MADELON (NIPS 2003): 2,000 x 500 dense integer features, labels in {-1, +1}."""
    if split not in ("train", "valid"):
        raise ValueError(f"split must be 'train' or 'valid', got {split!r}")
    folder = data_home(home) / "madelon"
    with gzip.open(folder / f"madelon_{split}.data.gz", "rt") as f:
        X = np.loadtxt(f, dtype=np.float64)
    return X, _labels(folder / f"madelon_{split}.labels.gz")


def load_california(home=None):
    """California housing (StatLib): 20,640 x 8 raw features, median house value.

    Columns: longitude, latitude, housingMedianAge, totalRooms, totalBedrooms,
    population, households, medianIncome; the target is medianHouseValue.
    """
    path = data_home(home) / "california_housing" / "cal_housing.data"
    data = np.loadtxt(path, delimiter=",", dtype=np.float64)
    return data[:, :8].copy(), data[:, 8].copy()


def make_sparse_lasso(n_samples=1000, n_features=1000, n_informative=10,
                      noise=0.1, random_state=0, weights="normal"):
    """Synthetic sparse LASSO problem: Gaussian design, ``n_informative`` active features.

    ``y = X @ w_true + noise * N(0, 1)`` with ``w_true`` having ``n_informative``
    nonzero entries at random positions, drawn by ``weights``: ``"normal"``
    N(0, 1); ``"sign"`` +-1 (equal magnitudes); ``"uniform"`` a random sign times
    U[0.5, 1.5].

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    w_true : ndarray of shape (n_features,)
    """
    if weights not in ("normal", "sign", "uniform"):
        raise ValueError(f"weights must be 'normal', 'sign' or 'uniform', got {weights!r}")
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


def normalize_rows(X, norm=1.0):
    """Scale every row to Euclidean norm ``norm`` (zero rows stay zero).

    Data-independent per record, so it costs no privacy budget.
    """
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64, copy=True)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        scale = np.divide(norm, norms, out=np.zeros_like(norms), where=norms > 0)
        return sp.csc_array(sp.diags_array(scale) @ X)
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1)
    scale = np.divide(norm, norms, out=np.zeros_like(norms), where=norms > 0)
    return X * scale[:, None]


def standardize(X):
    """Centre and scale every column of a dense X to unit variance.

    Uses the data's own means and deviations: not private by itself; the
    papers' experiments treat it as public preprocessing.
    """
    X = np.asarray(X, dtype=np.float64)
    std = X.std(axis=0)
    std[std == 0] = 1.0
    return (X - X.mean(axis=0)) / std
