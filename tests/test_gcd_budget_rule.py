"""experiments/gcd_budget_rule.py: the loss of DP-GCD's default iteration rule."""
import csv
import math
from pathlib import Path

import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ["family", "penalty", "ratio", "n", "p", "epsilon", "solver", "budget", "step", "kappa",
          "mean", "std", "f0", "f_star", "nnz"]


@pytest.fixture(scope="module")
def script():
    return load_script("gcd_budget_rule")


def _write(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({"penalty": "L1", "ratio": 1, "epsilon": 1.0, "std": 0, "f0": 1,
                             "f_star": 1, "nnz": 1, **row})


def test_loss_interpolates_in_log_log_at_the_default_step_and_clip(script, tmp_path):
    path = tmp_path / "rows.csv"
    # n = 1,500 > p: the default runs round(1500 / 300) = 5 iterations at step 1, kappa 1.
    rows = [dict(family="f", n=1500, p=50, solver="dp_gcd", budget=b, step=1.0, kappa=1.0, mean=m)
            for b, m in [(1, 1.0), (3, 0.5), (10, 2.0)]]
    rows += [dict(family="f", n=1500, p=50, solver="dp_gcd", budget=5, step=3.0, kappa=1.0,
                  mean=1e-9),  # another step: not the estimator's, ignored
             dict(family="f", n=1500, p=50, solver="dp_gcd", budget=5, step=1.0, kappa=0.316,
                  mean=1e-9),  # another clip: ignored
             dict(family="f", n=1500, p=50, solver="dp_cd", budget=5, step=1.0, kappa=1.0,
                  mean=1e-9)]  # another solver: ignored
    _write(path, rows)
    table = script.load(path)
    assert table == {("f", 1500, 50): {1: 1.0, 3: 0.5, 10: 2.0}}
    fraction = (math.log(5) - math.log(3)) / (math.log(10) - math.log(3))
    expected = math.exp(math.log(0.5) + fraction * (math.log(2.0) - math.log(0.5))) / 0.5
    losses = script.rule_losses(table, script.RULES[script.DEFAULT])
    assert losses[("f", 1500, 50)] == pytest.approx(expected, rel=1e-12)
    # exp(log(0.5)) / 0.5: 1 up to numpy's log (SIMD paths round differently)
    assert script.rule_losses(table, script.RULES["3 (fixed)"])[("f", 1500, 50)] == \
        pytest.approx(1.0, rel=1e-12)


def test_the_docs_figures_of_the_default_rule(script, capsys):
    """docs/defaults.rst quotes these losses from the committed results."""
    table = script.load(ROOT / "experiments" / "results" / "auto_boundary.csv")
    assert len(table) == 48
    losses = script.rule_losses(table, script.RULES[script.DEFAULT])
    values = list(losses.values())
    assert math.exp(sum(map(math.log, values)) / len(values)) == pytest.approx(1.57, abs=0.005)
    assert max(values) == pytest.approx(5.06, abs=0.005)
    assert max(losses, key=losses.get) == ("california", 2400, 8)
    script.main(["--csv", str(ROOT / "experiments" / "results" / "auto_boundary.csv")])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(script.DEFAULT))
    assert line.split()[-7:-3] == ["1.57", "5.06", "1.43", "3.00"]
