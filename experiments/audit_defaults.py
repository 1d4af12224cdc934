"""The public audit on each solver's default configuration (docs/audit.rst).

For each private solver, its estimator with every default (``epsilon=1``, the
private constants estimated inside the budget, the default delta), audited by
:func:`sparsedp.audit.audit` on :func:`sparsedp.audit.worst_case_pairs` (64 rows,
16 features; the two pairs share the confidence): the lower bound must stay below
the claim.  Beside it, two planted bugs: the same configuration run at ``epsilon =
--planted`` while it claims 1 (a fit that spends more than it reports, as a budget
split that forgets a part does), and run without noise while it claims 1; the bound
should exceed the claim.  Then one-run
audits (:func:`sparsedp.audit.one_run_audit`, 1,000 canaries: one column each for
DP-SGD, dense for DP-CD) of DP-SGD and DP-CD.

``fit_intercept=False`` for DP-SGD and DP-SCD: their relation is add/remove with n
public, a removed row being an empty row, and the intercept's column (the public
constant 1) would make an empty row move the intercept.

Usage: ``python experiments/audit_defaults.py [--trials 2000] [--jobs 2]``; prints
Markdown tables, written to ``experiments/results/audit_defaults.txt``.
"""
import argparse
import pathlib
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from sparsedp import DPLasso, DPLogisticRegression, DPRidge
from sparsedp.audit import audit, one_run_audit, worst_case_pairs
from sparsedp.datafits import Logistic
from sparsedp.solvers import dp_cd, dp_sgd

RESULTS = pathlib.Path(__file__).parent / "results"

#: solver -> (label, estimator class, its keyword arguments, the pairs' loss)
CONFIGURATIONS = {
    "cd": ("DP-CD", DPLasso, {"alpha": 0.01, "solver": "cd"}, "squared"),
    "gcd": ("DP-GCD", DPLasso, {"alpha": 0.01, "solver": "gcd"}, "squared"),
    "sgd": ("DP-SGD", DPLogisticRegression,
            {"solver": "sgd", "fit_intercept": False, "classes": [-1.0, 1.0]}, "logistic"),
    "scd": ("DP-SCD", DPRidge, {"alpha": 0.01, "solver": "scd", "fit_intercept": False},
            "squared"),
}


class EstimatorFit:
    """``fit(dataset, seed)``: the estimator's coefficients (picklable for joblib)."""

    def __init__(self, make, params, epsilon):
        self.make, self.params, self.epsilon = make, params, epsilon

    def __call__(self, data, seed):
        X, y = data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = self.make(**self.params, epsilon=self.epsilon, random_state=seed).fit(X, y)
        return est  # its coef_ and intercept_ (sparsedp.audit.audit reads both)


def default_delta(fit, pair):
    """The delta the default configuration calibrates for (read off one fit)."""
    X, y = pair.d
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = fit.make(**fit.params, epsilon=fit.epsilon, random_state=0).fit(X, y)
    return est.privacy_.delta, est.solver_


def whole_fits(trials, jobs, planted, solvers=tuple(CONFIGURATIONS)):
    rows = []
    for key, (label, make, params, loss) in CONFIGURATIONS.items():
        if key not in solvers:
            continue
        pairs = worst_case_pairs(key, n_samples=64, n_features=16, loss=loss)
        delta, solver = default_delta(EstimatorFit(make, params, 1.0), pairs[0])
        assert solver == key, (solver, key)
        cells = [label, f"{make.__name__}({', '.join(f'{k}={v!r}' for k, v in params.items() if k != 'solver')})",
                 pairs[0].relation, f"(1, {delta:.3g})"]
        for run_at in (1.0, planted, np.inf):
            start = time.perf_counter()
            r = audit(EstimatorFit(make, params, run_at), pairs, epsilon=1.0, delta=delta,
                      n_trials=trials, n_jobs=jobs, random_state=35)
            cells.append(f"{r.epsilon_lower_bound:.3f} ({'VIOLATED' if r.violated else 'consistent'})")
            print(f"{label} at epsilon {run_at:g}: {r}  [{time.perf_counter() - start:.0f} s]",
                  file=sys.stderr, flush=True)
        rows.append(cells)
    return rows


def sgd_fit(epsilon):
    def fit(data, seed):
        X, y = data
        return dp_sgd(X, y, Logistic(), epsilon=epsilon, delta=1e-5, passes=10, clip=1.0,
                      batch_size=X.shape[0], step_size=1.0, global_smoothness=0.25,
                      random_state=seed)
    return fit


def cd_fit(epsilon):
    def fit(data, seed):
        X, y = data
        return dp_cd(X, y, Logistic(), epsilon=epsilon, delta=1e-5, passes=10, clip=1.0,
                     order="shuffle", smoothness=np.full(X.shape[1], 0.25),
                     random_state=seed)
    return fit


def one_runs(planted):
    rng = np.random.default_rng(0)
    X = sp.random(1000, 200, density=0.05, format="csr", rng=rng)
    y = np.where(X @ rng.normal(size=200) + 0.1 * rng.normal(size=1000) > 0, 1.0, -1.0)
    rows = []
    for label, make, relation, kind in (
            ("DP-SGD (full batch, 10 passes)", sgd_fit, "add-remove", "column"),
            ("DP-CD (10 passes)", cd_fit, "replace-one", "dense")):
        cells = [label, f"{kind}, {relation}"]
        for run_at in (1.0, 8.0, planted, np.inf):
            r = one_run_audit(make(run_at), X, y, epsilon=1.0 if run_at != 8.0 else 8.0,
                              delta=1e-5, n_canaries=1000, loss="logistic",
                              relation=relation, canaries=kind, random_state=35)
            cells.append(f"{r.epsilon_lower_bound:.3f} ({r.correct}/{r.guesses})")
            print(f"{label} at epsilon {run_at:g}: {r}", file=sys.stderr, flush=True)
        rows.append(cells)
    return rows


def table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(str(x).ljust(w) for x, w in zip(r, widths)) + " |"
              for r in rows]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000, help="runs per dataset and pair")
    parser.add_argument("--jobs", type=int, default=1, help="joblib workers")
    parser.add_argument("--solvers", nargs="+", default=list(CONFIGURATIONS),
                        choices=list(CONFIGURATIONS), help="the solvers audited (default: all)")
    parser.add_argument("--one-run", action=argparse.BooleanOptionalAction, default=True,
                        help="the one-run audits too (default: yes)")
    parser.add_argument("--planted", type=float, default=30.0,
                        help="the epsilon the planted bug runs at while claiming 1")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    out = [f"Each solver's default configuration, audited on worst_case_pairs (64 x 16, "
           f"both pairs, {args.trials} runs a dataset and pair, 95% confidence); claim "
           f"epsilon = 1 at the default delta; planted bugs: the same fit run at epsilon = "
           f"{args.planted:g}, or without noise, claiming 1.", "",
           table(["solver", "configuration", "relation", "claim", "audited lower bound",
                  f"planted: run at {args.planted:g}", "planted: no noise"], whole_fits(
                      args.trials, args.jobs, args.planted, args.solvers)), ""]
    if args.one_run:
        out += ["One-run audits (1,000 canaries, 200 guesses, 95% confidence, delta = 1e-5); "
                "cells: lower bound (right guesses / guesses).", "",
                table(["fit", "canaries", "epsilon 1, claim 1", "epsilon 8, claim 8",
                       f"run at {args.planted:g}, claim 1", "no noise, claim 1"],
                      one_runs(args.planted)), ""]
    out.append(f"total {time.perf_counter() - start:.0f} s")
    text = "\n".join(out)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "audit_defaults.txt").write_text(text + "\n")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("audit_defaults.py"):
        main()
