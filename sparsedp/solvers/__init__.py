"""Solvers: the functional, estimator-free API (see the API contract).

- :func:`exact`: accurate non-private proximal coordinate descent (reference F*).
- :func:`dp_cd`: DP-CD, private proximal randomized coordinate descent.
- :func:`dp_gcd`: DP-GCD, private (proximal) greedy coordinate descent.
- :func:`dp_scd`: DP-SCD, private stochastic dual coordinate descent (L2).
- :func:`dp_sgd`: DP-SGD, private proximal SGD with per-sample clipping (the baseline).
"""
from ._dp_cd import dp_cd
from ._dp_gcd import calibrate_dp_gcd, dp_gcd
from ._dp_scd import dp_scd
from ._dp_sgd import dp_sgd
from ._exact import exact
from ._result import NonPrivateDiagnostics, Result, objective

__all__ = ["calibrate_dp_gcd", "dp_cd", "dp_gcd", "dp_scd", "dp_sgd", "exact", "NonPrivateDiagnostics", "Result",
           "objective"]
