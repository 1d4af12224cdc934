"""A sweep's cost per task and its speed-up with workers: ``python asv_benchmarks/sweep_scaling.py``.

The sweep of ``docs/scaling.rst``: 240 fits on the dorothea-shaped problem
(logistic + L1, public smoothness bounds), DP-GCD ``n_iter`` {1, 2, 4, 8} x
``clip`` logspace(0, 3, 5) x ``step_size`` {1, 2} and DP-CD ``passes`` {0.1, 0.5}
x ``clip`` logspace(-2, 1, 5) x ``step_size`` {1, 2}, 4 runs each, epsilon 1,
through :func:`sparsedp.experiments.run_grid`.  Printed:

* the wall time with ``n_jobs=1`` and ``n_jobs=2`` (loky, warm workers: one
  sweep first to start them), repeated, medians, and the speed-up, with how much
  longer the fits themselves take on two busy workers (what bounds the speed-up
  when the overhead per task is small);
* the sum of the fits' own times (the ``time`` column) and the **overhead per
  task**: ``(n_jobs * wall - sum of fit times) / tasks``, what a task costs
  beyond its fit (dispatch, accounting of its report, its objective);
* the **fixed cost** of a sweep: the median wall time of a sweep of two tasks
  (one DP-GCD grid point, two runs) with ``n_jobs=1`` and ``n_jobs=2``, what a
  sweep costs beyond its tasks (on two loky workers: joblib's start and its 10 ms
  result polling, the problem's file);
* the **projection to 16 workers** these imply, ``(sum of fit times + per-task
  overhead) / 16 + fixed cost`` for a perfectly balanced sweep, if the fits kept
  their speed (on a real 16-core machine they share memory bandwidth,
  docs/scaling.rst); the per-task overhead is the 2-worker overhead less the
  fixed cost each of the two workers waited, and the ratio without the fixed
  cost is printed beside it;
* the **ceiling the machine sets**: the whole sweep run with ``n_jobs=1`` inside
  a loky worker, alone and then in both workers at once (two sweeps, no task
  exchanged, nothing shared but the cores' caches and memory), and how much
  longer the fits take in the second case: two workers can be at most ``2 /``
  that times faster than one, whatever the dispatch costs, and the speed-up
  with ``n_jobs=2`` is printed as a share of it;
* with ``--dask``, the same sweep on a local ``dask.distributed`` cluster of
  two single-threaded worker processes (``joblib.parallel_config(backend="dask")``).

``--rounds K`` sets the repeats (default 3).
"""
import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
from common import SWEEP_GRID as GRID, sweep_problem as problem  # noqa: E402

from sparsedp.experiments import run_grid  # noqa: E402

N_RUNS = 4


def sweep(prob, n_jobs, seed):
    """Wall time and the fits' summed time of one sweep (fresh seeds each call)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        rows = run_grid(prob, GRID, epsilon=1.0, delta=1e-6, n_runs=N_RUNS, n_jobs=n_jobs,
                        progress=False, seed=seed)
        wall = time.perf_counter() - start
    final = [r for r in rows if r["final"]]
    return wall, sum(r["time"] for r in final), len(final)


#: sweeps of two tasks timed for the fixed cost
FIXED_REPEATS = 15
FIXED_GRID = {"dp_gcd": {"n_iter": [1], "clip": [1.0], "step_size": [1.0]}}


def fixed_cost(prob, n_jobs):
    """Median wall time of a two-task sweep (one grid point, two runs; warm)."""
    def one(seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            run_grid(prob, FIXED_GRID, epsilon=1.0, delta=1e-6, n_runs=2, n_jobs=n_jobs,
                     progress=False, seed=seed)
            return time.perf_counter() - start
    one(30_000)
    return statistics.median(one(30_001 + r) for r in range(FIXED_REPEATS))


def whole_sweeps(prob, seed, count):
    """In a worker: one warm-up sweep with ``n_jobs=1``, then ``count`` sweeps'
    summed fit times (the worker's own caches, built by the warm-up)."""
    sweep(prob, 1, seed=seed)
    return [sweep(prob, 1, seed=seed + 1 + r)[1] for r in range(count)]


def ceiling(prob, rounds):
    """``(alone, together)``: median fit times of a whole sweep in one loky worker
    while the other is idle, and in each of two workers running one at once."""
    import joblib
    alone, together = [], []
    with joblib.Parallel(n_jobs=2) as parallel:
        for r in range(rounds):  # interleaved, as the sweeps above
            seed = 40_000 + 100 * r
            alone += parallel([joblib.delayed(whole_sweeps)(prob, seed, 2)])[0]
            for fits in parallel(joblib.delayed(whole_sweeps)(prob, seed + 10 * (k + 1), 2)
                                 for k in range(2)):
                together += fits
    return statistics.median(alone), statistics.median(together)


def report(label, walls, fits, tasks, n_jobs):
    wall, fit = statistics.median(walls), statistics.median(fits)
    overhead = (n_jobs * wall - fit) / tasks
    print(f"{label:24s} wall {wall:6.2f} s  fits {fit:6.2f} s  "
          f"overhead {1e3 * overhead:6.2f} ms/task ({tasks} tasks)")
    return wall, fit, overhead


def main(rounds=3, dask=False):
    prob = problem()
    sweep(prob, 2, seed=10_000)  # start the loky workers (and warm this process)
    sweep(prob, 1, seed=10_001)
    one, two = [], []
    for r in range(rounds):  # interleaved: a burst of load hits both alike
        one.append(sweep(prob, 1, seed=r))
        two.append(sweep(prob, 2, seed=100 + r))
    tasks = one[0][2]
    print(f"240-fit sweep (DP-GCD and DP-CD, dorothea-shaped), medians of {rounds} rounds")
    w1, f1, o1 = report("n_jobs=1", [w for w, _, _ in one], [f for _, f, _ in one], tasks, 1)
    w2, f2, o2 = report("n_jobs=2 (loky)", [w for w, _, _ in two], [f for _, f, _ in two],
                        tasks, 2)
    print(f"speed-up with n_jobs=2: {w1 / w2:.2f}x (the fits take {f2 / f1:.2f} times as "
          f"long on two busy workers as on one)")
    fixed = {n_jobs: fixed_cost(prob, n_jobs) for n_jobs in (1, 2)}
    print(f"fixed cost of a sweep (two tasks, median of {FIXED_REPEATS}): "
          f"{1e3 * fixed[1]:.1f} ms with n_jobs=1, {1e3 * fixed[2]:.1f} ms with n_jobs=2")
    # the 2-worker overhead counts the fixed cost once per worker: spread over 16
    # workers the per-task part, and add the fixed cost once (each worker waits it)
    per_task = max(o2 * tasks - 2 * fixed[2], 0.0)
    proj = (f1 + per_task) / 16 + fixed[2]
    print(f"projection to 16 workers (fits as on one worker + the 2-worker overhead per "
          f"task, balanced, + the fixed cost): {proj:.3f} s, {w1 / proj:.1f}x "
          f"(without the fixed cost {w1 / ((f1 + per_task) / 16):.1f}x)")
    alone, together = ceiling(prob, rounds)
    bound = 2 * alone / together
    print(f"ceiling on this machine now: one whole sweep a worker in both workers at once, "
          f"its fits {together / alone:.2f} times as long as in one worker alone "
          f"({alone:.3f} s): n_jobs=2 at most {bound:.2f}x; measured {w1 / w2:.2f}x, "
          f"{w1 / w2 / bound:.0%} of it")
    if dask:
        import joblib
        from dask.distributed import Client, LocalCluster
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster):
            with joblib.parallel_config(backend="dask"):
                sweep(prob, -1, seed=20_000)  # warm the workers
                runs = [sweep(prob, -1, seed=200 + r) for r in range(rounds)]
        wd, _, _ = report("dask LocalCluster(2x1)", [w for w, _, _ in runs],
                          [f for _, f, _ in runs], tasks, 2)
        fd = statistics.median(f for _, f, _ in runs)
        print(f"speed-up on the 2-worker Dask cluster: {w1 / wd:.2f}x (fits {fd / f1:.2f} "
              f"times as long as on one worker)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dask", action="store_true")
    args = parser.parse_args()
    from sparsedp._progress import watch
    with watch("sweep_scaling.py"):  # a line on stderr after 4 s of silence (a terminal)
        main(args.rounds, args.dask)
