"""Reproduce the DP-GCD paper's Table 3 and the DP-CD paper's Table 2 and figures.

    python experiments/reproduce.py {table3,table2,figures,all} [--quick | --full]
        [--jobs J] [--fresh-runs K] [--results-dir DIR] [--figures-dir DIR]
        [--only NAME ...]

Every configuration is a function returning a list of studies, each one call of
:func:`sparsedp.experiments.run_grid`: ``Study(problems, grid, epsilon, delta,
runs)``.  The results go to a resumable CSV in ``--results-dir`` (default
``experiments/results/repro``, not kept in git; an interrupted sweep restarts
where it stopped, and a finished one only rebuilds its tables and figures),
the tables (ours beside the paper's, the runner's summaries, the support table,
the tuning cost, the noise of our accounting against the papers') to a text
file next to it, and the figures to ``--figures-dir`` (default
``docs/_static/repro``).  ``docs/reproductions.rst`` shows and discusses them.

* ``table3``: Mangold, Bellet, Salmon, Tommasi (AISTATS 2023), Table 3: DP-CD,
  DP-SGD and DP-GCD (GS-r, exponential selection) on four L1 problems (square,
  california, dorothea, madelon) at epsilon = 1, delta = 1/n^2; support
  recovery and relative error of the best grid point.  Also the error against
  passes of the same sweep (the DP-GCD paper's Figure 1, panels e-h).
* ``table2``: Mangold, Bellet, Salmon, Tommasi (ICML 2022), Table 2: DP-CD and
  DP-SGD, tuned separately for 2, 5, 10, 20 and 50 passes, on Electricity and
  California (raw and standardized, epsilon = 1) and Sparse LASSO (epsilon =
  10), delta = 1/n^2.
* ``figures``: the DP-CD paper's Figures 1 and 2: the same sweep as ``table2``
  (resumed, not recomputed) plus DP-SCD on Electricity, plotted.

Grids.  The default grids are windows of the papers' grids (exact subsets of
their values) around the best points the earlier scripts found
(``dp_gcd_table3.py``, ``table2_dp_cd_vs_sgd.py``, ``dp_cd_utility.py``) or
the hyper-parameters the DP-GCD paper selected (its Table 4): the papers' full
grids (3,500 DP-GCD points per problem in Table 3, 1,000 points per number of
passes and solver in Table 2, 5 runs each) take days on two cores.  A best
point on the border of its window is marked in the tables.  ``--full``: the
papers' grids.  ``--quick``: a few points and 2 runs, to check the pipeline.

Privacy.  As in the papers' experiments, the smoothness constants are computed
from the data (a leak: the fits report epsilon = inf) except on Sparse LASSO,
whose N(0, 1) features give DP-CD the public M_j = 2; standardizing with the
data's statistics is not charged either.  The noise is calibrated by our
accountants (exact GDP for DP-CD, PLD for DP-SGD, optimal composition for
DP-GCD), tighter than the papers' RDP: less noise at the same epsilon.  The
relative errors, the supports and the choice of the best point are non-private
diagnostics (see ``sparsedp.experiments.tuning_cost``).
"""
import argparse
import json
import math
import sys
import time
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import lambda_for_support, paper_noise_multiplier  # noqa: E402

from sparsedp.datafits import Logistic, Squared  # noqa: E402
from sparsedp.datasets import (load_california, load_dorothea, load_electricity,  # noqa: E402
                               load_madelon, make_sparse_lasso, standardize)
from sparsedp.exceptions import PrivacyLeakWarning  # noqa: E402
from sparsedp.experiments import (Problem, plot_error_vs_passes, rerun_best,  # noqa: E402
                                  run_grid, summarize, support_table, tuning_cost)
from sparsedp.penalties import L1, L2  # noqa: E402
from sparsedp.privacy import (calibrate_gaussian, calibrate_sampled_gaussian,  # noqa: E402
                              calibrate_sampled_gaussian_pld)
from sparsedp.solvers import calibrate_dp_gcd  # noqa: E402

RESULTS = HERE / "results" / "repro"
FIGURES = HERE.parent / "docs" / "_static" / "repro"
#: lambdas and supports of the DP-GCD problems, from dp_gcd_table3.py
GCD_CACHE = HERE / "results" / "dp_gcd_problems.json"

#: base seed of the best points' fresh runs (the grids use 0, run_grid's default)
FRESH_SEED = 1
Study = namedtuple("Study", "problems grid epsilon delta runs")
Study.__doc__ = "One run_grid call: problems, {solver: {param: values}}, budget, runs."

LABELS = {"dp_cd": "DP-CD", "dp_sgd": "DP-SGD", "dp_gcd": "DP-GCD", "dp_scd": "DP-SCD"}
COLORS = {"dp_cd": "tab:blue", "dp_sgd": "tab:orange", "dp_gcd": "tab:green",
          "dp_scd": "tab:red"}

# ---------------------------------------------------------------- the papers' grids
#: DP-GCD paper, Table 2 (the same grid on every problem)
GCD_PAPER_GRID = {
    "dp_cd": {"passes": [0.001, 0.01, 0.1, 1, 2, 3, 5, 10, 20],
              "step_size": np.logspace(-2, 1, 10), "clip": np.logspace(-4, 6, 50)},
    "dp_sgd": {"passes": [0.001, 0.01, 0.1, 1, 2, 3, 5, 10, 20],
               "step_size": np.logspace(-6, 0, 10), "clip": np.logspace(-4, 6, 50)},
    "dp_gcd": {"n_iter": [1, 2, 4, 7, 10, 15, 20],
               "step_size": np.logspace(-2, 1, 10), "clip": np.logspace(-4, 6, 50)},
}
#: DP-CD paper, Appendix G.1 (DP-SCD has no step size; mini-batch 1 and 100)
CD_PASSES = [2, 5, 10, 20, 50]
CD_PAPER_GRID = {
    "dp_cd": {"step_size": np.logspace(-2, 1, 10), "clip": np.logspace(-3, 6, 100)},
    "dp_sgd": {"step_size": np.logspace(-6, 0, 10), "clip": np.logspace(-3, 6, 100)},
    "dp_scd": {"batch_size": [1, 100], "clip": np.logspace(-3, 6, 100)},
}

# ---------------------------------------------------------------- the papers' figures
#: DP-GCD paper, Table 3: (correct, incorrect, relative error), mean of 5 runs
GCD_PAPER = {
    "square": {"dp_cd": (0, 0, 0.75), "dp_sgd": (0, 3, 0.75), "dp_gcd": (2, 0, 0.35)},
    "california": {"dp_cd": (3, 2, 0.0024), "dp_sgd": (3, 5, 0.020),
                   "dp_gcd": (2, 0, 0.00056)},
    "dorothea": {"dp_cd": (1, 1, 0.77), "dp_sgd": (0, 0, 0.78), "dp_gcd": (1, 0, 0.64)},
    "madelon": {"dp_cd": (0, 0, 0.0085), "dp_sgd": (0, 0, 0.012), "dp_gcd": (1, 0, 0.0015)},
}
#: DP-CD paper, Table 2: relative error at 2, 5, 10, 20, 50 passes, mean of 5 runs
CD_PAPER = {
    "Electricity (imbalanced)": {"dp_cd": (0.1458, 0.0842, 0.0436, 0.0147, 0.0020),
                                 "dp_sgd": (0.2047, 0.1804, 0.1766, 0.1644, 0.1484)},
    "Electricity (balanced)": {"dp_cd": (0.0186, 0.0023, 0.0013, 0.0013, 0.0019),
                               "dp_sgd": (0.0391, 0.0189, 0.0123, 0.0106, 0.0040)},
    "California (imbalanced)": {"dp_cd": (0.1708, 0.1232, 0.0598, 0.0287, 0.0124),
                                "dp_sgd": (0.2799, 0.1863, 0.1476, 0.1094, 0.1068)},
    "California (balanced)": {"dp_cd": (0.0007, 0.0011, 0.0012, 0.0010, 0.0017),
                              "dp_sgd": (0.0351, 0.0226, 0.0125, 0.0087, 0.0042)},
    "Sparse LASSO": {"dp_cd": (0.2498, 0.4702, 0.5982, 0.7160, 0.7551),
                     "dp_sgd": (0.7551, 0.7551, 0.7551, 0.7551, 0.7551)},
}


def near(values, center, k):
    """The values of a paper's grid within ``k`` places of the one nearest ``center``."""
    values = np.asarray(values, dtype=float)
    i = int(np.argmin(np.abs(np.log(values) - math.log(center))))
    return values[max(0, i - k):i + k + 1]


def between(values, low, high, every=1):
    """Every ``every``-th value of a paper's grid, those in ``[low, high]``."""
    values = np.asarray(values, dtype=float)[::every]
    return values[(values >= low * (1 - 1e-9)) & (values <= high * (1 + 1e-9))]


# ---------------------------------------------------------------- problems
_PROBLEMS = {}


def _cached(key, build):
    if key not in _PROBLEMS:
        _PROBLEMS[key] = build()
    return _PROBLEMS[key]


def _check_support(problem, k):
    """The exact solution must have the paper's number of nonzeros."""
    size = problem.support.size
    if size != k:
        raise RuntimeError(f"{problem.name}: the exact solution has {size} nonzeros, "
                           f"the paper's problem {k}")
    return problem


def _gcd_lambda(name):
    """The L1 strength of dp_gcd_table3.py (checked there against F* and the support)."""
    return json.loads(GCD_CACHE.read_text())[name]["lambda"]


def _lambda(cache, name, X, y, datafit, k):
    """An L1 strength whose exact solution has ``k`` nonzeros, cached in ``cache``."""
    table = json.loads(cache.read_text()) if cache.exists() else {}
    entry = table.get(name)
    if entry is None or entry["shape"] != list(X.shape):
        lam, _ = lambda_for_support(X, y, datafit, k)
        table[name] = entry = {"shape": list(X.shape), "lambda": lam, "nonzeros": k}
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    return entry["lambda"]


def gcd_problem(name):
    """The DP-GCD paper's L1 problems, as dp_gcd_table3.py defines them.

    square: make_sparse_lasso(1000, 1000, 10, noise=0.1) (its w = 0 is at 0.67,
    the paper's 0.75 at most); california: scikit-learn's eight features
    (ratios of the StatLib columns), standardized, target in $100,000;
    dorothea: train split, binary; madelon: train + valid (n = 2,600, the
    paper's Table 1), standardized.  Lambdas give the paper's |w*|.
    """
    def build():
        if name == "square":
            X, y, _ = make_sparse_lasso(1000, 1000, 10, noise=0.1, random_state=0)
            datafit, k = Squared(), 7
        elif name == "california":
            X, y = load_california()
            lon, lat, age, rooms, beds, pop, households, income = X.T
            X = standardize(np.column_stack([income, age, rooms / households,
                                             beds / households, pop, pop / households,
                                             lat, lon]))
            y, datafit, k = y / 1e5, Squared(), 3
        elif name == "dorothea":
            (X, y), datafit, k = load_dorothea(), Logistic(), 72
        elif name == "madelon":
            X, y = load_madelon(split="train+valid")
            X, datafit, k = standardize(X), Logistic(), 3
        else:
            raise ValueError(f"unknown DP-GCD problem {name!r}")
        return _check_support(Problem(name, X, y, datafit, L1(_gcd_lambda(name)), smoothness="leak"), k)
    return _cached(("gcd", name), build)


CD_NAMES = ["Electricity (imbalanced)", "Electricity (balanced)", "California (imbalanced)",
            "California (balanced)", "Sparse LASSO"]


def _standardized(name):
    return name.endswith("(balanced)")


def cd_problem(name, results_dir):
    """The DP-CD paper's problems, as table2_dp_cd_vs_sgd.py and dp_cd_utility.py define them.

    Electricity: logistic + L2(1/n) (the paper gives no lambda), raw or
    standardized.  California: the raw StatLib features or standardized ones,
    target in $100,000, squared + L1 with 3 nonzeros.  Sparse LASSO:
    ``make_sparse_lasso(1000, 1000, 10, noise=1.86)`` (its w = 0 is at 0.7514,
    the paper's 0.7551), squared + L1 with 10 nonzeros, public M_j = 2.
    """
    cache = Path(results_dir) / "lambdas.json"

    def build():
        if name.startswith("Electricity"):
            X, y = load_electricity()
            X = standardize(X) if _standardized(name) else X
            return Problem(name, X, y, Logistic(), L2(1.0 / X.shape[0]), smoothness="leak")
        if name.startswith("California"):
            X, y = load_california()
            X = standardize(X) if _standardized(name) else X
            y = y / 1e5
            lam = _lambda(cache, name, X, y, Squared(), 3)
            return _check_support(Problem(name, X, y, Squared(), L1(lam), smoothness="leak"), 3)
        if name == "Sparse LASSO":
            X, y, _ = make_sparse_lasso(1000, 1000, 10, noise=1.86, random_state=0)
            lam = _lambda(cache, name, X, y, Squared(), 10)
            # N(0, 1) features: M_j = 2 E[x^2] = 2, public
            return _check_support(Problem(name, X, y, Squared(), L1(lam),
                                          smoothness=np.full(1000, 2.0)), 10)
        raise ValueError(f"unknown DP-CD problem {name!r}")
    return _cached(("cd", name), build)


def _selected(names, only):
    if not only:
        return list(names)
    chosen = [name for name in names if any(o.lower() in name.lower() for o in only)]
    if not chosen:
        raise SystemExit(f"--only {' '.join(only)}: no problem of {', '.join(names)}")
    return chosen


# ---------------------------------------------------------------- configurations
#: reduced grids: the centre of each window (step, clip; and the budget kept),
#: from dp_gcd_table3.py (DP-GCD) and the DP-GCD paper's Table 4 (DP-CD, DP-SGD)
GCD_CENTRES = {
    "square": {"dp_gcd": (2.15, 212), "dp_cd": (10.0, 9.10e3), "dp_sgd": (1e-4, 4.94)},
    "california": {"dp_gcd": (1.0, 82.9), "dp_cd": (1.0, 20.2), "dp_sgd": (2.15e-5, 12.6)},
    "dorothea": {"dp_gcd": (2.15, 20.2), "dp_cd": (4.64, 0.045), "dp_sgd": (1e-6, 1e-4)},
    "madelon": {"dp_gcd": (2.15, 7.91), "dp_cd": (2.15, 7.91), "dp_sgd": (1.0, 6.87e-3)},
}


def table3(mode="reduced", only=None, results_dir=RESULTS):
    """DP-GCD paper, Table 3: one study per problem (delta = 1/n^2), epsilon 1, 5 runs."""
    studies = []
    for name in _selected(GCD_PAPER, only):
        problem = gcd_problem(name)
        if mode == "full":
            grid = GCD_PAPER_GRID
        elif mode == "quick":
            c = GCD_CENTRES[name]
            grid = {solver: {"step_size": [c[solver][0]],
                             "clip": near(GCD_PAPER_GRID[solver]["clip"], c[solver][1], 1)}
                    for solver in ("dp_cd", "dp_sgd", "dp_gcd")}
            grid["dp_cd"]["passes"] = [0.1]
            grid["dp_sgd"]["passes"] = [0.01]
            grid["dp_gcd"]["n_iter"] = [1, 2]
        else:
            c = GCD_CENTRES[name]
            grid = {}
            for solver in ("dp_cd", "dp_sgd", "dp_gcd"):
                paper = GCD_PAPER_GRID[solver]
                clips = near(paper["clip"], c[solver][1], 2 if solver == "dp_sgd" else 5)
                if solver != "dp_gcd":
                    # the paper's Table 4 points, not ours: every 5th clip of the
                    # paper's range too, so the window cannot hide a better region
                    clips = np.union1d(clips, paper["clip"][::5])
                grid[solver] = {"step_size": near(paper["step_size"], c[solver][0],
                                                  2 if solver == "dp_gcd" else 1),
                                "clip": clips}
            grid["dp_gcd"]["n_iter"] = GCD_PAPER_GRID["dp_gcd"]["n_iter"]
            grid["dp_cd"]["passes"] = [0.001, 0.01, 0.1, 1, 3, 5, 10]
            # DP-SGD with L1 is eager, O(p) a step: 1.3 s a pass on dorothea
            grid["dp_sgd"]["passes"] = ([0.001, 0.01, 0.1] if name == "dorothea"
                                        else [0.001, 0.01, 0.1, 1, 10, 20])
        # budgets below one update (DP-CD: passes * p < 1, DP-SGD: passes * n < 1) are
        # refused by the solvers; in the paper's code they leave w = 0
        grid["dp_cd"]["passes"] = [b for b in grid["dp_cd"]["passes"]
                                   if b * problem.n_features >= 1] or [1]
        grid["dp_sgd"]["passes"] = [b for b in grid["dp_sgd"]["passes"]
                                    if b * problem.n_samples >= 1]
        for solver in grid:
            grid[solver] = {k: grid[solver][k] for k in sorted(grid[solver])}
        studies.append(Study([problem], {**grid, "dp_gcd": {**grid["dp_gcd"],
                                                            "rule": "gs-r",
                                                            "selection": "exponential"}},
                             1.0, 1.0 / problem.n_samples**2, 2 if mode == "quick" else 5))
    return studies


#: reduced grids for Table 2: clip windows (in the paper's 100-value grid) around the
#: earlier best points (notes of table2_dp_cd_vs_sgd.py, dp_cd_utility.py); the
#: standardized problems, never tuned before, get a wide one
CD_WINDOWS = {
    "Electricity (imbalanced)": {"dp_cd": (0.1, 100), "dp_sgd": (0.1, 100),
                                 "dp_scd": (1e-3, 1)},
    "Electricity (balanced)": {"dp_cd": (1e-2, 1e3), "dp_sgd": (1e-2, 1e3),
                               "dp_scd": (1e-3, 10)},
    "California (imbalanced)": {"dp_cd": (1e3, 1e6), "dp_sgd": (10, 1e5)},
    "California (balanced)": {"dp_cd": (1e-2, 1e3), "dp_sgd": (1e-2, 1e3)},
    "Sparse LASSO": {"dp_cd": (10, 1e3), "dp_sgd": (0.01, 100)},
}


def table2(mode="reduced", only=None, results_dir=RESULTS, scd=False):
    """DP-CD paper, Table 2: one study per problem; ``scd``: DP-SCD on Electricity too."""
    studies = []
    for name in _selected(CD_NAMES, only):
        problem = cd_problem(name, results_dir)
        solvers = ["dp_cd", "dp_sgd"] + (["dp_scd"] if scd and name.startswith("Elec")
                                         else [])
        grid = {}
        for solver in solvers:
            paper = CD_PAPER_GRID[solver]
            if mode == "full":
                space = dict(paper)
            elif mode == "quick":
                low, high = CD_WINDOWS[name][solver]
                space = {"clip": between(paper["clip"], low, high, 12)[:2]}
                if solver == "dp_scd":
                    space["batch_size"] = [100]
                else:
                    space["step_size"] = [1.0 if solver == "dp_cd" else 1e-2]
            else:
                low, high = CD_WINDOWS[name][solver]
                space = {"clip": between(paper["clip"], low, high, 4)}
                if solver == "dp_cd":
                    space["step_size"] = paper["step_size"][2:9]      # 0.046 .. 4.64
                    # DP-CD is cheap: every 2nd clip (Sparse LASSO, whose 2-pass
                    # runs spread most: every clip of the paper's grid)
                    space["clip"] = between(paper["clip"], low, high,
                                            1 if name == "Sparse LASSO" else 2)
                elif solver == "dp_sgd" and name == "Sparse LASSO":
                    # 1 to 3.4 s a fit (eager L1 steps, p = 1000): a coarse grid
                    space["step_size"] = paper["step_size"][0:7:2]    # 1e-6 .. 1e-2
                    space["clip"] = between(paper["clip"], 0.01, high, 16)
                elif solver == "dp_sgd":
                    # raw: 1e-4 .. 0.215; standardized: 4.6e-6 .. 0.215
                    space["step_size"] = paper["step_size"][1 if _standardized(name) else 3:9]
                else:
                    space["batch_size"] = paper["batch_size"]
            space["passes"] = CD_PASSES[::2] if mode == "quick" else CD_PASSES
            if solver == "dp_cd":
                space["averaging"] = False                            # the last iterate
            grid[solver] = {k: space[k] for k in sorted(space)}
        studies.append(Study([problem], grid, 10.0 if name == "Sparse LASSO" else 1.0,
                             1.0 / problem.n_samples**2, 2 if mode == "quick" else 5))
    return studies


def figures(mode="reduced", only=None, results_dir=RESULTS):
    """DP-CD paper, Figures 1 and 2: Table 2's sweep plus DP-SCD on Electricity."""
    return table2(mode, only, results_dir, scd=True)


CONFIGS = {"table3": table3, "table2": table2, "figures": figures}
CSV = {"table3": "dp_gcd_table3", "table2": "dp_cd_table2", "figures": "dp_cd_table2"}


# ---------------------------------------------------------------- running and reporting
def run(config, mode, jobs, results_dir, only=None, fresh_runs=10):
    """Every study of ``config`` through run_grid, then its best points (per number of
    passes: the overall best is among them) re-run on ``fresh_runs`` fresh seeds;
    returns [(study, rows, fresh)]."""
    suffix = {"reduced": "", "quick": "_quick", "full": "_full"}[mode]
    path = Path(results_dir) / f"{CSV[config]}{suffix}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for study in CONFIGS[config](mode, only, results_dir):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            # the papers' protocol: M_j from the data, recorded as a leak in every row
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            rows = run_grid(study.problems, study.grid, epsilon=study.epsilon,
                            delta=study.delta, n_runs=study.runs, n_jobs=jobs, results=path,
                            resume=True, progress=sys.stderr.isatty())
            fresh = rerun_best(study.problems, rows, n_runs=fresh_runs, seed=FRESH_SEED,
                               by_passes=True, n_jobs=jobs,
                               fresh_results=path.with_suffix(".fresh.csv"),
                               progress=sys.stderr.isatty())
        names = ", ".join(p.name for p in study.problems)
        print(f"[{config}] {names}: {len(rows)} fits, {len(fresh)} fresh "
              f"[{time.perf_counter() - t0:.0f} s]", flush=True)
        out.append((study, rows, fresh))
    return out


def _edge(row, grid, paper):
    """A '^' note naming the tuned parameters on the border of their reduced list
    but inside the paper's grid: a better point may lie outside the window."""
    space, full = grid[row["solver"]], paper[row["solver"]]

    def border(values, v):
        return math.isclose(v, float(np.min(values))) or math.isclose(v, float(np.max(values)))
    at = [k for k, v in row["params"].items()
          if k in full and k not in ("passes", "n_iter") and isinstance(v, float)
          and len(np.atleast_1d(space[k])) > 1 and border(space[k], v)
          and not border(full[k], v)]
    return "^" + ",".join(at) if at else ""


def _params(row):
    short = {"step_size": "step", "clip": "clip", "passes": "passes", "n_iter": "T",
             "batch_size": "L"}
    return ", ".join(f"{short[k]} {v:.3g}" for k, v in row["params"].items() if k in short)


def _tuning_lines(results, mode):
    """One line per study: fits on its data, and what publishing all of them costs."""
    lines = []
    for study, rows, _ in results:
        summary = summarize(rows)
        points = sum(r["n_points"] for r in summary.rows)
        cost = tuning_cost(points, study.runs, epsilon=study.epsilon, delta=study.delta)
        lines.append(f"  {study.problems[0].name:<25} {points:>5} points x {study.runs} runs = "
                     f"{cost.n_fits:>6} fits at ({study.epsilon:g}, {study.delta:.2g}): "
                     f"basic eps {cost.basic_epsilon:.4g}, optimal {cost.optimal_epsilon:.4g}, "
                     f"Gaussian {cost.gdp_epsilon:.4g}")
    return lines


def report_table3(results, mode):
    """The DP-GCD paper's Table 3, ours beside the paper's, and the runner's tables."""
    lines = [f"DP-GCD paper (AISTATS 2023), Table 3: correct / incorrect nonzeros of w (mean "
             f"over runs) and relative error (F(w) - F*) / F* (mean, [min, max]) at the best "
             f"grid point by mean objective, re-run on fresh seeds (seeds that did not choose "
             f"it); in-sample: the mean of the runs that chose it; epsilon = 1, delta = 1/n^2; "
             f"{mode} grid",
             "^: the best point is on the border of its reduced window (not of the paper's "
             "grid) in that parameter; ledger eps inf: M_j from the data, as in the paper",
             "",
             f"{'problem':<11}{'|w*|':>5}  {'solver':<7}{'ours, fresh seeds':<40}"
             f"{'in-sample':<11}{'paper':<17}{'best point':<44}{'points x runs':>17}  ledger eps"]
    for study, rows, fresh in results:
        for r in summarize(rows, fresh=fresh).rows:
            pc, pw, pe = GCD_PAPER[r["problem"]][r["solver"]]
            grid_size = f"{r['n_points']} x {study.runs}, {r['n_runs']} fresh"
            ours = (f"{r['support_correct_mean']:.1f} / {r['support_incorrect_mean']:.1f} "
                    f"({r['rel_error_mean']:.2g} [{r['rel_error_min']:.2g}, "
                    f"{r['rel_error_max']:.2g}])")
            paper = f"{pc} / {pw} ({pe:.2g})"
            best = f"{_params(r)} {_edge(r, study.grid, GCD_PAPER_GRID)}".strip()
            lines.append(f"{r['problem']:<11}{r['support_true']:>5}  "
                         f"{LABELS[r['solver']]:<7}{ours:<40}"
                         f"{r['in_sample_rel_error_mean']:<11.2g}{paper:<17}{best:<44}"
                         f"{grid_size:>17}  {r['ledger_epsilon']:g}")
    lines += ["", "Tuning cost (every fit reads the same data; what publishing all of them "
              "would cost if each fit were private):"] + _tuning_lines(results, mode)
    lines += ["", "Noise: DP-GCD's epsilon_0 per mechanism (T selections and T gradient "
              "releases; ours: calibrate_dp_gcd, the tightest valid composition)"]
    for study, *_ in results:
        eps0 = [calibrate_dp_gcd(study.epsilon, study.delta, n_iter=T, selection="exponential")
                for T in (1, 2, 4, 10, 20)]
        lines.append(f"  {study.problems[0].name:<11} T = 1, 2, 4, 10, 20: epsilon_0 = "
                     + ", ".join(f"{e:.4g}" for e in eps0))
    all_rows = [row for _, rows, _ in results for row in rows]
    all_fresh = [row for *_, fresh in results for row in fresh]
    lines += ["", str(summarize(all_rows, fresh=all_fresh, in_sample=True)), "",
              support_table(all_rows, fresh=all_fresh)]
    return "\n".join(lines) + "\n"


def report_table2(results, mode):
    """The DP-CD paper's Table 2, ours (paper) per number of passes."""
    lines = [f"DP-CD paper (ICML 2022), Table 2: relative error (F(w) - F*) / F* of the last "
             f"iterate, mean of fresh runs (seeds that did not choose it) of the best grid point "
             f"by mean objective, tuned per number of passes; ours (paper); {mode} grid",
             "^: the best point is on the border of its reduced window (not of the paper's "
             "grid) in that parameter; ledger eps inf: M_j (DP-CD) or beta (DP-SGD) from "
             "the data, as in the paper",
             ""]
    head = f"{'problem':<25}{'eps':>4}  {'solver':<7}" + "".join(
        f"{f'{p} passes':<18}" for p in CD_PASSES) + "ledger eps"
    lines.append(head)
    notes = []
    for study, rows, fresh in results:
        by = {}
        for r in summarize(rows, by_passes=True, fresh=fresh).rows:
            by.setdefault(r["solver"], {})[r["passes"]] = r
        for solver, cells in by.items():
            name = study.problems[0].name
            paper = CD_PAPER.get(name, {}).get(solver)
            text = []
            for k, p in enumerate(CD_PASSES):
                r = cells.get(float(p))
                if r is None:
                    text.append(f"{'-':<18}")
                    continue
                edge = _edge(r, study.grid, CD_PAPER_GRID)
                cell = f"{r['rel_error_mean']:.4f}{'^' if edge else ''}" + (
                    f" ({paper[k]:.4f})" if paper else "")
                text.append(f"{cell:<18}")
                notes.append(f"  {name:<25}{LABELS[solver]:<7}{p:>3} passes: "
                             f"{r['rel_error_mean']:.4f} [{r['rel_error_min']:.4f}, "
                             f"{r['rel_error_max']:.4f}], in-sample "
                             f"{r['in_sample_rel_error_mean']:.4f}  {_params(r)} {edge}".rstrip())
            eps = max(c["ledger_epsilon"] for c in cells.values())
            lines.append(f"{name:<25}{study.epsilon:>4g}  {LABELS[solver]:<7}"
                         + "".join(text) + f"{eps:g}")
    lines += ["", "Best points (mean [min, max] over their fresh runs; in-sample: the mean of "
              "the runs that chose them):"] + notes
    lines += ["", "Tuning cost (every fit reads the same data; what publishing all of them "
              "would cost if each fit were private):"] + _tuning_lines(results, mode)
    lines += ["", "Noise multipliers, ours vs the papers' RDP accounting (same epsilon, delta):"]
    for study, *_ in results:
        problem = study.problems[0]
        n, p = problem.n_samples, problem.n_features
        eps, delta = study.epsilon, study.delta
        for passes in (2, 50):
            cd_ours = calibrate_gaussian(eps, delta, passes * p)
            cd_paper = paper_noise_multiplier(eps, delta, passes * p)
            sgd_ours = calibrate_sampled_gaussian_pld(eps, delta, 1.0 / n, passes * n)
            sgd_rdp = calibrate_sampled_gaussian(eps, delta, 1.0 / n, passes * n)
            lines.append(f"  {problem.name:<25}{passes:>3} passes: DP-CD {cd_ours:.4g} "
                         f"(paper's Eq. 18: {cd_paper:.4g}, x{cd_paper / cd_ours:.3f}); "
                         f"DP-SGD PLD {sgd_ours:.4g} (RDP {sgd_rdp:.4g}, "
                         f"x{sgd_rdp / sgd_ours:.3f})")
    return "\n".join(lines) + "\n"


def plot(results, path, title):
    """One panel per problem (each at its own epsilon): plot_error_vs_passes on each."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(4.6 * len(results), 3.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(results), squeeze=False)[0])
    for ax, (study, _, rows) in zip(axes, results):
        # one colour per solver in every panel (the papers': DP-CD blue, DP-SGD orange,
        # DP-SCD red); plot_error_vs_passes draws the solvers in sorted order
        ax.set_prop_cycle(color=[COLORS[s] for s in sorted({r["solver"] for r in rows})])
        plot_error_vs_passes(rows, ax=ax)
        ax.set_title(f"{study.problems[0].name}, eps = {study.epsilon:g}", fontsize=10)
        ax.set_ylabel("relative error (F - F*) / F*", fontsize=9)
    fig.suptitle(title, fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", choices=[*CONFIGS, "all"])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="a few grid points, 2 runs: checks the pipeline "
                      "(8 s with --only california)")
    size.add_argument("--full", action="store_true", help="the papers' full grids (days)")
    parser.add_argument("--jobs", type=int, default=1, help="joblib workers (n_jobs)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS,
                        help="CSV files and text tables (default experiments/results/repro)")
    parser.add_argument("--figures-dir", type=Path, default=FIGURES,
                        help="PNG figures (default docs/_static/repro)")
    parser.add_argument("--fresh-runs", type=int, default=10,
                        help="runs of each best point on fresh seeds (10): the figures reported")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="only the problems whose name contains one of these")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full" if args.full else "reduced"
    suffix = {"reduced": "", "quick": "_quick", "full": "_full"}[mode]
    configs = ["table3", "figures"] if args.config == "all" else [args.config]
    written = []
    for config in configs:
        t0 = time.perf_counter()
        results = run(config, mode, args.jobs, args.results_dir, args.only, args.fresh_runs)
        if config == "table3":
            text = report_table3(results, mode)
            written.append(args.results_dir / f"table3{suffix}.txt")
            written.append(plot(results, args.figures_dir / f"dp_gcd_error_vs_passes{suffix}.png",
                                "DP-GCD paper's problems: best point per budget, "
                                "min / mean / max over fresh runs"))
        else:
            text = report_table2(results, mode)
            written.append(args.results_dir / f"table2{suffix}.txt")
            if config == "figures":
                imbalanced = [x for x in results if "imbalanced" in x[0].problems[0].name]
                balanced = [x for x in results if x not in imbalanced]
                for part, group, title in (
                        ("imbalanced", imbalanced, "DP-CD paper, Figure 1 (raw features)"),
                        ("balanced", balanced, "DP-CD paper, Figure 2 (standardized; Sparse "
                                               "LASSO)")):
                    if group:
                        written.append(plot(group, args.figures_dir /
                                            f"dp_cd_{part}{suffix}.png", title))
        written_text = [w for w in written if w.suffix == ".txt"][-1]
        written_text.write_text(text)
        print(text)
        print(f"[{config}] {time.perf_counter() - t0:.0f} s", flush=True)
    print("written: " + ", ".join(str(w) for w in written))


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("reproduce.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
