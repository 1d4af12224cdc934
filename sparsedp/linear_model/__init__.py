"""scikit-learn estimators over the private solvers.

- :class:`DPLasso`, :class:`DPElasticNet`, :class:`DPRidge`: squared loss;
- :class:`DPLogisticRegression`: logistic loss, penalty none / l1 / l2 / elasticnet;
- :class:`DPLinearSVC`: squared hinge (primal solvers) or hinge (DP-SCD).

Each is thin over :mod:`sparsedp.solvers` (the backend other libraries call
directly); after ``fit``: ``coef_``, ``intercept_``, ``n_iter_``, ``classes_``
(classifiers) and ``privacy_``, the report of what the fit spent.
"""
from ._base import (CD_MIN_RATIO, DEFAULT_SOLVER_OPTIONS, choose_solver, default_budget,
                    default_delta, default_kappa)
from ._classification import DPLinearSVC, DPLogisticRegression
from ._constants import CONSTANTS_SHARE, FEATURE_SHARE, STEP_SHARE
from ._regression import DPElasticNet, DPLasso, DPRidge

__all__ = ["CD_MIN_RATIO", "CONSTANTS_SHARE", "DEFAULT_SOLVER_OPTIONS", "FEATURE_SHARE", "STEP_SHARE", "DPElasticNet", "DPLasso", "DPLinearSVC",
           "DPLogisticRegression", "DPRidge", "choose_solver", "default_budget", "default_delta",
           "default_kappa"]
