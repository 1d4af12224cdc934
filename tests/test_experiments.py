"""sparsedp.experiments: grids, seeds, resume, summaries, plots, tuning cost.

Small problems (60 x 40) and tiny grids: the whole file runs in seconds.
"""
import collections
import json
import math
import os
import pickle
import platform
import sys
import warnings

import numpy as np
import pytest
from scipy import optimize, special

from problems import make_sparse_problem
from sparsedp import solvers
from sparsedp.datafits import Logistic, Squared
from sparsedp.exceptions import PrivacyLeakWarning
from sparsedp.experiments import (COLUMNS, Problem, _runner, read_results, rerun_best,
                                  run_grid, run_task,
                                  summarize, support_table, task_seed, tuning_cost)
from sparsedp.penalties import L1, L2

EPS, DELTA = 1.0, 1e-4
GRID = {"dp_cd": {"passes": [2, 4], "clip": [0.3, 3.0], "averaging": False},
        "dp_gcd": {"n_iter": [3], "clip": [0.3, 3.0]}}
# DP-SGD and DP-SCD calibrate their noise by the PLD accountant: 0.1 - 0.3 s a fit
SGD_SCD = {"dp_sgd": {"passes": [1], "clip": [1.0], "step_size": [0.3]},
           "dp_scd": {"passes": [2], "clip": [1.0], "batch_size": [5]}}


def lasso(name="lasso", seed=0, lam=0.02):
    X, y = make_sparse_problem(n=60, p=40, seed=seed)
    M = Squared().smoothness(X)  # stands for public constants in these tests
    return Problem(name, X, y, Squared(), L1(lam), smoothness=M, global_smoothness=float(M.sum()))


def ridge_logistic(name="logreg"):
    X, y = make_sparse_problem(n=60, p=40, seed=1, logistic=True)
    M = Logistic().smoothness(X)
    return Problem(name, X, y, Logistic(), L2(0.05), smoothness=M,
                   global_smoothness=float(M.sum()))


def without_time(rows):
    return [{k: v for k, v in row.items() if k != "time"} for row in rows]


def run(problems, path=None, **kwargs):
    kwargs = {"epsilon": EPS, "delta": DELTA, "n_runs": 2, "progress": False, **kwargs}
    return run_grid(problems, kwargs.pop("grid", GRID), results=path, **kwargs)


# ------------------------------------------------------------------ seeds, parallel

def test_task_seed_is_a_function_of_the_task_identity_only():
    a = task_seed(0, "p", "dp_cd", '{"clip": 1.0}', 0, 1.0, 1e-5)
    assert a == task_seed(0, "p", "dp_cd", '{"clip": 1.0}', 0, 1.0, 1e-5)
    others = {task_seed(1, "p", "dp_cd", '{"clip": 1.0}', 0, 1.0, 1e-5),
              task_seed(0, "q", "dp_cd", '{"clip": 1.0}', 0, 1.0, 1e-5),
              task_seed(0, "p", "dp_gcd", '{"clip": 1.0}', 0, 1.0, 1e-5),
              task_seed(0, "p", "dp_cd", '{"clip": 2.0}', 0, 1.0, 1e-5),
              task_seed(0, "p", "dp_cd", '{"clip": 1.0}', 1, 1.0, 1e-5),
              task_seed(0, "p", "dp_cd", '{"clip": 1.0}', 0, 2.0, 1e-5)}
    assert a not in others and len(others) == 6
    assert 0 <= a < 2**63


def test_rows_do_not_depend_on_n_jobs():
    pytest.importorskip("joblib")
    problems = [lasso(), ridge_logistic()]
    serial = run(problems, n_jobs=1)
    parallel = run(problems, n_jobs=2)
    assert len(serial) == 2 * 2 * (4 + 2)
    assert without_time(serial) == without_time(parallel)
    # different runs of a point are different fits
    cd = [r for r in serial if r["solver"] == "dp_cd" and r["problem"] == "lasso"]
    assert cd[0]["params"] == cd[1]["params"] and cd[0]["objective"] != cd[1]["objective"]


def test_a_problem_goes_to_local_workers_once_as_a_file(tmp_path, monkeypatch):
    joblib = pytest.importorskip("joblib")
    problem = lasso()
    problem.optimum
    shared = _runner._SharedProblem(problem, str(tmp_path))
    # a problem's X is its own and read-only, unpickled too (dask scatters it by
    # pickle): DP-GCD keeps the records it derives from X for the next fits
    from sparsedp._kernels._dp_gcd_fast import entries
    for copy in (problem, pickle.loads(pickle.dumps(problem, protocol=5)),
                 pickle.loads(pickle.dumps(problem, protocol=4))):
        assert not copy.X.data.flags.writeable
        assert entries(copy.X)[2] is entries(copy.X)[2]
    # a chunk carries the handle: small, whatever the problem weighs
    assert len(pickle.dumps(shared)) < 500 < len(pickle.dumps(problem))
    monkeypatch.setattr(_runner, "_LOADED", collections.OrderedDict())
    loaded = shared.load()
    assert shared.load() is loaded  # once per worker process
    assert loaded.f_star == problem.f_star and not loaded.X.data.flags.writeable
    np.testing.assert_array_equal(loaded.X.toarray(), problem.X.toarray())
    # the token is the problem's content: another sweep of the same problem (another
    # handle, another file, the same problem made again) finds it loaded, with what
    # the kernels keep for its arrays; a problem that differs in anything is loaded anew
    made_again = lasso()
    made_again.optimum
    assert made_again is not problem
    again = _runner._SharedProblem(made_again, str(tmp_path))
    assert again.path != shared.path and again.token == shared.token
    assert again.load() is loaded
    other = pickle.loads(pickle.dumps(problem))
    other.penalty = L1(0.5 * other.penalty.alpha)
    renamed = pickle.loads(pickle.dumps(problem))
    renamed.name = "another name"
    tokens = {_runner._SharedProblem(p, str(tmp_path)).token for p in (other, renamed)}
    assert len(tokens) == 2 and shared.token not in tokens
    for k in range(_runner.WORKER_PROBLEMS):  # only the most recent ones are kept
        renamed.name = f"problem {k}"
        _runner._SharedProblem(renamed, str(tmp_path)).load()
    assert shared.token not in _runner._LOADED
    # a sweep with local processes writes its problem in a folder of its own, left
    # for the next sweeps of the same problem (SHARED_KEPT problems, the most recent),
    # removed when evicted or at exit; a problem over SHARED_KEPT_BYTES goes with its sweep
    sweeps = tmp_path / "sweeps"
    monkeypatch.setenv("JOBLIB_TEMP_FOLDER", str(sweeps))
    sweeps.mkdir()
    monkeypatch.setattr(_runner, "_SHARED", collections.OrderedDict())
    assert _runner._local_processes(joblib)

    def files():
        return sorted(str(f) for f in sweeps.rglob("*.joblib"))
    first = run(problem, n_jobs=2)
    kept = files()
    assert len(kept) == 1
    assert without_time(run(made_again, n_jobs=2)) == without_time(first)
    assert files() == kept  # the same content: the same file, not written again
    run(other, n_jobs=2)
    run(renamed, n_jobs=2)
    assert len(files()) == _runner.SHARED_KEPT == 2 and kept[0] not in files()
    assert len(list(sweeps.iterdir())) == 2  # the evicted one's folder went too
    _runner._remove_shared()
    assert list(sweeps.iterdir()) == []
    monkeypatch.setattr(_runner, "SHARED_KEPT_BYTES", 100)
    assert without_time(run(problem, n_jobs=2)) == without_time(first)
    assert list(sweeps.iterdir()) == [] and not _runner._SHARED
    # a killed process's folders (no exit hook) go with the next sweep's; a live
    # process's stay, and so do other names
    import subprocess
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    dead = sweeps / f"{_runner.SHARED_PREFIX}{int(ended.stdout)}-abc"
    alive = sweeps / f"{_runner.SHARED_PREFIX}{os.getpid()}-def"
    other = sweeps / f"{_runner.SHARED_PREFIX}x-ghi"
    for folder in (dead, alive, other):
        folder.mkdir()
        (folder / "p.joblib").write_bytes(b"x")
    run(problem, n_jobs=2)
    assert not dead.exists() and alive.exists() and other.exists()
    with joblib.parallel_config(backend="threading"):
        assert not _runner._local_processes(joblib)


def test_warm_workers_see_a_changed_problem():
    """Sweeps of one problem object on the same warm loky workers: the second finds
    the problem loaded (same content), a third after the penalty changed must not:
    each sweep's rows are those of one process, computed afresh."""
    pytest.importorskip("joblib")
    problem = lasso()
    first = run(problem, n_jobs=2)
    token = _runner._fingerprint(problem)
    assert without_time(run(problem, n_jobs=2)) == without_time(first)
    run(problem, n_jobs=1)  # what a sweep computes from the problem came before the first
    assert _runner._fingerprint(problem) == token
    problem.penalty = L1(2.0 * problem.penalty.alpha)
    changed = run(problem, n_jobs=2)
    assert without_time(changed) == without_time(run(problem, n_jobs=1))
    assert [r["objective"] for r in changed] != [r["objective"] for r in first]


@pytest.mark.parametrize("workers, threads", [(2, 1), (1, 2), (1, 1)])
def test_dask_backend_on_a_local_cluster_gives_the_same_rows(workers, threads):
    """On Dask, also with a single worker thread (joblib then runs the chunks in
    the caller, in sequence)."""
    joblib = pytest.importorskip("joblib")
    distributed = pytest.importorskip("distributed")
    problem = lasso()
    reference = run(problem, n_jobs=1)
    assert _runner._broadcast(joblib, [problem]) == {}  # loky: the problem goes as a file
    with distributed.LocalCluster(processes=False, n_workers=workers,
                                  threads_per_worker=threads,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with joblib.parallel_config(backend="dask"):
            on_dask = run(problem, n_jobs=-1)
            assert without_time(on_dask) == without_time(reference)
            if workers == 1:
                return
            # each problem is sent to every worker before the first chunk (not to one
            # worker, the others stealing from it)
            sent = _runner._broadcast(joblib, [problem, problem])
            assert list(sent) == [id(problem)]
            future, token = sent[id(problem)]
            holders = client.who_has([future])
            assert len(next(iter(holders.values()))) == 2
            assert client.submit(lambda p: p.f_star, future).result() == problem.f_star
            assert token == _runner._fingerprint(problem)
            # a later sweep of the same content reuses the scattered copies; another
            # content is scattered anew
            assert _runner._broadcast(joblib, [problem])[id(problem)][0] is future
            changed = lasso()
            changed.penalty = L1(2.0 * changed.penalty.alpha)
            other, other_token = _runner._broadcast(joblib, [changed])[id(changed)]
            assert other is not future and other_token != token
            assert without_time(run(changed, n_jobs=-1)) == without_time(run(changed, n_jobs=1))
    assert without_time(on_dask) == without_time(reference)


def test_dask_workers_keep_their_first_copy_of_a_problem():
    """A Dask worker process runs a later sweep of the same problem on the copy it
    got first (with what the kernels keep for its arrays), not on the new copy each
    sweep scatters; a changed problem is another."""
    joblib = pytest.importorskip("joblib")
    distributed = pytest.importorskip("distributed")
    problem = lasso()
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with joblib.parallel_config(backend="dask"):
            first = run(problem, n_jobs=-1)
            token = _runner._fingerprint(problem)

            def held(token):  # the identity of a worker's copy (sent by value: a closure)
                return client.run(lambda t: id(_runner._LOADED[t]), token)

            kept = held(token)
            assert len(kept) == 2
            again = run(problem, n_jobs=-1)
            assert held(token) == kept
            problem.penalty = L1(2.0 * problem.penalty.alpha)
            changed = run(problem, n_jobs=-1)
            assert held(_runner._fingerprint(problem)).keys() == kept.keys()
    assert without_time(again) == without_time(first)
    assert without_time(changed) == without_time(run(problem, n_jobs=1))


# ------------------------------------------------------------------ metrics

def test_relative_error_and_support_match_an_independent_computation():
    sklearn_lm = pytest.importorskip("sklearn.linear_model")
    problem = lasso()
    rows = run(problem, grid={"dp_cd": GRID["dp_cd"], "dp_gcd": GRID["dp_gcd"]},
               epsilon=5.0)
    # w*, F*: scikit-learn's Lasso minimises (1/2n)||y - Xw||^2 + a ||w||_1, i.e. half
    # of our F with a = lambda / 2
    ref = sklearn_lm.Lasso(alpha=0.01, fit_intercept=False, tol=1e-14, max_iter=100_000)
    ref.fit(problem.X.toarray(), problem.y)
    f_star = float(np.mean((problem.X @ ref.coef_ - problem.y) ** 2)
                   + 0.02 * np.abs(ref.coef_).sum())
    support = set(np.flatnonzero(np.abs(ref.coef_) > 1e-12))
    assert math.isclose(problem.f_star, f_star, rel_tol=1e-8)
    assert set(problem.support) == support
    for row in rows:
        params = json.loads(row["params"])
        fit = getattr(solvers, row["solver"])
        res = fit(problem.X, problem.y, Squared(), L1(0.02), epsilon=5.0, delta=DELTA,
                  random_state=row["seed"], smoothness=problem.smoothness, **params)
        value = float(np.mean((problem.X @ res.coef - problem.y) ** 2)
                      + 0.02 * np.abs(res.coef).sum())
        assert math.isclose(row["objective"], value, rel_tol=1e-10)
        assert math.isclose(row["rel_error"], (value - f_star) / f_star, rel_tol=1e-6)
        nonzero = set(np.flatnonzero(res.coef))
        assert row["support_correct"] == len(nonzero & support)
        assert row["support_incorrect"] == len(nonzero - support)
        assert row["support_true"] == len(support)
        assert row["passes"] == params.get("passes", params.get("n_iter"))
        assert row["ledger_epsilon"] <= 5.0


def planted_row(params, run, objective, correct=1, incorrect=0):
    return {"problem": "p", "solver": "dp_cd", "params": json.dumps(params), "run": run,
            "seed": run, "epsilon": 1.0, "delta": 1e-5, "final": True, "passes": 1.0,
            "objective": objective, "optimum": 1.0, "rel_error": objective - 1.0,
            "support_correct": correct, "support_incorrect": incorrect, "support_true": 3,
            "ledger_epsilon": 1.0, "time": 0.1 * (run + 1)}


def test_best_of_grid_is_the_lowest_mean_not_the_lowest_single_run():
    # point "a" has the best single run, "b" the best mean, "c" the worst
    rows = ([planted_row({"clip": 1.0}, r, v) for r, v in enumerate([1.01, 1.9, 1.9])]
            + [planted_row({"clip": 2.0}, r, v, correct=2 + r, incorrect=r)
               for r, v in enumerate([1.2, 1.3, 1.4])]
            + [planted_row({"clip": 3.0}, r, v) for r, v in enumerate([2.0, 2.1, 2.2])])
    [best] = summarize(rows).rows
    assert best["params"] == {"clip": 2.0}
    assert best["n_points"] == 3 and best["n_fits"] == 9 and best["n_runs"] == 3
    assert best["rel_error_min"] == pytest.approx(0.2)
    assert best["rel_error_mean"] == pytest.approx(0.3)
    assert best["rel_error_max"] == pytest.approx(0.4)
    assert (best["support_correct_min"], best["support_correct_mean"],
            best["support_correct_max"]) == (2.0, 3.0, 4.0)
    assert best["support_incorrect_mean"] == 1.0
    assert best["time_mean"] == pytest.approx(0.2)
    assert best["private"]
    assert "non-private" in str(summarize(rows)).lower()
    assert "2 / 3 / 4" in support_table(rows)


def test_best_of_grid_finds_the_planted_good_clipping():
    # noiseless DP-CD: a clipping threshold of 1e-6 stops progress, 1e3 clips nothing
    problem = lasso()
    grid = {"dp_cd": {"passes": [20], "clip": [1e-6, 1e3], "averaging": False}}
    rows = run(problem, grid=grid, epsilon=math.inf)
    [best] = summarize(rows).rows
    assert best["params"]["clip"] == 1e3
    assert best["rel_error_max"] < 1e-2


def test_summary_per_budget_gives_one_row_per_passes_value():
    rows = run(lasso(), grid={"dp_cd": GRID["dp_cd"]})
    summary = summarize(rows, by_passes=True)
    assert [r["passes"] for r in summary] == [2.0, 4.0]
    assert all(r["n_points"] == 2 for r in summary)


# ------------------------------------------------------------------ CSV, resume

def test_csv_round_trip_is_exact(tmp_path):
    path = tmp_path / "results.csv"
    with pytest.warns(UserWarning, match="dp_scd needs an L2"):
        rows = run([lasso(), ridge_logistic()], path, trace=True, grid={**GRID, **SGD_SCD},
                   n_runs=1)
    assert read_results(path) == rows
    assert path.read_text().splitlines()[0] == ",".join(COLUMNS)
    assert {r["solver"] for r in rows if r["problem"] == "logreg"} == {
        "dp_cd", "dp_gcd", "dp_sgd", "dp_scd"}
    # the trace's last checkpoint is the returned model
    for final in (r for r in rows if r["final"] and r["solver"] == "dp_cd"):
        trace = [r for r in rows if not r["final"] and r["params"] == final["params"]
                 and r["run"] == final["run"] and r["problem"] == final["problem"]]
        assert trace[-1]["passes"] == final["passes"]
        assert trace[-1]["objective"] == pytest.approx(final["objective"], rel=1e-12)


def counting(monkeypatch, stop_after=None):
    calls = []
    real = run_task  # the public one: the real one, whatever _runner.run_task is now

    def wrapper(*args):
        if stop_after is not None and len(calls) == stop_after:
            raise KeyboardInterrupt
        calls.append((args[0].name,) + args[1:4])
        return real(*args)
    monkeypatch.setattr(_runner, "run_task", wrapper)
    return calls


def test_resume_after_an_interruption_runs_only_the_missing_tasks(tmp_path, monkeypatch):
    problems = [lasso(), ridge_logistic()]
    reference = run(problems, tmp_path / "reference.csv", trace=True)
    n_tasks = sum(r["final"] for r in reference)
    path = tmp_path / "results.csv"
    first = counting(monkeypatch, stop_after=5)
    with pytest.raises(KeyboardInterrupt):
        run(problems, path, trace=True)
    assert len(first) == 5
    assert sum(r["final"] for r in read_results(path)) == 5
    second = counting(monkeypatch)
    resumed = run(problems, path, trace=True)
    assert len(second) == n_tasks - 5
    assert not set(first) & set(second)
    assert without_time(resumed) == without_time(reference)
    assert without_time(read_results(path)) == without_time(reference)
    third = counting(monkeypatch)
    assert without_time(run(problems, path, trace=True)) == without_time(reference)
    assert third == []
    # resume=False starts afresh
    fourth = counting(monkeypatch)
    run(problems, path, trace=True, resume=False)
    assert len(fourth) == n_tasks


def test_resume_drops_a_line_cut_mid_write(tmp_path, monkeypatch):
    problem = lasso()
    path = tmp_path / "results.csv"
    reference = run(problem, path)
    text = path.read_text()
    path.write_text(text[: len(text) - 25])  # the last row loses its end and newline
    calls = counting(monkeypatch)
    resumed = run(problem, path)
    assert len(calls) == 1
    assert without_time(resumed) == without_time(reference)
    assert without_time(read_results(path)) == without_time(reference)


def test_resume_refuses_a_file_made_on_other_data(tmp_path):
    path = tmp_path / "results.csv"
    run(lasso(), path)
    with pytest.raises(ValueError, match="other data"):
        run(lasso(lam=0.03), path)


def test_read_results_refuses_a_foreign_csv(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a results file"):
        read_results(path)


# ------------------------------------------------------------------ inputs, leaks

@pytest.mark.parametrize("grid, match", [
    ({"dp_xx": {"passes": [1], "clip": [1.0]}}, "unknown solver"),
    ({"dp_cd": {"passes": [1]}}, "misses clip"),
    ({"dp_cd": {"passes": [1], "clip": [1.0], "steps": [1.0]}}, "no parameter 'steps'"),
    ({"dp_cd": {"passes": [1], "clip": [1.0], "epsilon": [1.0]}}, "set by run_grid"),
    ({"dp_gcd": {"passes": [1], "clip": [1.0]}}, "no parameter 'passes'"),
    ({"dp_cd": {"passes": [1, 1], "clip": [1.0]}}, "repeated"),
    ({"dp_cd": {"passes": [], "clip": [1.0]}}, "empty"),
])
def test_bad_grids_are_refused_before_any_fit(grid, match):
    with pytest.raises(ValueError, match=match):
        run(lasso(), grid=grid)


def test_bad_problems_are_refused():
    with pytest.raises(ValueError, match="unique"):
        run([lasso(), lasso()])
    with pytest.raises(TypeError, match="Problem"):
        run(["lasso"])
    X, y = make_sparse_problem(n=60, p=40)
    with pytest.raises(ValueError, match="shape"):
        Problem("x", X, y, Squared(), L1(0.1), smoothness=np.ones(3))
    with pytest.raises(TypeError, match="name"):
        Problem("", X, y, Squared(), L1(0.1))
    with pytest.raises(TypeError, match="grid values"):
        run(lasso(), grid={"dp_cd": {"passes": [1], "clip": [[1.0]]}})



@pytest.mark.parametrize("budget, match", [
    (dict(epsilon=0.0, delta=1e-3), "epsilon"), (dict(epsilon=float("nan"), delta=1e-3), "epsilon"),
    (dict(epsilon=1.0, delta=1.5), "delta"), (dict(epsilon=1.0, delta=0.0), "delta"),
])
def test_bad_budgets_and_data_are_refused(budget, match):
    from sparsedp.experiments import run_grid
    with pytest.raises(ValueError, match=match):
        run_grid(lasso(), {"dp_cd": {"passes": [1], "clip": [1.0]}}, n_runs=1, progress=False,
                 **budget)
    X, y = make_sparse_problem(n=60, p=40)
    Xd = X.toarray()
    Xd[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Problem("x", Xd, y, Squared(), L1(0.1))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Problem("x", X, y[:10], Squared(), L1(0.1))


def test_dp_scd_is_skipped_where_it_does_not_apply():
    grid = {"dp_scd": {"passes": [1], "clip": [1.0], "batch_size": [5]}}
    with pytest.warns(UserWarning, match="dp_scd needs an L2"):
        rows = run([lasso(), ridge_logistic()], grid=grid)
    assert {r["problem"] for r in rows} == {"logreg"}
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="no task"):
        run(lasso(), grid=grid)


def test_constants_from_the_data_are_reported_as_not_private():
    X, y = make_sparse_problem(n=60, p=40)
    problem = Problem("leaky", X, y, Squared(), L1(0.02), smoothness="leak")
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        rows = run(problem, grid={"dp_cd": {"passes": [1], "clip": [1.0]}})
    assert all(math.isinf(r["ledger_epsilon"]) for r in rows)
    [best] = summarize(rows).rows
    assert not best["private"] and "(leak)" in str(summarize(rows))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        run(lasso(), grid={"dp_cd": {"passes": [1], "clip": [1.0]}})


# ------------------------------------------------------------------ plots

def test_plot_error_vs_passes_writes_a_figure(tmp_path):
    pytest.importorskip("matplotlib")
    from sparsedp.experiments import error_curves, plot_error_vs_passes
    with pytest.warns(UserWarning, match="dp_scd needs an L2"):
        rows = run([lasso(), ridge_logistic()], trace=True, grid={**GRID, **SGD_SCD})
    path = tmp_path / "errors.png"
    fig = plot_error_vs_passes(rows, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(fig.axes) == 2
    curves = error_curves(rows, problem="lasso")
    assert curves["lasso", "dp_cd"]["source"] == "grid"  # two budgets: tuned per budget
    assert list(curves["lasso", "dp_cd"]["passes"]) == [2.0, 4.0]
    assert curves["lasso", "dp_sgd"]["source"] == "trace"  # one budget: its checkpoints
    for c in curves.values():
        assert np.all(c["min"] <= c["mean"]) and np.all(c["mean"] <= c["max"])
    by_budget = {r["passes"]: r for r in summarize(rows, by_passes=True)
                 if r["problem"] == "lasso" and r["solver"] == "dp_cd"}
    assert curves["lasso", "dp_cd"]["mean"][1] == pytest.approx(by_budget[4.0]["rel_error_mean"])
    with pytest.raises(ValueError, match="one Axes"):
        plot_error_vs_passes(rows, ax=fig.axes[0])
    plot_error_vs_passes(rows, tmp_path / "one.pdf", ax=fig.axes[0], problem="lasso")
    assert (tmp_path / "one.pdf").stat().st_size > 0


# ------------------------------------------------------------------ tuning cost

def gdp_delta(eps, mu):
    """Dong, Roth and Su, Corollary 2.13, summed directly."""
    return (special.ndtr(-eps / mu + mu / 2)
            - math.exp(eps + special.log_ndtr(-eps / mu - mu / 2)))


def kov_delta(eps, eps0, k):
    """Kairouz, Oh and Viswanath, Theorem 3.3, summed directly (small k)."""
    total = sum(math.comb(k, i) * max(0.0, math.exp(eps0 * (k - i)) - math.exp(eps + eps0 * i))
                for i in range(k + 1))
    return total / (1 + math.exp(eps0)) ** k


@pytest.mark.parametrize("points, runs, eps, delta", [(4, 3, 0.5, 1e-5), (50, 5, 1.0, 1e-6)])
def test_tuning_cost_matches_the_composition_formulas(points, runs, eps, delta):
    cost = tuning_cost(points, runs, epsilon=eps, delta=delta)
    g = points * runs
    assert cost.n_fits == g
    assert cost.basic_epsilon == pytest.approx(g * eps)
    assert cost.basic_delta == pytest.approx(g * delta)
    # GDP: mu of one (eps, delta) Gaussian mechanism, then sqrt(g) mu
    mu = optimize.brentq(lambda m: gdp_delta(eps, m) - delta, 1e-3, 50, xtol=1e-14)
    assert cost.gdp_mu == pytest.approx(mu, rel=1e-7)
    eps_g = optimize.brentq(lambda e: gdp_delta(e, math.sqrt(g) * mu) - delta, 1e-6, 1e3,
                            xtol=1e-12)
    assert cost.gdp_epsilon == pytest.approx(eps_g, rel=1e-6)
    assert cost.gdp_epsilon >= eps_g * (1 - 1e-9)  # never below the exact value
    # optimal composition: the pure part at slack delta, the deltas of the fits on top
    if g <= 20:
        assert kov_delta(cost.optimal_epsilon, eps, g) <= delta * (1 + 1e-9)
        assert kov_delta(cost.optimal_epsilon * (1 - 1e-6), eps, g) > delta
    assert cost.optimal_delta == pytest.approx(1 - (1 - delta) ** (g + 1), rel=1e-9)
    assert cost.gdp_epsilon < cost.optimal_epsilon <= cost.basic_epsilon
    text = str(cost)
    assert f"{g} fits" in text and "covered by none" in text


def test_tuning_cost_refuses_bad_budgets():
    with pytest.raises(ValueError, match="finite"):
        tuning_cost(3, epsilon=math.inf, delta=1e-5)
    with pytest.raises(ValueError):
        tuning_cost(0, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError):
        tuning_cost(3, epsilon=1.0, delta=1.5)


# ------------------------------------------------------------------ fresh seeds

def test_summary_with_fresh_runs_reports_them_and_keeps_the_in_sample_beside():
    rows = ([planted_row({"clip": 1.0}, r, v) for r, v in enumerate([1.2, 1.3, 1.4])]
            + [planted_row({"clip": 2.0}, r, v) for r, v in enumerate([1.5, 1.6, 1.7])])
    fresh = [{**planted_row({"clip": 1.0}, r, v, correct=2), "seed": 100 + r}
             for r, v in enumerate([1.5, 1.7])]
    [best] = summarize(rows, fresh=fresh).rows
    assert best["fresh"] and best["params"] == {"clip": 1.0}
    assert best["n_runs"] == 2 and best["n_fits"] == 6
    assert best["rel_error_mean"] == pytest.approx(0.6)
    assert best["in_sample_rel_error_mean"] == pytest.approx(0.3)
    assert best["support_correct_mean"] == 2.0
    text = str(summarize(rows, fresh=fresh))
    assert "fresh runs" in text and "in-sample mean" not in text and "2 x 3, 2 fresh" in text
    assert "in-sample mean" in str(summarize(rows, fresh=fresh, in_sample=True))
    assert "in-sample" in str(summarize(rows)).splitlines()[0]
    assert "fresh runs" in support_table(rows, fresh=fresh)


def test_summary_refuses_missing_or_reused_fresh_runs():
    rows = [planted_row({"clip": 1.0}, r, v) for r, v in enumerate([1.2, 1.3])]
    with pytest.raises(ValueError, match="no run of the best point.*rerun_best"):
        summarize(rows, fresh=[{**planted_row({"clip": 2.0}, 0, 1.1), "seed": 50}])
    with pytest.raises(ValueError, match="share seeds.*not fresh"):
        summarize(rows, fresh=[planted_row({"clip": 1.0}, 5, 1.1) | {"seed": 1}])


def test_rerun_best_runs_the_chosen_point_on_seeds_that_did_not_choose_it(tmp_path):
    problem = lasso()
    rows = run(problem, grid={"dp_cd": GRID["dp_cd"]})
    [best] = summarize(rows).rows
    fresh = rerun_best(problem, rows, n_runs=3, progress=False)
    assert len(fresh) == 3 and all(r["final"] for r in fresh)
    assert {json.dumps(json.loads(r["params"]), sort_keys=True) for r in fresh} == {
        json.dumps(best["params"], sort_keys=True)}
    assert not {r["seed"] for r in fresh} & {r["seed"] for r in rows}
    # each fresh row is the task itself: run_task on its seed gives the same fit
    again = run_task(problem, "dp_cd", fresh[1]["params"], 1, fresh[1]["seed"], EPS, DELTA)
    assert again[-1]["objective"] == fresh[1]["objective"]
    # per budget: one chosen point per number of passes, each re-run
    per_budget = rerun_best(problem, rows, n_runs=2, by_passes=True, progress=False)
    assert sorted({r["passes"] for r in per_budget}) == [2.0, 4.0] and len(per_budget) == 4
    assert [r["passes"] for r in summarize(rows, by_passes=True, fresh=per_budget)] == [2.0, 4.0]
    # resumable in its own file
    path = tmp_path / "fresh.csv"
    first = rerun_best(problem, rows, n_runs=2, fresh_results=path, progress=False)
    assert without_time(rerun_best(problem, rows, n_runs=2, fresh_results=path,
                                   progress=False)) == without_time(first)
    assert len(read_results(path)) == 2


def test_rerun_best_refuses_the_grid_seed_and_unknown_problems():
    problem = lasso()
    rows = run(problem, grid={"dp_cd": GRID["dp_cd"]}, seed=4)
    with pytest.raises(ValueError, match="seed=4 gives the fresh runs the seeds of the grid"):
        rerun_best(problem, rows, seed=4, progress=False)
    with pytest.raises(ValueError, match="not among the problems given"):
        rerun_best(lasso("other"), rows, progress=False)
    with pytest.raises(ValueError, match="n_jobs must be a nonzero integer"):
        rerun_best(problem, rows, seed=5, n_jobs=0, progress=False)


def test_best_of_identical_points_is_flattered_in_sample_and_not_on_fresh_seeds():
    # 8 grid points with the same law up to 1e-9 (their clips differ by that), 2 runs each: the least of 8 noisy means sits below the law's mean,
    # which 24 fresh runs estimate.  Fixed seeds; the gap is several standard errors.
    problem = lasso()
    grid = {"dp_cd": {"passes": [2], "clip": [0.3 * (1 + k * 1e-9) for k in range(8)],
                      "averaging": False}}
    rows = run(problem, grid=grid)
    fresh = rerun_best(problem, rows, n_runs=24, progress=False)
    [best] = summarize(rows, fresh=fresh).rows
    all_errors = [r["rel_error"] for r in rows if r["final"]]
    assert best["in_sample_rel_error_mean"] < np.mean(all_errors)
    assert best["in_sample_rel_error_mean"] < best["rel_error_mean"]
    # the fresh mean and the grid's mean estimate the same law: within 3 standard errors
    sem = np.hypot(np.std([r["rel_error"] for r in fresh], ddof=1) / np.sqrt(24),
                   np.std(all_errors, ddof=1) / np.sqrt(len(all_errors)))
    assert abs(best["rel_error_mean"] - np.mean(all_errors)) < 3 * sem


def test_tasks_go_to_workers_in_chunks_of_one_problem_each_task_once():
    a, b = object(), object()
    calls = [(a, "t", k) for k in range(50)] + [(b, "u", k) for k in range(7)]
    chunks = _runner._chunks(calls, workers=2)
    # each problem's tasks once, in order, in chunks of one problem
    assert [(p is a, tail) for p, tails in chunks for tail in tails] == [
        (args[0] is a, args[1:]) for args in calls]
    # guided: a chunk is an eighth of the tasks not yet chunked (57 // 8 = 7 first),
    # never growing, down to single tasks at the end
    sizes = [len(tails) for _, tails in chunks]
    assert sizes[0] == 7 and sizes[-10:] == [1] * 10
    assert sizes == sorted(sizes, reverse=True)
    big = _runner._chunks([(a, k) for k in range(10_000)], workers=1)
    assert max(len(t) for _, t in big) == _runner.CHUNK_MAX
    # not guided (dask: a round trip a chunk): ceil(57 / 8) = 8 a chunk, a's 50 in 7
    fixed = _runner._chunks(calls, workers=2, guided=False)
    assert [len(t) for _, t in fixed] == [8] * 6 + [2] + [7]


ALLOCATION_PROBE = """
import resource, sys
import numpy as np
if sys.argv[1] == "settle":
    from sparsedp.experiments._runner import _settle_allocator
    _settle_allocator()
    _settle_allocator()  # once per process: a second call changes nothing
else:  # glibc's initial settings (what a new process has until it frees a large block)
    import ctypes
    libc = ctypes.CDLL(None)
    libc.mallopt(-3, 128 * 1024)
    libc.mallopt(-1, 128 * 1024)
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
counts = []
for _ in range(6):  # a fit's temporaries: 20 arrays of 800 kB, then freed
    before = faults()
    arrays = [np.ones(100_000) for _ in range(20)]
    del arrays
    counts.append(faults() - before)
print(counts)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="the allocator settings are glibc's")
def test_sweep_workers_reuse_freed_memory(tmp_path):
    """A sweep's worker process (_settle_allocator) serves a fit's 800 kB temporaries
    from memory freed by the previous fit: no page fault after the first round,
    where a fresh process with glibc's initial settings faults on every 4 kB page
    of every round (the control, about 3,900 faults a round)."""
    import subprocess
    runs = {mode: json.loads(subprocess.run([sys.executable, "-c", ALLOCATION_PROBE, mode],
                                            capture_output=True, text=True, check=True,
                                            cwd=tmp_path).stdout)  # the installed package
            for mode in ("plain", "settle")}
    assert min(runs["plain"][1:]) > 3000
    assert runs["settle"][1:] == [0] * 5


THREAD_ALLOCATION_PROBE = """
import json, resource, sys, threading, warnings
import numpy as np, scipy.sparse as sp
from sparsedp.datafits import Logistic
from sparsedp.experiments import Problem
from sparsedp.experiments._grid import run_task
from sparsedp.experiments._runner import _settle_allocator
from sparsedp.penalties import L1
rng = np.random.default_rng(0)  # the dorothea-shaped sweep of docs/scaling.rst
X = sp.random(800, 100_000, density=0.0091, format="csc", rng=rng, data_rvs=np.ones)
y = np.where(rng.random(800) < 0.5, 1.0, -1.0)
problem = Problem("p", X, y, Logistic(), L1(1e-2), smoothness=np.full(100_000, 0.25),
                  tol=1e-4)
problem.optimum, problem.support
# nothing long-lived allocated by the fits (DP-GCD's kept noisy maxes, the kept
# constants): such arrays pin the thread's heaps, which then never empty, and hide
# what the top pad is for (fits whose temporaries come and go)
from sparsedp._kernels import _dp_gcd_fast, _immutable
_dp_gcd_fast.MAXES_KEPT = _immutable.DERIVED_KEPT = 0
tasks = [("dp_gcd", {"n_iter": k, "clip": float(c), "step_size": s}) for k in (1, 2, 4, 8)
         for c in np.logspace(0, 3, 5) for s in (1.0, 2.0)]
tasks += [("dp_cd", {"passes": k, "clip": float(c), "step_size": s}) for k in (0.1, 0.5)
          for c in np.logspace(-2, 1, 5) for s in (1.0, 2.0)]
counts = []
def worker():  # as a Dask worker runs its tasks: in a thread of its own
    if sys.argv[1] == "settle":
        _settle_allocator()
    warnings.simplefilter("ignore")
    for r in range(3):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for i, (solver, params) in enumerate(tasks):
            for run in range(4):
                run_task(problem, solver, json.dumps(params), run, 10 * i + run + 1000 * r,
                         1.0, 1e-6)
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
thread = threading.Thread(target=worker)
thread.start()
thread.join()
print(counts)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="the allocator settings are glibc's")
def test_a_worker_thread_keeps_its_freed_heaps(tmp_path):
    """A worker running the sweep's fits in a thread (Dask's) with the settled
    allocator, top pad included, reuses its freed memory: under a hundred page faults
    a round of 240 fits after the first two, while the first round, on fresh memory,
    faults thousands of times (the probe sees faults).  (Without the top pad the fits
    used to fault about 250,000 times a round, glibc unmapping the thread's emptied
    heaps; since the DP-GCD set-up stopped allocating its zero-filled temporaries
    they fault as rarely without it, and the pad stays for fits that churn more.)"""
    import subprocess
    counts = json.loads(subprocess.run(
        [sys.executable, "-c", THREAD_ALLOCATION_PROBE, "settle"],
        capture_output=True, text=True, check=True, cwd=tmp_path).stdout)
    assert counts[0] > 1000
    assert counts[2] < 100


def test_only_worker_processes_settle_their_allocator(monkeypatch):
    """_run_chunk settles the allocator in a process other than run_grid's, never in
    the caller's own (threads), and runs the tasks either way."""
    import os
    calls = []
    monkeypatch.setattr(_runner, "_settle_allocator", lambda: calls.append(True))
    monkeypatch.setattr(_runner, "run_task", lambda problem, *tail: tail)
    assert _runner._run_chunk("p", None, [(1,), (2,)], os.getpid()) == [(1,), (2,)]
    assert calls == []
    assert _runner._run_chunk("p", None, [(3,)], os.getpid() + 1) == [(3,)]
    assert calls == [True]
    _runner._run_chunk("p", None, [(4,)])  # no caller given: as the caller's own process
    assert calls == [True]
