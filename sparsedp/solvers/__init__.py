"""Solvers: the functional, estimator-free API (see the API contract).

- :func:`exact`: accurate non-private proximal coordinate descent (reference F*).
"""
from ._exact import exact
from ._result import Result, objective

__all__ = ["exact", "Result", "objective"]
