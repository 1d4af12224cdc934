"""experiments/auto_rule.py: the loss of solver="auto"'s L1 boundary, and the docs' figures."""
import csv
import math

import pytest

from sparsedp.linear_model import CD_MIN_RATIO
from scripts import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("auto_rule")


def test_loss_of_a_boundary(script, tmp_path):
    path = tmp_path / "best.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, ["family", "epsilon", "n", "p", "solver", "mean"])
        writer.writeheader()
        for family, eps, n, p, cd, gcd in [("lasso", 1.0, 500, 50, 2.0, 1.0),      # n/p 10
                                           ("dorothea", 3.0, 800, 8, 0.1, 0.4),     # n/p 100
                                           ("logistic-l2", 1.0, 500, 50, 9.0, 1.0)]:  # not L1
            writer.writerow(dict(family=family, epsilon=eps, n=n, p=p, solver="dp_cd", mean=cd))
            writer.writerow(dict(family=family, epsilon=eps, n=n, p=p, solver="dp_gcd", mean=gcd))
    cells = script.load([path])
    assert set(cells) == {("lasso", 1.0, 500, 50), ("dorothea", 3.0, 800, 8)}
    assert script.losses(cells, 300) == {("lasso", 1.0, 500, 50): 1.0, ("dorothea", 3.0, 800, 8): 4.0}
    assert script.losses(cells, 5) == {("lasso", 1.0, 500, 50): 2.0, ("dorothea", 3.0, 800, 8): 1.0}
    # n eps / p: dorothea 300 > 200 (DP-CD), lasso 10 (DP-GCD)
    assert script.losses(cells, 200, script.SCALINGS["n eps / p > B"]) == {
        ("lasso", 1.0, 500, 50): 1.0, ("dorothea", 3.0, 800, 8): 1.0}


def test_the_docs_figures_and_the_chosen_boundary(script, capsys):
    """docs/defaults.rst ("Other budgets") quotes these from the committed results."""
    cells = script.load(script.BEST)
    assert len(cells) == 72 and {k[1] for k in cells} == {0.3, 1.0, 3.0}

    def summary(boundary, eps=None):
        values = [v for k, v in script.losses(cells, boundary).items() if eps in (None, k[1])]
        return math.exp(sum(map(math.log, values)) / len(values)), max(values)

    chosen = summary(CD_MIN_RATIO["l1"])
    assert chosen == pytest.approx((1.09, 4.39), abs=0.005)
    assert summary(300, 0.3)[1] == pytest.approx(5.31, abs=0.005)
    # the chosen boundary has the smallest worst case of the candidates, and the smallest mean
    for boundary in script.BOUNDARIES["l1"][:-1]:
        other = summary(boundary)
        assert other[1] >= chosen[1] - 1e-12 and other[0] >= chosen[0] - 1e-12
    script.main([])
    printed = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert ("n / p > B 1000 1.06 / 1.75 1.14 / 4.22 1.07 / 4.39 1.09 / 4.39 "
            "dorothea eps 3 n/p 100") in printed


def test_the_docs_figures_of_the_l2_boundary(script):
    """docs/defaults.rst: without L1 every boundary up to 30 has the same worst case; 10 is chosen."""
    cells = script.load(script.BEST, "l2")
    assert len(cells) == 72 and {k[1] for k in cells} == {0.3, 1.0, 3.0}

    def summary(boundary):
        values = list(script.losses(cells, boundary, penalty="l2").values())
        return math.exp(sum(map(math.log, values)) / len(values)), max(values)

    chosen = summary(CD_MIN_RATIO["l2"])
    assert chosen == pytest.approx((1.44, 11.78), abs=0.005)
    assert summary(1) == pytest.approx((1.56, 11.78), abs=0.005)  # n > p, the rule before
    for boundary in script.BOUNDARIES["l2"]:
        other = summary(boundary)
        assert other[1] >= chosen[1] - 1e-12  # no boundary has a smaller worst case
        if other[1] <= chosen[1] + 1e-12:
            assert other[0] >= chosen[0] - 0.01  # nor a mean better by more than 0.01 with it
    assert summary(300) == pytest.approx((1.66, 30.08), abs=0.005)
