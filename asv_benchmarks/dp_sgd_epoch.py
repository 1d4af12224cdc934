"""One DP-SGD epoch on the dorothea-shaped CSR problem: lazy vs eager noise, vs scikit-learn.

Run ``python asv_benchmarks/dp_sgd_epoch.py``.  Batch 1, logistic + L2
(alpha 1e-4), epsilon 1.  An epoch is timed as a difference ``(t(11 passes) -
t(1 pass)) / 10`` (the setup, the calibration included, cancels), repeated;
medians.  The peer: scikit-learn's ``SGDClassifier`` (log loss, L2, one epoch,
``max_iter=1``, no shuffle cost difference) on the same CSR matrix, timed the same
way in the same process.
"""
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
from common import dorothea_like  # noqa: E402

from sparsedp.datafits import Logistic  # noqa: E402
from sparsedp.penalties import L2  # noqa: E402
from sparsedp.solvers import dp_sgd  # noqa: E402


def fit(X, y, passes, lazy):
    t = time.perf_counter()
    dp_sgd(X, y, Logistic(), L2(1e-4), epsilon=1.0, delta=1e-6, passes=passes, clip=1.0,
           step_size=0.1, smoothness=1.0, lazy=lazy, random_state=0)
    return time.perf_counter() - t


def sklearn_fit(Xr, y, passes):
    from sklearn.linear_model import SGDClassifier
    clf = SGDClassifier(loss="log_loss", alpha=1e-4, max_iter=passes, tol=None,
                        learning_rate="constant", eta0=0.1, random_state=0)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(Xr, y)
    return time.perf_counter() - t


def epoch(timer, rounds, long_passes=11):
    return statistics.median((timer(long_passes) - timer(1)) / (long_passes - 1)
                             for _ in range(rounds))


def main(rounds=5):
    X, y = dorothea_like(logistic=True)
    Xr = X.tocsr()
    lazy = epoch(lambda k: fit(X, y, k, True), rounds)
    eager = epoch(lambda k: fit(X, y, k, False), max(1, rounds // 2), long_passes=3)
    peer = epoch(lambda k: sklearn_fit(Xr, y, k), rounds)
    print(f"dorothea-shaped {X.shape}, nnz {X.nnz}, batch 1, logistic + L2, epsilon 1")
    print(f"DP-SGD epoch, lazy noise:  {lazy * 1e3:8.2f} ms")
    print(f"DP-SGD epoch, eager noise: {eager * 1e3:8.2f} ms  (lazy is {eager / lazy:.1f}x faster)")
    print(f"SGDClassifier epoch:       {peer * 1e3:8.2f} ms  (DP-SGD lazy / sklearn = "
          f"{lazy / peer:.2f})")


if __name__ == "__main__":
    main()
