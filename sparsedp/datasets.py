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
from sklearn.utils import check_array

from ._validation import check_real

__all__ = [
    "data_home", "load_dorothea", "load_madelon", "load_california", "load_electricity",
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
            "dorothea/, madelon/, california_housing/, electricity/")
    path = Path(data_home)
    if not path.is_dir():
        raise FileNotFoundError(f"data folder {path} does not exist")
    return path


def _labels(path, n_samples):
    """Labels in {-1, +1}, one per line, exactly one per row of the data."""
    with gzip.open(path, "rt") as f:
        y = np.array([float(line) for line in f if line.strip()])
    if y.shape[0] != n_samples:
        raise ValueError(f"{path} holds {y.shape[0]} labels for {n_samples} rows")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"{path}: labels must be -1 or +1")
    return y


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
    path = folder / f"dorothea_{split}.data.gz"
    rows, cols = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    n = 0
    with gzip.open(path, "rt") as f:
        for line in f:
            idx = np.array(line.split(), dtype=np.int64) - 1  # 1-based
            rows.append(np.full(idx.size, n))
            cols.append(idx)
            n += 1
    if n == 0:
        raise ValueError(f"{path} is empty")
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    if cols.size and (cols.min() < 0 or cols.max() >= 100_000):
        raise ValueError(f"{path}: feature indices must lie in [1, 100000]")
    X = sp.csc_array((np.ones(rows.size), (rows, cols)), shape=(n, 100_000))
    X.sum_duplicates()
    return X, _labels(folder / f"dorothea_{split}.labels.gz", n)


def load_madelon(split="train", home=None):
    """MADELON (NIPS 2003): 2,000 x 500 dense integer features, labels in {-1, +1}."""
    if split not in ("train", "valid"):
        raise ValueError(f"split must be 'train' or 'valid', got {split!r}")
    folder = data_home(home) / "madelon"
    with gzip.open(folder / f"madelon_{split}.data.gz", "rt") as f:
        X = np.loadtxt(f, dtype=np.float64, ndmin=2)
    if X.size == 0:
        raise ValueError(f"madelon_{split}.data.gz is empty")
    return X, _labels(folder / f"madelon_{split}.labels.gz", X.shape[0])


def load_california(home=None):
    """California housing (StatLib): 20,640 x 8 raw features, median house value.

    Columns: longitude, latitude, housingMedianAge, totalRooms, totalBedrooms,
    population, households, medianIncome; the target is medianHouseValue.
    """
    path = data_home(home) / "california_housing" / "cal_housing.data"
    data = np.loadtxt(path, delimiter=",", dtype=np.float64)
    return data[:, :8].copy(), data[:, 8].copy()


#: the attributes of elecNormNew.arff, in order (the last is the class)
ELECTRICITY_FEATURES = ("date", "day", "period", "nswprice", "nswdemand", "vicprice",
                        "vicdemand", "transfer")


def load_electricity(home=None):
    """Electricity (Elec2, MOA's normalized ``elecNormNew.arff``): 45,312 x 8, labels in {-1, +1}.

    The eight attributes of the file, in its order (``ELECTRICITY_FEATURES``):
    ``date``, ``period`` and the five price, demand and transfer columns are in
    [0, 1] as stored; ``day`` (a nominal attribute with values 1..7) is kept as
    its number 1..7.  The label is +1 for ``UP`` (19,237 rows) and -1 for
    ``DOWN`` (26,075).  These are the 45,312 records and 8 features of the
    DP-CD paper (Mangold et al., ICML 2022, Section 6), which uses them as
    they are (its "imbalanced" problem) or standardized
    (:func:`standardize`, its "balanced" one).

    Returns
    -------
    X : ndarray of shape (45312, 8), float64
    y : ndarray of shape (45312,), values in {-1.0, +1.0}
    """
    path = data_home(home) / "electricity" / "elecNormNew.arff"
    with open(path, encoding="ascii") as f:
        lines = f.read().splitlines()
    try:
        start = next(i for i, line in enumerate(lines)
                     if line.strip().lower() == "@data") + 1
    except StopIteration:
        raise ValueError(f"{path} has no @data section") from None
    rows = [line.split(",") for line in lines[start:] if line.strip()
            and not line.lstrip().startswith("%")]
    if not rows:
        raise ValueError(f"{path} holds no records")
    width = len(ELECTRICITY_FEATURES) + 1
    bad = next((i for i, r in enumerate(rows) if len(r) != width), None)
    if bad is not None:
        raise ValueError(f"{path}: record {bad + 1} has {len(rows[bad])} fields, "
                         f"expected {width}")
    labels = np.array([r[-1].strip() for r in rows])
    if not np.all(np.isin(labels, ("UP", "DOWN"))):
        raise ValueError(f"{path}: the class must be UP or DOWN")
    try:
        X = np.array([r[:-1] for r in rows], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{path}: non-numeric feature value ({exc})") from None
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{path}: missing or infinite feature values")
    return X, np.where(labels == "UP", 1.0, -1.0)


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

    Data-independent per record, so it costs no privacy budget.  Scale-safe:
    each row is first divided by its largest ``|X_ij|``, so no squared norm
    overflows or underflows.
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


def standardize(X):
    """Centre and scale every column of a dense X to unit variance.

    Uses the data's own means and deviations: not private by itself; the
    papers' experiments treat it as public preprocessing.
    """
    X = check_array(X, dtype=np.float64)
    std = X.std(axis=0)
    std[std == 0] = 1.0
    return (X - X.mean(axis=0)) / std
