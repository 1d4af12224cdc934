"""experiments/defaults.py: its --quick table on a tiny problem, and how it picks a default."""
import math
import re
from types import SimpleNamespace

import pytest
from scripts import load_script


@pytest.fixture(scope="module")
def defaults():
    return load_script("defaults")


@pytest.fixture(scope="module")
def table(defaults, tmp_path_factory):
    out = tmp_path_factory.mktemp("defaults") / "defaults.txt"
    defaults.main(["--quick", "--problems", "tiny", "--out", str(out)])
    return out.read_text().splitlines()


BEST = re.compile(r"^  (?P<label>.+?)\s+best (?P<mean>\S+) \+- (?P<std>\S+)  "
                  r"\((?P<budget>passes|n_iter) (?P<b>\S+), step (?P<step>\S+), "
                  r"kappa (?P<kappa>\S+) = clip (?P<clip>\S+)\)$")


def _section(lines, title):
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        match = BEST.match(line)
        if match:
            rows.append(match.groupdict())
    return rows


def test_quick_table_has_every_choice_with_a_grid_point(defaults, table):
    # seeds 0-1, the --quick grid: each variant's best cell is a point of that grid
    assert table[0] == "# python experiments/defaults.py --quick --problems tiny"
    header = next(line for line in table if line.startswith("== tiny:"))
    assert "(L1, n >> p)" in header and "smoothness public" in header
    unit = float(re.search(r"clip unit (\S+),", header).group(1))
    quick = defaults.QUICK
    for title, variants, budgets, steps in (
            ("DP-CD", defaults.CD_VARIANTS, quick["CD_PASSES"], quick["STEPS"]),
            ("DP-GCD", defaults.GCD_VARIANTS, quick["GCD_ITERS"], quick["STEPS"]),
            ("DP-SGD", [("poisson", None)], quick["SGD_PASSES"], quick["SGD_STEPS"])):
        rows = _section(table, title)
        assert [r["label"] for r in rows] == [label for label, _ in variants], title
        for r in rows:
            mean = float(r["mean"])
            assert math.isfinite(mean) and mean > -1e-6, (title, r)  # F(w) >= F*
            assert float(r["b"]) in budgets and float(r["step"]) in steps
            kappa = float(r["kappa"])
            assert any(math.isclose(kappa, k, rel_tol=1e-2) for k in quick["KAPPAS"])
            assert math.isclose(float(r["clip"]), kappa * unit, rel_tol=1e-2)
    assert any(line.startswith("  selection=None picks (n_iter: selection): 3: ")
               for line in table)


def test_quick_table_recommends_and_names_the_best_solver(table):
    assert "== Recommended defaults ==" in table
    chosen = [line.strip() for line in table if line.startswith("    -> ")]
    assert len(chosen) == 8  # DP-CD and DP-GCD: variant, step, kappa, budget
    auto = next(line for line in table if line.startswith("  tiny ") and "->" in line)
    values = dict(re.findall(r"(DP-\w+)\*? (\S+) \+-", auto))
    assert sorted(values) == ["DP-CD", "DP-GCD", "DP-SGD"]
    winner = auto.rsplit("-> ", 1)[1]
    assert winner == min(values, key=lambda s: float(values[s]))


def _fake_sweep(defaults, errors, name="fake", f0=math.inf):
    """A Sweep over one variant, one budget, one step and the kappas of ``errors``."""
    sw = defaults.Sweep.__new__(defaults.Sweep)
    sw.table = {("v", 1, 1.0, k): (e, 0.0) for k, e in errors.items()}
    sw.variants, sw.budgets, sw.steps, sw.kappas = [("v", {})], (1,), (1.0,), tuple(errors)
    sw.pb = SimpleNamespace(name=name, f0=f0)
    return sw


def test_choose_minimises_the_geometric_mean_of_ratios_to_the_best(defaults):
    # kappa 10 halves the error of the easy problem and costs the hard one 7%: the
    # geometric mean of the ratios to each problem's best picks it, where the sum
    # of errors (dominated by the hard problem) would pick kappa 1
    sweeps = [_fake_sweep(defaults, {1.0: 0.1, 10.0: 0.05}),
              _fake_sweep(defaults, {1.0: 3.0, 10.0: 3.2})]
    value, scores = defaults.choose(sweeps, "kappa", [1.0, 10.0])
    assert value == 10.0
    assert scores[10.0][0] == pytest.approx(math.sqrt(3.2 / 3.0))
    assert scores[1.0] == pytest.approx((math.sqrt(2.0), 2.0))
    by_sum = min([1.0, 10.0], key=lambda k: sum(sw.table["v", 1, 1.0, k][0] for sw in sweeps))
    assert by_sum == 1.0


def test_recommend_ignores_a_problem_where_nothing_beats_zero(defaults):
    # on "idle" every kappa is above F(0) = 1: its preference (kappa 1) must not count
    sweeps = [_fake_sweep(defaults, {1.0: 0.2, 10.0: 0.1}, "moving", f0=1.0),
              _fake_sweep(defaults, {1.0: 1.5, 10.0: 30.0}, "idle", f0=1.0)]
    lines = []
    fixed = defaults.recommend(sweeps, "passes", lines, "test")
    assert fixed["kappa"] == 10.0
    assert any(line.startswith("  idle: no configuration beats w = 0") for line in lines)
    # with the idle problem counted, kappa 1 would have won
    assert defaults.choose(sweeps, "kappa", [1.0, 10.0])[0] == 1.0
    assert defaults.recommend(sweeps[1:], "passes", [], "test") is None


def test_seeds_below_one_is_an_error(defaults, capsys):
    with pytest.raises(SystemExit) as error:
        defaults.main(["--seeds", "0"])
    assert error.value.code == 2
    assert "--seeds must be >= 1" in capsys.readouterr().err
