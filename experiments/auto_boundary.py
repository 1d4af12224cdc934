"""Where solver="auto" should switch to DP-CD: the n/p ratio, at a given epsilon (default 1).

    python experiments/auto_boundary.py [--quick] [--families NAME ...] [--ratios R ...]
                                        [--epsilon 1] [--seeds 3] [--n-jobs 2] [--out FILE]

``sparsedp.linear_model.choose_solver`` picks DP-CD from some n/p on, else DP-GCD
(a penalty with an L1 part) or DP-SGD (none).  ``experiments/defaults.py``
measured the rule only at n/p <= 1 and n/p >= 2,580; this script measures the
ratios in between, with the protocol of ``defaults.py`` (its ``Problem``, ``fit``
and ``Sweep``): (epsilon, delta) = (1, 1/n^2), every configuration on the same
``--seeds`` seeds, a solver's figure the best over its grid of the mean relative
error ``(F(w) - F*) / F*``, the clipping threshold ``kappa x unit``.

Solvers (each at the variant ``defaults.py`` recommends):

* DP-CD: ``averaging=False, order="shuffle"``, passes ``CD_PASSES``;
* DP-GCD: ``rule="gs-r", selection="exponential"``, ``n_iter`` in ``GCD_ITERS``;
* DP-SGD (L2 families only; it never won on L1 in ``defaults.py``): Poisson
  batches of expected size ``min(64, n // 4)``, passes ``SGD_PASSES``.

Families (each at the n/p ratios ``RATIOS`` where the data allow; the run of
docs/defaults.rst: ``--ratios 1 3 10 30 100 300``, then ``--families california
electricity --ratios 1000``, appended to the same CSV; the L1 families at epsilon
0.3 and 3 into ``results/auto_boundary_epsilon.csv``, read with
``experiments/auto_rule.py``; ``--families ridge california-l2`` at epsilon 1, 0.3, 3
added later the same way):

* ``lasso``: squared + L1, ``make_sparse_lasso(n, 50, 10, noise=0.1)``, public
  ``M_j = 2`` (as ``defaults.py``'s synthetic problems);
* ``logistic-l1``: logistic + L1, ``make_quasi_sparse(n, 50, n_nonzero=10,
  noise=0.1)`` (labels the sign);
* ``logistic-l2``: the same data, logistic + L2(1/n); ``ridge``: the lasso's
  data, squared + L2(1/n);
* ``california``: squared + L1 (raw features, y / 1e5, lambda with 3 nonzeros
  as in ``defaults.py``), a random subset of n = ratio x 8 rows (ratio >= 10);
* ``california-l2``: the same rows, squared + L2(1/n);
* ``electricity``: logistic + L2(1/n), a random subset of n = ratio x 8 rows;
* ``dorothea``: logistic + L1 on the 800 train rows and the p = 800 / ratio
  most frequent columns (ratio <= 100).

Every other L1 strength is ``lam_max / 10`` (``LAMBDA_FRACTION``; ``lam_max`` the
smallest giving w* = 0): one exact solve per shape, where ``defaults.py``'s
"k nonzeros" search needs some eighty (minutes at n = 10^5 with the logistic
loss); the CSV gives w*'s nonzeros (``nnz``).

Smoothness constants (but the lasso's) and the clipping unit come from the data,
as in ``defaults.py`` (a ``PrivacyLeakWarning``, silenced): these runs compare
methods, they are not private releases.  Data: ``SPARSEDP_DATA``.

Output: every configuration's mean and std (``results/auto_boundary.csv``, or
``auto_boundary_quick.csv``), each solver's best per shape
(``..._best.csv``) and a text table (``.txt``).
"""
import argparse
import csv
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import defaults  # noqa: E402
from defaults import Problem, Sweep, _l1_problem  # noqa: E402

from sparsedp.datafits import Logistic, Squared  # noqa: E402
from sparsedp.datasets import (load_california, load_dorothea, load_electricity,  # noqa: E402
                               make_quasi_sparse, make_sparse_lasso)
from sparsedp.exceptions import PrivacyLeakWarning  # noqa: E402
from sparsedp.penalties import L1, L2  # noqa: E402
from sparsedp.solvers import exact  # noqa: E402

RESULTS = HERE / "results"
RATIOS = (1, 3, 10, 30, 100, 300, 1000)
P_SYNTH = 50
#: lambda = lam_max / LAMBDA_FRACTION on the L1 families (one exact solve each)
LAMBDA_FRACTION = 10.0
STEPS = (0.1, 0.3, 1.0)  # DP-CD (measured best: 0.3 and 1)
GCD_STEPS = (0.3, 1.0, 3.0)  # DP-GCD (measured best: 1 and 3)
SGD_STEPS = (1e-2, 1e-1, 1.0)
KAPPAS = (0.1, 0.316, 1.0, 3.16)
CD_PASSES = (2, 5, 20, 50)
GCD_ITERS = (1, 3, 10, 30, 100)
SGD_PASSES = (5, 20)
QUICK = {"STEPS": (0.3, 1.0), "GCD_STEPS": (1.0,), "SGD_STEPS": (0.1,), "KAPPAS": (0.316, 3.16),
         "CD_PASSES": (5,), "GCD_ITERS": (3,), "SGD_PASSES": (5,)}
FAMILIES = ("lasso", "logistic-l1", "logistic-l2", "ridge", "california", "california-l2",
            "electricity", "dorothea")
PENALTY = {"lasso": "L1", "logistic-l1": "L1", "california": "L1", "dorothea": "L1",
           "logistic-l2": "L2", "ridge": "L2", "california-l2": "L2", "electricity": "L2"}
CD = ("dp_cd", [("averaging=False, order=shuffle", {"averaging": False, "order": "shuffle"})])
GCD = ("dp_gcd", [("gs-r, exponential", {"rule": "gs-r", "selection": "exponential"})])
SGD = ("dp_sgd", [("poisson", {})])


def _rows(n_total, n, seed=0):
    """``n`` of ``n_total`` row indices, at random (sorted)."""
    return np.sort(np.random.default_rng(seed).choice(n_total, n, replace=False))


def _l1(name, X, y, datafit, smoothness=None):
    """``datafit`` + L1(lam_max / ``LAMBDA_FRACTION``): one exact solve for F*."""
    X = sp.csc_array(X)
    n = X.shape[0]
    lam_max = float(np.max(np.abs(X.T @ datafit.derivative(np.zeros(n), y))) / n)
    penalty = L1(lam_max / LAMBDA_FRACTION)
    ref = exact(X, y, datafit, penalty, tol=1e-8)
    pb = Problem(name, X, y, datafit, penalty, ref.diagnostics.objective, smoothness)
    pb.nnz = int(np.count_nonzero(ref.coef))
    return pb


def _l2_problem(name, X, y, datafit=Logistic(), smoothness=None):
    """``datafit`` + L2(1/n): one exact solve for F*."""
    X = sp.csc_array(X)
    penalty = L2(1.0 / X.shape[0])
    ref = exact(X, y, datafit, penalty)
    pb = Problem(name, X, y, datafit, penalty, ref.diagnostics.objective, smoothness)
    pb.nnz = int(np.count_nonzero(ref.coef))
    return pb


def available(family, ratio):
    """Whether ``family`` has a shape at ``ratio`` (n/p)."""
    if family in ("california", "california-l2", "electricity"):
        return ratio >= 10 and ratio * 8 <= (20_640 if family.startswith("california")
                                             else 45_312)
    if family == "dorothea":
        return ratio <= 100
    return True


def make_problem(family, ratio):
    """The problem of ``family`` at n/p = ``ratio``."""
    name = f"{family}@{ratio:g}"
    if family in ("lasso", "ridge", "logistic-l1", "logistic-l2"):
        n = ratio * P_SYNTH
        if family in ("lasso", "ridge"):
            X, y, _ = make_sparse_lasso(n, P_SYNTH, 10, noise=0.1, random_state=0)
            if family == "ridge":
                return _l2_problem(name, X, y, Squared(), np.full(P_SYNTH, 2.0))
            return _l1(name, X, y, Squared(), np.full(P_SYNTH, 2.0))
        X, y, _ = make_quasi_sparse(n, P_SYNTH, n_nonzero=10, noise=0.1, random_state=0)
        if family == "logistic-l1":
            return _l1(name, X, y, Logistic())
        return _l2_problem(name, X, y)
    if family == "california":
        X, y = load_california()
        rows = _rows(X.shape[0], ratio * 8)
        pb = _l1_problem(name, X[rows], y[rows] / 1e5, Squared(), 3)  # as defaults.py
        pb.nnz = 3
        return pb
    if family == "california-l2":
        X, y = load_california()
        rows = _rows(X.shape[0], ratio * 8)
        return _l2_problem(name, sp.csr_array(X)[rows], y[rows] / 1e5, Squared())
    if family == "electricity":
        X, y = load_electricity()
        rows = _rows(X.shape[0], ratio * 8)
        return _l2_problem(name, sp.csr_array(X)[rows], y[rows])
    if family == "dorothea":
        X, y = load_dorothea()
        X = sp.csc_array(X)
        p = round(X.shape[0] / ratio)
        counts = np.diff(X.indptr)
        cols = np.sort(np.argsort(-counts, kind="stable")[:p])
        return _l1(name, X[:, cols], y, Logistic())
    raise ValueError(f"unknown family {family!r}")


def run_unit(family, ratio, grid, seeds, epsilon):
    """Every solver's sweep on one shape: a list of CSV rows and the elapsed time."""
    warnings.simplefilter("ignore", PrivacyLeakWarning)  # stated in the docstring
    defaults.EPSILON = epsilon  # read by defaults.fit
    t0 = time.perf_counter()
    pb = make_problem(family, ratio)
    n, p = pb.X.shape
    solvers = [(*CD, grid["CD_PASSES"], grid["STEPS"]),
               (*GCD, grid["GCD_ITERS"], grid["GCD_STEPS"])]
    if PENALTY[family] == "L2":
        solvers.append((*SGD, grid["SGD_PASSES"], grid["SGD_STEPS"]))
    rows = []
    for solver, variants, budgets, steps in solvers:
        sw = Sweep(solver, pb, variants, budgets, steps, grid["KAPPAS"], seeds)
        for (_, budget, step, kappa), (mean, std) in sw.table.items():
            rows.append({"family": family, "penalty": PENALTY[family], "ratio": ratio,
                         "n": n, "p": p, "epsilon": epsilon, "solver": solver,
                         "budget": budget, "step": step, "kappa": kappa,
                         "mean": mean, "std": std, "f0": pb.f0, "f_star": pb.f_star,
                         "nnz": pb.nnz})
    return rows, time.perf_counter() - t0


def best_rows(rows):
    """Each (family, epsilon, ratio, solver)'s best configuration, and the winner."""
    best = {}
    for r in rows:
        key = (r["family"], r["epsilon"], r["ratio"], r["solver"])
        if key not in best or r["mean"] < best[key]["mean"]:
            best[key] = r
    out = sorted(best.values(), key=lambda r: (FAMILIES.index(r["family"]), r["epsilon"],
                                               r["ratio"], r["solver"]))
    for r in out:
        rivals = [b for k, b in best.items() if k[:3] == (r["family"], r["epsilon"], r["ratio"])]
        winner = min(rivals, key=lambda b: b["mean"])
        r["winner"] = winner["solver"] if winner["mean"] < r["f0"] else "none beats w = 0"
    return out


def table(best):
    """Text table: one line per shape, each solver's best mean +- std."""
    lines = []
    shapes = sorted({(b["family"], b["epsilon"], b["ratio"]) for b in best},
                    key=lambda s: (FAMILIES.index(s[0]), s[1], s[2]))
    for family, eps, ratio in shapes:
        cells = [b for b in best
                 if (b["family"], b["epsilon"], b["ratio"]) == (family, eps, ratio)]
        head = cells[0]
        text = "; ".join(f"{b['solver']} {b['mean']:.4g} +- {b['std']:.1g} "
                         f"(budget {b['budget']:g}, step {b['step']:g}, kappa {b['kappa']:g})"
                         for b in cells)
        lines.append(f"  {family:<12} eps {eps:<4g} n/p {ratio:<5g} n={head['n']:<6} "
                     f"p={head['p']:<4} nnz* {head['nnz']:<3g} F(0) {head['f0']:<8.4g} "
                     f"{text}  -> {head['winner']}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults.add_run_arguments(parser)
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--ratios", nargs="+", type=int, default=list(RATIOS))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None,
                        help="CSV of every configuration (default results/auto_boundary"
                             "[_quick].csv); appended to if it exists")
    args = parser.parse_args(argv)
    grid = dict(STEPS=STEPS, GCD_STEPS=GCD_STEPS, SGD_STEPS=SGD_STEPS, KAPPAS=KAPPAS,
                CD_PASSES=CD_PASSES, GCD_ITERS=GCD_ITERS, SGD_PASSES=SGD_PASSES)
    if args.quick:
        grid.update(QUICK)
    seeds = defaults.run_seeds(parser, args)
    out = args.out or RESULTS / f"auto_boundary{'_quick' if args.quick else ''}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)

    units = [(f, r) for f in args.families for r in args.ratios if available(f, r)]
    # the largest first, so that two workers finish together
    units.sort(key=lambda u: -(u[1] * (8 if u[0].startswith(("california", "electricity"))
                                       else P_SYNTH)))
    t0 = time.perf_counter()
    if args.n_jobs == 1:
        results = (run_unit(f, r, grid, seeds, args.epsilon) for f, r in units)
    else:
        from joblib import Parallel, delayed
        results = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
            delayed(run_unit)(f, r, grid, seeds, args.epsilon) for f, r in units)
    rows = []
    if out.exists():
        with out.open() as fh:
            rows = [{k: (v if k in ("family", "penalty", "solver")
                         else int(v) if k in ("n", "p", "nnz") else float(v))
                     for k, v in r.items()} for r in csv.DictReader(fh)]
    fields = ["family", "penalty", "ratio", "n", "p", "epsilon", "solver", "budget", "step",
              "kappa", "mean", "std", "f0", "f_star", "nnz"]
    with out.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fields)
        if not rows:
            writer.writeheader()
        for unit_rows, elapsed in results:
            writer.writerows(unit_rows)
            fh.flush()
            rows.extend(unit_rows)
            u = unit_rows[0]
            print(f"[{time.perf_counter() - t0:5.0f} s] {u['family']}@{u['ratio']:g} "
                  f"(n={u['n']:g}, p={u['p']:g}) in {elapsed:.0f} s", flush=True)

    best = best_rows(rows)
    with out.with_name(out.stem + "_best.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fields + ["winner"])
        writer.writeheader()
        writer.writerows(best)
    lines = [f"# python experiments/auto_boundary.py {' '.join(argv or sys.argv[1:])} "
             f"(this run's shapes; the table: every shape in {out.name})",
             f"delta=1/n^2, {seeds} seeds; steps DP-CD {list(grid['STEPS'])}, DP-GCD "
             f"{list(grid['GCD_STEPS'])}, DP-SGD "
             f"{list(grid['SGD_STEPS'])}); kappas {list(grid['KAPPAS'])}; DP-CD passes "
             f"{list(grid['CD_PASSES'])}, DP-GCD n_iter {list(grid['GCD_ITERS'])}, DP-SGD "
             f"passes {list(grid['SGD_PASSES'])}", *table(best),
             f"[{time.perf_counter() - t0:.0f} s]"]
    out.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("auto_boundary.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
