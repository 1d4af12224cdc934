"""Which n/p boundary solver="auto" should use with an L1 penalty, at epsilon 0.3, 1 and 3.

    python experiments/auto_rule.py [--best FILE ...]

No new fits: this reads each solver's best mean relative error per shape from
``experiments/auto_boundary.py``'s results (``auto_boundary_best.csv``, epsilon 1;
``auto_boundary_epsilon_best.csv``, epsilon 0.3 and 3, made by::

    python experiments/auto_boundary.py --epsilon 3 --families lasso logistic-l1 \\
        california dorothea --ratios 1 3 10 30 100 300 1000 \\
        --out experiments/results/auto_boundary_epsilon.csv
    python experiments/auto_boundary.py --epsilon 0.3 ... (the same)

about 70 s each on two cores).  For the shapes with an L1 penalty it prints
DP-CD's error over DP-GCD's at every (shape, epsilon), then, for candidate
boundaries B of the rule "DP-CD when n > B p, else DP-GCD" (and of the same rule
with ``n epsilon`` or ``n / epsilon`` in place of n), the rule's loss: the
chosen solver's error over the better one's, its geometric mean and worst over
the shapes, per epsilon and over all three.
"""
import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
BEST = [RESULTS / "auto_boundary_best.csv", RESULTS / "auto_boundary_epsilon_best.csv"]
L1_FAMILIES = ("lasso", "logistic-l1", "california", "dorothea")
BOUNDARIES = (10, 30, 100, 300, 1000, math.inf)
SCALINGS = {"n / p > B": lambda n, p, eps: n / p,
            "n eps / p > B": lambda n, p, eps: n * eps / p,
            "n / (eps p) > B": lambda n, p, eps: n / (eps * p)}


def load(paths):
    """``{(family, epsilon, n, p): {solver: best mean error}}`` for the L1 families."""
    cells = defaultdict(dict)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["family"] in L1_FAMILIES:
                    key = (row["family"], float(row["epsilon"]), int(row["n"]), int(row["p"]))
                    cells[key][row["solver"]] = float(row["mean"])
    return cells


def losses(cells, boundary, scaling=SCALINGS["n / p > B"]):
    """``{shape: loss}`` of the rule "DP-CD when scaling(n, p, eps) > boundary"."""
    out = {}
    for (family, eps, n, p), errors in cells.items():
        chosen = "dp_cd" if scaling(n, p, eps) > boundary else "dp_gcd"
        out[(family, eps, n, p)] = errors[chosen] / min(errors["dp_cd"], errors["dp_gcd"])
    return out


def _summary(values):
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values)), max(values)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--best", nargs="+", type=Path, default=BEST)
    args = parser.parse_args(argv)
    cells = load(args.best)
    epsilons = sorted({key[1] for key in cells})
    shapes = sorted({(f, n, p) for f, _, n, p in cells}, key=lambda s: (s[0], s[1] / s[2]))
    print("DP-CD's best error over DP-GCD's (> 1: DP-GCD better)")
    print(f"{'family':12s} {'n/p':>6s}  " + "  ".join(f"eps {e:<5g}" for e in epsilons))
    for family, n, p in shapes:
        ratios = [cells.get((family, e, n, p)) for e in epsilons]
        print(f"{family:12s} {n / p:6.0f}  " + "  ".join(
            f"{r['dp_cd'] / r['dp_gcd']:9.3g}" if r else f"{'':9s}" for r in ratios))
    print()
    print("loss of the rule (chosen error / better error): geometric mean / worst")
    print(f"{'rule':18s} {'B':>6s}  " + "  ".join(f"{'eps ' + format(e, 'g'):>13s}" for e in epsilons)
          + f"  {'all':>13s}  worst shape")
    for name, scaling in SCALINGS.items():
        for boundary in BOUNDARIES:
            loss = losses(cells, boundary, scaling)
            per_eps = [_summary(v for k, v in loss.items() if k[1] == e) for e in epsilons]
            everything = _summary(loss.values())
            worst = max(loss, key=loss.get)
            print(f"{name:18s} {boundary:6g}  "
                  + "  ".join(f"{g:6.2f} / {w:4.2f}" for g, w in per_eps)
                  + f"  {everything[0]:6.2f} / {everything[1]:4.2f}  "
                  f"{worst[0]} eps {worst[1]:g} n/p {worst[2] / worst[3]:g}")


if __name__ == "__main__":
    main()
