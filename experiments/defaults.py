"""Defaults by measurement: DP-CD, DP-GCD and the solver="auto" rule at epsilon = 1.

    python experiments/defaults.py [--quick] [--problems NAME ...] [--seeds 3] [--out FILE]

Every choice an estimator has to make for its user is measured here on the papers'
data, at (epsilon, delta) = (1, 1/n^2) (n <= 45,312, so delta >= 4.9e-10):

* DP-CD (``sparsedp.solvers.dp_cd``): ``averaging`` (True / False) x ``order``
  ("uniform" / "shuffle"), for passes in ``CD_PASSES`` (``N_PASSES_LONG`` on
  california and electricity, where passes are cheap; 2, 5, 20 on dorothea and
  2, 5 on dorothea-l2, where they are not);
* DP-GCD (``dp_gcd``): ``rule`` (gs-r / gs-s / gs-q) x ``selection`` (laplace /
  exponential), and ``gradient_noise="gaussian"`` with GS-r, for ``n_iter`` in
  ``GCD_ITERS`` (on the L2 problems GS-r only); the script also records what
  ``selection=None`` picks;
* DP-SGD (``dp_sgd``, Poisson batches of expected size ``min(SGD_BATCH, n // 4)``),
  only for the solver comparison, passes in ``SGD_PASSES`` (5 only on dorothea,
  dorothea-l2 and synthetic, where its passes are slow);
* the step size (``STEPS``; DP-CD and DP-GCD: gamma in gamma_j = gamma / M_j,
  DP-SGD: gamma / beta, ``SGD_STEPS``) and the clipping threshold.

Clipping rule.  The clipping threshold is searched in units of the typical
per-sample gradient norm at w = 0, ``unit = sqrt(mean_i ||x_i||^2) *
sqrt(mean_i loss'(0, y_i)^2)``: ``clip = kappa * unit``, kappa in ``KAPPAS``.
For DP-CD and DP-GCD the coordinate thresholds ``C_j = sqrt(M_j / tr M) clip`` have
L2 norm ``clip``, and DP-SGD clips each per-sample gradient to norm ``clip``, so
kappa means the same for the three.  A rule "clip = kappa* x unit" is what an
estimator can use when the unit is public (logistic loss: loss'(0, y) = -y / 2,
and a public bound on the row norms; squared loss: also a public bound on |y|).
The unit is computed here from the data (a non-private quantity, used to place
the grid, as the papers tune on the data).

Protocol: every configuration (choice x passes or n_iter x step x kappa) is run on
the same ``--seeds`` seeds (0, 1, ...); its figure is the mean relative error
``(F(w) - F*) / F*`` (``experiments/common.relative_error``; F* from
``sparsedp.solvers.exact``); a choice's figure is the best mean over its grid.
The errors are non-private diagnostics (``diagnostics=True``: F on the
training data, not covered by the privacy report).

Problems (regularisation as the papers' scripts):

* ``dorothea``: logistic + L1, 800 x 100,000 binary, lambda with 72 nonzeros
  (``dp_gcd_table3.py``, its cache); p >> n.
* ``california``: squared + L1, raw features (20,640 x 8), target in $100,000,
  lambda with 3 nonzeros (``dp_cd_utility.py``, ``table2_dp_cd_vs_sgd.py``); n >> p.
* ``synthetic``: squared + L1, ``make_sparse_lasso(1000, 1000, 10, noise=0.1)``,
  lambda with 7 nonzeros (``dp_gcd_table3.py``'s "square"); n = p.
* ``synthetic-wide``: squared + L1, ``make_sparse_lasso(200, 5000, 10, noise=0.1)``,
  lambda with 10 nonzeros; p >> n.
* ``electricity``: logistic + L2, raw features (45,312 x 8), lambda = 1/n
  (``table2_dp_cd_vs_sgd.py``); n >> p.
* ``dorothea-l2``: logistic + L2, lambda = 1/n as on electricity; p >> n.  The data
  are nearly separable: F* = 0.0075 and w = 0 is at relative error 91.
* ``tiny``: squared + L1, ``make_sparse_lasso(500, 20, 3)``, 3 nonzeros (for tests).

Smoothness constants: public ``M_j = 2`` on the synthetic problems (N(0, 1)
features, as ``dp_cd_utility.py``); computed from the data on the real ones and
for DP-SGD's global constant everywhere, as the papers' experiments and our
scripts do (a ``PrivacyLeakWarning``, silenced here): these runs measure the
methods, they are not private releases.

Recommendations: a choice is scored by the geometric mean over problems of
``best error with the choice / best error over all choices`` (1 is best
everywhere), the choices being fixed one after the other (variant, then step,
then kappa, then passes or n_iter), each at the ones already fixed.  A problem
on which no configuration of the solver beats w = 0 is left out (there the grid
only measures how close to not moving a choice lets the solver stay).  The
solver="auto" table gives each solver's best at the recommended variant;
"none beats w = 0" when no solver does.
``--quick`` is a smoke run (2 seeds, 2 steps, 2 kappas, one budget).
"""
import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import lambda_for_support, relative_error  # noqa: E402

from sparsedp.datafits import Logistic, Squared  # noqa: E402
from sparsedp.datasets import (load_california, load_dorothea, load_electricity,  # noqa: E402
                               make_sparse_lasso)
from sparsedp.exceptions import PrivacyLeakWarning  # noqa: E402
from sparsedp.penalties import L1, L2  # noqa: E402
from sparsedp.solvers import dp_cd, dp_gcd, dp_sgd, exact  # noqa: E402

RESULTS = HERE / "results"
EPSILON = 1.0
STEPS = (0.1, 0.3, 1.0, 3.0, 10.0)
SGD_STEPS = (1e-3, 1e-2, 1e-1, 1.0, 3.0)
KAPPAS = tuple(float(k) for k in np.logspace(-2, 1.5, 8))
CD_PASSES = (5, 20, 50)
N_PASSES_LONG = (5, 20, 50, 100)  # n >> p: cheap passes, still improving at 50
GCD_ITERS = (1, 3, 10, 30, 100)
SGD_PASSES = (5, 20)
SGD_BATCH = 64
CD_VARIANTS = [(f"averaging={a}, order={o}", {"averaging": a, "order": o})
               for a in (True, False) for o in ("uniform", "shuffle")]
GCD_VARIANTS = [(f"{r}, {s}, laplace gradient", {"rule": r, "selection": s})
                for r in ("gs-r", "gs-s", "gs-q") for s in ("laplace", "exponential")] + \
               [(f"gs-r, {s}, gaussian gradient",
                 {"rule": "gs-r", "selection": s, "gradient_noise": "gaussian"})
                for s in ("laplace", "exponential")]
QUICK = {"STEPS": (0.3, 1.0), "SGD_STEPS": (1e-2, 1e-1), "KAPPAS": (0.1, 1.0),
         "CD_PASSES": (5,), "GCD_ITERS": (3,), "SGD_PASSES": (5,)}


class Problem:
    """A problem: data, datafit + penalty, F*, smoothness, clipping unit and kind."""

    def __init__(self, name, X, y, datafit, penalty, f_star, smoothness, budgets=None):
        self.name, self.X, self.y = name, sp.csc_array(X), np.asarray(y, dtype=float)
        self.datafit, self.penalty, self.f_star = datafit, penalty, f_star
        self.smoothness = smoothness
        self.budgets = budgets or {}  # per-solver passes / n_iter, overriding the defaults
        n, p = self.X.shape
        self.delta = 1.0 / n**2
        rows = np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
        deriv = datafit.derivative(np.zeros(n), self.y)
        self.unit = float(np.sqrt(rows.mean()) * np.sqrt(np.mean(deriv**2)))
        shape = "p >> n" if p >= 5 * n else ("n >> p" if n >= 5 * p else "n ~ p")
        self.kind = f"{type(penalty).__name__}, {shape}"
        self.f0 = relative_error(datafit.value(np.zeros(n), self.y), f_star)

    def header(self):
        n, p = self.X.shape
        return (f"== {self.name}: {self.datafit!r} + {self.penalty!r}, n={n}, p={p} "
                f"({self.kind}), F*={self.f_star:.6g}, F(0) rel. error {self.f0:.4g}, "
                f"clip unit {self.unit:.4g}, smoothness "
                f"{'public' if self.smoothness is not None else 'from the data'} ==")


def _l1_problem(name, X, y, datafit, k, smoothness=None, budgets=None):
    lam, ref = lambda_for_support(sp.csc_array(X), y, datafit, k, tol=1e-8)
    return Problem(name, X, y, datafit, L1(lam), ref.diagnostics.objective, smoothness,
                   budgets)


def _cached(name):
    """dorothea / square as dp_gcd_table3.py sets them up (its cache of lambda, F*)."""
    from dp_gcd_table3 import setup
    X, y, datafit, lam, f_star, _ = setup(name)
    return X, y, datafit, lam, f_star


def load_problem(name):
    if name == "dorothea":
        X, y, datafit, lam, f_star = _cached("dorothea")
        return Problem(name, X, y, datafit, L1(lam), f_star, None,
                       {"dp_cd": (2, 5, 20), "dp_sgd": (5,)})
    if name == "california":
        X, y = load_california()
        return _l1_problem(name, X, y / 1e5, Squared(), 3, budgets={"dp_cd": N_PASSES_LONG})
    if name == "synthetic":
        X, y, datafit, lam, f_star = _cached("square")
        return Problem(name, X, y, datafit, L1(lam), f_star, np.full(X.shape[1], 2.0),
                       {"dp_sgd": (5,)})
    if name == "synthetic-wide":
        X, y, _ = make_sparse_lasso(200, 5000, 10, noise=0.1, random_state=0)
        return _l1_problem(name, X, y, Squared(), 10, np.full(5000, 2.0))
    if name == "tiny":
        X, y, _ = make_sparse_lasso(500, 20, 3, noise=0.1, random_state=0)
        return _l1_problem(name, X, y, Squared(), 3, np.full(20, 2.0))
    if name in ("electricity", "dorothea-l2"):
        X, y = load_electricity() if name == "electricity" else load_dorothea()
        X = sp.csc_array(X)
        penalty = L2(1.0 / X.shape[0])
        ref = exact(X, y, Logistic(), penalty)
        budgets = {"dp_cd": (2, 5), "dp_sgd": (5,)} if name == "dorothea-l2" else \
            {"dp_cd": N_PASSES_LONG}
        return Problem(name, X, y, Logistic(), penalty, ref.diagnostics.objective, None,
                       budgets)
    raise ValueError(f"unknown problem {name!r}")


PROBLEMS = ("dorothea", "california", "synthetic", "synthetic-wide", "electricity",
            "dorothea-l2", "tiny")
DEFAULT_PROBLEMS = PROBLEMS[:-1]


def fit(solver, pb, seed, budget, step, kappa, options):
    """Relative error of one run of ``solver`` (budget: passes or n_iter)."""
    common = dict(epsilon=EPSILON, delta=pb.delta, clip=kappa * pb.unit, step_size=step,
                  random_state=seed, diagnostics=True,
                  smoothness="leak" if pb.smoothness is None else pb.smoothness)
    if solver == "dp_cd":
        res = dp_cd(pb.X, pb.y, pb.datafit, pb.penalty, passes=budget, **common, **options)
    elif solver == "dp_gcd":
        res = dp_gcd(pb.X, pb.y, pb.datafit, pb.penalty, n_iter=budget, **common, **options)
    else:
        common["smoothness"] = "leak"  # DP-SGD's global constant from the data everywhere
        res = dp_sgd(pb.X, pb.y, pb.datafit, pb.penalty, passes=budget,
                     batch_size=min(SGD_BATCH, pb.X.shape[0] // 4), **common, **options)
    err = relative_error(res.diagnostics.objective, pb.f_star)
    return err if math.isfinite(err) else math.inf


class Sweep:
    """Mean and std of the error over seeds for every (variant, budget, step, kappa)."""

    def __init__(self, solver, pb, variants, budgets, steps, kappas, seeds):
        self.solver, self.pb = solver, pb
        self.variants, self.budgets, self.steps, self.kappas = variants, budgets, steps, kappas
        self.table = {}
        for label, options in variants:
            for budget in budgets:
                for step in steps:
                    for kappa in kappas:
                        errs = np.array([fit(solver, pb, seed, budget, step, kappa, options)
                                         for seed in range(seeds)])
                        self.table[label, budget, step, kappa] = (
                            float(errs.mean()), float(errs.std()))

    def best(self, **fixed):
        """(mean, std, (variant, budget, step, kappa)) of the best cell matching ``fixed``."""
        names = ("variant", "budget", "step", "kappa")
        cells = [(v, k) for k, v in self.table.items()
                 if all(k[names.index(f)] == x for f, x in fixed.items())]
        (mean, std), key = min(cells, key=lambda c: c[0][0])
        return mean, std, key


def choose(sweeps, axis, values, **fixed):
    """The value of ``axis`` with the smallest geometric mean over problems of
    ``best error with it / best error overall`` (at ``fixed``).

    Returns (value, {value: (geometric mean ratio, worst ratio)}).
    """
    scores = {}
    for value in values:
        ratios = []
        for sw in sweeps:
            overall = sw.best(**fixed)[0]
            ratios.append((sw.best(**fixed, **{axis: value})[0] + 1e-12) / (overall + 1e-12))
        ratios = np.array(ratios)
        scores[value] = (float(np.exp(np.mean(np.log(ratios)))), float(ratios.max()))
    return min(scores, key=lambda v: scores[v][0]), scores


def fmt_cell(mean, std, key, pb, budget_name):
    _, budget, step, kappa = key
    return (f"{mean:.4g} +- {std:.1g}  ({budget_name} {budget:g}, step {step:g}, "
            f"kappa {kappa:.3g} = clip {kappa * pb.unit:.3g})")


def section_table(sw, budget_name, lines):
    """Per variant: the best over the grid and budgets, then per budget."""
    width = max(len(label) for label, _ in sw.variants)
    for label, _ in sw.variants:
        mean, std, key = sw.best(variant=label)
        lines.append(f"  {label:<{width}}  best {fmt_cell(mean, std, key, sw.pb, budget_name)}")
        if len(sw.budgets) > 1:
            per = ", ".join(f"{b:g}: {sw.best(variant=label, budget=b)[0]:.4g}"
                            for b in sw.budgets)
            lines.append(f"  {'':<{width}}  by {budget_name}: {per}")


def recommend(sweeps, budget_name, lines, title):
    """Fix variant, step, kappa, budget in turn; print the scores and the regrets.

    A problem on which no configuration beats w = 0 has no say: there every choice
    only measures how close to not moving the grid lets the solver stay.
    """
    idle = [sw for sw in sweeps if sw.best()[0] >= sw.pb.f0]
    sweeps = [sw for sw in sweeps if sw.best()[0] < sw.pb.f0]
    lines.append(f"-- {title} --")
    for sw in idle:
        lines.append(f"  {sw.pb.name}: no configuration beats w = 0 (best {sw.best()[0]:.4g}, "
                     f"F(0) {sw.pb.f0:.4g}): not used")
    if not sweeps:
        return None
    fixed = {}
    lines.append(f"  geometric mean over {', '.join(sw.pb.name for sw in sweeps)} of "
                 f"best with the choice / best overall (worst ratio):")
    for axis, values in (("variant", [v for v, _ in sweeps[0].variants]),
                         ("step", sweeps[0].steps), ("kappa", sweeps[0].kappas),
                         ("budget", None)):
        if values is None:
            values = sorted(set.intersection(*(set(sw.budgets) for sw in sweeps)))
            if not values:
                break
        value, scores = choose(sweeps, axis, values, **fixed)
        fixed[axis] = value
        shown = ", ".join(f"{v if isinstance(v, str) else f'{v:.3g}'}: {g:.3g} ({w:.3g})"
                          for v, (g, w) in scores.items())
        lines.append(f"  {axis if axis != 'budget' else budget_name}: {shown}")
        lines.append(f"    -> {value if isinstance(value, str) else f'{value:.3g}'}")
    lines.append("  at the recommended defaults (error; best over the whole grid):")
    for sw in sweeps:
        mean, std, key = sw.best(**fixed)
        lines.append(f"    {sw.pb.name:<15} {mean:.4g} +- {std:.1g}; best "
                     f"{sw.best()[0]:.4g} ({sw.best()[2][0]})")
    return fixed


def add_run_arguments(parser):
    """``--quick`` and ``--seeds``, shared with ``auto_boundary.py``."""
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 2 seeds, 2 steps, 2 kappas, one budget")
    parser.add_argument("--seeds", type=int, default=None, help="default 3 (--quick: 2)")


def run_seeds(parser, args):
    """The number of seeds ``add_run_arguments`` asked for (an error below 1)."""
    seeds = args.seeds if args.seeds is not None else (2 if args.quick else 3)
    if seeds < 1:
        parser.error("--seeds must be >= 1")
    return seeds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=None,
                        help=f"default: {' '.join(DEFAULT_PROBLEMS)}")
    parser.add_argument("--dump", type=Path, default=None,
                        help="also write every configuration's mean and std (JSON)")
    parser.add_argument("--out", type=Path, default=None,
                        help="default results/defaults.txt (--quick: defaults_quick.txt)")
    args = parser.parse_args(argv)
    grid = dict(STEPS=STEPS, SGD_STEPS=SGD_STEPS, KAPPAS=KAPPAS, CD_PASSES=CD_PASSES,
                GCD_ITERS=GCD_ITERS, SGD_PASSES=SGD_PASSES)
    if args.quick:
        grid.update(QUICK)
    seeds = run_seeds(parser, args)
    out = args.out or RESULTS / f"defaults{'_quick' if args.quick else ''}.txt"
    warnings.simplefilter("ignore", PrivacyLeakWarning)  # stated in the docstring

    t_start = time.perf_counter()
    lines = [f"# python experiments/defaults.py{' --quick' if args.quick else ''}"
             f"{' --problems ' + ' '.join(args.problems) if args.problems else ''}",
             f"epsilon={EPSILON}, delta=1/n^2, {seeds} seeds per configuration; "
             f"steps {list(grid['STEPS'])} (DP-SGD {list(grid['SGD_STEPS'])}); "
             f"kappas {[round(k, 4) for k in grid['KAPPAS']]} (clip = kappa x unit); "
             f"DP-SGD batches of expected size min({SGD_BATCH}, n // 4)"]

    def flush():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(lines) + "\n")

    def budgets(pb, solver, default):
        return default if args.quick else pb.budgets.get(solver, default)

    cd, gcd, sgd = [], [], []
    for name in args.problems or DEFAULT_PROBLEMS:
        t0 = time.perf_counter()
        pb = load_problem(name)
        lines.append("")
        lines.append(pb.header())
        print(lines[-1], flush=True)
        for solver, variants, budget_grid, steps, store, title, bname in (
                ("dp_cd", CD_VARIANTS, grid["CD_PASSES"], grid["STEPS"], cd, "DP-CD",
                 "passes"),
                ("dp_gcd", GCD_VARIANTS, grid["GCD_ITERS"], grid["STEPS"], gcd, "DP-GCD",
                 "n_iter"),
                ("dp_sgd", [("poisson", {})], grid["SGD_PASSES"], grid["SGD_STEPS"], sgd,
                 f"DP-SGD (batch {SGD_BATCH})", "passes")):
            t1 = time.perf_counter()
            if solver == "dp_gcd" and not isinstance(pb.penalty, L1):
                variants = [v for v in variants if v[1]["rule"] == "gs-r"]
            sw = Sweep(solver, pb, variants, budgets(pb, solver, budget_grid), steps,
                       grid["KAPPAS"], seeds)
            store.append(sw)
            first = len(lines)
            lines.append(f"{title} [{time.perf_counter() - t1:.0f} s]")
            section_table(sw, bname, lines)
            if solver == "dp_gcd":
                picks = []
                for T in sw.budgets:
                    res = dp_gcd(pb.X, pb.y, pb.datafit, pb.penalty, epsilon=EPSILON,
                                 delta=pb.delta, n_iter=T, clip=pb.unit, random_state=0,
                                 smoothness="leak" if pb.smoothness is None else pb.smoothness)
                    picks.append(f"{T}: {res.info['selection']}")
                lines.append(f"  selection=None picks (n_iter: selection): {', '.join(picks)}")
            print("\n".join(lines[first:]), flush=True)
            flush()
        lines.append(f"[{name}: {time.perf_counter() - t0:.0f} s]")
        flush()
        if args.dump:
            args.dump.write_text(json.dumps(
                [{"problem": sw.pb.name, "solver": sw.solver,
                  "table": [[*key, *value] for key, value in sw.table.items()]}
                 for sw in cd + gcd + sgd]))

    lines.append("")
    lines.append("== Recommended defaults ==")
    rec = {}
    for solver, sweeps, bname, title in (("dp_cd", cd, "passes", "DP-CD"),
                                         ("dp_gcd", gcd, "n_iter", "DP-GCD")):
        for l1 in (True, False):
            chosen = [sw for sw in sweeps if isinstance(sw.pb.penalty, L1) == l1]
            rec[solver, l1] = recommend(chosen, bname, lines,
                                        f"{title}, {'L1' if l1 else 'L2'} problems")
    flush()

    lines.append("")
    lines.append("== solver='auto': each solver's best over its grid, DP-CD and DP-GCD at "
                 "the variant recommended for the penalty (* : no recommendation, best "
                 "variant) ==")
    for sw_cd, sw_gcd, sw_sgd in zip(cd, gcd, sgd):
        pb = sw_cd.pb
        l1 = isinstance(pb.penalty, L1)
        row = {}
        for label, solver, sw in (("DP-CD", "dp_cd", sw_cd), ("DP-GCD", "dp_gcd", sw_gcd)):
            chosen = rec[solver, l1]
            row[label] = (sw.best(variant=chosen["variant"]) if chosen else sw.best(),
                          "" if chosen else "*")
        row["DP-SGD"] = (sw_sgd.best(), "")
        winner = min(row, key=lambda s: row[s][0][0])
        if row[winner][0][0] >= pb.f0:
            winner = "none beats w = 0"
        cells = "; ".join(f"{s}{star} {m:.4g} +- {d:.1g}" for s, ((m, d, _), star) in row.items())
        lines.append(f"  {pb.name:<15} {pb.kind:<12} F(0) {pb.f0:<8.4g} {cells}  -> {winner}")
    lines.append(f"[total {time.perf_counter() - t_start:.0f} s]")
    flush()
    print("\n".join(lines[lines.index("== Recommended defaults =="):]))
    print(f"written to {out}")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("defaults.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
