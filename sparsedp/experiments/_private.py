"""run_private_search: the end-to-end private pipeline (PrivateSearch) on the runner's problems."""
import json
import math
import time
import warnings

import numpy as np

from .._validation import check_bool, check_integer, check_privacy_budget
from .._warnings import find_stack_level
from ._grid import task_seed

__all__ = ["PRIVATE_SEARCH", "estimator_for", "run_private_search"]

#: the ``params`` of a private search's task identity (its seed: :func:`task_seed`)
PRIVATE_SEARCH = "private-search"


def estimator_for(problem, solver):
    """The estimator fitting ``problem``'s objective with ``solver`` (no intercept).

    Logistic loss: :class:`~sparsedp.linear_model.DPLogisticRegression` (classes
    -1 and 1 declared); squared loss: :class:`~sparsedp.linear_model.DPLasso`
    with an L1 penalty, :class:`~sparsedp.linear_model.DPRidge` with an L2 one.
    """
    from ..datafits import Logistic
    from ..linear_model import DPLasso, DPLogisticRegression, DPRidge
    from ..penalties import L1
    from ..solvers import get_spec
    key = get_spec(solver).key
    l1 = isinstance(problem.penalty, L1)
    alpha = problem.penalty.alpha
    if isinstance(problem.datafit, Logistic):
        return DPLogisticRegression(penalty="l1" if l1 else "l2", alpha=alpha, solver=key,
                                    classes=[-1.0, 1.0], fit_intercept=False)
    return (DPLasso if l1 else DPRidge)(alpha=alpha, solver=key, fit_intercept=False)


def _search_task(problem, solver, run, seed, epsilon, delta):
    """One private search: its row (see :func:`run_private_search`)."""
    from ..model_selection import PrivateSearch
    from ..solvers._scales import clip_to_bounds
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = PrivateSearch(estimator_for(problem, solver), epsilon=epsilon, delta=delta,
                               random_state=seed).fit(problem.X, problem.y)
    elapsed = time.perf_counter() - start
    model = search.best_estimator_
    X = problem.X if model.feature_clip_ is None else clip_to_bounds(problem.X,
                                                                     model.feature_clip_)
    coef = np.ravel(model.coef_)
    f = float(problem.datafit.value(X @ coef, problem.y) + problem.penalty.value(coef))
    f_star = problem.f_star
    return {"problem": problem.name, "solver": solver, "run": int(run), "seed": int(seed),
            "epsilon": float(epsilon), "delta": float(delta),
            "search_epsilon": float(search.privacy_.epsilon),
            "best_params": json.dumps(search.best_params_, sort_keys=True),
            "objective": f, "optimum": f_star,
            "rel_error": (f - f_star) / f_star if f_star > 0 else math.nan, "time": elapsed}


def run_private_search(problems, solvers, *, epsilon, delta, n_runs=1, seed=0, n_jobs=1,
                       progress=False):
    """Tune each solver privately on each problem, end to end, ``n_runs`` times.

    Each run is one :class:`~sparsedp.model_selection.PrivateSearch` of the
    solver's estimator for the problem's objective (:func:`estimator_for`),
    over the registry's grid: the whole search, its trials, their scores and
    the choice, within ``(epsilon, delta)``.  It is the private counterpart of
    :func:`run_grid` plus :func:`summarize`, whose choice reads the data.  Each
    run's seed is :func:`task_seed` of ``seed`` and the run's identity
    (params :data:`PRIVATE_SEARCH`): fresh against any grid's.

    Parameters
    ----------
    problems : Problem or list of Problem
    solvers : list of str
        Names or keys of :data:`sparsedp.solvers.REGISTRY`; a solver that no
        estimator runs on a problem's objective is skipped with a warning.
    epsilon, delta : float
        The budget of each whole search.
    n_runs : int, default=1
        Searches per (problem, solver), each on its own seed.
    seed : int, default=0
    n_jobs : int or None, default=1
        joblib's ``n_jobs`` over the searches (1: a plain loop), as in
        :func:`run_grid`; the rows do not depend on it.
    progress : bool, default=False
        Print one line per finished search to stderr.

    Returns
    -------
    list of dict
        One row per search: ``problem``, ``solver``, ``run``, ``seed``,
        ``epsilon``, ``delta``, ``search_epsilon`` (the search's report, at
        most ``epsilon``), ``best_params`` (JSON), ``objective``, ``optimum``,
        ``rel_error`` and ``time`` (seconds).  The objective and the relative
        error are non-private diagnostics (on the training data, X clipped to
        the model's private feature bounds as it predicts); the number of
        trials is not reported (it is not released).
    """
    from ._runner import _check_n_jobs, _joblib, _problems
    from ..solvers import get_spec
    problems = _problems(problems)
    epsilon, delta = check_privacy_budget(epsilon, delta)
    if math.isinf(epsilon):
        raise ValueError("a private search needs a finite epsilon")
    n_runs = check_integer(n_runs, "n_runs")
    seed = check_integer(seed, "seed", low=0)
    progress = check_bool(progress, "progress")
    n_jobs = _check_n_jobs(n_jobs)
    names = [get_spec(s).name for s in solvers]
    tasks = []
    for problem in problems:
        problem.optimum  # once, before the tasks
        for name in names:
            for run in range(n_runs):
                s = task_seed(seed, problem.name, name, PRIVATE_SEARCH, run, epsilon, delta)
                tasks.append((problem, name, run, s, epsilon, delta))

    joblib = _joblib(n_jobs)
    if joblib is None:
        results = (_search_or_skip(*task) for task in tasks)
    else:
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(
            joblib.delayed(_search_or_skip)(*task) for task in tasks)
    rows, skipped = [], {}
    for row in results:
        if "skipped" in row:
            skipped[row["skipped"]] = None
            continue
        if progress:
            import sys
            print(f"private search: {row['problem']}, {row['solver']}, run {row['run']}: "
                  f"relative error {row['rel_error']:.4g} ({row['time']:.1f} s)",
                  file=sys.stderr, flush=True)
        rows.append(row)
    for reason in skipped:
        warnings.warn(f"not run: {reason}", UserWarning, stacklevel=find_stack_level())
    return rows


def _search_or_skip(problem, solver, run, seed, epsilon, delta):
    """A search's row, or ``{"skipped": reason}`` when no estimator runs the solver on
    the problem's objective (DP-SCD without an L2 penalty, say)."""
    try:
        return _search_task(problem, solver, run, seed, epsilon, delta)
    except ValueError as exc:
        return {"skipped": f"{solver} on {problem.name!r}: {str(exc).splitlines()[0]}"}
