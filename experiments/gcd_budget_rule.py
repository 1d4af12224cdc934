"""How many iterations DP-GCD should run by default: the rule against the measured best.

    python experiments/gcd_budget_rule.py [--csv experiments/results/auto_boundary.csv]

No new fits: this reads the DP-GCD rows of ``experiments/auto_boundary.py``'s
results (epsilon = 1, 3 seeds, ``n_iter`` in {1, 3, 10, 30, 100}; shapes from
n = 50 to 50,000 rows, n/p from 1 to 1,000) at the estimator's own step
(``default_budget``: 3 when p >= n, else 1) and clip (``kappa`` =
``default_kappa``), so that only the number of iterations varies, as it does
between the estimator's fits.  A rule's loss on a shape is the mean relative
error at the rule's ``n_iter`` over the best of the five measured budgets; the
error between two measured budgets is interpolated linearly in
(log n_iter, log error).  Prints every shape, then each candidate rule's
geometric-mean and worst loss, over all shapes and over n <= 1,500.
"""
import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from sparsedp.linear_model import default_budget, default_kappa

HERE = Path(__file__).resolve().parent
SMALL_N = 1500


def _clipped(n_iter, low=3):
    return int(min(max(round(n_iter), low), 100))


DEFAULT = "n/300 in [3,100] if n > p, else n/600 in [1,100] (default)"
# Each candidate maps (n, p) to an iteration count at epsilon = 1.
RULES = {
    DEFAULT: lambda n, p: default_budget("gcd", n, p, 1.0)["n_iter"],
    "n / 300 in [3, 100] (before)": lambda n, p: _clipped(n / 300),
    "n / 600 in [1, 100]": lambda n, p: _clipped(n / 600, low=1),
    "n / 300 in [1, 100]": lambda n, p: _clipped(n / 300, low=1),
    "n / 100 in [3, 100]": lambda n, p: _clipped(n / 100),
    "n / 100 in [1, 100]": lambda n, p: _clipped(n / 100, low=1),
    "n / 50 in [3, 100]": lambda n, p: _clipped(n / 50),
    "n / 50 if n > p, else n / 300": lambda n, p: _clipped(n / 50 if n > p else n / 300),
    "sqrt(n) / 3 in [3, 100]": lambda n, p: _clipped(math.sqrt(n) / 3),
    "3 (fixed)": lambda n, p: 3,
}


def load(path):
    """``{(family, n, p): {n_iter: mean error}}`` at the estimator's step and clip."""
    table = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["solver"] != "dp_gcd" or float(row["epsilon"]) != 1.0:
                continue
            n, p = int(row["n"]), int(row["p"])
            step = default_budget("gcd", n, p, 1.0)["step_size"]
            kappa = default_kappa("gcd", n, 1, 1.0, 1.0 / n ** 2)  # DP-GCD's is constant
            if float(row["step"]) != step or not math.isclose(float(row["kappa"]), kappa):
                continue
            table[(row["family"], n, p)][int(row["budget"])] = float(row["mean"])
    return table


def error_at(errors, n_iter):
    budgets = np.array(sorted(errors), dtype=float)
    log_errors = np.log([errors[b] for b in sorted(errors)])
    return math.exp(np.interp(math.log(n_iter), np.log(budgets), log_errors))


def rule_losses(table, rule):
    """``{shape: loss}``: the error at ``rule(n, p)`` iterations over the best measured."""
    return {key: error_at(errors, rule(key[1], key[2])) / min(errors.values())
            for key, errors in table.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default=HERE / "results" / "auto_boundary.csv")
    args = parser.parse_args(argv)
    table = load(args.csv)
    if not table:
        raise SystemExit(f"no DP-GCD rows at the default step and clip in {args.csv}")
    shapes = sorted(table, key=lambda k: (k[0], k[1], k[2]))
    budgets = sorted({b for errors in table.values() for b in errors})
    print("mean relative error of DP-GCD at the estimator's step and clip (epsilon 1, 3 seeds)")
    print(f"{'family':12s} {'n':>6s} {'p':>4s}  " + "  ".join(f"{b:>8d}" for b in budgets)
          + "   best  default (loss)")
    for key in shapes:
        errors = table[key]
        best = min(errors, key=errors.get)
        n_iter = RULES[DEFAULT](key[1], key[2])
        loss = error_at(errors, n_iter) / errors[best]
        print(f"{key[0]:12s} {key[1]:6d} {key[2]:4d}  "
              + "  ".join(f"{errors[b]:8.3g}" if b in errors else f"{'':8s}" for b in budgets)
              + f"  {best:5d}  {n_iter:3d} ({loss:.2f})")
    print()
    print("loss of a rule = error at its n_iter / error at the best measured n_iter")
    print(f"{'rule':62s} {'all: geomean':>12s} {'worst':>6s}   {'n <= 1500: geomean':>18s} {'worst':>6s}  worst shape")
    for name, rule in RULES.items():
        losses = rule_losses(table, rule)
        small = [loss for key, loss in losses.items() if key[1] <= SMALL_N]
        worst = max(losses, key=losses.get)
        print(f"{name:62s} {math.exp(np.mean(np.log(list(losses.values())))):12.2f} "
              f"{losses[worst]:6.2f}   {math.exp(np.mean(np.log(small))):18.2f} {max(small):6.2f}  "
              f"{worst[0]} n={worst[1]} p={worst[2]}")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("gcd_budget_rule.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
