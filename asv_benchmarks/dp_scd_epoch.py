"""One DP-SCD epoch on the dorothea-shaped matrix: lazy vs eager noise, and vs
scikit-learn's SGDClassifier epoch on the same matrix.

An epoch's time is ``(t(11 passes) - t(1 pass)) / 10`` (the set-up, validation,
calibration and the lazy noise's final catch-up cancel), repeated, medians, all
in this process.  Logistic + L2, epsilon = 1, delta = 1 / n^2, Poisson batches
of the paper's L = 100 and of 1.

Usage: python asv_benchmarks/dp_scd_epoch.py [--repeat R]
"""
import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from benchmarks.common import dorothea_like  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402

from sparsedp.datafits import Logistic  # noqa: E402
from sparsedp.penalties import L2  # noqa: E402
from sparsedp.solvers import dp_scd  # noqa: E402

LAMBDA = 1e-4


def fit_time(fit, passes):
    start = time.perf_counter()
    fit(passes)
    return time.perf_counter() - start


def epoch_time(fit, repeat):
    """Median of (t(11) - t(1)) / 10 over ``repeat`` pairs (after one warm-up)."""
    fit(1), fit(11)
    return float(np.median([(fit_time(fit, 11) - fit_time(fit, 1)) / 10.0
                            for _ in range(repeat)]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    X, y = dorothea_like(logistic=True)
    Xr = X.tocsr()
    n = X.shape[0]

    def scd(batch_size, lazy):
        def fit(passes):
            return dp_scd(Xr, y, Logistic(), L2(LAMBDA), epsilon=1.0, delta=1.0 / n ** 2,
                          passes=passes, clip=1.0, batch_size=batch_size, lazy=lazy,
                          random_state=0)
        return fit

    def sgd(passes):
        return SGDClassifier(loss="log_loss", penalty="l2", alpha=LAMBDA, max_iter=passes,
                             tol=None, fit_intercept=False, random_state=0).fit(Xr, y)

    sgd_epoch = epoch_time(sgd, args.repeat)
    print(f"dorothea-shaped {X.shape}, nnz {X.nnz}; medians of {args.repeat} repeats")
    print(f"SGDClassifier (log_loss, l2) epoch: {sgd_epoch * 1e3:9.3f} ms")
    for batch_size in (100, 1):
        lazy = epoch_time(scd(batch_size, True), args.repeat)
        eager = epoch_time(scd(batch_size, False), max(1, args.repeat // 2))
        print(f"DP-SCD L={batch_size:>3}: lazy {lazy * 1e3:9.3f} ms, eager "
              f"{eager * 1e3:9.3f} ms, eager/lazy {eager / lazy:7.1f}x, "
              f"lazy/SGDClassifier {lazy / sgd_epoch:5.2f}x")


if __name__ == "__main__":
    main()
