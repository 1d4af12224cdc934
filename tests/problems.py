"""Problem generators and paths shared by the tests (importable: tests/ is on pythonpath)."""
import os
import pathlib

import numpy as np
import scipy.sparse as sp

ROOT = pathlib.Path(__file__).resolve().parents[1]


def make_sparse_problem(n=60, p=40, density=0.2, seed=0, logistic=False,
                        n_active=5, index_dtype=np.int32):
    """A small random sparse regression/classification problem (CSC)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, format="csc", rng=rng,
                  data_rvs=rng.standard_normal)
    w = np.zeros(p)
    w[:n_active] = rng.standard_normal(n_active)
    z = X @ w + 0.1 * rng.standard_normal(n)
    y = np.where(z >= 0, 1.0, -1.0) if logistic else z
    X = sp.csc_array((X.data, X.indices.astype(index_dtype),
                      X.indptr.astype(index_dtype)), shape=X.shape)
    return X, y


def data_dir():
    """Where the real data sets live ($SPARSEDP_DATA, default ../shared/data)."""
    return pathlib.Path(os.environ.get("SPARSEDP_DATA", ROOT.parent / "shared" / "data"))
