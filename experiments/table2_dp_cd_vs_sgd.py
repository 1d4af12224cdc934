"""DP-CD vs DP-SGD vs DP-SCD on the DP-CD paper's Table 2 (Mangold et al., ICML 2022).

    python experiments/table2_dp_cd_vs_sgd.py [--quick] [--jobs J] [--runs R]
                                              [--only electricity|california]
                                              [--solvers dp_cd dp_sgd dp_scd]
                                              [--passes 2 5 10 20 50] [--balanced]

Problems (Section 6; the paper gives neither regularisation strength):

* Electricity (``load_electricity``: 45,312 x 8, labels +-1), logistic loss +
  L2, ``lambda = 1/n`` (``--electricity-lambda``), where ``w = 0`` is at
  relative error 0.245, above every figure of the paper's row.
* California (``load_california``: 20,640 x 8, target in units of $100,000),
  squared loss + L1, lambda giving an exact solution with 3 nonzeros (as
  ``dp_cd_utility.py``).

Both with epsilon = 1 and delta = 1/n^2, the raw features ("imbalanced") or,
with ``--balanced``, standardized ones (public preprocessing, as the paper).

Protocol (Appendix G.1): for each number of passes (a column), tune the step
size (10 log-spaced values in [1e-2, 10] for DP-CD, ``gamma_j = gamma / M_j``;
in [1e-6, 1] for DP-SGD, ``gamma / beta``) and the clipping threshold (100
log-spaced values in [1e-3, 1e6]) over 5 runs each, and keep the best mean
relative error ``(F(w) - F*) / F*`` of the last iterate; DP-SCD (Electricity
only: it needs an L2 penalty) has no step size and is tuned on the clipping
threshold (``--scd-batch``: its mini-batch size L, default 1).  ``--quick``:
5 step sizes, 10 clipping thresholds (one per decade), 2 runs.  F* is the
exact optimum (``sparsedp.solvers.exact``); F is computed here, on the
training data (a non-private diagnostic).

DP-CD uses smoothness constants computed from the data (the paper's DP-CD
row; a ``PrivacyLeakWarning``, silenced here).  DP-SGD samples Poisson batches
of expected size 1 and is accounted by our PLD accountant (the paper used RDP:
ours needs less noise for the same epsilon).  A solver missing from
``sparsedp.solvers`` is skipped with a note.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import lambda_for_support, relative_error  # noqa: E402

import sparsedp.solvers  # noqa: E402
from sparsedp.datafits import Logistic, Squared  # noqa: E402
from sparsedp.datasets import load_california, load_electricity, standardize  # noqa: E402
from sparsedp.exceptions import PrivacyLeakWarning  # noqa: E402
from sparsedp.penalties import L1, L2  # noqa: E402
from sparsedp.solvers import exact  # noqa: E402
from sparsedp._progress import set_stage  # noqa: E402

PASSES = (2, 5, 10, 20, 50)
# Table 2 of the paper (mean of 5 runs of the tuned configuration); DP-SCD is only in
# its Figure 1, without figures
PAPER = {
    ("Electricity", False): {"DP-CD": (0.1458, 0.0842, 0.0436, 0.0147, 0.0020),
                             "DP-SGD": (0.2047, 0.1804, 0.1766, 0.1644, 0.1484)},
    ("Electricity", True): {"DP-CD": (0.0186, 0.0023, 0.0013, 0.0013, 0.0019),
                            "DP-SGD": (0.0391, 0.0189, 0.0123, 0.0106, 0.0040)},
    ("California", False): {"DP-CD": (0.1708, 0.1232, 0.0598, 0.0287, 0.0124),
                            "DP-SGD": (0.2799, 0.1863, 0.1476, 0.1094, 0.1068)},
    ("California", True): {"DP-CD": (0.0007, 0.0011, 0.0012, 0.0010, 0.0017),
                           "DP-SGD": (0.0351, 0.0226, 0.0125, 0.0087, 0.0042)},
}
SOLVERS = {"dp_cd": "DP-CD", "dp_sgd": "DP-SGD", "dp_scd": "DP-SCD"}


def problems(args):
    """[(name, X (CSC), y, datafit, penalty, F*)] the flags ask for."""
    out = []
    if args.only in (None, "electricity"):
        X, y = load_electricity()
        X = standardize(X) if args.balanced else X
        X = sp.csc_array(X)
        lam = args.electricity_lambda or 1.0 / X.shape[0]
        ref = exact(X, y, Logistic(), L2(lam))
        out.append(("Electricity", X, y, Logistic(), L2(lam), ref.diagnostics.objective))
    if args.only in (None, "california"):
        X, y = load_california()
        X = sp.csc_array(standardize(X) if args.balanced else X)
        y = y / 1e5
        lam, ref = lambda_for_support(X, y, Squared(), 3)
        out.append(("California", X, y, Squared(), L1(lam), ref.diagnostics.objective))
    return out


def grid(solver, quick, n_clips=None):
    """The hyper-parameters tuned for ``solver`` (Appendix G.1; ``n_clips`` log-spaced
    clipping thresholds in [1e-3, 1e6] instead of the paper's 100)."""
    clips = np.logspace(-3, 6, n_clips or (10 if quick else 100))
    if solver == "dp_scd":
        return [{"clip": c} for c in clips]
    steps = np.logspace(-2, 1, 10) if solver == "dp_cd" else np.logspace(-6, 0, 10)
    steps = steps[::2] if quick else steps
    return [{"step_size": s, "clip": c} for s in steps for c in clips]


def objective(X, y, datafit, penalty, coef):
    """F(w) on the training data (non-private diagnostic)."""
    return datafit.value(X @ coef, y) + penalty.value(coef)


def evaluate(solver, X, y, datafit, penalty, f_star, passes, params, seeds, scd_batch,
             sgd_sampling="poisson"):
    """Relative errors of ``solver`` with ``params`` on each seed."""
    warnings.simplefilter("ignore", PrivacyLeakWarning)  # stated in the docstring
    fit = getattr(sparsedp.solvers, solver)
    delta = 1.0 / X.shape[0] ** 2
    kwargs = dict(epsilon=1.0, delta=delta, passes=passes, **params)
    if solver == "dp_cd":
        kwargs["averaging"] = False  # the paper's last iterate
    elif solver == "dp_scd":
        kwargs["batch_size"] = scd_batch
    elif solver == "dp_sgd":
        kwargs["sampling"] = sgd_sampling
    errors = []
    for seed in seeds:
        res = fit(X, y, datafit, penalty, random_state=seed, **kwargs)
        errors.append(relative_error(objective(X, y, datafit, penalty, res.coef), f_star))
    return errors


def tune(solver, problem, passes, quick, n_runs, jobs, scd_batch, n_clips=None,
         sgd_sampling="poisson"):
    """(best mean, its std, best params) over the grid, each point on seeds 0..n_runs-1."""
    name, X, y, datafit, penalty, f_star = problem
    points = grid(solver, quick, n_clips)
    results = Parallel(n_jobs=jobs)(
        delayed(evaluate)(solver, X, y, datafit, penalty, f_star, passes, params,
                          range(n_runs), scd_batch, sgd_sampling) for params in points)
    means = np.array([np.mean(r) for r in results])
    best = int(np.argmin(means))
    return float(means[best]), float(np.std(results[best])), points[best]


def cell(value, paper):
    return f"{value:.4f}" + ("" if paper is None else f" ({paper:.4f})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="5 step sizes, 10 clipping thresholds, 2 runs")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per configuration (default 5, --quick 2)")
    parser.add_argument("--jobs", type=int, default=1, help="joblib workers")
    parser.add_argument("--only", choices=["electricity", "california"])
    parser.add_argument("--solvers", nargs="+", choices=list(SOLVERS), default=list(SOLVERS))
    parser.add_argument("--passes", type=int, nargs="+", default=list(PASSES),
                        choices=list(PASSES))
    parser.add_argument("--balanced", action="store_true",
                        help="standardized features (the paper's 'balanced' rows)")
    parser.add_argument("--electricity-lambda", type=float, default=None,
                        help="L2 strength on Electricity (default 1/n)")
    parser.add_argument("--scd-batch", type=int, default=1, help="DP-SCD mini-batch size")
    parser.add_argument("--sgd-sampling", choices=["poisson", "fixed"], default="poisson",
                        help="DP-SGD's batches: Poisson (PLD) or fixed size (RDP without "
                             "replacement)")
    parser.add_argument("--clips", type=int, default=None,
                        help="number of clipping thresholds (default: 100, --quick 10)")
    args = parser.parse_args(argv)
    n_runs = args.runs or (2 if args.quick else 5)
    warnings.simplefilter("ignore", PrivacyLeakWarning)

    solvers = []
    for solver in args.solvers:
        if getattr(sparsedp.solvers, solver, None) is None:
            print(f"note: sparsedp.solvers.{solver} does not exist yet: "
                  f"{SOLVERS[solver]} rows skipped")
        else:
            solvers.append(solver)
    kind = "balanced" if args.balanced else "imbalanced"
    rows = []
    for problem in problems(args):
        name, X, y, datafit, penalty, f_star = problem
        print(f"{name} ({kind}): n={X.shape[0]}, p={X.shape[1]}, {datafit!r} + {penalty!r}, "
              f"F*={f_star:.6g}, F(0) rel. error="
              f"{relative_error(objective(X, y, datafit, penalty, np.zeros(X.shape[1])), f_star):.4f}",
              flush=True)
        for solver in solvers:
            if solver == "dp_scd" and not isinstance(penalty, L2):
                print(f"  {SOLVERS[solver]}: not run on {name} (needs an L2 penalty)")
                continue
            label = SOLVERS[solver]
            paper = PAPER[name, args.balanced].get(label)
            cells = []
            for passes in args.passes:
                t0 = time.perf_counter()
                set_stage(f"{name}, {label}, {passes} passes: tuning")
                mean, std, best = tune(solver, problem, passes, args.quick, n_runs,
                                       args.jobs, args.scd_batch, args.clips,
                                       args.sgd_sampling)
                chosen = ", ".join(f"{k} {v:.3g}" for k, v in best.items())
                print(f"  {label} {passes:>2} passes: {mean:.4f} +- {std:.1e} ({chosen}) "
                      f"[{time.perf_counter() - t0:.0f} s]", flush=True)
                cells.append(cell(mean, None if paper is None
                                  else paper[PASSES.index(passes)]))
            rows.append((f"{name} ({kind})", label, cells))

    print(f"\nRelative error (F(w) - F*) / F*, best of grid by the mean of {n_runs} runs, "
          f"epsilon = 1, delta = 1/n^2; the paper's Table 2 in parentheses"
          + (" (--quick grid)" if args.quick else "")
          + (f" ({args.clips} clipping thresholds)" if args.clips else "") + "\n")
    print("| problem | solver | " + " | ".join(f"{p} passes" for p in args.passes) + " |")
    print("|---|---|" + "---|" * len(args.passes))
    for problem, label, cells in rows:
        print(f"| {problem} | {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("table2_dp_cd_vs_sgd.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
