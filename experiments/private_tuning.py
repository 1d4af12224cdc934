"""Private tuning end to end: PrivateSearch against the grid tuned on the private data.

For each problem, epsilon = 1 in total, delta = 1/n^2, ``fit_intercept=False``,
the relative error ``(F(w) - F*) / F*`` of the library's objective on the whole
data (a non-private diagnostic) of

* **the private pipeline**: :class:`sparsedp.model_selection.PrivateSearch` over
  the solver's registry grid (``quick``), random stopping with a geometric
  number of trials of mean 10, a 20 % held-out private score, the private
  constants inside every trial: nothing but the data, the grid and epsilon;
* **tuned, fresh seeds**: every grid point fitted at epsilon = 1 on seeds
  ``0 .. --tune-seeds - 1``, the best mean error chosen (looking at the data:
  not private), then re-run on the fresh seeds;
* **tuned, in-sample**: that best mean on the seeds that chose it (biased low);

mean ± sd over ``--seeds`` fresh seeds starting at ``--first-seed`` (1000), with
the paper's figure beside.

Usage: ``python experiments/private_tuning.py [--seeds 10] [--jobs 2] [--problems ...]``;
prints a Markdown table, written to ``experiments/results/private_tuning.txt``.
"""
import argparse
import pathlib
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.model_selection import ParameterGrid

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from private_defaults import fmt, problems as base_problems  # noqa: E402
from sparsedp.model_selection import PrivateSearch, registry_grid  # noqa: E402
from sparsedp.solvers import exact  # noqa: E402
from sparsedp.solvers._scales import clip_to_bounds  # noqa: E402

RESULTS = pathlib.Path(__file__).parent / "results"

#: name -> (base problem, solver, the paper's figure and where it is from)
ROWS = {
    "dorothea gcd": ("dorothea", "gcd", "0.64 (DP-GCD paper, Table 3)"),
    "california-std cd": ("california-std", "cd", "0.0024 (DP-GCD paper, Table 3, DP-CD)"),
    "electricity cd": ("electricity", "cd", "0.0020 (DP-CD paper, Table 2, 50 passes)"),
    "electricity sgd": ("electricity", "sgd", "0.148 (DP-CD paper, Table 2, 50 passes)"),
}


def _error(est, X, y, datafit, penalty, f_star):
    coef = np.ravel(est.coef_)
    Xc = X if getattr(est, "feature_clip_", None) is None else clip_to_bounds(X, est.feature_clip_)
    return (datafit.value(Xc @ coef, y) + penalty.value(coef) - f_star) / f_star


def _fit(make, params, X, y, seed):
    est = make(**params, epsilon=1.0, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def _search(make, grid, X, y, seed):
    search = PrivateSearch(make(), grid, epsilon=1.0, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    return search


def run(row, seeds, tune_seeds, jobs, log):
    name, solver, paper = ROWS[row]
    load, datafit, alpha_of, make_base, penalty_of = base_problems()[name]
    X, y = load()
    X = sp.csc_array(X, dtype=np.float64)
    n, p = X.shape
    alpha = alpha_of(n)
    penalty = penalty_of(alpha)
    f_star = exact(X, y, datafit, penalty).diagnostics.objective

    def make(**kw):
        return make_base(alpha, solver=solver, fit_intercept=False, **kw)

    grid = registry_grid(make(), n, p)
    points = list(ParameterGrid(grid))
    t0 = time.perf_counter()
    tuned = Parallel(n_jobs=jobs)(delayed(_fit)(make, q, X, y, s)
                                  for q in points for s in range(tune_seeds))
    errors = np.array([_error(e, X, y, datafit, penalty, f_star) for e in tuned]).reshape(
        len(points), tune_seeds)
    best = int(np.argmin(errors.mean(axis=1)))
    log(f"  {row}: grid {grid}, best {points[best]} (in-sample {errors[best].mean():.4g}), "
        f"{time.perf_counter() - t0:.0f} s")
    fresh = Parallel(n_jobs=jobs)(delayed(_fit)(make, points[best], X, y, s) for s in seeds)
    fresh = [_error(e, X, y, datafit, penalty, f_star) for e in fresh]
    t1 = time.perf_counter()
    searches = Parallel(n_jobs=jobs)(delayed(_search)(make, grid, X, y, s) for s in seeds)
    private = [_error(s.best_estimator_, X, y, datafit, penalty, f_star) for s in searches]
    eps = max(s.privacy_.epsilon for s in searches)
    log(f"  {row}: private {np.mean(private):.4g}, tuned {np.mean(fresh):.4g}, eps {eps:.4f}, "
        f"{(time.perf_counter() - t1) / len(seeds):.1f} s per search")
    return {"n": n, "p": p, "private": private, "fresh": fresh, "in_sample": errors[best],
            "eps": eps, "paper": paper, "zero": (datafit.value(np.zeros(n), y) - f_star) / f_star,
            "best": points[best]}


def table(results):
    lines = ["| problem, solver | w = 0 | **private pipeline** (eps <= 1) | eps | tuned on the data, "
             "fresh seeds | ratio | tuned, in-sample | paper |",
             "|---|---|---|---|---|---|---|---|"]
    for row, r in results.items():
        lines.append(
            f"| {row} ({r['n']} x {r['p']}) | {r['zero']:.3g} | **{fmt(r['private'])}** | "
            f"{r['eps']:.4f} | {fmt(r['fresh'])} ({r['best']}) | "
            f"{np.mean(r['private']) / np.mean(r['fresh']):.2f} | {fmt(r['in_sample'])} | "
            f"{r['paper']} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--tune-seeds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--problems", nargs="+", default=list(ROWS))
    parser.add_argument("--output", default=str(RESULTS / "private_tuning.txt"))
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    results = {}
    for row in args.problems:
        log(f"{row}: the grid on {args.tune_seeds} tuning seeds, then {args.seeds} fresh seeds")
        results[row] = run(row, seeds, args.tune_seeds, args.jobs, log)
    out = (f"Private tuning: epsilon = 1 in total, delta = 1/n^2, mean ± sd over seeds "
           f"{seeds.start}-{seeds.stop - 1} (fresh), relative error (F - F*)/F*\n\n"
           + table(results))
    print(out)
    if args.output:
        pathlib.Path(args.output).write_text(out + "\n")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("private_tuning.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
