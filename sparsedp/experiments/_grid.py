"""Grids of solver hyper-parameters, task identities and seeds, and one task's fit."""
import hashlib
import itertools
import json
import math
import numbers
import time
import warnings

import numpy as np

from .. import solvers as _solvers
from ..solvers._spec import RESERVED
from ..exceptions import PrivacyLeakWarning
from ..privacy.ledger import cached_epsilons

__all__ = ["SOLVERS", "BUDGET", "expand_grid", "grid_size", "params_json", "task_seed",
           "run_task"]

#: the private solvers a grid can name (:data:`sparsedp.solvers.REGISTRY`)
SOLVERS = tuple(_solvers.REGISTRY)
#: each solver's budget parameter: the x-axis of the papers' figures, in passes
#: over the data (one DP-GCD iteration reads the whole gradient: one pass, as in
#: the DP-GCD paper's figures)
BUDGET = {name: spec.budget for name, spec in _solvers.REGISTRY.items()}


def _json_value(value, where):
    """A grid value as a JSON scalar (numpy scalars converted), or TypeError."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"{where}: grid values must be numbers, strings, booleans or None "
                    f"(written to the results as JSON), got {value!r} "
                    f"({type(value).__name__})")


def _values(values, where):
    if isinstance(values, np.ndarray):
        if values.ndim > 1:
            raise ValueError(f"{where}: a 1-D list of values, got an array of shape "
                             f"{values.shape}")
        values = values.tolist()
    elif not isinstance(values, (list, tuple)):
        values = [values]  # a single value
    values = [_json_value(v, where) for v in values]
    if not values:
        raise ValueError(f"{where}: empty list of values")
    if len({json.dumps(v) for v in values}) != len(values):
        raise ValueError(f"{where}: repeated values {values!r}")
    return values


def expand_grid(grid):
    """Every grid point: a list of ``(solver, params)``, in the grid's order.

    Parameters
    ----------
    grid : dict
        ``{solver: {param: list of values}}`` with solver a name of
        :data:`sparsedp.solvers.REGISTRY` (:data:`SOLVERS`);
        each solver's points are the Cartesian product of its lists (a single
        value may be given without a list).  Params are keyword arguments of the
        solver (``sparsedp.solvers.<solver>``) other than the data, the privacy
        budget, the seed and the diagnostics, which the runner sets.  Each
        solver needs its budget and clipping (``passes`` / ``n_iter``, ``clip``:
        its spec's ``required``).

    Returns
    -------
    list of (str, dict)
    """
    if not isinstance(grid, dict) or not grid:
        raise TypeError(f"grid must be a non-empty dict {{solver: {{param: values}}}}, "
                        f"got {grid!r}")
    points = []
    for solver, space in grid.items():
        if solver not in _solvers.REGISTRY:
            raise ValueError(f"unknown solver {solver!r} in the grid; expected one of "
                             f"{', '.join(_solvers.REGISTRY)}")
        spec = _solvers.REGISTRY[solver]
        if not isinstance(space, dict):
            raise TypeError(f"grid[{solver!r}] must be a dict {{param: values}}, got "
                            f"{type(space).__name__}")
        accepted = spec.parameters
        for name in space:
            if name in RESERVED:
                raise ValueError(f"grid[{solver!r}][{name!r}]: {name} is set by run_grid, "
                                 f"not by the grid")
            if name not in accepted:
                raise ValueError(f"grid[{solver!r}]: {solver} has no parameter {name!r}; "
                                 f"expected some of {', '.join(accepted)}")
        missing = [name for name in spec.required if name not in space]
        if missing:
            raise ValueError(f"grid[{solver!r}] misses {', '.join(missing)} (needed by "
                             f"{solver}: {', '.join(spec.required)})")
        names = list(space)
        lists = [_values(space[name], f"grid[{solver!r}][{name!r}]") for name in names]
        for combo in itertools.product(*lists):
            points.append((solver, dict(zip(names, combo))))
    return points


def grid_size(grid):
    """Number of grid points per solver: ``{solver: count}``."""
    sizes = {}
    for solver, _ in expand_grid(grid):
        sizes[solver] = sizes.get(solver, 0) + 1
    return sizes


def params_json(params):
    """The canonical JSON text of a grid point (sorted keys): its identity."""
    return json.dumps(params, sort_keys=True)


def task_seed(seed, problem, solver, params, run, epsilon, delta):
    """The seed of one task, a function of ``seed`` and the task's identity only.

    SHA-256 of the identity (problem name, solver, canonical params, run,
    epsilon, delta) and ``seed``, first 63 bits: the same task gets the same
    seed whatever the order or the number of workers, and two tasks get
    independent streams.
    """
    identity = json.dumps([int(seed), problem, solver, params, int(run),
                           repr(float(epsilon)), repr(float(delta))])
    digest = hashlib.sha256(identity.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _support_counts(coef, support_star):
    """(nonzeros of ``coef`` in the true support, nonzeros outside it)."""
    total = int(np.count_nonzero(coef))
    correct = int(np.count_nonzero(coef[support_star]))
    return correct, total - correct


def run_task(problem, solver, params, run, seed, epsilon, delta, trace=False):
    """Fit one task and return its result rows (see :data:`~._results.COLUMNS`).

    The last row (``final=True``) describes the returned model; with ``trace``
    the rows before it are the solver's checkpoints (non-private objective
    along the run; no support, no time).  ``PrivacyLeakWarning`` is silenced
    here: a fit that used data-dependent constants has ``ledger_epsilon = inf``
    in its row, and :func:`run_grid` warns once.
    """
    fit = _solvers.REGISTRY[solver].function
    kwargs = {**problem.solver_constants(solver), **json.loads(params)}
    f_star = problem.f_star
    with warnings.catch_warnings(), cached_epsilons():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        start = time.perf_counter()
        res = fit(problem.X, problem.y, problem.datafit, problem.penalty, epsilon=epsilon,
                  delta=delta, random_state=seed, diagnostics=True, trace=trace, **kwargs)
        elapsed = time.perf_counter() - start
        # the runs of a grid point record the same mechanisms: their epsilon is computed
        # once per worker process
        ledger_epsilon = float(res.privacy.epsilon)
    base = {"problem": problem.name, "solver": solver, "params": params, "run": int(run),
            "seed": int(seed), "epsilon": float(epsilon), "delta": float(delta)}

    def rel(value):
        return (value - f_star) / f_star if f_star > 0 else math.nan

    rows = []
    if trace:
        tr = res.diagnostics.trace
        axis = tr["passes"] if "passes" in tr else tr["iterations"]
        for x, value in zip(np.asarray(axis, dtype=float), tr["objective"]):
            rows.append({**base, "final": False, "passes": float(x), "objective": float(value),
                         "optimum": f_star, "rel_error": rel(float(value)),
                         "support_correct": None, "support_incorrect": None,
                         "support_true": int(problem.support.size),
                         "ledger_epsilon": ledger_epsilon, "time": None})
    value = float(res.diagnostics.objective)
    correct, incorrect = _support_counts(res.coef, problem.support)
    rows.append({**base, "final": True, "passes": float(kwargs[_solvers.REGISTRY[solver].budget]),
                 "objective": value, "optimum": f_star, "rel_error": rel(value),
                 "support_correct": correct, "support_incorrect": incorrect,
                 "support_true": int(problem.support.size), "ledger_epsilon": ledger_epsilon,
                 "time": elapsed})
    return rows
