"""Experiments: the papers' protocol on any data, in parallel, resumable.

Which private solver gives the best model at a given epsilon, and how does the
error fall with the passes over the data?  The protocol of the DP-CD (Mangold
et al., ICML 2022) and DP-GCD (AISTATS 2023) papers:

- :class:`Problem`: data, objective, public constants, and the exact optimum
  ``F*``, ``w*`` (cached);
- :func:`run_grid`: a grid over solver x step size x clipping x passes, several
  runs per point, each (problem, solver, point, run) one task with its own
  seed; in parallel with joblib (and so on a Dask cluster through joblib's
  dask backend); tidy results appended to a CSV as tasks finish; resumable;
- :func:`summarize`: best of grid by mean objective, min / mean / max over runs
  of the relative error ``(F(w) - F*) / F*``, support recovery (correct /
  incorrect nonzeros against ``w*``) and wall time; :func:`support_table`;
- :func:`rerun_best`: each best point re-run on fresh seeds (seeds that did
  not choose it), the honest figure ``summarize(results, fresh=...)`` reports;
- :func:`run_private_search`: the private counterpart, each solver tuned end to
  end by :class:`~sparsedp.model_selection.PrivateSearch` (the whole search
  within the budget), several runs, a row each;
- :func:`plot_error_vs_passes`: the papers' figures (matplotlib);
- :func:`tuning_cost`: what tuning on the private data costs under composition.

The objective, the relative error and the support counts are non-private
diagnostics (computed on the training data without noise), and so is the
choice of the best grid point.  Optional dependencies: joblib, tqdm and
matplotlib (``pip install 'sparsedp[experiments]'``), dask
(``'sparsedp[dask]'``).
"""
from ._grid import BUDGET, SOLVERS, expand_grid, grid_size, run_task, task_seed
from ._plots import error_curves, plot_error_vs_passes
from ._private import PRIVATE_SEARCH, estimator_for, run_private_search
from ._problem import Problem
from ._results import COLUMNS, NON_PRIVATE, read_results
from ._runner import rerun_best, run_grid
from ._summary import NOTE, Summary, summarize, support_table
from ._tuning import TuningCost, tuning_cost

__all__ = ["BUDGET", "COLUMNS", "NON_PRIVATE", "NOTE", "PRIVATE_SEARCH", "Problem", "SOLVERS",
           "Summary", "TuningCost", "error_curves", "estimator_for", "expand_grid", "grid_size",
           "plot_error_vs_passes", "read_results", "rerun_best", "run_grid",
           "run_private_search", "run_task", "summarize", "support_table", "task_seed",
           "tuning_cost"]
