"""asv: a sweep through ``run_grid`` on the dorothea-shaped problem, per task.

A quarter of ``asv_benchmarks/sweep_scaling.py``'s 240-fit sweep (its DP-GCD and
DP-CD points, one run each: 60 fits), with one worker and with two (loky,
warm); ``track_overhead_ms`` is what a task costs beyond its fit, in ms.
"""
import time
import warnings

from .common import SWEEP_GRID as GRID, sweep_problem


class Sweep:
    params = [1, 2]
    param_names = ["n_jobs"]
    timeout = 300

    def setup(self, n_jobs):
        self.problem = sweep_problem()
        self.seed = 0
        self._run(n_jobs)  # warm the workers

    def _run(self, n_jobs):
        from sparsedp.experiments import run_grid
        self.seed += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run_grid(self.problem, GRID, epsilon=1.0, delta=1e-6, n_runs=1,
                            n_jobs=n_jobs, progress=False, seed=self.seed)

    def time_sweep(self, n_jobs):
        self._run(n_jobs)

    def track_overhead_ms(self, n_jobs):
        start = time.perf_counter()
        rows = self._run(n_jobs)
        wall = time.perf_counter() - start
        fits = sum(r["time"] for r in rows if r["final"])
        return 1e3 * (n_jobs * wall - fits) / len(rows)
    track_overhead_ms.unit = "ms"
