"""Which n/p boundary solver="auto" should use, at epsilon 0.3, 1 and 3.

    python experiments/auto_rule.py [--penalty l1|l2] [--best FILE ...]

No new fits: this reads each solver's best mean relative error per shape from
``experiments/auto_boundary.py``'s results (``auto_boundary_best.csv``, epsilon 1;
``auto_boundary_epsilon_best.csv``, epsilon 0.3 and 3, made by::

    python experiments/auto_boundary.py --epsilon 3 --families lasso logistic-l1 \\
        california dorothea --ratios 1 3 10 30 100 300 1000 \\
        --out experiments/results/auto_boundary_epsilon.csv
    python experiments/auto_boundary.py --epsilon 3 --families logistic-l2 electricity \\
        --ratios 1 3 10 30 100 300 1000 --out experiments/results/auto_boundary_epsilon.csv

then ``--families ridge california-l2`` (the same ratios; also at epsilon 1 into
``auto_boundary.csv``), and the same at ``--epsilon 0.3``: about 70 s a run with
L1, 7 minutes with logistic L2, 2 with squared L2, on two cores).  ``choose_solver`` picks DP-CD when n > B p, else DP-GCD (a
penalty with an L1 part) or DP-SGD (without).  For the shapes of one penalty it
prints DP-CD's error over the other solver's at every (shape, epsilon), then, for
candidate boundaries B (and the same rule with ``n epsilon`` or ``n / epsilon`` in
place of n), the rule's loss: the chosen solver's error over the better of the
two, its geometric mean and worst over the shapes, per epsilon and over all.
"""
import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
BEST = [RESULTS / "auto_boundary_best.csv", RESULTS / "auto_boundary_epsilon_best.csv"]
FAMILIES = {"l1": ("lasso", "logistic-l1", "california", "dorothea"),
            "l2": ("logistic-l2", "ridge", "electricity", "california-l2")}
OTHER = {"l1": "dp_gcd", "l2": "dp_sgd"}  # what the rule runs below its boundary
BOUNDARIES = {"l1": (10, 30, 100, 300, 1000, math.inf),
              "l2": (0, 1, 3, 10, 30, 100, 300, 1000, math.inf)}
SCALINGS = {"n / p > B": lambda n, p, eps: n / p,
            "n eps / p > B": lambda n, p, eps: n * eps / p,
            "n / (eps p) > B": lambda n, p, eps: n / (eps * p)}


def load(paths, penalty="l1"):
    """``{(family, epsilon, n, p): {solver: best mean error}}`` for one penalty's families."""
    cells = defaultdict(dict)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["family"] in FAMILIES[penalty]:
                    key = (row["family"], float(row["epsilon"]), int(row["n"]), int(row["p"]))
                    cells[key][row["solver"]] = float(row["mean"])
    return cells


def losses(cells, boundary, scaling=SCALINGS["n / p > B"], penalty="l1"):
    """``{shape: loss}`` of the rule "DP-CD when scaling(n, p, eps) > boundary"."""
    other = OTHER[penalty]
    out = {}
    for (family, eps, n, p), errors in cells.items():
        chosen = "dp_cd" if scaling(n, p, eps) > boundary else other
        out[(family, eps, n, p)] = errors[chosen] / min(errors["dp_cd"], errors[other])
    return out


def _summary(values):
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values)), max(values)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--penalty", choices=sorted(FAMILIES), default="l1")
    parser.add_argument("--best", nargs="+", type=Path, default=BEST)
    args = parser.parse_args(argv)
    other = OTHER[args.penalty]
    cells = load(args.best, args.penalty)
    epsilons = sorted({key[1] for key in cells})
    shapes = sorted({(f, n, p) for f, _, n, p in cells}, key=lambda s: (s[0], s[1] / s[2]))
    print(f"DP-CD's best error over {other}'s (> 1: {other} better)")
    print(f"{'family':12s} {'n/p':>6s}  " + "  ".join(f"eps {e:<5g}" for e in epsilons))
    for family, n, p in shapes:
        ratios = [cells.get((family, e, n, p)) for e in epsilons]
        print(f"{family:12s} {n / p:6.0f}  " + "  ".join(
            f"{r['dp_cd'] / r[other]:9.3g}" if r else f"{'':9s}" for r in ratios))
    print()
    print("loss of the rule (chosen error / better error): geometric mean / worst")
    print(f"{'rule':18s} {'B':>6s}  " + "  ".join(f"{'eps ' + format(e, 'g'):>13s}" for e in epsilons)
          + f"  {'all':>13s}  worst shape")
    for name, scaling in SCALINGS.items():
        for boundary in BOUNDARIES[args.penalty]:
            loss = losses(cells, boundary, scaling, args.penalty)
            per_eps = [_summary(v for k, v in loss.items() if k[1] == e) for e in epsilons]
            everything = _summary(loss.values())
            worst = max(loss, key=loss.get)
            print(f"{name:18s} {boundary:6g}  "
                  + "  ".join(f"{g:6.2f} / {w:4.2f}" for g, w in per_eps)
                  + f"  {everything[0]:6.2f} / {everything[1]:4.2f}  "
                  f"{worst[0]} eps {worst[1]:g} n/p {worst[2] / worst[3]:g}")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("auto_rule.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
