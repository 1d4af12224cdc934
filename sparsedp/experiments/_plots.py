"""Relative error against passes over the data, as in the papers' figures (matplotlib)."""
import numpy as np

from ..solvers import REGISTRY
from ._results import as_rows
from ._summary import best_points

__all__ = ["error_curves", "plot_error_vs_passes"]


def error_curves(results, problem=None):
    """The curves :func:`plot_error_vs_passes` draws: ``{(problem, solver): arrays}``.

    For each solver, when its grid has several budget values (``passes``;
    ``n_iter`` for DP-GCD): at each budget the best point by mean objective,
    and its min / mean / max relative error over runs (the papers' protocol,
    tuned per budget).  With a single budget and checkpoint rows
    (``run_grid(trace=True)``): the best point's checkpoints.

    Returns
    -------
    dict
        ``{(problem, solver): {"passes", "min", "mean", "max": ndarray,
        "source": "grid" or "trace"}}``; errors are non-private diagnostics.
    """
    rows = as_rows(results)
    if problem is not None:
        rows = [r for r in rows if r["problem"] == problem]
        if not rows:
            raise ValueError(f"no results for problem {problem!r}")
    epsilons = sorted({(r["epsilon"], r["delta"]) for r in rows})
    if len(epsilons) > 1:
        raise ValueError(f"the results mix privacy budgets {epsilons}: pass the rows of one "
                         f"(epsilon, delta)")
    curves = {}
    per_budget = best_points(rows, by_passes=True)
    overall = best_points(rows)
    for group in sorted(overall):
        name, solver = group[:2]
        budgets = sorted(g[4] for g in per_budget if g[:2] == (name, solver))
        if len(budgets) > 1:
            errors = [np.array([r["rel_error"] for r in per_budget[group + (b,)][1]])
                      for b in budgets]
            curves[name, solver] = {"passes": np.array(budgets),
                                    "min": np.array([e.min() for e in errors]),
                                    "mean": np.array([e.mean() for e in errors]),
                                    "max": np.array([e.max() for e in errors]),
                                    "source": "grid"}
            continue
        params = overall[group][0]
        trace = [r for r in rows if not r["final"] and r["problem"] == name
                 and r["solver"] == solver and r["params"] == params]
        if trace:
            xs = np.array(sorted({r["passes"] for r in trace}))
            errors = [np.array([r["rel_error"] for r in trace if r["passes"] == x]) for x in xs]
            source = "trace"
        else:
            xs = np.array(budgets)
            errors = [np.array([r["rel_error"] for r in overall[group][1]])]
            source = "grid"
        curves[name, solver] = {"passes": xs, "min": np.array([e.min() for e in errors]),
                                "mean": np.array([e.mean() for e in errors]),
                                "max": np.array([e.max() for e in errors]), "source": source}
    return curves


def plot_error_vs_passes(results, path=None, ax=None, *, problem=None):
    """Relative error vs passes over the data: min / mean / max band, one line per solver.

    As the papers' figures (DP-CD, ICML 2022, Figure 1; DP-GCD, AISTATS 2023,
    Figure 1): the mean over runs of the best grid point, shaded between the
    min and the max, on a log scale.  One pass is ``p`` DP-CD updates, ``n``
    DP-SGD / DP-SCD samples, one DP-GCD iteration.  The curves are
    :func:`error_curves`.  The relative error is a non-private diagnostic
    (computed on the training data), and so is the choice of the best points.

    Parameters
    ----------
    results : str, os.PathLike or list of dict
        A results CSV of :func:`run_grid` or its rows (one (epsilon, delta)).
    path : str or os.PathLike, optional
        Where to save the figure (format from the extension).
    ax : matplotlib Axes, optional
        Draw there (then the results, or ``problem``, must name one problem).
        Default: a new figure, one panel per problem.
    problem : str, optional
        Only this problem.

    Returns
    -------
    matplotlib.figure.Figure
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'sparsedp[experiments]'") \
            from None
    curves = error_curves(results, problem)
    names = sorted({name for name, _ in curves})
    if ax is None:
        fig = Figure(figsize=(4.5 * len(names), 3.6), layout="constrained")
        axes = np.atleast_1d(fig.subplots(1, len(names), squeeze=False)[0])
    else:
        if len(names) > 1:
            raise ValueError(f"one Axes for {len(names)} problems ({', '.join(names)}): pass "
                             f"problem=... or ax=None")
        fig, axes = ax.figure, [ax]
    for axis, name in zip(axes, names):
        positive = True
        for (pname, solver), c in sorted(curves.items()):
            if pname != name:
                continue
            label = REGISTRY[solver].label if solver in REGISTRY else solver
            line, = axis.plot(c["passes"], c["mean"], marker="o", ms=3, label=label)
            axis.fill_between(c["passes"], c["min"], c["max"], color=line.get_color(),
                              alpha=0.2, linewidth=0)
            positive &= bool(np.all(c["min"] > 0))
        axis.set_yscale("log" if positive else "symlog", **({} if positive
                                                             else {"linthresh": 1e-6}))
        axis.set_xlabel("passes over the data")
        axis.set_ylabel("relative error (F - F*) / F*  [non-private]")
        axis.set_title(name)
        axis.legend(frameon=False)
    if path is not None:
        fig.savefig(path)
    return fig
