"""One DP-SGD epoch on the dorothea-shaped CSR problem: lazy vs eager noise, vs scikit-learn.

Run ``python asv_benchmarks/dp_sgd_epoch.py``.  Batch 1, logistic + L2
(alpha 1e-4), epsilon 1.  An epoch is timed as a difference ``(t(21 passes) -
t(11 passes)) / 10`` (the setup, the calibration included, cancels: both fits
need walk tables of the same number of digits, whereas a 1-pass fit needs fewer),
repeated; medians.  The peer: scikit-learn's ``SGDClassifier`` (log loss, L2, one epoch,
``max_iter=1``, no shuffle cost difference) on the same CSR matrix, timed the same
way in the same process.

Two floors: the peer's epoch plus one Gaussian per nonzero (the least any lazy
epoch draws; our integer sampler and numpy's float normals, both on SFC64, the bit
generator of the solvers' noise streams), and the peer's epoch plus the catch-ups this kernel's walk draws
(``benchmarks.common.epoch_gaps``: each touched nonzero's steps since its last
touch, one draw per nonzero base-16 digit, about 1.8 on the dorothea shape, from
that digit's table; ``walk_floor``): what the noise alone costs an epoch with the
walk as it is.
"""
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
from common import EpochTime, dorothea_like, epoch_gaps, gaussian_floor, walk_floor  # noqa: E402

from sparsedp.datafits import Logistic  # noqa: E402
from sparsedp.penalties import L2  # noqa: E402
from sparsedp.solvers import dp_sgd  # noqa: E402


def fit(X, y, passes, lazy):
    t = time.perf_counter()
    dp_sgd(X, y, Logistic(), L2(1e-4), epsilon=1.0, delta=1e-6, passes=passes, clip=1.0,
           step_size=0.1, global_smoothness=1.0, lazy=lazy, random_state=0)
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


def epoch(timer, passes=(11, 21)):
    short, long = passes
    return (timer(long) - timer(short)) / (long - short)


def main(rounds=7):
    X, y = dorothea_like(logistic=True)
    Xr = X.tocsr()
    print(f"dorothea-shaped {X.shape}, nnz {X.nnz}, batch 1, logistic + L2, epsilon 1; "
          f"medians of {rounds} interleaved rounds; an epoch whose rounds spread more than "
          f"half its median is reported as too noisy", flush=True)
    eager = EpochTime([epoch(lambda k: fit(X, y, k, False), passes=(1, 3))
                       for _ in range(max(3, rounds // 2))])
    print(f"DP-SGD epoch, eager noise: {eager}", flush=True)
    rows = []  # interleaved rounds: a burst of load hits both sides of a ratio alike
    for _ in range(rounds):
        lazy = epoch(lambda k: fit(X, y, k, True))
        peer = epoch(lambda k: sklearn_fit(Xr, y, k))
        # on SFC64, the bit generator of the solvers' noise streams
        table, floats = gaussian_floor(X.nnz, rounds=1, bit_generator=np.random.SFC64)
        rows.append((lazy, peer, table, floats))
    lazy, peer = EpochTime([r[0] for r in rows]), EpochTime([r[1] for r in rows])
    table, floats = (statistics.median(column) for column in list(zip(*rows))[2:])
    print(f"DP-SGD epoch, lazy noise:  {lazy}  (eager / lazy {eager.ratio(lazy)})")
    print(f"SGDClassifier epoch:       {peer}  (DP-SGD lazy / sklearn = {lazy.ratio(peer)})")
    if peer.reliable:
        print(f"Floor, the peer's epoch + one Gaussian per nonzero: "
              f"{(peer.median + table) / peer.median:.2f}x the peer with our integer sampler on SFC64 "
              f"({table * 1e3:.2f} ms of draws), {(peer.median + floats) / peer.median:.2f}x "
              f"with numpy's float normals ({floats * 1e3:.2f} ms)")
        walk, per_touch = walk_floor(epoch_gaps(X))
        print(f"Floor with the lazy walk, the peer's epoch + the epoch's catch-ups alone "
              f"(a walk sum per touched nonzero, {per_touch:.2f} draws each, "
              f"{walk * 1e3:.2f} ms): {(peer.median + walk) / peer.median:.2f}x the peer")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("dp_sgd_epoch.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
