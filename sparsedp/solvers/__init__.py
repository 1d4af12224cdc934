"""Solvers: the functional, estimator-free API (see the API contract).

- :func:`exact`: accurate non-private proximal coordinate descent (reference F*).
- :func:`dp_cd`: DP-CD, private proximal randomized coordinate descent.
- :func:`dp_gcd`: DP-GCD, private (proximal) greedy coordinate descent.
- :func:`dp_scd`: DP-SCD, private stochastic dual coordinate descent (L2).
- :func:`dp_sgd`: DP-SGD, private proximal SGD with per-sample clipping (the baseline).

:data:`REGISTRY` holds each private solver's :class:`SolverSpec` (what it fits,
its budget, its hyper-parameters and defaults); :func:`get_spec` finds one by
its name (``"dp_cd"``) or its key (``"cd"``).
"""
from . import _dp_cd, _dp_gcd, _dp_scd, _dp_sgd
from ._dp_cd import dp_cd
from ._dp_gcd import calibrate_dp_gcd, dp_gcd
from ._dp_scd import dp_scd
from ._dp_sgd import dp_sgd
from ._exact import exact
from ._result import NonPrivateDiagnostics, Result, objective
from ._spec import Hyperparameter, SolverSpec

#: The private solvers' specs by name, in ``solver="auto"``'s order of preference
REGISTRY = {spec.name: spec for spec in (_dp_cd.SPEC, _dp_gcd.SPEC, _dp_sgd.SPEC, _dp_scd.SPEC)}


def get_spec(solver):
    """The :class:`SolverSpec` of ``solver``: its name (``"dp_cd"``), its key
    (``"cd"``) or a spec; ValueError naming the choices otherwise."""
    if isinstance(solver, SolverSpec):
        return solver
    for spec in REGISTRY.values():
        if solver in (spec.name, spec.key):
            return spec
    raise ValueError(f"unknown solver {solver!r}; expected one of "
                     f"{', '.join(spec.name for spec in REGISTRY.values())} (or their keys "
                     f"{', '.join(spec.key for spec in REGISTRY.values())})")


__all__ = ["REGISTRY", "Hyperparameter", "NonPrivateDiagnostics", "Result", "SolverSpec",
           "calibrate_dp_gcd", "dp_cd", "dp_gcd", "dp_scd", "dp_sgd", "exact", "get_spec",
           "objective"]
