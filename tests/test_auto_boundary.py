"""experiments/auto_boundary.py: a --quick run's rows, its winner, and its arguments."""
import csv

import pytest
from scripts import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("auto_boundary")


def test_quick_run_writes_every_configuration_and_the_winner(script, tmp_path):
    out = tmp_path / "boundary.csv"
    script.main(["--quick", "--families", "lasso", "logistic-l2", "--ratios", "1",
                 "--epsilon", "2", "--n-jobs", "1", "--out", str(out)])
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert {r["family"] for r in rows} == {"lasso", "logistic-l2"}
    assert {(r["family"], r["solver"]) for r in rows} == {
        ("lasso", "dp_cd"), ("lasso", "dp_gcd"),  # DP-SGD only without L1
        ("logistic-l2", "dp_cd"), ("logistic-l2", "dp_gcd"), ("logistic-l2", "dp_sgd")}
    assert all(float(r["epsilon"]) == 2.0 and int(r["n"]) == int(r["p"]) == 50 for r in rows)
    with out.with_name("boundary_best.csv").open() as f:
        best = list(csv.DictReader(f))
    for family in ("lasso", "logistic-l2"):
        mine = [r for r in rows if r["family"] == family]
        by_solver = {}
        for r in mine:
            by_solver[r["solver"]] = min(by_solver.get(r["solver"], float("inf")), float(r["mean"]))
        winner = min(by_solver, key=by_solver.get)
        cells = [b for b in best if b["family"] == family]
        assert {b["winner"] for b in cells} == {winner}
        assert {b["solver"]: float(b["mean"]) for b in cells} == pytest.approx(by_solver)
    text = out.with_suffix(".txt").read_text()
    assert f"-> {winner}" in text and "eps 2" in text


def test_seeds_below_one_is_an_error(script, capsys):
    with pytest.raises(SystemExit) as error:
        script.main(["--seeds", "0"])
    assert error.value.code == 2
    assert "--seeds must be >= 1" in capsys.readouterr().err
