"""Problems shared by the asv suites (deterministic, generated in setup)."""
import numpy as np
import scipy.sparse as sp


def dorothea_like(seed=0, logistic=False):
    """800 x 100,000 binary CSC, density 0.0091 (the shape of dorothea)."""
    rng = np.random.default_rng(seed)
    X = sp.random(800, 100_000, density=0.0091, format="csc", rng=rng, data_rvs=np.ones)
    w = np.zeros(X.shape[1])
    w[rng.choice(X.shape[1], 50, replace=False)] = rng.normal(size=50)
    z = X @ w + 0.1 * rng.normal(size=X.shape[0])
    y = np.where(z >= np.median(z), 1.0, -1.0) if logistic else z
    return X, y
