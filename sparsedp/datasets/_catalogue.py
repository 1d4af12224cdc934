"""The built-in data sets by name: ``list_datasets``, ``describe`` and ``load``."""
import os
from pathlib import Path

from . import _home
from ._download import _local_versions
from ._loaders import (load_california, load_dexter, load_dorothea, load_electricity,
                       load_madelon, load_svmlight)
from ._registry import REAL
from ._synthetic import make_dorothea_like, make_quasi_sparse, make_sparse_lasso, make_square

_LOADERS = {"dorothea": load_dorothea, "madelon": load_madelon, "dexter": load_dexter,
            "california": load_california, "electricity": load_electricity}

_GCD = "synthetic: DP-GCD paper (Mangold et al., AISTATS 2023), Section 5"

#: name -> (generator, its arguments, shape, task, source)
SYNTHETIC = {
    "log1": (make_quasi_sparse, dict(sigma=1.0), (1000, 100), "binary classification", _GCD),
    "log2": (make_quasi_sparse, dict(sigma=2.0), (1000, 100), "binary classification", _GCD),
    "square": (make_square, {}, (1000, 1000), "regression", _GCD),
    "sparse_lasso": (make_sparse_lasso, {}, (1000, 1000), "regression",
                     "synthetic: DP-CD paper (Mangold et al., ICML 2022), Section 6"),
    "dorothea_like": (make_dorothea_like, {"column_spread": 1.0, "positive_fraction": 0.0975},
                      (800, 100_000), "binary classification",
                      "synthetic: dorothea's shape, density, spread of column counts and "
                      "fraction of positives (make_dorothea_like)"),
}


def list_datasets(data_home=None):
    """The built-in data sets, and whether each is available here.

    Parameters
    ----------
    data_home : str or path-like, optional
        The data folder to look in (:func:`data_home`).

    Returns
    -------
    list of dict
        One per data set, real ones first, with keys ``name``, ``kind``
        (``"real"`` or ``"synthetic"``), ``present`` (a real set's files are
        all in the data folder, gzipped or not; a synthetic one is always
        present: it is generated), ``shape`` (of the default split),
        ``splits`` (split name -> shape), ``task`` (``"regression"`` or
        ``"binary classification"``), ``source``, ``license``, ``description``
        and ``files`` (paths in the data folder; empty for a synthetic set).
    """
    folder = _home.data_home(data_home)
    out = []
    for name, info in REAL.items():
        files = [pattern.format(split=split) for split in info["splits"]
                 for pattern in info["files"]]
        present = all(any(p.is_file() for p in _local_versions(folder / f)) for f in files)
        out.append(dict(name=name, kind="real", present=present,
                        shape=info["splits"]["train"], splits=dict(info["splits"]),
                        task=info["task"], source=info["source"], license=info["license"],
                        description=info["description"], files=files))
    for name, (function, _, shape, task, source) in SYNTHETIC.items():
        out.append(dict(name=name, kind="synthetic", present=True, shape=shape,
                        splits={"train": shape}, task=task, source=source,
                        license="generated", description=function.__name__, files=[]))
    return out


def describe(data_home=None):
    """A table of :func:`list_datasets`, one line per data set (for ``sparsedp datasets``).

    Parameters
    ----------
    data_home : str or path-like, optional

    Returns
    -------
    str
    """
    folder = _home.data_home(data_home)
    rows = [("name", "shape", "task", "here", "source")]
    for d in list_datasets(data_home):
        here = "generated" if d["kind"] == "synthetic" else ("yes" if d["present"]
                                                            else "download")
        rows.append((d["name"], f"{d['shape'][0]:,} x {d['shape'][1]:,}", d["task"], here,
                     d["source"]))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"data folder: {folder}"]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4]
              for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def load(name_or_path, *, split="train", data_home=None, download=True, random_state=0,
         **params):
    """``(X, y)`` of a built-in data set by name, or of an svmlight / libsvm file by path.

    Parameters
    ----------
    name_or_path : str or path-like
        A real data set (``"dorothea"``, ``"madelon"``, ``"dexter"``,
        ``"california"``, ``"electricity"``), a synthetic one (``"log1"``,
        ``"log2"``, ``"square"``, ``"sparse_lasso"``, ``"dorothea_like"``),
        or the path of an svmlight file (:func:`load_svmlight`).
    split : str, default="train"
        The split of a NIPS 2003 set (``"train"``, ``"valid"``,
        ``"train+valid"``); the others have only ``"train"``.
    data_home : str or path-like, optional
        The data folder of the real sets.
    download : bool, default=True
        Download a real set's missing files; False never touches the network.
    random_state : int, numpy Generator or None, default=0
        The seed of a synthetic set.
    **params
        Passed to the generator of a synthetic set (e.g. ``n_samples``) or to
        :func:`load_svmlight` (e.g. ``n_features``).

    Returns
    -------
    X : ndarray or scipy.sparse.csc_array of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    """
    if isinstance(name_or_path, str) and name_or_path in _LOADERS:
        loader = _LOADERS[name_or_path]
        if params:
            raise TypeError(f"load({name_or_path!r}) takes no extra arguments, got "
                            f"{sorted(params)}")
        if name_or_path in ("california", "electricity"):
            if split != "train":
                raise ValueError(f"{name_or_path} has one split, 'train'; got {split!r}")
            return loader(data_home, download=download)
        return loader(split, data_home, download=download)
    if isinstance(name_or_path, str) and name_or_path in SYNTHETIC:
        if split != "train":
            raise ValueError(f"{name_or_path} is generated: its only split is 'train', "
                             f"got {split!r}")
        function, defaults, *_ = SYNTHETIC[name_or_path]
        X, y, _ = function(**{**defaults, **params}, random_state=random_state)
        return X, y
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"name_or_path must be a data set name or a path, got "
                        f"{type(name_or_path).__name__}")
    if Path(name_or_path).expanduser().is_file():
        return load_svmlight(name_or_path, **params)
    names = ", ".join([*_LOADERS, *SYNTHETIC])
    raise ValueError(f"unknown data set {str(name_or_path)!r}: neither a built-in name "
                     f"({names}) nor an existing file")
