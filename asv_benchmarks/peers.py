"""Speed against the peers, measured in one process: ``python asv_benchmarks/peers.py``.

Each figure is a ratio (ours / peer) of per-epoch times, median over repeats.
An epoch is timed as (t(11 epochs) - t(1 epoch)) / 10 on both sides, so that
fixed costs (validation, allocation, set-up) drop out.

Sections
--------
cd      one epoch (p coordinate updates) of the exact CD kernel vs one epoch of
        scikit-learn's Lasso coordinate descent, on the same CSC matrix.
dp_cd   one DP-CD pass (p noisy steps) vs one scikit-learn Lasso epoch; the
        floor line times a pass's p indices and p noises (numpy's Generator's
        normals, and the releases' integer noise through the public
        ``sparsedp.random.IntegerNoise``).  Passes
        whose steps mostly move are also compared with an epoch of scikit-learn's
        coordinate descent in which every coordinate moves (ElasticNet,
        l1_ratio=0), which also updates the residuals over every column.
dp_gcd  one DP-GCD iteration (incremental gradient, lazy noisy max) vs the naive
        iteration (scipy full gradient, p Laplace draws, argmax), on real
        dorothea (logistic + L1) and a 20,000 x 1,000,000 synthetic problem.
noise   one floating-point-safe Gaussian draw vs one numpy float normal
        (``benchmarks.common.gaussian_floor``).
dp_sgd  ``dp_sgd_epoch.py``: a DP-SGD epoch (lazy noise) vs ``SGDClassifier``'s.
dp_scd  ``dp_scd_epoch.py``: a DP-SCD epoch vs ``SGDClassifier``'s.
sweep   ``sweep_scaling.py --dask``: the overhead per task of a 240-fit sweep, its
        speed-up with ``n_jobs=2`` (and the ceiling this machine sets it now) and on
        a 2-worker Dask cluster.
Run a subset with e.g. ``python asv_benchmarks/peers.py cd``.
"""
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the asv suite's helpers

REPEATS = 7


def dorothea_like(seed=0):
    """800 x 100,000 binary CSC, density 0.0091 (the shape of dorothea)."""
    rng = np.random.default_rng(seed)
    X = sp.random(800, 100_000, density=0.0091, format="csc", rng=rng, data_rvs=np.ones)
    return X, _target(X, rng)


def large_sparse(seed=0):
    """20,000 x 1,000,000 CSC with about 1M nonzeros."""
    rng = np.random.default_rng(seed)
    X = sp.random(20_000, 1_000_000, density=5e-5, format="csc", rng=rng)
    return X, _target(X, rng)


def _target(X, rng):
    w = np.zeros(X.shape[1])
    w[rng.choice(X.shape[1], 50, replace=False)] = rng.normal(size=50)
    return X @ w + 0.1 * rng.normal(size=X.shape[0])


def per_epoch(run, repeats=REPEATS):
    """Median over repeats of (t(11) - t(1)) / 10 for ``run(n_epochs)``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run(1)
        t1 = time.perf_counter()
        run(11)
        t2 = time.perf_counter()
        times.append(((t2 - t1) - (t1 - t0)) / 10)
    return float(np.median(times))


def ours_cd(X, y, lam):
    from sparsedp._kernels import kernel_id
    from sparsedp._kernels._cd_fast import cd_epochs
    from sparsedp._validation import check_X_y
    from sparsedp.datafits import Squared

    def run(n_epochs):
        Xc, yc = check_X_y(X, y)
        lip = Squared().smoothness(Xc)
        w, z = np.zeros(Xc.shape[1]), np.zeros(Xc.shape[0])
        cd_epochs(kernel_id(Squared()), Xc.data, Xc.indices, Xc.indptr, yc, w, z, lip, lam,
                  0.0, n_epochs)
    return run


def sklearn_cd(X, y, lam):
    from sklearn.linear_model import Lasso
    from sklearn.exceptions import ConvergenceWarning

    def run(n_epochs):
        # Our F = 2 * sklearn's objective with alpha = lam / 2: same iterates.
        model = Lasso(alpha=lam / 2, fit_intercept=False, tol=0.0, max_iter=n_epochs,
                      selection="cyclic")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
    return run


def sklearn_cd_moving(X, y, l2):
    """One epoch of scikit-learn's coordinate descent in which every coordinate moves
    (``ElasticNet`` with ``l1_ratio=0``: ridge, all weights nonzero): the peer of a
    DP-CD pass whose steps all move (each updates the residuals over its column)."""
    from sklearn.linear_model import ElasticNet
    from sklearn.exceptions import ConvergenceWarning

    def run(n_epochs):
        model = ElasticNet(alpha=l2, l1_ratio=0.0, fit_intercept=False, tol=0.0,
                           max_iter=n_epochs, selection="cyclic")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", UserWarning)  # l1_ratio=0 is advised against
            model.fit(X, y)
    return run


def section_cd():
    print("== exact CD epoch vs scikit-learn Lasso epoch (squared + L1, same CSC) ==")
    for name, make in (("dorothea-shaped 800 x 100,000", dorothea_like),
                       ("synthetic 20,000 x 1,000,000", large_sparse)):
        X, y = make()
        lam = 0.1 * np.max(np.abs(X.T @ y)) * 2 / X.shape[0]
        ratios, ours_t, peer_t = [], [], []
        for _ in range(3):  # interleave the two sides against machine noise
            a = per_epoch(ours_cd(X, y, lam), repeats=3)
            b = per_epoch(sklearn_cd(X, y, lam), repeats=3)
            ours_t.append(a)
            peer_t.append(b)
            ratios.append(a / b)
        print(f"{name} (nnz={X.nnz}): ours {1e3 * np.median(ours_t):.2f} ms/epoch, "
              f"scikit-learn {1e3 * np.median(peer_t):.2f} ms/epoch, "
              f"ratio ours/sklearn = {np.median(ratios):.3f}")


def ours_dp_cd(X, y, datafit, lam, clip):
    from sparsedp.penalties import L1
    from sparsedp.solvers import dp_cd
    M = datafit.smoothness(X)  # public constants for the benchmark: no warning
    info = {}

    def run(n_passes):
        res = dp_cd(X, y, datafit, L1(lam), epsilon=1.0, delta=1e-5, passes=n_passes,
                    clip=clip, smoothness=M, random_state=0, diagnostics=True)
        info["moves"] = res.diagnostics["moves"] / res.n_iter
    return run, info


def random_draws(p, seed=0, integer_noise=False):
    """The draws a DP-CD pass must make, with the bit generator DP-CD uses (SFC64):
    p uniform indices (numpy's ``integers``: the numbers the kernel's inlined fill
    draws) and p noises, numpy's standard normals or (``integer_noise``) the
    releases' integer Gaussian noise (``sparsedp.random.IntegerNoise``, the law the
    kernel draws, at a DP-CD scale)."""
    from sparsedp.random import IntegerNoise
    rng = np.random.Generator(np.random.SFC64(seed))
    noise = IntegerNoise("gaussian", 2.0 ** 22)

    def run(n_passes):
        for _ in range(n_passes):
            rng.integers(0, p, p)
            if integer_noise:
                noise.draw(rng, p)
            else:
                rng.standard_normal(p)
    return run


def section_dp_cd(rounds=5):
    from sparsedp.datafits import Logistic, Squared
    print("== DP-CD pass (public dp_cd, epsilon=1) vs scikit-learn Lasso epoch, "
          "dorothea-shaped 800 x 100,000 ==")
    X, y = dorothea_like()
    lam = 0.1 * np.max(np.abs(X.T @ y)) * 2 / X.shape[0]
    labels = np.where(y >= np.median(y), 1.0, -1.0)
    peer = sklearn_cd(X, y, lam)
    peer_moving = sklearn_cd_moving(X, y, 1e-2)
    # clip 0.01: the L1 prox keeps most coordinates at 0 (sparse iterate);
    # clip 1: the noise moves theta at most steps (margins refreshed each time)
    configs = [(f"{name}, clip {clip:g}", *ours_dp_cd(X, target, datafit, reg, clip))
               for name, datafit, target, reg in (("squared + L1", Squared(), y, lam),
                                                  ("logistic + L1", Logistic(), labels, 1e-3))
               for clip in (0.01, 1.0)]
    draws = {"numpy": random_draws(X.shape[1]),
             "fills": random_draws(X.shape[1], integer_noise=True)}
    times = {key: [] for key in [*draws, *(c[0] for c in configs)]}
    peer_t = {key: [] for key in times}
    moving_t = []
    # every round times everything, each next to a scikit-learn epoch: the
    # machine's slow phases (shared caches) then fall on all configurations alike
    for _ in range(rounds):
        for key, run in [*draws.items(), *((c[0], c[1]) for c in configs)]:
            times[key].append(per_epoch(run, repeats=3))
            peer_t[key].append(per_epoch(peer, repeats=3))
        moving_t.append(per_epoch(peer_moving, repeats=3))
    epoch = np.median(peer_t["numpy"] + peer_t["fills"])
    numpy_d, fills_d = np.median(times["numpy"]), np.median(times["fills"])
    print(f"floor: p indices + p normals {1e3 * numpy_d:.2f} ms through numpy's "
          f"Generator, p indices + p integer noises {1e3 * fills_d:.2f} ms (IntegerNoise); "
          f"scikit-learn Lasso {1e3 * epoch:.2f} ms/epoch: a pass that did one "
          f"epoch's work plus its draws would have ratio {(epoch + numpy_d) / epoch:.3f} "
          f"(normals) / {(epoch + fills_d) / epoch:.3f} (integer noise)")
    for key, _, info in configs:
        ratios = np.array(times[key]) / np.array(peer_t[key])
        moving = np.array(times[key]) / np.array(moving_t)
        print(f"{key} ({100 * info['moves']:.0f}% of steps move): "
              f"DP-CD {1e3 * np.median(times[key]):.2f} ms/pass, scikit-learn Lasso "
              f"{1e3 * np.median(peer_t[key]):.2f} ms/epoch, ratio = {np.median(ratios):.3f} "
              f"(rounds' quartiles {np.quantile(ratios, 0.25):.2f}-{np.quantile(ratios, 0.75):.2f})"
              + (f"; against an epoch where every coordinate moves "
                 f"({1e3 * np.median(moving_t):.2f} ms) {np.median(moving):.3f}"
                 if info["moves"] > 0.5 else ""))


def gcd_kernel(X, y, datafit, lam, clip, selection, n_iter=100, seed=0):
    """A DP-GCD kernel set up as ``dp_gcd`` does (public M_j, epsilon = 1)."""
    from sparsedp._kernels._dp_gcd_fast import GreedyKernel
    from benchmarks.bench_dp_gcd import greedy_kernel_args
    return GreedyKernel(*greedy_kernel_args(X, y, datafit, lam, clip, selection, n_iter),
                        np.random.default_rng(seed))


def naive_gcd(X, y, datafit, lam, clip, seed=0):
    """The naive iteration: full gradient (scipy), p Laplace draws, argmax, step."""
    from sparsedp.solvers import calibrate_dp_gcd
    n, p = X.shape
    M = datafit.smoothness(X)
    inv_sqrt_m = np.divide(1.0, np.sqrt(M), out=np.zeros(p), where=M > 0)
    steps = np.divide(1.0, M, out=np.zeros(p), where=M > 0)
    eps0 = calibrate_dp_gcd(1.0, 1.0 / n ** 2, 100, "laplace")
    b = 2 * (2 * clip / (n * np.sqrt(M.sum()))) / eps0
    rng = np.random.default_rng(seed)
    state = {"w": np.zeros(p), "z": np.zeros(n)}
    Xc = X.tocsc()

    def run(n_iter):
        w, z = state["w"], state["z"]
        for _ in range(n_iter):
            g = X.T @ datafit.derivative(z, y) / n
            j = int(np.argmax(np.abs(g) * inv_sqrt_m + rng.laplace(0.0, b, p)))
            new = np.sign(w[j] - steps[j] * g[j]) * max(
                abs(w[j] - steps[j] * g[j]) - steps[j] * lam, 0.0)
            lo, hi = Xc.indptr[j], Xc.indptr[j + 1]
            z[Xc.indices[lo:hi]] += (new - w[j]) * Xc.data[lo:hi]
            w[j] = new
    return run


def section_dp_gcd():
    from sparsedp._validation import check_X_y
    from sparsedp.datafits import Logistic, Squared
    from sparsedp.datasets import load_dorothea
    print("== DP-GCD iteration (epsilon=1, gs-r, clip 1) vs the naive iteration "
          "(scipy X.T @ v + p Laplace draws + argmax) ==")
    X, y = load_dorothea()
    problems = [("dorothea 800 x 100,000, logistic + L1", X, y, Logistic(), 1e-3)]
    Xl, yl = large_sparse()
    problems.append(("synthetic 20,000 x 1,000,000, squared + L1", Xl, yl, Squared(),
                     0.1 * np.max(np.abs(Xl.T @ yl)) * 2 / Xl.shape[0]))
    for name, X, y, datafit, lam in problems:
        X, y = check_X_y(X, y, datafit)
        peer = per_epoch(naive_gcd(X, y, datafit, lam, 1.0), repeats=5)
        for selection in ("exponential", "laplace"):
            times = []  # (t(101) - t(1)) / 100: iterations are microseconds
            for seed in range(5):
                kernel = gcd_kernel(X, y, datafit, lam, 1.0, selection, seed=seed)
                t0 = time.perf_counter()
                kernel.run(1)
                t1 = time.perf_counter()
                kernel.run(101)
                t2 = time.perf_counter()
                times.append(((t2 - t1) - (t1 - t0)) / 100)
            ours = float(np.median(times))
            print(f"{name}, {selection}: DP-GCD {1e6 * ours:.1f} us/iteration, naive "
                  f"{1e3 * peer:.2f} ms/iteration, speed-up = {peer / ours:.0f}x")


def section_noise(rounds=5):
    """One floating-point-safe Gaussian draw against one numpy float normal."""
    from benchmarks.common import gaussian_floor
    print("== one safe Gaussian (IntegerNoise.fill, scale 2**28) vs numpy's "
          "standard_normal(out=...), 728,000 draws ==")
    for name, bit_generator in (("default_rng (PCG64)", np.random.PCG64),
                                ("SFC64, the solvers' noise streams", np.random.SFC64)):
        rows = [gaussian_floor(728_000, rounds=7, bit_generator=bit_generator)
                for _ in range(rounds)]
        ratios = [a / b for a, b in rows]
        ours, theirs = np.median([a for a, _ in rows]), np.median([b for _, b in rows])
        print(f"{name}: ours {1e9 * ours / 728_000:.2f} ns a draw, numpy "
              f"{1e9 * theirs / 728_000:.2f} ns: ratio {np.median(ratios):.3f} "
              f"(rounds' range {min(ratios):.3f}-{max(ratios):.3f})")
    # the lazy catch-ups of a DP-SGD epoch on the dorothea shape: one per nonzero,
    # gaps of about n / (nonzeros per column) = 110 steps (one draw per nonzero
    # base-16 digit: about 2), from the 15 tables of each digit, as the kernels draw
    # them (each table's draws in bulk) from an SFC64 stream (the solvers')
    from sparsedp.random import GaussianWalk
    walk = GaussianWalk(2.0 ** 28, 100_000)
    gaps = np.random.default_rng(0).geometric(1 / 110, size=728_000).astype(np.int64)
    generator, times = np.random.Generator(np.random.SFC64(1)), []
    for _ in range(7):
        start = time.perf_counter()
        walk.sums(generator, gaps, buffered=True)
        times.append(time.perf_counter() - start)
    print(f"728,000 lazy catch-ups (gaps geometric, mean 110 steps): "
          f"{1e3 * np.median(times):.2f} ms, {1e9 * np.median(times) / 728_000:.1f} ns each")


def section_dp_sgd():
    import dp_sgd_epoch
    print("== DP-SGD epoch (lazy noise, batch 1) vs SGDClassifier ==")
    dp_sgd_epoch.main()


def section_dp_scd():
    import dp_scd_epoch
    print("== DP-SCD epoch (lazy noise) vs SGDClassifier ==")
    argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        dp_scd_epoch.main()
    finally:
        sys.argv = argv


def section_sweep():
    import sweep_scaling
    print("== a 240-fit sweep: overhead per task, n_jobs=2, a 2-worker Dask cluster ==")
    sweep_scaling.main(rounds=3, dask=True)


SECTIONS = {"noise": section_noise, "cd": section_cd, "dp_cd": section_dp_cd,
            "dp_gcd": section_dp_gcd, "dp_sgd": section_dp_sgd, "dp_scd": section_dp_scd,
            "sweep": section_sweep}


def main(argv):
    import argparse
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="sections: " + ", ".join(SECTIONS) + " (default: all, in this order)")
    parser.add_argument("sections", nargs="*", metavar="SECTION", help="the sections to run")
    names = parser.parse_args(argv).sections or list(SECTIONS)
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; one of {', '.join(SECTIONS)}")
    for name in names:
        SECTIONS[name]()


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("peers.py"):  # a line on stderr after 4 s of silence (a terminal)
        main(sys.argv[1:])
