"""plot_error_vs_passes: a figure fit to publish (title, w = 0 line, bands, scale, size)."""
import json

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from matplotlib.collections import LineCollection, PolyCollection  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from sparsedp.experiments import COLUMNS, error_curves, plot_error_vs_passes  # noqa: E402

EPSILON, DELTA = 0.5, 1e-5
OPTIMUM = 2.0
#: relative errors of each run, per solver and budget: DP-CD far above the others
#: (it must stay on the scale), DP-SGD a single budget (its band is one whisker)
ERRORS = {
    "dp_cd": {1.0: [300.0, 800.0, 1500.0], 5.0: [90.0, 200.0, 400.0], 20.0: [20.0, 30.0, 60.0]},
    "dp_gcd": {1.0: [0.2, 0.3, 0.5], 5.0: [0.01, 0.02, 0.04], 20.0: [0.002, 0.003, 0.006]},
    "dp_sgd": {5.0: [0.8, 1.0, 1.3]},
}
REFERENCE = 0.7


def make_rows(errors=ERRORS, problem="lasso", **extra):
    """Final rows of one grid point per (solver, budget), the given errors as its runs."""
    rows = []
    for solver, by_budget in errors.items():
        for passes, values in by_budget.items():
            params = json.dumps({"clip": 1.0, "passes": passes}, sort_keys=True)
            for run, rel_error in enumerate(values):
                row = dict.fromkeys(COLUMNS)
                row.update(problem=problem, solver=solver, params=params, run=run, seed=run,
                           epsilon=EPSILON, delta=DELTA, final=True, passes=passes,
                           objective=OPTIMUM * (1 + rel_error), optimum=OPTIMUM,
                           rel_error=rel_error, ledger_epsilon=EPSILON, time=0.01, **extra)
                rows.append(row)
    return rows


def reference_lines(ax):
    """The y of the horizontal lines of ``ax`` (constant ydata)."""
    return [float(line.get_ydata()[0]) for line in ax.get_lines()
            if np.ptp(np.asarray(line.get_ydata(), dtype=float)) == 0
            and len(line.get_ydata()) >= 2]


def solver_bands(ax):
    """``{label: ErrorbarContainer}`` of the solvers drawn in ``ax``."""
    return {c.get_label(): c for c in ax.containers}


@pytest.fixture(scope="module")
def figure(tmp_path_factory):
    path = tmp_path_factory.mktemp("plots") / "errors.png"
    fig = plot_error_vs_passes(make_rows(), path, reference=REFERENCE)
    return fig, path


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG\r\n\x1a\n"), (".pdf", b"%PDF-"),
                                           (".svg", b"<?xml")])
def test_the_file_is_written_in_the_format_of_its_extension(tmp_path, suffix, magic):
    path = tmp_path / f"errors{suffix}"
    plot_error_vs_passes(make_rows(), path, reference=REFERENCE)
    data = path.read_bytes()
    assert data.startswith(magic)
    if suffix == ".svg":
        assert b"<svg" in data[:2000]
    if suffix == ".png":  # 300 dpi: 3.4 in is about 1020 pixels
        width = int.from_bytes(data[16:20], "big")
        assert 900 <= width <= 1050


def test_the_title_names_the_problem_and_the_privacy_budget(figure):
    fig, _ = figure
    [ax] = fig.axes
    title = ax.get_title()
    assert "lasso" in title
    assert "\u03b5 = 0.5" in title and "\u03b4 = 1e-5" in title


def test_a_labelled_line_marks_the_error_of_w_zero(figure):
    fig, _ = figure
    [ax] = fig.axes
    assert reference_lines(ax) == [pytest.approx(REFERENCE)]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("w = 0" in label and "0.7" in label for label in labels)


def test_every_solver_has_a_visible_min_max_band(figure):
    fig, _ = figure
    [ax] = fig.axes
    bands = solver_bands(ax)
    assert set(bands) == {"DP-CD", "DP-GCD", "DP-SGD"}
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(polys) == 3
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    assert set(bands) <= legend
    curves = error_curves(make_rows())
    for (_, solver), c in curves.items():
        container = bands[{"dp_cd": "DP-CD", "dp_gcd": "DP-GCD", "dp_sgd": "DP-SGD"}[solver]]
        [whiskers] = [b for b in container.lines[2] if isinstance(b, LineCollection)]
        segments = whiskers.get_segments()
        assert len(segments) == len(c["passes"])
        for segment, low, high in zip(segments, c["min"], c["max"]):  # min to max, drawn
            assert sorted(segment[:, 1]) == pytest.approx([low, high])
            assert high > low
    # DP-SGD has one budget: its band is a whisker at its one point, with caps
    assert len(bands["DP-SGD"].lines[0].get_xdata()) == 1
    assert len(bands["DP-SGD"].lines[1]) == 2


def test_the_y_axis_holds_every_curve_with_readable_ticks(figure):
    fig, _ = figure
    [ax] = fig.axes
    assert ax.get_yscale() == "log"
    low, high = ax.get_ylim()
    for c in error_curves(make_rows()).values():
        assert low < c["min"].min() and c["max"].max() < high  # DP-CD's 1500 included
    assert low < REFERENCE < high
    fig.canvas.draw()
    major = [t.get_text() for t in ax.get_yticklabels() if low <= t.get_position()[1] <= high]
    minor = [t.get_text() for t in ax.get_yticklabels(minor=True)]
    assert len(major) >= 3 and all(major)
    assert not any(minor)  # no 2x10^0, 6x10^0 clutter
    assert all(float(text) > 0 for text in major)  # plain numbers: 0.001 ... 1000


def test_the_figure_fits_a_paper_column_with_the_legend_off_the_data(figure):
    fig, _ = figure
    [ax] = fig.axes
    width, height = fig.get_size_inches()
    assert width <= 3.5 and height <= 3.0
    assert ax.title.get_fontsize() <= 9
    assert all(6 <= t.get_fontsize() <= 9 for t in ax.get_yticklabels())
    fig.canvas.draw()
    legend = fig.legends[0].get_window_extent()
    assert not legend.overlaps(ax.get_window_extent())


def test_the_reference_comes_from_a_dict_or_the_rows_or_is_left_out():
    rows = make_rows() + make_rows(problem="logreg")
    fig = plot_error_vs_passes(rows, reference={"lasso": 0.25})
    by_title = {ax.get_title().split(",")[0]: ax for ax in fig.axes}
    assert reference_lines(by_title["lasso"]) == [0.25]
    assert reference_lines(by_title["logreg"]) == []
    assert [t.get_text() for t in fig.legends[0].get_texts()].count("$w = 0$") == 1
    assert fig.get_size_inches()[0] <= 2 * 3.5  # a column per problem
    fig = plot_error_vs_passes(make_rows(zero_rel_error=0.9))
    assert reference_lines(fig.axes[0]) == [0.9]
    fig = plot_error_vs_passes(make_rows())
    assert reference_lines(fig.axes[0]) == []
    with pytest.raises(TypeError, match="reference"):
        plot_error_vs_passes(make_rows(), reference="w = 0")


def test_an_error_of_zero_gets_a_symlog_axis_that_shows_it(tmp_path):
    errors = {"dp_gcd": {1.0: [0.0, 0.01, 0.02], 5.0: [0.0, 0.0, 0.001]}}
    fig = plot_error_vs_passes(make_rows(errors), tmp_path / "zero.pdf", reference=REFERENCE)
    [ax] = fig.axes
    assert ax.get_yscale() == "symlog"
    low, high = ax.get_ylim()
    assert low < 0.0 and REFERENCE < high


def test_on_a_given_axes_the_legend_is_inside(tmp_path):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(3.4, 2.6))
    ax = fig.subplots()
    out = plot_error_vs_passes(make_rows(), tmp_path / "on_ax.svg", ax=ax, reference=REFERENCE)
    assert out is fig and ax.get_legend() is not None and not fig.legends
    assert (tmp_path / "on_ax.svg").read_bytes().startswith(b"<?xml")
