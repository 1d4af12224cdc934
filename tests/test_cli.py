"""The sparsedp command: compare, datasets, help, bad arguments, python -m sparsedp."""
import subprocess
import sys

import pytest

from sparsedp.cli import default_grid, main, parser
from sparsedp.experiments import grid_size

pytestmark = pytest.mark.filterwarnings("ignore::sparsedp.exceptions.PrivacyLeakWarning")


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_help_is_complete(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for option in ("--dataset", "--epsilon", "--delta", "--solvers", "--penalty", "--alpha",
                   "--grid", "--runs", "--jobs", "--seed", "--smoothness", "--feature-bound",
                   "--plot", "--results", "--progress", "--data-home", "--no-download",
                   "--private-tuning"):
        assert option in out
    assert "compare" in parser().format_help() and "datasets" in parser().format_help()


@pytest.mark.parametrize("argv, message", [
    (["compare", "--epsilon", "0"], "--epsilon: must be > 0"),
    (["compare", "--epsilon", "abc"], "is not a float"),
    (["compare", "--delta", "1.5"], "must be in (0, 1)"),
    (["compare", "--solvers", "cd,newton"], "unknown solver newton"),
    (["compare", "--penalty", "l0"], "invalid choice"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_arguments_get_one_clear_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_unknown_dataset_and_bad_bound(capsys):
    code, _, err = run(["compare", "--dataset", "no_such_set", "--no-download"], capsys)
    assert code == 2 and "unknown data set 'no_such_set'" in err
    code, _, err = run(["compare", "--dataset", "log1", "--smoothness", "public",
                        "--plot", "none"], capsys)
    assert code == 2 and "--feature-bound" in err


def test_datasets_lists_the_builtin_sets(capsys):
    code, out, _ = run(["datasets"], capsys)
    assert code == 0
    for name in ("dorothea", "madelon", "dexter", "california", "electricity", "log1",
                 "square", "sparse_lasso", "dorothea_like"):
        assert name in out


def test_compare_prints_the_table(tmp_path, capsys):
    csv = tmp_path / "rows.csv"
    argv = ["compare", "--dataset", "log1", "--solvers", "gcd,cd", "--runs", "2",
            "--results", str(csv), "--plot", str(tmp_path / "p.png")]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert "log1 (synthetic): 1000 x 100" in out and "F* =" in out and "w = 0, the baseline" in out
    table = out[out.index("Best of grid"):]
    assert "dp_cd" in table and "dp_gcd" in table and "dp_sgd" not in table
    assert "Support recovery" in out and "tuning" in out.lower()
    assert csv.exists()
    n_rows = len(csv.read_text().splitlines())
    points = sum(grid_size(default_grid("quick", 1.0, ["dp_gcd", "dp_cd"])).values())
    assert n_rows == 1 + 2 * points  # a header, one row per (grid point, run)
    # a second run resumes: nothing recomputed, the same table
    code, again, _ = run(argv, capsys)
    assert code == 0 and len(csv.read_text().splitlines()) == n_rows
    assert again[again.index("Best of grid"):again.index("Support")] == \
        table[:table.index("Support")]
    # the table's figures are the best points' fresh runs, resumed from their own CSV
    assert "fresh runs (seeds that did not choose it)" in table and "in-sample mean" not in table
    assert len(csv.with_suffix(".fresh.csv").read_text().splitlines()) == 1 + 2 * 5
    code, shown, _ = run(argv + ["--in-sample", "--fresh-runs", "2"], capsys)
    assert code == 0 and "in-sample mean" in shown and ", 2 fresh" in shown


def test_private_tuning_prints_the_end_to_end_error(capsys):
    """--private-tuning: each solver's private search, its error and its epsilon
    (within the request)."""
    import re
    code, out, _ = run(["compare", "--dataset", "log1", "--solvers", "gcd,cd", "--runs", "1",
                        "--plot", "none", "--private-tuning"], capsys)
    assert code == 0
    part = out[out.index("private tuning (PrivateSearch"):]
    rows = {label: (error, tuned) for label, error, tuned in re.findall(
        r"(DP-GCD|DP-CD)\s+relative error (\S+) \(tuned on the data, fresh seeds: "
        r"(\S+)\), epsilon", part)}
    assert set(rows) == {"DP-GCD", "DP-CD"}
    for label, (error, tuned) in rows.items():
        assert float(error) > -1e-9 and float(tuned) > -1e-9
    epsilons = re.findall(r"epsilon (\d\.\d+), chose", part)
    assert epsilons and all(float(e) <= 1.0 for e in epsilons)


def test_private_tuning_error_is_that_of_the_search():
    """The error private_tuning prints is F of the model a PrivateSearch of the same
    objective returns, computed here from its coefficients (the run's task seed)."""
    import io
    import warnings
    import numpy as np
    from sparsedp import DPLogisticRegression
    from sparsedp.cli import build_problem, private_tuning
    from sparsedp.experiments import PRIVATE_SEARCH, task_seed
    from sparsedp.model_selection import PrivateSearch
    problem, _, _ = build_problem("log1")
    delta = 1.0 / problem.n_samples ** 2
    errors = private_tuning(problem, ["dp_gcd"], 1.0, delta, 3, io.StringIO())
    est = DPLogisticRegression(penalty="l1", alpha=problem.penalty.alpha, solver="gcd",
                               classes=[-1.0, 1.0], fit_intercept=False)
    seed = task_seed(3, problem.name, "dp_gcd", PRIVATE_SEARCH, 0, 1.0, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = PrivateSearch(est, epsilon=1.0, delta=delta, random_state=seed).fit(
            problem.X, problem.y)
    coef = np.ravel(search.best_estimator_.coef_)
    margins = problem.X @ coef
    f = np.mean(np.logaddexp(0.0, -problem.y * margins)) + problem.penalty.alpha * np.abs(
        coef).sum()
    assert errors["DP-GCD"] == pytest.approx((f - problem.f_star) / problem.f_star, rel=1e-9)


def test_public_smoothness_gives_private_fits(capsys):
    code, out, _ = run(["compare", "--dataset", "electricity", "--solvers", "gcd",
                        "--runs", "1", "--smoothness", "public", "--feature-bound", "7",
                        "--plot", "none", "--no-download"], capsys)
    if code == 2:
        pytest.skip("electricity not available")
    table = out[out.index("Best of grid"):]
    assert "inf (leak)" not in table and "smoothness: public" in out


def test_default_grid_places_the_clips_on_the_unit():
    import numpy as np
    import scipy.sparse as sp
    from sparsedp.datafits import Logistic
    X = sp.csc_array(np.array([[3.0, 4.0], [0.0, 0.0]]))
    y = np.array([1.0, -1.0])
    from sparsedp.experiments import Problem
    unit = Problem("two rows", X, y, Logistic()).clip_unit
    assert unit == pytest.approx(np.sqrt(25 / 2) * 0.5)  # sqrt(mean ||x||^2) * |loss'(0)| = 1/2
    grid = default_grid("quick", unit, ["gcd"])
    assert grid["dp_gcd"]["clip"] == pytest.approx([k * unit for k in (0.3, 1.0, 3.0, 10.0)])
    assert grid["dp_gcd"]["n_iter"] == [1, 2, 5, 10, 20]
    # DP-SCD's clip has no unit: its values are absolute
    assert default_grid("quick", unit, ["scd"])["dp_scd"]["clip"] == [0.1, 1.0]


def test_python_m_sparsedp(tmp_path):
    # from another folder: the source tree (no compiled kernels) must not shadow the package
    out = subprocess.run([sys.executable, "-m", "sparsedp", "datasets"], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0 and "dorothea" in out.stdout


QUICK = ["compare", "--dataset", "log1", "--solvers", "gcd", "--runs", "1", "--fresh-runs", "1",
         "--plot", "none"]


@pytest.mark.parametrize("extra, message", [
    (["--epsilon", "inf", "--private-tuning"], "private tuning needs a finite epsilon"),
    (["--jobs", "0"], "jobs must be a nonzero integer"),
    (["--plot", "no_such_folder/p.png"], "--plot no_such_folder/p.png: its folder does not"),
    (["--plot", "p.docx"], "the file name must end with one of"),
    (["--results", "no_such_folder/r.csv"], "--results no_such_folder/r.csv: its folder"),
    (["--dataset", "no_such_set"], "unknown data set 'no_such_set'"),
    (["--smoothness", "public"], "--feature-bound"),
])
def test_every_argument_is_checked_before_any_work(extra, message, capsys, monkeypatch):
    """A bad argument fails in one line before the data is loaded: build_problem, the
    first step of the work, must not be reached."""
    import sparsedp.cli

    def no_work(*args, **kwargs):
        raise AssertionError("the work started before the arguments were checked")
    monkeypatch.setattr(sparsedp.cli, "build_problem", no_work)
    monkeypatch.chdir(sparsedp.cli.Path(__file__).parent)
    code, out, err = run(QUICK + extra, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_epsilon_inf_runs_without_noise_and_says_so(capsys):
    code, out, _ = run(QUICK + ["--epsilon", "inf"], capsys)
    assert code == 0 and "tuning cost: none to count (epsilon = inf" in out


STAGES = ("sparsedp: loading log1", "exact solution (non-private)", "sparsedp: grid: ",
          "sparsedp: fresh seeds")


def test_progress_is_off_without_a_terminal(capsys):
    """Under pytest stderr is captured, not a terminal: no stage line, no bar."""
    code, _, err = run(QUICK, capsys)
    assert code == 0 and err == ""


@pytest.mark.parametrize("how", ["terminal", "--progress"])
def test_progress_names_every_stage(how, capsys, monkeypatch):
    """With a terminal on stderr (or --progress) every stage is named on stderr and the
    bars count the exact solver's epochs and the fits; --no-progress silences it."""
    pytest.importorskip("tqdm")
    import sparsedp._progress
    argv = list(QUICK)
    if how == "terminal":
        monkeypatch.setattr(sparsedp._progress, "stderr_is_terminal", lambda: True)
    else:
        argv.append("--progress")
    code, _, err = run(argv, capsys)
    assert code == 0
    for stage in STAGES:
        assert stage in err, stage
    assert "KKT violation" in err and ("fit/s" in err or "s/fit" in err)
    code, _, err = run(argv + ["--no-progress"], capsys)
    assert code == 0 and err == ""


def test_progress_bar_refreshes_while_the_count_stands(monkeypatch):
    """A stage whose count does not move still redraws its elapsed time every beat."""
    pytest.importorskip("tqdm")
    import time
    import sparsedp._progress as progress
    monkeypatch.setattr(progress, "HEARTBEAT", 0.02)
    bar = progress.progress_bar(True, total=3, desc="waiting", unit="step")
    calls = []
    original = bar.bar.refresh
    bar.bar.refresh = lambda *a, **k: (calls.append(1), original(*a, **k))
    time.sleep(0.5)
    bar.close()
    assert len(calls) >= 5
    assert progress.progress_bar(False, desc="off", unit="step") is None


def test_watch_names_the_stage_after_silence(capsys):
    """watch: a line naming the stage after each `every` seconds without output, none
    while the work prints, none when disabled (stderr not a terminal: the default here)."""
    import time
    from sparsedp._progress import watch
    with watch("step one", every=0.1, enabled=True) as w:
        time.sleep(0.45)
        w.stage = "step two"
        time.sleep(0.25)
    err = capsys.readouterr().err
    assert err.count("... step one (") >= 3 and err.count("... step two (") >= 1
    with watch("chatty", every=0.2, enabled=True):
        for _ in range(20):
            print("working", flush=True)
            time.sleep(0.02)
    assert "chatty" not in capsys.readouterr().err
    with watch("quiet", every=0.05):
        time.sleep(0.2)
    assert capsys.readouterr().err == ""
