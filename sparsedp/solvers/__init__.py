"""Solvers: the functional, estimator-free API (see the API contract).

- :func:`exact`: accurate non-private proximal coordinate descent (reference F*).
- :func:`dp_cd`: DP-CD, private proximal randomized coordinate descent.
"""
from ._dp_cd import dp_cd
from ._exact import exact
from ._result import Result, objective

__all__ = ["dp_cd", "exact", "Result", "objective"]
