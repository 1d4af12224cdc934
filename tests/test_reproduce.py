"""experiments/reproduce.py: the papers' tables on the runner, checked on a quick configuration."""
import csv
import re

import numpy as np
import pytest

from sparsedp.experiments import expand_grid
from scripts import load_script

pytest.importorskip("matplotlib")
pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def reproduce():
    return load_script("reproduce")


@pytest.fixture(scope="module")
def california(reproduce):
    from sparsedp.datasets import load_california
    try:
        load_california(download=False)
    except (FileNotFoundError, OSError, ValueError) as exc:
        pytest.skip(f"california not available: {exc}")


def test_windows_are_subsets_of_the_papers_grids(reproduce):
    clips = np.logspace(-4, 6, 50)
    window = reproduce.near(clips, 20.2, 5)
    assert len(window) == 11 and np.all(np.isin(window, clips))
    assert np.isclose(window[5], clips[np.argmin(np.abs(np.log(clips / 20.2)))])
    assert len(reproduce.near(np.logspace(-2, 1, 10), 10.0, 1)) == 2  # clipped at the end
    every4 = reproduce.between(np.logspace(-3, 6, 100), 0.1, 100, 4)
    assert np.all(np.isin(every4, np.logspace(-3, 6, 100)[::4]))
    assert every4.min() >= 0.1 and every4.max() <= 100 and len(every4) == 8


def test_quick_table3_writes_ours_beside_the_paper(reproduce, california, tmp_path, capsys):
    argv = ["table3", "--quick", "--only", "california", "--results-dir", str(tmp_path),
            "--figures-dir", str(tmp_path / "fig"), "--fresh-runs", "3"]
    reproduce.main(argv)
    table = (tmp_path / "table3_quick.txt").read_text()
    assert table in capsys.readouterr().out
    lines = table.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("problem"))
    assert lines[start].split()[:8] == ["problem", "|w*|", "solver", "ours,", "fresh", "seeds",
                                        "in-sample", "paper"]
    end = lines.index("", start)  # the comparison table ends at the first blank line
    rows = {line.split()[2]: line for line in lines[start + 1:end]}
    assert set(rows) == {"DP-CD", "DP-SGD", "DP-GCD"}
    for solver, paper in (("DP-CD", "3 / 2 (0.0024)"), ("DP-SGD", "3 / 5 (0.02)"),
                          ("DP-GCD", "2 / 0 (0.00056)")):
        # |w*| = 3, ours on fresh seeds: "correct / incorrect (mean [min, max])", the
        # in-sample mean, then the paper's cell
        assert re.match(r"california\s+3\s+" + solver + r"\s+\d+\.\d / \d+\.\d \(\S+ \[\S+, "
                        r"\S+\]\)\s+\S+\s+" + re.escape(paper), rows[solver]), rows[solver]
        # 2 runs per point, the best re-run on 3 fresh seeds; M_j from the data
        assert re.search(r"\d+ x 2, 3 fresh\s+inf$", rows[solver])
    assert "Tuning cost" in table and "Support recovery" in table

    # the CSV holds one final row per (grid point, run) of the configuration
    (study,) = reproduce.table3("quick", ["california"], tmp_path)
    points = len(expand_grid(study.grid))
    path = tmp_path / "dp_gcd_table3_quick.csv"
    with path.open() as f:
        records = list(csv.DictReader(f))
    assert len(records) == points * study.runs
    assert {r["solver"] for r in records} == {"dp_cd", "dp_sgd", "dp_gcd"}
    assert (tmp_path / "fig" / "dp_gcd_error_vs_passes_quick.png").read_bytes()[:4] == \
        b"\x89PNG"

    # the best point of each budget re-run on 3 fresh seeds, in a CSV of its own
    fresh_path = tmp_path / "dp_gcd_table3_quick.fresh.csv"
    with fresh_path.open() as f:
        fresh = list(csv.DictReader(f))
    budgets = {(r["solver"], r["passes"]) for r in records}
    assert len(fresh) == 3 * len(budgets)
    assert not {r["seed"] for r in fresh} & {r["seed"] for r in records}

    # a second call resumes from the CSVs: nothing recomputed, the same table
    before, before_fresh = path.read_text(), fresh_path.read_text()
    reproduce.main(argv)
    assert path.read_text() == before and fresh_path.read_text() == before_fresh
    assert (tmp_path / "table3_quick.txt").read_text() == table


def test_unknown_problem_is_refused_in_one_line(reproduce, tmp_path):
    with pytest.raises(SystemExit, match="--only nowhere: no problem of square, california"):
        reproduce.main(["table3", "--quick", "--only", "nowhere", "--results-dir",
                        str(tmp_path)])
