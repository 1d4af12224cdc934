"""Problems and helpers shared by the asv suites (deterministic, generated in setup)."""
import importlib
import sys

import numpy as np
import scipy.sparse as sp

# Where the public privacy names live, first match wins: the package being
# restructured keeps its public names, and only this tuple needs to change.
PRIVACY_MODULES = ("sparsedp.privacy", "sparsedp.solvers")


def public(name, modules=PRIVACY_MODULES):
    """The public object ``name`` from the first of ``modules`` that defines it."""
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if hasattr(module, name):
            return getattr(module, name)
    raise ImportError(f"none of {', '.join(modules)} defines {name!r}")


def clear_caches():
    """Clear every ``functools`` cache of the loaded ``sparsedp`` modules.

    Calibrations memoise their work; a cold call is timed after this.
    """
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "sparsedp"
                                  or module_name.startswith("sparsedp.")):
            continue
        for obj in list(vars(module).values()):
            clear = getattr(obj, "cache_clear", None)
            if callable(clear):
                clear()


def dorothea_like(seed=0, logistic=False):
    """800 x 100,000 binary CSC, density 0.0091 (the shape of dorothea)."""
    rng = np.random.default_rng(seed)
    X = sp.random(800, 100_000, density=0.0091, format="csc", rng=rng, data_rvs=np.ones)
    w = np.zeros(X.shape[1])
    w[rng.choice(X.shape[1], 50, replace=False)] = rng.normal(size=50)
    z = X @ w + 0.1 * rng.normal(size=X.shape[0])
    y = np.where(z >= np.median(z), 1.0, -1.0) if logistic else z
    return X, y


def read_only(X):
    """A CSC copy of X whose arrays are read-only, as a
    :class:`sparsedp.experiments.Problem` holds it (the kernels keep what they
    derive from such a matrix once per process)."""
    arrays = [np.array(a) for a in (X.data, X.indices, X.indptr)]
    for a in arrays:
        a.setflags(write=False)
    return sp.csc_array(tuple(arrays), shape=X.shape, copy=False)


def datafit_problem(name):
    """``(datafit, X, y)``: the dorothea-shaped problem validated for ``"squared"`` or
    ``"logistic"``."""
    from sparsedp._validation import check_X_y
    from sparsedp.datafits import Logistic, Squared

    datafit = Squared() if name == "squared" else Logistic()
    X, y = dorothea_like(logistic=name == "logistic")
    return (datafit,) + tuple(check_X_y(X, y, datafit))


#: the sweep of docs/scaling.rst (with 4 runs: 240 fits): DP-GCD and DP-CD points
SWEEP_GRID = {
    "dp_gcd": {"n_iter": [1, 2, 4, 8], "clip": list(np.logspace(0, 3, 5)),
               "step_size": [1.0, 2.0]},
    "dp_cd": {"passes": [0.1, 0.5], "clip": list(np.logspace(-2, 1, 5)),
              "step_size": [1.0, 2.0]},
}


def sweep_problem():
    """The sweep's Problem: dorothea-shaped logistic + L1 with public smoothness
    bounds (|X_ij| <= 1 and the logistic loss is 1/4-smooth: M_j <= 1/4), F* computed."""
    from sparsedp.datafits import Logistic
    from sparsedp.experiments import Problem
    from sparsedp.penalties import L1
    X, y = dorothea_like(logistic=True)
    problem = Problem("dorothea-shaped", X, y, Logistic(), L1(1e-3),
                      smoothness=np.full(X.shape[1], 0.25))
    problem.f_star
    return problem


def gaussian_floor(count, rounds=7, bit_generator=np.random.PCG64):
    """Medians of drawing ``count`` Gaussians: ``(integer sampler, numpy float)`` seconds.

    The least a lazy-noise epoch draws: one Gaussian per touched nonzero (a
    coordinate's noise since its last touch is one draw at best).  The integer
    sampler is the one the private kernels use, at the walks' step scale
    (``2**28`` grid units): ``IntegerNoise.fill`` into a preallocated int64 array;
    numpy's ``Generator.standard_normal(out=...)`` (raw floats, not floating-point
    safe) into a preallocated float array is the reference.  Both draw from the
    same ``Generator(bit_generator(0))``, alternately: PCG64 (``default_rng``'s) or
    SFC64 (the solvers' noise streams, whose words the sampler's fill draws inline).
    """
    import statistics
    import time

    from sparsedp.random import IntegerNoise

    generator = np.random.Generator(bit_generator(0))
    noise = IntegerNoise("gaussian", 2.0 ** 28)
    ints, out = np.empty(count, dtype=np.int64), np.empty(count)
    table, floats = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        noise.fill(generator, ints)
        table.append(time.perf_counter() - t)
        t = time.perf_counter()
        generator.standard_normal(out=out)
        floats.append(time.perf_counter() - t)
    return statistics.median(table), statistics.median(floats)


def epoch_gaps(X, batch_rows=1, seed=0):
    """The catch-ups of one lazy DP-SGD epoch in touch order: for every nonzero of the
    rows sampled at each step (``batch_rows`` rows drawn uniformly, an epoch of
    ``n / batch_rows`` steps after one such epoch to warm up), the steps since its
    column was last touched (int64)."""
    Xr = X.tocsr()
    n, p = Xr.shape
    steps = n // batch_rows
    rng = np.random.default_rng(seed)
    last = np.zeros(p, dtype=np.int64)
    gaps = []
    for t in range(2 * steps):
        rows = rng.integers(0, n, batch_rows)
        cols = np.unique(np.concatenate([Xr.indices[Xr.indptr[i]:Xr.indptr[i + 1]]
                                         for i in rows]))
        if t >= steps:
            gaps.append(t - last[cols])
        last[cols] = t
    return np.concatenate(gaps)


def walk_floor(gaps, rounds=7):
    """Median seconds to draw the walk sums of ``gaps`` (one catch-up each, as the
    kernels draw them: one integer Gaussian per nonzero base-16 digit of the gap, from
    that digit's table, the tables' draws made in bulk, ``GaussianWalk.sums(...,
    buffered=True)``) at the walks' step scale (``2**29`` grid units), and the draws
    per catch-up."""
    import statistics
    import time

    from sparsedp.random import GaussianWalk

    walk = GaussianWalk(2.0 ** 29, 16 ** 4 - 1)
    generator = np.random.Generator(np.random.SFC64(0))  # the solvers' noise streams
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        walk.sums(generator, gaps, buffered=True)
        times.append(time.perf_counter() - t)
    digits = sum(np.count_nonzero((gaps >> (4 * d)) & 15) for d in range(4))
    return statistics.median(times), digits / gaps.size


class EpochTime:
    """An epoch timed as a difference of two runs, over rounds: its median and spread.

    ``(t(long) - t(short)) / (long - short)`` cancels the set-up, but on a noisy
    machine it is a difference of two noisy totals and may come out near zero or
    negative.  ``spread`` is the median absolute deviation of the rounds; the
    figure is ``reliable`` only when the median exceeds zero by more than twice
    the spread, and :meth:`__str__` then prints milliseconds, otherwise says the
    run was too noisy (never a negative time).
    """

    def __init__(self, rounds):
        rounds = np.asarray(rounds, dtype=float)
        self.rounds = rounds
        self.median = float(np.median(rounds))
        self.spread = float(np.median(np.abs(rounds - self.median)))

    @property
    def reliable(self):
        return self.median > 0 and self.median > 2 * self.spread

    def __str__(self):
        if self.reliable:
            return f"{self.median * 1e3:9.3f} ms"
        return (f"too noisy to time (median {self.median * 1e3:.3f} ms, spread "
                f"{self.spread * 1e3:.3f} ms over {self.rounds.size} rounds: rerun on a "
                f"quiet machine)")

    def ratio(self, other):
        """``self / other`` as text, or "n/a" when either is not reliable."""
        if self.reliable and other.reliable:
            return f"{self.median / other.median:.2f}x"
        return "n/a (too noisy)"
