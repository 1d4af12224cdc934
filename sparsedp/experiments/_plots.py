"""Relative error against passes over the data, as in the papers' figures (matplotlib)."""
import math

import numpy as np

from ..solvers import REGISTRY
from ._results import as_rows
from ._summary import best_points

__all__ = ["error_curves", "plot_error_vs_passes"]

#: colour and marker of each solver of the registry, in its order, the same in every
#: figure (DP-CD, DP-GCD, DP-SGD, DP-SCD: the DP-CD paper's DP-CD blue, DP-SGD orange,
#: DP-SCD red)
SOLVER_STYLE = dict(zip(REGISTRY, [("C0", "o"), ("C2", "^"), ("C1", "s"), ("C3", "D")]))
#: one panel, width x height in inches: a column of a two-column paper
PANEL_SIZE = (3.4, 2.6)
#: font sizes in points
FONT_SIZES = {"ticks": 7, "legend": 7, "labels": 8, "title": 8.5}
#: resolution of raster outputs (PNG); PDF and SVG are vector
DPI = 300
#: the key of a results row that may carry the relative error of w = 0
REFERENCE_KEY = "zero_rel_error"


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


def plot_error_vs_passes(results, path=None, ax=None, *, problem=None, reference=None):
    """Relative error vs passes over the data: mean and min-max band of every solver.

    As the papers' figures (DP-CD, ICML 2022, Figure 1; DP-GCD, AISTATS 2023,
    Figure 1): per solver, the mean relative error over runs of the best grid
    point, with the min and the max over runs as whiskers at every point and
    as a shaded band between points (a solver with one budget value is one
    point with its whiskers), on a log scale; a dashed horizontal line marks
    the relative error of ``w = 0`` (a solver under it has learned something).
    One pass is ``p`` DP-CD updates, ``n`` DP-SGD / DP-SCD samples, one DP-GCD
    iteration.  The curves are :func:`error_curves`.  The relative error is a
    non-private diagnostic (computed on the training data), and so is the
    choice of the best points.

    The figure is sized for a column of a two-column paper (3.4 in wide per
    problem, 7-8.5 pt fonts), titled with the problem and ``(epsilon, delta)``,
    with the legend under the axes; the y axis spans every curve's min and
    max and the reference.

    Parameters
    ----------
    results : str, os.PathLike or list of dict
        A results CSV of :func:`run_grid` or its rows (one (epsilon, delta)).
    path : str or os.PathLike, optional
        Where to save the figure; the format follows the extension: ``.png``
        at 300 dpi, ``.pdf`` and ``.svg`` as vector graphics.
    ax : matplotlib Axes, optional
        Draw there (then the results, or ``problem``, must name one problem;
        the legend goes inside the axes, where it covers the least data).
        Default: a new figure, one panel per problem.
    problem : str, optional
        Only this problem.
    reference : float or dict, optional
        The relative error of ``w = 0``, ``(F(0) - F*) / F*``, drawn as a
        labelled horizontal line: one float, or ``{problem: float}`` (a
        problem left out gets no line).  Default: the rows' ``zero_rel_error``
        when every row of the problem carries it, otherwise no line.

    Returns
    -------
    matplotlib.figure.Figure
    """
    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'sparsedp[experiments]'") \
            from None
    rows = as_rows(results)
    curves = error_curves(rows, problem)
    names = sorted({name for name, _ in curves})
    references = _references(reference, rows, names)
    if ax is None:
        width, height = PANEL_SIZE
        fig = Figure(figsize=(width * len(names), height), layout="constrained")
        axes = fig.subplots(1, len(names), squeeze=False)[0]
    else:
        if len(names) > 1:
            raise ValueError(f"one Axes for {len(names)} problems ({', '.join(names)}): pass "
                             f"problem=... or ax=None")
        fig, axes = ax.figure, [ax]
    # one (epsilon, delta) among the rows drawn: error_curves checks
    epsilon, delta = next((r["epsilon"], r["delta"]) for r in rows if r["problem"] in names)
    handles = {}
    for axis, name in zip(axes, names):
        mine = {solver: c for (pname, solver), c in curves.items() if pname == name}
        for k, (solver, c) in enumerate(sorted(mine.items())):
            label = REGISTRY[solver].label if solver in REGISTRY else solver
            color, marker = SOLVER_STYLE.get(solver, (f"C{4 + k % 6}", "v"))
            # the mean of equal values can pass them by one ulp
            whiskers = np.maximum(0.0, [c["mean"] - c["min"], c["max"] - c["mean"]])
            axis.fill_between(c["passes"], c["min"], c["max"], color=color, alpha=0.18,
                              linewidth=0, zorder=2)
            handles[label] = axis.errorbar(
                c["passes"], c["mean"], yerr=whiskers,
                color=color, marker=marker, markersize=4, markerfacecolor="none",
                markeredgewidth=0.9, linewidth=1.1, elinewidth=0.8,
                capsize=2.5, capthick=0.8, errorevery=max(1, len(c["passes"]) // 12),
                label=label, zorder=3)
        ys = [v for c in mine.values() for v in (*c["min"], *c["max"])]
        if references[name] is not None:
            # its value in the legend, unless the legend is shared by several panels
            label = "$w = 0$" + (f" ({references[name]:.3g})" if len(names) == 1 else "")
            handles[label] = axis.axhline(references[name], color="0.3", linestyle="--",
                                          linewidth=0.9, label=label, zorder=1)
            ys.append(references[name])
        _scale_y(axis, np.array(ys))
        xs = np.concatenate([c["passes"] for c in mine.values()])
        if xs.min() > 0 and xs.max() >= 10 * xs.min():  # a geometric grid
            axis.set_xscale("log")
            _log_ticks(axis.xaxis, math.log10(xs.max() / xs.min()))
        else:
            axis.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 5, 10],
                                                     integer=bool(np.all(xs == np.round(xs)))))
        axis.set_xlabel("passes over the data", fontsize=FONT_SIZES["labels"])
        axis.set_ylabel("relative error $(F(w) - F^*)\\,/\\,F^*$",
                        fontsize=FONT_SIZES["labels"])
        axis.set_title(f"{name}, \u03b5 = {_number(epsilon)}, \u03b4 = {_number(delta)}",
                       fontsize=FONT_SIZES["title"])
        axis.tick_params(which="both", labelsize=FONT_SIZES["ticks"])
        axis.grid(True, which="major", linewidth=0.4, color="0.88", zorder=0)
    if ax is None:
        fig.legend(handles.values(), handles.keys(), loc="outside lower center",
                   ncols=min(len(handles), 4), frameon=False, fontsize=FONT_SIZES["legend"],
                   handlelength=1.8, columnspacing=1.2)
    else:
        ax.legend(loc="best", frameon=False, fontsize=FONT_SIZES["legend"])
    if path is not None:
        fig.savefig(path, dpi=DPI)
    return fig


def _references(reference, rows, names):
    """``{problem: the relative error of w = 0, or None}`` (see plot_error_vs_passes)."""
    if reference is None:
        out = {}
        for name in names:
            values = {r.get(REFERENCE_KEY) for r in rows if r["problem"] == name}
            out[name] = values.pop() if len(values) == 1 else None
            if out[name] is not None and not math.isfinite(out[name]):
                out[name] = None
        return out
    if isinstance(reference, dict):
        return {name: _check_reference(reference[name]) if name in reference else None
                for name in names}
    return dict.fromkeys(names, _check_reference(reference))


def _check_reference(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"reference must be a float or a dict problem -> float, got "
                        f"{value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"reference must be finite, got {value}")
    return value


def _scale_y(axis, values):
    """A log y axis spanning ``values`` with margins; symlog if some are <= 0 (linear
    up to the least positive one)."""
    lo, hi = values.min(), values.max()
    if lo > 0:
        axis.set_yscale("log")
    else:
        positive = np.abs(values[values != 0])
        axis.set_yscale("symlog", linthresh=positive.min() if positive.size else 1e-6)
    transform = axis.yaxis.get_transform()
    a, b = transform.transform(np.array([lo, hi], dtype=float))
    if lo > 0:  # log10 units: at least 0.2 decades shown, 6% margins
        centre, half = (a + b) / 2, max(b - a, 0.2) / 2
        a, b = centre - 1.12 * half, centre + 1.12 * half
    else:
        pad = 0.06 * (b - a) if b > a else 1.0
        a, b = a - pad, b + pad
    axis.set_ylim(*transform.inverted().transform(np.array([a, b])))
    if lo > 0:
        _log_ticks(axis.yaxis, b - a)


def _log_ticks(axis, decades):
    """Major ticks only, labelled plainly: 1-2-5 (or every digit) on a short range."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    if decades > 3:
        subs = (1.0,)
    elif decades > 1:
        subs = (1.0, 2.0, 5.0)
    else:
        subs = tuple(range(1, 10))
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(_tick_label))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10)) if decades <= 8
                                      else (1.0,)))
    axis.set_minor_formatter(NullFormatter())


def _tick_label(value, position=None):
    """``0.2``, ``1``, ``50``; ``$10^{-5}$`` and ``$2\\times10^{-5}$`` outside [0.001, 1e4)."""
    if value == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e4:
        return f"{value:g}"
    exponent = math.floor(math.log10(abs(value)) + 1e-9)
    mantissa = value / 10.0 ** exponent
    if math.isclose(mantissa, 1.0):
        return f"$10^{{{exponent}}}$"
    return f"${mantissa:g}\\times10^{{{exponent}}}$"


def _number(value):
    """Compact text of a number for a title: ``1``, ``0.5``, ``1.56e-6``."""
    text = f"{value:.3g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text
