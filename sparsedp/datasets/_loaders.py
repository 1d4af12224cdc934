"""Loaders of the papers' real data sets, reading their original formats.

Each reads its files from the data folder (:func:`data_home`), downloading a
missing one from the public copy of the exact bytes listed in
``shared/data/MANIFEST.md`` (checked by sha256, :mod:`._download`) unless
``download=False``.  Loaders return the raw features: scaling is the
experiment's choice, with its privacy cost (:mod:`._preprocessing`).
"""
import bz2
import gzip
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._download import fetch
from . import _home
from ._registry import REAL

_SPLITS = ("train", "valid", "train+valid")


def _open_text(path):
    """A text stream over ``path``, gunzipped when its name ends in ``.gz``."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="ascii")
    return open(path, encoding="ascii")


def _check_split(split):
    if split not in _SPLITS:
        raise ValueError(f"split must be 'train', 'valid' or 'train+valid', got {split!r}")
    return ("train", "valid") if split == "train+valid" else (split,)


def _files(name, split, data_home, download):
    """The local paths of the data and labels files of one split of a NIPS 2003 set."""
    folder = _home.data_home(data_home)
    return [fetch(pattern.format(split=split), folder, REAL[name]["source"], download)
            for pattern in REAL[name]["files"]]


def _labels(path, n_samples):
    """Labels in {-1, +1}, one per line, exactly one per row of the data."""
    with _open_text(path) as f:
        y = np.array([float(line) for line in f if line.strip()])
    if y.shape[0] != n_samples:
        raise ValueError(f"{path} holds {y.shape[0]} labels for {n_samples} rows")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"{path}: labels must be -1 or +1")
    return y


def _read_sparse(path, n_features, pairs):
    """CSC of a file with one record per line: 1-based ``index`` or ``index:value`` tokens."""
    rows, cols, vals = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0)]
    n = 0
    with _open_text(path) as f:
        for line in f:
            if pairs:
                tokens = line.replace(":", " ").split()
                if len(tokens) % 2:
                    raise ValueError(f"{path}: line {n + 1} is not a list of index:value pairs")
                try:
                    idx = np.array(tokens[0::2], dtype=np.int64) - 1
                    val = np.array(tokens[1::2], dtype=np.float64)
                except ValueError:
                    raise ValueError(f"{path}: line {n + 1} has a non-numeric index or "
                                     "value") from None
            else:
                try:
                    idx = np.array(line.split(), dtype=np.int64) - 1
                except ValueError:
                    raise ValueError(f"{path}: line {n + 1} has a non-integer index") from None
                val = np.ones(idx.size)
            rows.append(np.full(idx.size, n))
            cols.append(idx)
            vals.append(val)
            n += 1
    if n == 0:
        raise ValueError(f"{path} is empty")
    rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    if cols.size and (cols.min() < 0 or cols.max() >= n_features):
        raise ValueError(f"{path}: feature indices must lie in [1, {n_features}]")
    return canonical_csc(sp.csc_array((vals, (rows, cols)), shape=(n, n_features)))


def canonical_csc(X):
    """``X`` as a CSC array with summed duplicates, sorted int32 indices (int64 if needed)."""
    X = sp.csc_array(X)
    X.sum_duplicates()
    X.sort_indices()
    if max(X.shape[0], X.nnz) < np.iinfo(np.int32).max:
        X = sp.csc_array((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                         shape=X.shape)
    return X


def _stack(parts):
    """One (X, y) from the (X, y) of several splits, in order."""
    if len(parts) == 1:
        return parts[0]
    Xs, ys = zip(*parts)
    X = canonical_csc(sp.vstack(Xs)) if sp.issparse(Xs[0]) else np.vstack(Xs)
    return X, np.concatenate(ys)


def _nips(name, split, data_home, download, read):
    """(X, y) of a NIPS 2003 set's splits: ``read(data file)`` gives each X."""
    parts = []
    for s in _check_split(split):
        data, labels = _files(name, s, data_home, download)
        X = read(data)
        parts.append((X, _labels(labels, X.shape[0])))
    return _stack(parts)


def _read_dense(path):
    """A dense space-separated data file (madelon)."""
    with _open_text(path) as f:
        X = np.loadtxt(f, dtype=np.float64, ndmin=2)
    if X.size == 0:
        raise ValueError(f"{path} is empty")
    return X


def load_dorothea(split="train", data_home=None, *, download=True):
    """DOROTHEA (NIPS 2003 feature selection challenge): sparse binary drug-discovery data.

    800 x 100,000 (train) and 350 x 100,000 (valid) binary features, density
    0.91 %, labels in {-1, +1} (train: 78 positive, 722 negative; valid: 34 and
    316).  The DP-GCD paper (Mangold et al., AISTATS 2023, Table 1) uses the
    train split and counts its 88,119 non-empty columns.

    Each line of ``dorothea_<split>.data[.gz]`` lists the 1-based indices of a
    record's nonzero features; ``dorothea_<split>.labels[.gz]`` has one label a
    line.  Upstream: UCI ML Repository, dataset 169
    (https://archive.ics.uci.edu/dataset/169/dorothea, uncompressed files at
    https://archive.ics.uci.edu/ml/machine-learning-databases/dorothea/DOROTHEA/),
    CC BY 4.0; cite Guyon, Gunn, Ben-Hur and Dror, "Result analysis of the NIPS
    2003 feature selection challenge" (NIPS 2004).  Downloads come from the
    gzipped copy named in the manifest (its sha256 is checked).

    Parameters
    ----------
    split : {"train", "valid", "train+valid"}, default="train"
        The test split has no labels and is not offered.
    data_home : str or path-like, optional
        The data folder (:func:`data_home`); the files are in its ``dorothea/``.
    download : bool, default=True
        Download missing files (needs ``pip install 'sparsedp[data]'``); False
        never touches the network.

    Returns
    -------
    X : scipy.sparse.csc_array of shape (n_samples, 100000)
        float64, sorted int32 indices.
    y : ndarray of shape (n_samples,)
        Labels in {-1.0, +1.0}.
    """
    return _nips("dorothea", split, data_home, download,
                 lambda path: _read_sparse(path, 100_000, pairs=False))


def load_dexter(split="train", data_home=None, *, download=True):
    """DEXTER (NIPS 2003 feature selection challenge): sparse integer text features.

    300 x 20,000 (train, 28,218 nonzeros) and 300 x 20,000 (valid, 27,949),
    labels in {-1, +1}, 150 of each in each split.  Each line of
    ``dexter_<split>.data[.gz]`` holds a record's ``index:value`` pairs with
    1-based indices.  Upstream: UCI ML Repository, dataset 168
    (https://archive.ics.uci.edu/dataset/168/dexter), CC BY 4.0; cite as
    :func:`load_dorothea`.

    Parameters
    ----------
    split, data_home, download
        As in :func:`load_dorothea`; the files are in the data folder's ``dexter/``.

    Returns
    -------
    X, y
        As in :func:`load_dorothea`, with 20,000 columns.
    """
    return _nips("dexter", split, data_home, download,
                 lambda path: _read_sparse(path, 20_000, pairs=True))


def load_madelon(split="train", data_home=None, *, download=True):
    """MADELON (NIPS 2003 feature selection challenge): dense synthetic XOR-like problem.

    2,000 x 500 (train) and 600 x 500 (valid) integer features (0..999),
    labels in {-1, +1}, balanced.  The DP-GCD paper (Table 1) uses OpenML 1485,
    train and valid together (``split="train+valid"``, 2,600 records).
    Upstream: UCI ML Repository, dataset 171
    (https://archive.ics.uci.edu/dataset/171/madelon), CC BY 4.0; cite as
    :func:`load_dorothea`.

    Parameters
    ----------
    split, data_home, download
        As in :func:`load_dorothea`; the files are in the data folder's ``madelon/``.

    Returns
    -------
    X : ndarray of shape (n_samples, 500), float64
    y : ndarray of shape (n_samples,)
        Labels in {-1.0, +1.0}.
    """
    return _nips("madelon", split, data_home, download, _read_dense)


def load_california(data_home=None, *, download=True):
    """California housing (StatLib ``cal_housing.data``): 20,640 x 8 raw features.

    Columns, in the file's order: longitude, latitude, housingMedianAge,
    totalRooms, totalBedrooms, population, households, medianIncome; the
    target is medianHouseValue (14,999 to 500,001, censored at 500,001).
    These are the raw counts, not scikit-learn's per-household ratios.  Used by
    the DP-CD paper (Section 6, LASSO) and the DP-GCD paper (Table 1).
    Upstream: Pace and Barry, "Sparse spatial autoregressions", Statistics and
    Probability Letters 33 (1997), via StatLib
    (https://lib.stat.cmu.edu/datasets/, ``houses.zip``) and L. Torgo's
    regression data sets; no license is stated.

    Parameters
    ----------
    data_home, download
        As in :func:`load_dorothea`; the file is the data folder's
        ``california_housing/cal_housing.data``.

    Returns
    -------
    X : ndarray of shape (20640, 8), float64
    y : ndarray of shape (20640,), float64
    """
    path = fetch("california_housing/cal_housing.data", _home.data_home(data_home),
                 REAL["california"]["source"], download)
    data = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
    if data.shape[1] != 9:
        raise ValueError(f"{path}: expected 9 columns, got {data.shape[1]}")
    return data[:, :8].copy(), data[:, 8].copy()


#: the attributes of elecNormNew.arff, in order (the last is the class)
ELECTRICITY_FEATURES = ("date", "day", "period", "nswprice", "nswdemand", "vicprice",
                        "vicdemand", "transfer")


def load_electricity(data_home=None, *, download=True):
    """Electricity (Elec2, MOA's normalized ``elecNormNew.arff``): 45,312 x 8, labels in {-1, +1}.

    The eight attributes of the file, in its order (``ELECTRICITY_FEATURES``):
    ``date``, ``period`` and the five price, demand and transfer columns are in
    [0, 1] as stored; ``day`` (a nominal attribute with values 1..7) is kept as
    its number 1..7.  The label is +1 for ``UP`` (19,237 rows) and -1 for
    ``DOWN`` (26,075).  These are the 45,312 records and 8 features of the
    DP-CD paper (Mangold et al., ICML 2022, Section 6), which uses them as
    they are (its "imbalanced" problem) or standardized
    (:func:`standardize`, its "balanced" one).  Upstream: M. Harries,
    "Splice-2 comparative evaluation: Electricity pricing" (UNSW, 1999), in the
    normalized form distributed with MOA; OpenML 151
    (https://www.openml.org/d/151) has the same records; no license is stated.

    Parameters
    ----------
    data_home, download
        As in :func:`load_dorothea`; the file is the data folder's
        ``electricity/elecNormNew.arff``.

    Returns
    -------
    X : ndarray of shape (45312, 8), float64
    y : ndarray of shape (45312,), values in {-1.0, +1.0}
    """
    path = fetch("electricity/elecNormNew.arff", _home.data_home(data_home),
                 REAL["electricity"]["source"], download)
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


def _open_bytes(path):
    """A binary stream over ``path``, decompressed as scikit-learn's reader does (by the
    ``.gz`` or ``.bz2`` suffix)."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")
    return open(path, "rb")


def _svmlight_line_error(line, zero_based):
    """What is wrong with one svmlight line (bytes), or None.

    The rules of scikit-learn's reader: anything after ``#`` is a comment, a blank
    line is skipped; else a numeric label, an optional ``qid:...`` token, then
    ``index:value`` pairs with integer indices (at least 1 when ``zero_based`` is
    False, at least 0 otherwise), strictly increasing, and numeric values.
    """
    tokens = line.split(b"#", 1)[0].split()
    if not tokens:
        return None
    text = [t.decode("ascii", errors="replace") for t in tokens]
    try:
        float(tokens[0])
    except ValueError:
        return f"the label {text[0]!r} is not a number"
    start = 2 if len(tokens) > 1 and tokens[1].startswith(b"qid:") else 1
    lowest = 0 if zero_based else 1  # "auto" reads from 0
    previous = -1
    for token, shown in zip(tokens[start:], text[start:]):
        index, colon, value = token.partition(b":")
        if not colon:
            return f"{shown!r} is not index:value"
        try:
            index = int(index)
        except ValueError:
            return f"the index of {shown!r} is not an integer"
        if index < lowest:
            return f"the index of {shown!r} is below {lowest}"
        try:
            float(value)
        except ValueError:
            return f"the value of {shown!r} is not a number"
        if index <= previous:
            return f"the indices are not increasing ({shown!r} after index {previous})"
        previous = index
    return None


def _first_bad_svmlight_line(path, zero_based):
    """``(line number, what is wrong)`` of the first malformed line of an svmlight file
    (numbered from 1), or None when every line reads."""
    with _open_bytes(path) as f:
        for number, line in enumerate(f, start=1):
            reason = _svmlight_line_error(line, zero_based)
            if reason is not None:
                return number, reason
    return None


def load_svmlight(path, n_features=None, *, zero_based="auto", dtype=np.float64):
    """Any svmlight / libsvm file, by path: ``label index:value ...`` lines.

    A thin wrapper over :func:`sklearn.datasets.load_svmlight_file` (which also
    reads ``.gz`` and ``.bz2`` files) that returns the CSC layout the solvers
    use.  Labels are returned as stored: map them to {-1, +1} (classification)
    yourself if the file uses {0, 1}.  Nothing is downloaded.

    Parameters
    ----------
    path : str or path-like
        The file.
    n_features : int, optional
        The number of columns; default: the largest index in the file.  Give it
        when the file is one split of a larger set.
    zero_based : bool or "auto", default="auto"
        Whether the file's column indices start at 0 (see scikit-learn's).
    dtype : numpy dtype, default=np.float64

    Returns
    -------
    X : scipy.sparse.csc_array of shape (n_samples, n_features)
        Sorted int32 indices.
    y : ndarray of shape (n_samples,)

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        The file does not read: the message names the file and, for a line that
        breaks the format, its number (from 1) and what is wrong with it.
    """
    from sklearn.datasets import load_svmlight_file

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path, got {type(path).__name__}")
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"svmlight file {path} does not exist")
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, dtype=dtype,
                                  zero_based=zero_based)
    except ValueError as exc:
        found = _first_bad_svmlight_line(path, zero_based)
        if found is None:  # not a line's syntax (n_features too small, say)
            raise ValueError(f"malformed svmlight file {path}: {exc}") from None
        number, reason = found
        raise ValueError(f"malformed svmlight file {path}, line {number}: {reason} "
                         f"(expected: label [qid:id] index:value ...)") from None
    if X.shape[0] == 0:
        raise ValueError(f"{path} holds no records")
    return canonical_csc(X), np.asarray(y, dtype=np.float64)
