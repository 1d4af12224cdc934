"""Data sets: the papers' real benchmarks, svmlight files, synthetic problems, preprocessing.

Real data (:func:`load_dorothea`, :func:`load_madelon`, :func:`load_dexter`,
:func:`load_california`, :func:`load_electricity`) is read in its original
format from the data folder (:func:`data_home`: ``data_home=``, else
``$SPARSEDP_DATA``, else ``shared/data`` beside a source checkout, else
``~/.cache/sparsedp``); a
missing file is downloaded (``pip install 'sparsedp[data]'``) and checked by
sha256, and when that cannot be done the error says what to do.  Any
svmlight / libsvm file: :func:`load_svmlight`.  The papers' synthetic problems
are seeded generators (``make_*``).  :func:`load` takes any of these by name
(or a path); :func:`list_datasets` and :func:`describe` say what is available.
Loaders return raw features: :func:`normalize_rows` is private by
construction, :func:`standardize` on the data's own statistics is not (see
its docstring).
"""
from ._catalogue import describe, list_datasets, load
from ._download import DataNotFoundError
from ._home import data_home
from ._loaders import (ELECTRICITY_FEATURES, load_california, load_dexter, load_dorothea,
                       load_electricity, load_madelon, load_svmlight)
from ._preprocessing import normalize_rows, standardize
from ._synthetic import make_dorothea_like, make_quasi_sparse, make_sparse_lasso, make_square

__all__ = [
    "DataNotFoundError", "ELECTRICITY_FEATURES", "data_home", "describe", "list_datasets",
    "load", "load_california", "load_dexter", "load_dorothea", "load_electricity",
    "load_madelon", "load_svmlight", "make_dorothea_like", "make_quasi_sparse",
    "make_sparse_lasso", "make_square", "normalize_rows", "standardize",
]
