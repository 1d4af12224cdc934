"""One DP-SCD epoch on the dorothea-shaped matrix: lazy vs eager noise, and vs
scikit-learn's SGDClassifier epoch on the same matrix.

An epoch's time is ``(t(21 passes) - t(11 passes)) / 10`` (the set-up, validation,
calibration and the lazy noise's final catch-up cancel; both fits need walk
tables of the same number of digits), ``(t(3) - t(1)) / 2`` for eager noise,
repeated, medians, all in this process.  The floor: the peer's epoch plus one
Gaussian per nonzero, the least a lazy-noise epoch draws.  Logistic + L2, epsilon = 1, delta = 1 / n^2, Poisson batches
of the paper's L = 100 and of 1.

Usage: python asv_benchmarks/dp_scd_epoch.py [--repeat R]
"""
import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from benchmarks.common import EpochTime, dorothea_like, gaussian_floor  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402

from sparsedp.datafits import Logistic  # noqa: E402
from sparsedp.penalties import L2  # noqa: E402
from sparsedp.solvers import dp_scd  # noqa: E402

LAMBDA = 1e-4


def fit_time(fit, passes):
    start = time.perf_counter()
    fit(passes)
    return time.perf_counter() - start


def epoch_time(fit, passes=(11, 21)):
    """One round's epoch, ``(t(long) - t(short)) / (long - short)`` (may be noisy)."""
    short, long = passes
    return (fit_time(fit, long) - fit_time(fit, short)) / (long - short)


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

    print(f"dorothea-shaped {X.shape}, nnz {X.nnz}; medians of {args.repeat} interleaved "
          "rounds (a burst of load hits both sides of a ratio alike); an epoch whose "
          "rounds spread more than half its median is reported as too noisy", flush=True)
    for batch_size in (100, 1):
        lazy_fit, eager_fit = scd(batch_size, True), scd(batch_size, False)
        lazy_fit(11), eager_fit(1), sgd(11)  # warm-up
        eager = EpochTime([epoch_time(eager_fit, passes=(1, 3))
                           for _ in range(max(3, args.repeat // 2))])
        lazy, peer = (EpochTime(rounds) for rounds in zip(*[
            (epoch_time(lazy_fit), epoch_time(sgd)) for _ in range(args.repeat)]))
        print(f"DP-SCD L={batch_size:>3}: lazy {lazy}, eager {eager}, eager/lazy "
              f"{eager.ratio(lazy)}; SGDClassifier (log_loss, l2) {peer}, "
              f"lazy/SGDClassifier {lazy.ratio(peer)}", flush=True)
    table, floats = gaussian_floor(X.nnz, bit_generator=np.random.SFC64)  # the solvers' streams
    print(f"Floor, one Gaussian per nonzero: {table * 1e3:.2f} ms with our integer sampler on SFC64, "
          f"{floats * 1e3:.2f} ms with numpy's float normals (add to the peer's epoch)")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("dp_scd_epoch.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
