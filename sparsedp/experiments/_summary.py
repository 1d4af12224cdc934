"""Best of grid: per (problem, solver), the grid point with the lowest mean objective."""
import inspect
import json
import math

import numpy as np

from ..solvers import get_spec
from ._results import as_rows

__all__ = ["RELATION_NOTE", "Summary", "fit_relation", "summarize", "support_table"]

NOTE = ("Non-private diagnostics: the objective F, the relative error (F(w) - F*) / F* and "
        "the support counts are computed on the training data without noise (F*, w*: exact "
        "solver), and the best grid point is chosen with them; none of this is covered by "
        "the fits' privacy guarantee (see sparsedp.experiments.tuning_cost).")

#: the batch solvers' ``sampling``: Poisson batches are accounted under add/remove
#: neighbours, fixed-size batches without replacement under replace-one
#: (sparsedp.solvers._batch.Sampling.relation)
SAMPLING_RELATIONS = {"poisson": "add-remove", "fixed": "replace-one"}

#: the neighbouring relations in the table's words
RELATION_WORDS = {"replace-one": "replace-one", "add-remove": "add/remove"}

RELATION_NOTE = ("neighbours: the relation each row's epsilon holds under (replace-one: one "
                 "row replaced, n fixed; add/remove: one row added or removed, n public); "
                 "an epsilon under one relation is a different guarantee from the same "
                 "epsilon under the other.")


def fit_relation(solver, params):
    """The neighbouring relation a fit of ``solver`` with ``params`` is accounted under.

    The solver's own (:attr:`SolverSpec.relation <sparsedp.solvers.SolverSpec>`),
    except for a solver that takes ``sampling``: Poisson batches (its default
    unless ``params`` say otherwise) are accounted under add/remove
    neighbours, fixed-size batches under replace-one.

    Parameters
    ----------
    solver : str
        A name or key of :data:`sparsedp.solvers.REGISTRY`.
    params : dict
        The fit's keyword arguments (a grid point).

    Returns
    -------
    {"replace-one", "add-remove"}
    """
    spec = get_spec(solver)
    sampling = inspect.signature(spec.function).parameters.get("sampling")
    if sampling is None:
        return spec.relation
    return SAMPLING_RELATIONS[params.get("sampling", sampling.default)]


def _mmm(values, prefix):
    values = np.asarray(values, dtype=float)
    return {f"{prefix}_min": float(values.min()), f"{prefix}_mean": float(values.mean()),
            f"{prefix}_max": float(values.max())}


def best_points(rows, by_passes=False):
    """``{group: (params, [final rows of its runs], n_points, n_fits)}``.

    Groups are (problem, solver, epsilon, delta), and the budget (passes) with
    ``by_passes``; the best point has the lowest mean objective over its runs
    (ties: the first params in JSON order).
    """
    groups = {}
    for row in rows:
        if not row["final"]:
            continue
        group = (row["problem"], row["solver"], row["epsilon"], row["delta"])
        if by_passes:
            group += (row["passes"],)
        groups.setdefault(group, {}).setdefault(row["params"], []).append(row)
    out = {}
    for group, points in groups.items():
        best = min(sorted(points), key=lambda p: np.mean([r["objective"] for r in points[p]]))
        out[group] = (best, sorted(points[best], key=lambda r: r["run"]), len(points),
                      sum(len(runs) for runs in points.values()))
    return out


class Summary:
    """The best grid points: ``rows`` (a list of dicts) and a plain-text table (``str``).

    Each row: ``problem``, ``solver``, ``epsilon``, ``delta``, ``params`` (the
    best point, a dict), ``passes`` (its budget), ``n_points`` (grid points
    tried), ``n_fits`` (fits run on the data, all points and runs), ``n_runs``
    (runs of the best point: its fresh runs when ``fresh``), ``fresh``
    (whether its figures come from fresh seeds), ``objective_mean``, ``rel_error_min`` /
    ``_mean`` / ``_max``, ``in_sample_rel_error_*`` (the runs that chose it), ``support_correct_*``, ``support_incorrect_*``,
    ``support_true`` (``|supp w*|``), ``time_*`` (seconds per fit),
    ``ledger_epsilon`` (largest epsilon the best point's fits report: ``inf``
    when they used constants computed from the data), ``private`` and
    ``relation`` (the neighbouring relation the fits' epsilon holds under,
    ``"replace-one"`` or ``"add-remove"``: :func:`fit_relation`; the table's
    ``neighbours`` column, explained by :data:`RELATION_NOTE`).
    The objective, relative error and support counts are non-private
    diagnostics (:data:`NOTE`).
    """

    def __init__(self, rows, title="Best of grid by mean objective over runs", in_sample=False):
        self.rows = rows
        self.title = title
        self.in_sample = in_sample

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, k):
        return self.rows[k]

    def to_text(self):
        """The table as plain text (also ``str(summary)``)."""
        header = ("problem", "solver", "epsilon", "neighbours", "passes",
                  "rel. error min / mean / max [non-private]",
                  "support ok / wrong of |w*| [non-private]", "time (s)",
                  "points x runs", "ledger eps", "best params")
        if self.in_sample:
            header = header[:6] + ("in-sample mean [non-private]",) + header[6:]
        lines = []
        for r in self.rows:
            params = ", ".join(f"{k}={_short(v)}" for k, v in r["params"].items())
            lines.append((
                r["problem"], r["solver"], f"{r['epsilon']:g}", RELATION_WORDS[r["relation"]],
                f"{r['passes']:g}",
                f"{r['rel_error_min']:.3g} / {r['rel_error_mean']:.3g} / "
                f"{r['rel_error_max']:.3g}",
                f"{r['support_correct_mean']:.3g} / {r['support_incorrect_mean']:.3g} of "
                f"{r['support_true']}",
                f"{r['time_mean']:.3g}", f"{r['n_points']} x {r['n_fits'] // r['n_points']}"
                + (f", {r['n_runs']} fresh" if r["fresh"] else ""),
                f"{r['ledger_epsilon']:.3g}" + ("" if r["private"] else " (leak)"), params))
            if self.in_sample:
                lines[-1] = (*lines[-1][:6], f"{r['in_sample_rel_error_mean']:.3g}",
                             *lines[-1][6:])
        widths = [max(len(h), *(len(line[k]) for line in lines)) if lines else len(h)
                  for k, h in enumerate(header)]
        text = [self.title, "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
        text += ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()
                 for line in lines]
        return "\n".join(text + [RELATION_NOTE, NOTE])

    __str__ = to_text

    def __repr__(self):
        return f"Summary({len(self.rows)} rows)"


def _short(value):
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def summarize(results, *, by_passes=False, fresh=None, in_sample=False):
    """Best grid point per (problem, solver) and its min / mean / max over runs.

    The papers' protocol: the point with the lowest mean objective over its
    runs (equivalently the lowest mean relative error), reported with the
    min / mean / max over runs of the relative error ``(F(w) - F*) / F*``
    (the metric of both the DP-CD and DP-GCD papers), the numbers of correct
    and incorrect nonzeros of ``w`` against ``w*`` (the DP-GCD paper's Table
    3), and the wall time of a fit.

    The runs that chose a point flatter it (the least of several noisy means
    is biased low).  With ``fresh`` (the rows of :func:`rerun_best`) every
    figure comes from the best point's fresh runs, seeds that took no part in
    the choice; without it the figures are in-sample, and the title says so.

    Parameters
    ----------
    results : str, os.PathLike or list of dict
        A results CSV of :func:`run_grid` or the rows it returned (final rows
        are used; trace rows are ignored).
    by_passes : bool, default=False
        One best point per budget value (``passes``, or ``n_iter`` for DP-GCD)
        too: the papers' tables, tuned per number of passes.
    fresh : str, os.PathLike or list of dict, optional
        The best points re-run on fresh seeds (:func:`rerun_best`, same
        ``by_passes``); every best point needs its fresh runs.
    in_sample : bool, default=False
        With ``fresh``: also show the in-sample relative error (the runs that
        chose the point) in the text; the rows always hold it
        (``in_sample_rel_error_*``).

    Returns
    -------
    Summary
        ``summary.rows`` (dicts), ``str(summary)`` a plain-text table.  Groups
        are also split by (epsilon, delta) when the results hold several.
        With ``fresh``, ``n_runs`` counts the fresh runs and ``n_fits`` the
        grid's fits (those that read the data to choose).
    """
    rows = as_rows(results)
    reruns = None
    if fresh is not None:
        reruns = {}
        for row in as_rows(fresh):
            if row["final"]:
                key = (row["problem"], row["solver"], row["epsilon"], row["delta"],
                       row["params"])
                reruns.setdefault(key, []).append(row)
    out = []
    for group, (params, runs, n_points, n_fits) in sorted(best_points(rows, by_passes).items()):
        chosen = runs
        if reruns is not None:
            runs = sorted(reruns.get((*group[:4], params), []), key=lambda r: r["run"])
            if not runs:
                raise ValueError(f"fresh holds no run of the best point of {group[0]!r}, "
                                 f"{group[1]} ({params}): re-run it with rerun_best")
            seeds = {r["seed"] for r in chosen}
            if any(r["seed"] in seeds for r in runs):
                raise ValueError(f"fresh runs of {group[0]!r}, {group[1]} share seeds with "
                                 f"the runs that chose the point: they are not fresh")
        out.append({
            "problem": group[0], "solver": group[1], "epsilon": group[2], "delta": group[3],
            "params": json.loads(params), "passes": runs[0]["passes"],
            "n_points": n_points, "n_fits": n_fits, "n_runs": len(runs),
            "fresh": reruns is not None,
            "objective_mean": float(np.mean([r["objective"] for r in runs])),
            **_mmm([r["rel_error"] for r in runs], "rel_error"),
            **_mmm([r["rel_error"] for r in chosen], "in_sample_rel_error"),
            **_mmm([r["support_correct"] for r in runs], "support_correct"),
            **_mmm([r["support_incorrect"] for r in runs], "support_incorrect"),
            "support_true": runs[0]["support_true"],
            **_mmm([r["time"] for r in runs], "time"),
            "ledger_epsilon": max(r["ledger_epsilon"] for r in runs),
            "private": all(math.isfinite(r["ledger_epsilon"]) for r in runs),
            "relation": fit_relation(group[1], json.loads(params)),
        })
    title = "Best of grid by mean objective over runs" + (" per budget" if by_passes else "")
    if reruns is None:
        title += ("; in-sample: its figures are those of the runs that chose it (biased low; "
                  "rerun_best gives fresh ones)")
    else:
        title += "; its figures are those of fresh runs (seeds that did not choose it)"
    return Summary(out, title, in_sample=in_sample and reruns is not None)


def support_table(results, *, by_passes=False, fresh=None):
    """Support recovery of the best grid points, as plain text (the DP-GCD paper's Table 3).

    Correct nonzeros (in ``supp w*``) and incorrect ones (outside it), min /
    mean / max over the best point's runs (its fresh runs with ``fresh``, as in
    :func:`summarize`); non-private diagnostics.
    """
    summary = summarize(results, by_passes=by_passes, fresh=fresh)
    header = ("problem", "solver", "epsilon", "passes", "|w*|", "correct min/mean/max",
              "incorrect min/mean/max")
    lines = [(r["problem"], r["solver"], f"{r['epsilon']:g}", f"{r['passes']:g}",
              str(r["support_true"]),
              f"{r['support_correct_min']:g} / {r['support_correct_mean']:.3g} / "
              f"{r['support_correct_max']:g}",
              f"{r['support_incorrect_min']:g} / {r['support_incorrect_mean']:.3g} / "
              f"{r['support_incorrect_max']:g}") for r in summary.rows]
    widths = [max(len(h), *(len(line[k]) for line in lines)) if lines else len(h)
              for k, h in enumerate(header)]
    text = ["Support recovery of the best grid points (non-private diagnostic: against "
            "the exact solution w*; " + ("fresh runs)" if fresh is not None else
                                         "in-sample: the runs that chose them)"),
            "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    text += ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines]
    return "\n".join(text)
