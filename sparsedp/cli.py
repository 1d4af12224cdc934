"""The ``sparsedp`` command: ``sparsedp compare`` and ``sparsedp datasets``.

``sparsedp compare`` runs the private solvers on one data set at one epsilon
under the papers' protocol (:mod:`sparsedp.experiments`): a small grid of step
sizes and clipping thresholds per solver and budget (passes over the data),
several runs per point, the best point by mean objective, re-run on fresh
seeds (the seeds that chose it would flatter it); it prints the
relative error to the exact optimum, the support recovery and the time, the
cost of that tuning, and writes the plot of the error against the passes.
Everything it prints about utility is a non-private diagnostic.
"""
import argparse
import contextlib
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from .exceptions import PrivacyLeakWarning

__all__ = ["main", "compare", "build_problem", "default_grid"]

DEFAULT_DATASET = "dorothea_like"
#: the search grids of ``--grid``: each solver spec's ``quick`` and ``full`` values
#: (clip = kappa x unit, the typical per-sample gradient norm at w = 0, docs/defaults.rst)
GRID_NAMES = ("quick", "full")


class UsageError(Exception):
    """A bad command line: one clear line, exit status 2."""


def default_grid(name, unit, solvers):
    """The grid of :func:`compare`: each solver's search grid ``name`` ("quick" or
    "full", :meth:`sparsedp.solvers.SolverSpec.grid`), clips in units of ``unit``."""
    from .solvers import get_spec
    return {get_spec(solver).name: get_spec(solver).grid(name, unit) for solver in solvers}


def build_problem(dataset, *, penalty="l1", alpha=None, smoothness="private", feature_bound=None,
                  data_home=None, download=True, seed=0):
    """The :class:`~sparsedp.experiments.Problem` of ``dataset`` and a description of its choices.

    The loss follows the task (logistic for classification, squared for
    regression); ``alpha=None`` is ``lambda_max / 10`` for L1 (the smallest
    strength giving w* = 0, divided by 10) and ``1 / n`` for L2, both computed
    from the data: a non-private choice, as the papers' (reported).
    """
    from .datafits import Logistic, Squared
    from .datasets import list_datasets, load
    from .experiments import Problem
    from .penalties import L1, L2

    from .datasets._download import command_line_messages
    with command_line_messages():  # advice in the command line's words (--no-download...)
        X, y = load(dataset, data_home=data_home, download=download, random_state=seed)
    X = _as_csc(X)
    labels = np.unique(y)
    classification = labels.size == 2
    if not classification and labels.size < 10 and np.all(labels == np.round(labels)):
        raise UsageError(f"{dataset}: {labels.size} classes; compare fits binary "
                         f"classification or regression")
    if classification:
        y = np.where(y == labels[1], 1.0, -1.0)
        datafit = Logistic()
    else:
        y = np.asarray(y, dtype=np.float64)
        datafit = Squared()
    n, p = X.shape
    notes = []
    if alpha is None:
        if penalty == "l1":
            lam_max = float(np.abs(X.T @ datafit.derivative(np.zeros(n), y)).max()) / n
            alpha = lam_max / 10.0
            notes.append(f"alpha = lambda_max / 10 = {alpha:.4g} (computed from the data: "
                         f"a non-private choice, as the papers')")
        else:
            alpha = 1.0 / n
            notes.append(f"alpha = 1 / n = {alpha:.4g}")
    pen = L1(alpha) if penalty == "l1" else L2(alpha)
    M = global_beta = None
    if smoothness == "private":
        notes.append("smoothness: estimated privately inside each fit's budget (the solvers' "
                     "default; docs/defaults.rst, 'Private constants')")
    elif smoothness == "public":
        if feature_bound is None:
            raise UsageError("--smoothness public needs --feature-bound B (a public bound on "
                             "|X_ij|)")
        if abs(X).max() > feature_bound:
            raise UsageError(f"--feature-bound {feature_bound:g} is below the data's largest "
                             f"|X_ij|; the bound must hold")
        M = np.full(p, datafit.beta * feature_bound ** 2)
        global_beta = float(M.sum())
        notes.append(f"smoothness: public, M_j = beta B^2 = {M[0]:.4g}")
    else:
        M = "leak"
        notes.append("smoothness: computed from the data (the papers' protocol): each fit's "
                     "report has epsilon = inf ('leak'); the default --smoothness private "
                     "avoids it")
    kinds = {d["name"]: d["kind"] for d in list_datasets(data_home)}
    kind = kinds.get(dataset, "file")
    task = "binary classification, logistic loss" if classification else "regression, squared loss"
    head = (f"{dataset} ({kind}): {n} x {p}, nnz {X.nnz}, {task} + {penalty.upper()}")
    problem = Problem(str(Path(dataset).name), X, y, datafit, pen, smoothness=M,
                      global_smoothness=global_beta)
    return problem, head, notes


def zero_error(problem):
    """The relative error of w = 0, ``(F(0) - F*) / F*`` (non-private: the baseline the
    report and the figure compare with)."""
    f_zero = (problem.datafit.value(np.zeros(problem.n_samples), problem.y)
              + problem.penalty.value(np.zeros(problem.n_features)))
    return (f_zero - problem.f_star) / problem.f_star


def _as_csc(X):
    import scipy.sparse as sp
    return sp.csc_array(X) if sp.issparse(X) else sp.csc_array(np.asarray(X, dtype=np.float64))


def private_tuning(problem, names, epsilon, delta, seed, out, tuned=None, progress=False):
    """Each solver tuned end to end by :class:`~sparsedp.model_selection.PrivateSearch`
    (the whole search within (epsilon, delta);
    :func:`~sparsedp.experiments.run_private_search`): print and return its relative
    error, beside ``tuned[label]`` (the grid's best re-run on fresh seeds) when given."""
    from .experiments import run_private_search
    from .solvers import get_spec
    print("\nprivate tuning (PrivateSearch: the whole search, the grid and the data "
          "included, within (epsilon, delta); the error of the model it returns):", file=out)
    errors = {}
    zero = zero_error(problem)
    rows = []
    with warnings.catch_warnings(record=True) as caught, \
            _Stages(progress).bar("private searches", "search", total=len(names)) as bar:
        warnings.simplefilter("always", UserWarning)
        for name in names:  # one at a time: the bar moves (the seeds do not depend on it)
            rows += run_private_search(problem, [name], epsilon=epsilon, delta=delta,
                                       seed=seed)
            if bar is not None:
                bar.update(1)
    for w in caught:
        if str(w.message).startswith("not run: "):
            print(f"  skipped: {str(w.message)[len('not run: '):]}", file=out)
    for row in rows:
        label = get_spec(row["solver"]).label
        errors[label] = row["rel_error"]
        beside = ("" if tuned is None or label not in tuned else
                  f" (tuned on the data, fresh seeds: {tuned[label]:.4g})")
        worse = ("" if errors[label] <= 1.01 * zero else
                 f"; worse than w = 0 ({zero:.4g}): the estimator's defaults for this solver "
                 f"do not fit this shape")
        print(f"  {label:7s} relative error {errors[label]:.4g}{beside}, epsilon "
              f"{row['search_epsilon']:.4f}, chose {json.loads(row['best_params'])} "
              f"({row['time']:.1f} s){worse}", file=out)
    return errors


def compare(dataset=DEFAULT_DATASET, *, epsilon=1.0, delta=None, solvers=None, penalty="l1",
            alpha=None, grid="quick", runs=3, jobs=1, seed=0,
            smoothness="private", feature_bound=None, plot=None, results=None, progress=None,
            data_home=None, download=True, out=None, tune_privately=False, fresh_runs=5,
            in_sample=False):
    """Run the comparison and print its report; return the summary rows.

    The best point of each solver is re-run on ``fresh_runs`` fresh seeds
    (:func:`~sparsedp.experiments.rerun_best`) and the table reports those;
    ``in_sample``: also the in-sample figure (the runs that chose it) beside.

    ``solvers``: keys or names of :data:`sparsedp.solvers.REGISTRY` (None: all).
    ``tune_privately``: also each solver tuned by a private search
    (:func:`private_tuning`), its end-to-end private error beside the table's
    best of the grid (tuned on the data).
    ``progress``: progress bars and the name of each stage on stderr (None: when
    stderr is a terminal).  ``epsilon=inf`` runs the same algorithms without noise.

    Every argument is checked before any work starts (:class:`UsageError`).
    """
    out = sys.stdout if out is None else out
    from .experiments import rerun_best, run_grid, summarize, support_table, tuning_cost
    from .experiments import grid_size

    plot, matplotlib_missing = _check_compare_args(
        dataset=dataset, epsilon=epsilon, delta=delta, solvers=solvers, penalty=penalty,
        alpha=alpha, grid=grid, runs=runs, jobs=jobs, seed=seed, smoothness=smoothness,
        feature_bound=feature_bound, plot=plot, results=results,
        tune_privately=tune_privately, fresh_runs=fresh_runs)
    from ._progress import stderr_is_terminal
    progress = stderr_is_terminal() if progress is None else bool(progress)
    stage = _Stages(progress)
    start = time.perf_counter()
    stage(f"loading {dataset}")
    problem, head, notes = build_problem(
        dataset, penalty=penalty, alpha=alpha, smoothness=smoothness,
        feature_bound=feature_bound, data_home=data_home, download=download, seed=seed)
    n = problem.n_samples
    delta = 1.0 / n ** 2 if delta is None else delta
    from .solvers import get_spec
    names = [get_spec(s).name for s in (_solver_keys() if solvers is None else solvers)]
    skipped = [s for s in names if problem.applicable(s) is not None]
    for s in skipped:
        notes.append(f"{s} skipped: {problem.applicable(s)}")
    names = [s for s in names if s not in skipped]
    if not names:
        raise UsageError(f"no solver applies to this problem ({'; '.join(notes[-len(skipped):])})")
    unit = problem.clip_unit
    spec = default_grid(grid, unit, names)
    print(head, file=out)
    print(f"(epsilon, delta) = ({epsilon:g}, {delta:.3g}) per fit; {runs} runs per grid point; "
          f"clip = kappa x {unit:.4g} (the per-sample gradient scale at w = 0)", file=out)
    for note in notes:
        print("  " + note, file=out)
    t = time.perf_counter()
    with stage.bar("exact solution (non-private)", unit="epoch") as bar:
        problem.solve(callback=_exact_callback(bar, problem.tol))
    f_star = problem.f_star
    print(f"exact solution (non-private): F* = {f_star:.6g}, {problem.support.size} nonzeros, "
          f"{time.perf_counter() - t:.1f} s", file=out)
    print(f"w = 0, the baseline (non-private): relative error {zero_error(problem):.4g}",
          file=out)
    with warnings.catch_warnings():
        if smoothness == "data":  # disclosed above, and in the table ("inf (leak)")
            warnings.simplefilter("ignore", PrivacyLeakWarning)
        stage(f"grid: {sum(grid_size(spec).values()) * runs} private fits "
              f"({', '.join(names)})")
        rows = run_grid(problem, spec, epsilon=epsilon, delta=delta, n_runs=runs,
                        n_jobs=jobs, results=results, progress=progress, seed=seed)
        fresh_csv = None if results is None else Path(results).with_suffix(".fresh.csv")
        stage(f"fresh seeds: each solver's best point, {fresh_runs} runs")
        fresh = rerun_best(problem, rows, n_runs=fresh_runs, seed=seed + 1, n_jobs=jobs,
                           fresh_results=fresh_csv, progress=progress)
    summary = summarize(rows, fresh=fresh, in_sample=in_sample)
    print(file=out)
    print(summary, file=out)
    print(file=out)
    print(support_table(rows, fresh=fresh), file=out)
    points = sum(grid_size(spec).values())
    print(file=out)
    if np.isfinite(epsilon):
        from .experiments._summary import fit_relation
        relations = {fit_relation(r["solver"], json.loads(r["params"])) for r in rows}
        relation = relations.pop() if len(relations) == 1 else None
        print(tuning_cost(points, runs, epsilon=epsilon, delta=delta, relation=relation),
              file=out)
    else:
        print("tuning cost: none to count (epsilon = inf: the fits add no noise)", file=out)
    if tune_privately:
        stage("private tuning: one PrivateSearch per solver")
        tuned = {get_spec(r["solver"]).label: r["rel_error_mean"] for r in summary.rows}
        private_tuning(problem, names, epsilon, delta, seed, out, tuned=tuned,
                       progress=progress)
    if plot and matplotlib_missing:
        print("\nno plot: matplotlib is not installed (pip install 'sparsedp[experiments]')",
              file=out)
    elif plot:
        stage(f"plot: {plot}")
        from .experiments import plot_error_vs_passes
        plot_error_vs_passes(rows, path=plot, reference=zero_error(problem))
        print(f"\nplot: {plot}", file=out)
    print(f"total time {time.perf_counter() - start:.1f} s", file=out)
    return summary.rows


def _check_compare_args(*, dataset, epsilon, delta, solvers, penalty, alpha, grid, runs, jobs,
                        seed, smoothness, feature_bound, plot, results, tune_privately,
                        fresh_runs):
    """Check every argument of :func:`compare` before any work (:class:`UsageError`).

    Returns the plot path (None: no plot) and whether matplotlib is missing.
    """
    import importlib.util
    import numbers
    from .datasets import list_datasets

    def positive_int(value, name):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise UsageError(f"{name} must be a positive integer, got {value!r}")

    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) \
            or not epsilon > 0:
        raise UsageError(f"epsilon must be > 0, got {epsilon!r}")
    if not np.isfinite(epsilon) and tune_privately:
        raise UsageError("private tuning needs a finite epsilon (got inf)")
    if delta is not None and (isinstance(delta, bool) or not isinstance(delta, numbers.Real)
                              or not 0 < delta < 1):
        raise UsageError(f"delta must be in (0, 1), got {delta!r}")
    if penalty not in ("l1", "l2"):
        raise UsageError(f"penalty must be 'l1' or 'l2', got {penalty!r}")
    if alpha is not None and (not isinstance(alpha, numbers.Real) or not 0 < alpha < np.inf):
        raise UsageError(f"alpha must be a finite number > 0, got {alpha!r}")
    if grid not in GRID_NAMES:
        raise UsageError(f"grid must be one of {', '.join(GRID_NAMES)}, got {grid!r}")
    positive_int(runs, "runs")
    positive_int(fresh_runs, "fresh_runs")
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs == 0:
        raise UsageError(f"jobs must be a nonzero integer (-1: all cores), got {jobs!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise UsageError(f"seed must be an integer >= 0, got {seed!r}")
    if smoothness not in ("private", "data", "public"):
        raise UsageError(f"smoothness must be private, data or public, got {smoothness!r}")
    if smoothness == "public" and feature_bound is None:
        raise UsageError("--smoothness public needs --feature-bound B (a public bound on "
                         "|X_ij|)")
    if solvers is not None:
        known = {key for key in _solver_keys()} | {_spec_name(key) for key in _solver_keys()}
        bad = [s for s in solvers if s not in known]
        if bad or not solvers:
            raise UsageError(f"unknown solver {', '.join(map(str, bad)) or repr(solvers)}: "
                             f"choose from {', '.join(_solver_keys())}")
    names = [d["name"] for d in list_datasets()]
    if str(dataset) not in names and not Path(dataset).expanduser().is_file():
        raise UsageError(f"unknown data set {str(dataset)!r}: neither a built-in name "
                         f"({', '.join(names)}) nor a file")
    if results is not None and not Path(results).expanduser().resolve().parent.is_dir():
        raise UsageError(f"--results {results}: its folder does not exist")
    missing = importlib.util.find_spec("matplotlib") is None
    if plot is not None:
        path = Path(plot).expanduser()
        if not path.resolve().parent.is_dir():
            raise UsageError(f"--plot {plot}: its folder does not exist")
        if not missing:
            from matplotlib.backend_bases import FigureCanvasBase
            kinds = FigureCanvasBase.get_supported_filetypes()
            if path.suffix.lstrip(".").lower() not in kinds:
                raise UsageError(f"--plot {plot}: the file name must end with one of "
                                 f"{', '.join('.' + k for k in sorted(kinds))}")
    return plot, missing


def _spec_name(key):
    from .solvers import get_spec
    return get_spec(key).name


class _Stages:
    """The stages of :func:`compare`, named on stderr, and their progress bars (when
    enabled; :func:`sparsedp._progress.progress_bar`, which never falls silent)."""

    def __init__(self, enabled):
        self.enabled = enabled

    def __call__(self, text):
        if self.enabled:
            print(f"sparsedp: {text}", file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def bar(self, desc, unit, total=None):
        """A progress bar (None when disabled or without tqdm), closed on exit."""
        from ._progress import progress_bar
        bar = progress_bar(self.enabled, total=total, desc=desc, unit=unit)
        if bar is None:
            self(desc)
        try:
            yield bar
        finally:
            if bar is not None:
                bar.close()


def _exact_callback(bar, tol):
    """``callback(epochs, violation)`` of :func:`~sparsedp.solvers.exact` moving ``bar``."""
    if bar is None:
        return None

    def callback(epochs, violation):
        bar.set_postfix_str(f"KKT violation {violation:.1e} (target {tol:g})", refresh=False)
        bar.update(epochs - bar.n)
    return callback


def datasets(data_home=None, out=None):
    """Print the built-in data sets and whether their files are here."""
    out = sys.stdout if out is None else out
    from .datasets import describe
    print(describe(data_home), file=out)


def _solver_keys():
    from .solvers import REGISTRY
    return tuple(spec.key for spec in REGISTRY.values())


def _solvers(text):
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in names if s not in _solver_keys()]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown solver {', '.join(bad) or repr(text)}: choose from "
            f"{', '.join(_solver_keys())} (comma-separated)")
    return tuple(dict.fromkeys(names))


def _positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {kind.__name__}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value
    return parse


def _delta(text):
    value = _positive(float)(text)
    if not value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, status 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def parser():
    """The command line parser (``sparsedp --help``)."""
    p = _Parser(prog="sparsedp", description="Differentially private ERM on sparse data: "
                "compare the private solvers on a data set, list the data sets.")
    sub = p.add_subparsers(dest="command", metavar="{compare,datasets}", parser_class=_Parser)
    c = sub.add_parser(
        "compare", help="run DP-GCD, DP-CD, DP-SGD and DP-SCD on a data set at one epsilon",
        description="Run the private solvers on one data set under the papers' protocol "
        "(a grid of step sizes, clipping thresholds and passes, several runs per point, the "
        "best point by mean objective) and print the relative error to the exact optimum, "
        "the support recovery, the time and the cost of the tuning; write the plot of the "
        "error against the passes.  Utility figures are non-private diagnostics.")
    c.add_argument("--dataset", default=DEFAULT_DATASET, metavar="NAME|PATH",
                   help="a built-in name (see 'sparsedp datasets') or an svmlight file "
                   f"(default: {DEFAULT_DATASET}, an 800 x 100,000 sparse binary problem "
                   "generated on the fly)")
    c.add_argument("--epsilon", type=_positive(float), default=1.0,
                   help="privacy budget of each fit (default 1)")
    c.add_argument("--delta", type=_delta, default=None, help="default 1 / n^2")
    c.add_argument("--solvers", type=_solvers, default=None,
                   help=f"comma-separated from {', '.join(_solver_keys())} (default: all; scd "
                   "needs --penalty l2)")
    c.add_argument("--penalty", choices=("l1", "l2"), default="l1", help="default l1")
    c.add_argument("--alpha", type=_positive(float), default=None,
                   help="penalty strength (default: lambda_max / 10 for l1, 1 / n for l2)")
    c.add_argument("--grid", choices=GRID_NAMES, default="quick",
                   help="quick (default, under a minute on the default data) or full")
    c.add_argument("--runs", type=_positive(int), default=3, help="runs per grid point (3)")
    c.add_argument("--fresh-runs", type=_positive(int), default=5,
                   help="runs of each solver's best point on fresh seeds, the figures the "
                   "table reports (5)")
    c.add_argument("--in-sample", action="store_true",
                   help="also show the best point's in-sample error (the runs that chose "
                   "it, biased low)")
    c.add_argument("--jobs", type=int, default=1, help="parallel jobs (joblib; -1: all cores)")
    c.add_argument("--seed", type=int, default=0, help="base seed (0)")
    c.add_argument("--smoothness", choices=("private", "data", "public"), default="private",
                   help="smoothness constants estimated privately inside each fit's budget "
                   "(default), from the data (the papers' protocol; each fit's report then "
                   "says epsilon = inf) or public from --feature-bound")
    c.add_argument("--feature-bound", type=_positive(float), default=None, metavar="B",
                   help="public bound on |X_ij| (with --smoothness public)")
    c.add_argument("--plot", default=None, metavar="PATH",
                   help="where to write the plot (default: sparsedp-compare-<dataset>.png; "
                   "'none' for no plot)")
    c.add_argument("--results", default=None, metavar="CSV",
                   help="append every fit to this CSV; rerunning resumes from it")
    c.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="name each stage and show progress bars on stderr (default: when "
                   "stderr is a terminal)")
    c.add_argument("--private-tuning", action="store_true",
                   help="also tune each solver privately (PrivateSearch, the whole search "
                        "within epsilon) and print its error beside the tuned one")
    c.add_argument("--data-home", default=None, metavar="DIR",
                   help="data folder (default: $SPARSEDP_DATA if set; else, in a source "
                   "checkout, ../shared/data beside it if present; else ~/.cache/sparsedp, "
                   "where downloads go)")
    c.add_argument("--no-download", action="store_true", help="never download data")
    d = sub.add_parser("datasets", help="list the built-in data sets and which are here",
                       description="List the built-in data sets (real and synthetic), their "
                       "shape, task and source, and whether their files are in the data folder.")
    d.add_argument("--data-home", default=None, metavar="DIR",
                   help="data folder (default: $SPARSEDP_DATA if set; else, in a source "
                   "checkout, ../shared/data beside it if present; else ~/.cache/sparsedp, "
                   "where downloads go)")
    return p


def main(argv=None):
    """Entry point of the ``sparsedp`` console script and of ``python -m sparsedp``."""
    args = parser().parse_args(argv)
    try:
        if args.command == "compare":
            plot = args.plot
            if plot is None:
                plot = f"sparsedp-compare-{Path(args.dataset).stem}.png"
            elif plot.lower() == "none":
                plot = None
            compare(args.dataset, epsilon=args.epsilon, delta=args.delta, solvers=args.solvers,
                    penalty=args.penalty, alpha=args.alpha, grid=args.grid, runs=args.runs,
                    jobs=args.jobs, seed=args.seed, smoothness=args.smoothness,
                    feature_bound=args.feature_bound, plot=plot, results=args.results,
                    progress=args.progress, data_home=args.data_home,
                    download=not args.no_download, tune_privately=args.private_tuning,
                    fresh_runs=args.fresh_runs, in_sample=args.in_sample)
        elif args.command == "datasets":
            datasets(args.data_home)
        else:
            parser().print_help()
            return 2
    except (UsageError, FileNotFoundError, ValueError) as exc:
        print(f"sparsedp: error: {exc}".splitlines()[0] if isinstance(exc, UsageError)
              else f"sparsedp: error: {exc}", file=sys.stderr)
        return 2
    return 0
