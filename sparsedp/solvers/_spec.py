"""What a private solver declares once: its :class:`SolverSpec`.

Every solver module ends with one spec; :mod:`sparsedp.solvers` collects them
in :data:`~sparsedp.solvers.REGISTRY`.  The estimators, ``solver="auto"``, the
command line and the experiments ask the specs the same questions (which
models a solver fits, its budget parameter, its hyper-parameters and their
defaults, the constants it needs from the data) and never test a solver's name.

The models a solver fits are declared as skglm's solvers declare theirs: the
attributes a datafit and a penalty must have (``datafit_requires``,
``penalty_requires``); the datafits and penalties declare what they are
(``Squared.smooth``, ``Hinge.dual``, ``L2(1.0).ridge``...).
"""
import inspect
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Hyperparameter", "SolverSpec"]

#: what the spec functions' keywords and a grid never set: the data, the model,
#: the budget, the seed, the diagnostics and the starting point
RESERVED = ("X", "y", "datafit", "penalty", "epsilon", "delta", "random_state", "trace",
            "diagnostics", "coef_init", "intercept_init")


@dataclass(frozen=True)
class Hyperparameter:
    """A hyper-parameter a search tunes, and the values it tries.

    ``quick`` and ``full`` are the grids of ``sparsedp compare --grid quick``
    and ``--grid full``.  ``per_unit``: the values multiply the per-sample
    gradient scale at 0 (a clipping threshold's ``kappa``, docs/defaults.rst)
    rather than being absolute.
    """

    name: str
    quick: tuple
    full: tuple
    per_unit: bool = False


@dataclass(frozen=True)
class SolverSpec:
    """One private solver, as every consumer of the solvers sees it.

    Attributes
    ----------
    name : str
        The function's name in :mod:`sparsedp.solvers` (``"dp_cd"``).
    key : str
        Its short name for the estimators' and the command line's ``solver``
        (``"cd"``).
    label : str
        Its name in prose and plots (``"DP-CD"``).
    function : callable
        The functional solver ``function(X, y, datafit, penalty, *, epsilon,
        delta, <budget>, clip, ...) -> Result``.
    budget : str
        Its budget parameter: ``"passes"`` or ``"n_iter"``.
    relation : str
        Its default neighbouring relation (``"replace-one"``, ``"add-remove"``).
    datafit_requires, penalty_requires : tuple of (str, str)
        The attributes a datafit and a penalty must have, true, for this
        solver to fit them, each with what it means in words.
    smoothness : {"coordinate", "global", None}
        What it takes from the data's smoothness: coordinate-wise constants
        ``M_j`` (public, a private estimate or a recorded leak), their sum as a
        bound on the global smoothness (public only), or nothing.
    hyperparameters : tuple of Hyperparameter
        What a search tunes besides the budget (``budget_grid``).
    budget_grid : Hyperparameter
        The budgets a search tries.
    options : dict
        Keyword arguments the estimators and ``sparsedp compare`` set unless
        the user does (measured: docs/defaults.rst); the functional API keeps
        its own defaults.
    default_budget : callable
        ``(n_samples, n_features, epsilon) -> value`` of the budget parameter
        (the estimators' default, measured).
    default_step : callable or None
        ``(n_samples, n_features, datafit) -> step_size``; None: the solver
        has no step size.
    default_kappa : callable or None
        ``(n_samples, releases, epsilon, delta) -> kappa``, the default clip in
        units of the per-sample gradient scale at 0; None: ``default_clip``.
    kappa_cap : callable or None
        ``(n_samples, n_features, releases, epsilon, delta, step, beta,
        derivative, zero_loss) -> cap`` on the default kappa (None: no cap):
        public values only (the loss's ``beta``, the scale ``derivative`` of
        ``|loss'(0, y)|`` in the unit, the loss at 0).
    default_clip : float or None
        The default clip when it has no unit (``default_kappa`` None).
    releases : callable
        ``(budget, n_columns) -> count`` of coordinate releases of a run (what
        ``default_kappa`` reads).
    smoothness_after_selection : callable or None
        ``(budget, n_columns) -> bool``: whether, given a fraction as
        ``smoothness``, the solver estimates the constants privately during the
        run, for the coordinates it selects only, rather than all of them
        beforehand (DP-GCD with fewer iterations than coordinates).  It then
        needs a bound on ``|X_ij|`` (``feature_bounds``) and takes the uniform
        prior ``M_j = beta B^2`` for its scores and thresholds.
    auto : callable or None
        ``(datafit, l1, n_samples, n_features) -> bool``: whether
        ``solver="auto"`` runs this solver (the first true in the registry's
        order; :func:`sparsedp.linear_model.choose_solver`).
    """

    name: str
    key: str
    label: str
    function: Callable
    budget: str
    relation: str
    datafit_requires: tuple
    penalty_requires: tuple
    smoothness: str
    budget_grid: Hyperparameter
    hyperparameters: tuple
    default_budget: Callable
    default_step: Callable = None
    default_kappa: Callable = None
    kappa_cap: Callable = None
    default_clip: float = None
    releases: Callable = None
    smoothness_after_selection: Callable = None
    auto: Callable = None
    options: dict = field(default_factory=dict)

    def unmet(self, datafit, penalty):
        """None if this solver fits ``datafit + penalty``, else why not (a str)."""
        for model, needs in ((datafit, self.datafit_requires),
                             (penalty, self.penalty_requires)):
            for attribute, meaning in needs:
                if not getattr(model, attribute, False):
                    return f"{self.name} needs {meaning}, got {model!r}"
        return None

    def takes(self, keyword):
        """Whether the solver function has the keyword argument ``keyword``
        (``coef_init``: a warm start; ``fit_intercept``: its own intercept)."""
        return keyword in inspect.signature(self.function).parameters

    @property
    def parameters(self):
        """The solver's keyword arguments a grid or an estimator may set."""
        return tuple(name for name in inspect.signature(self.function).parameters
                     if name not in RESERVED)

    @property
    def required(self):
        """The keyword arguments without a default (a grid must give them)."""
        return tuple(name for name, p in inspect.signature(self.function).parameters.items()
                     if name not in RESERVED and p.default is inspect.Parameter.empty)

    def grid(self, which, unit):
        """The search grid ``which`` ("quick" or "full") as ``{param: values}``,
        per-unit values multiplied by ``unit``, with the spec's ``options``."""
        grid = dict(self.options)
        for h in (self.budget_grid,) + tuple(self.hyperparameters):
            values = list(getattr(h, which))
            grid[h.name] = [v * unit for v in values] if h.per_unit else values
        return grid
