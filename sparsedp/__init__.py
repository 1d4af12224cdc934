"""sparsedp: differentially private ERM on high-dimensional sparse data.

Modules
-------
datafits
    Squared and Logistic losses on the margin.
penalties
    L1, L2 and ElasticNet (separable).
solvers
    exact (non-private reference), and the private solvers.
privacy
    Mechanisms, accountants, calibration and the privacy ledger
    (``sparsedp.accounting`` is an alias of its public names).
linear_model
    scikit-learn estimators over the solvers (re-exported here).
model_selection
    PrivateSearch: private hyper-parameter tuning by random stopping.
audit
    Empirical lower bounds on a mechanism's or a fit's epsilon (many runs on
    neighbouring datasets, or one run with canaries).
"""
from .exceptions import PrivacyLeakWarning
from .linear_model import DPElasticNet, DPLasso, DPLinearSVC, DPLogisticRegression, DPRidge

__version__ = "0.1.0"

__all__ = ["DPElasticNet", "DPLasso", "DPLinearSVC", "DPLogisticRegression", "DPRidge",
           "PrivacyLeakWarning", "__version__"]
