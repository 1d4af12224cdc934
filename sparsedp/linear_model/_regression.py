"""Private linear regression: DPLasso, DPElasticNet, DPRidge (squared loss)."""
from sklearn.base import RegressorMixin

from ..datafits import Squared
from ._base import DPLinearModel, penalty_of, store_params
from ._params import COMMON_PARAMETERS, FITTED_ATTRIBUTES, TARGET_BOUND

__all__ = ["DPElasticNet", "DPLasso", "DPRidge"]


class _DPRegressor(RegressorMixin, DPLinearModel):
    _loss = "squared"

    def _datafit(self):
        return Squared()

    def fit(self, X, y):
        """Fit the model privately.

        Parameters
        ----------
        X : {sparse matrix, array-like} of shape (n_samples, n_features)
            CSC preferred; CSR and COO are converted once (one copy of the
            nonzeros), dense arrays once to CSC.  Never densified.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y)
        params = self._check_params(*X.shape)
        design = self._design(X, params)
        coefs, intercepts, n_iter, ledger, results = self._fit_targets(design, [y], params,
                                                                       ["model"])
        coef, intercept = self._set_fitted(coefs, intercepts, n_iter, ledger, params, results)
        self.coef_, self.intercept_, self.n_iter_ = coef[0], float(intercept[0]), int(n_iter[0])
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        return self._decision(X).ravel()


class _DPOnePenaltyRegressor(_DPRegressor):
    """A regressor of one penalty of strength ``alpha`` (``_penalty_name``)."""

    _penalty_name = None

    def __init__(self, alpha=1.0, *, epsilon=1.0, delta=None, solver="auto", passes=None,
                 n_iter=None, step_size=None, clip=None, rule=None, selection=None,
                 smoothness=None, feature_bounds=None, batch_size=None, fit_intercept=True,
                 intercept_scaling=1.0, target_bound=None, solver_options=None, random_state=None,
                 warm_start=False, verbose=0,
                 leak_constants=False):
        store_params(self, locals())

    def _penalty(self):
        return penalty_of(self._penalty_name, self.alpha, None)


class DPLasso(_DPOnePenaltyRegressor):
    """Private LASSO: ``(1/n) ||y - X w - b||^2 + alpha ||w||_1`` under (epsilon, delta)-DP.

    Note the scaling: the squared loss has no 1/2 (the papers'; scikit-learn's
    ``Lasso(alpha=a)`` is ``DPLasso(alpha=2 a)`` without noise).

    Parameters
    ----------
    alpha : float, default=1.0
        Strength of the L1 penalty.
{common}{target_bound}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
{fitted}
    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sparsedp.linear_model import DPLasso
    >>> X = sp.random(500, 2000, density=0.01, format="csc", rng=0)
    >>> y = X[:, [0, 1]].toarray().sum(axis=1)
    >>> M = np.full(2000, 2.0 * X.power(2).sum(axis=0).max() / 500)  # pretend public
    >>> est = DPLasso(alpha=0.01, epsilon=1.0, smoothness=M, target_bound=2.0,  # |y| <= 2
    ...               random_state=0).fit(X, y)
    >>> est.privacy_.epsilon <= 1.0
    True
    """

    _penalty_name = "l1"


class DPElasticNet(_DPRegressor):
    """Private elastic net: ``(1/n) ||y - X w - b||^2 + alpha (l1_ratio ||w||_1 +
    (1 - l1_ratio) / 2 ||w||_2^2)`` under (epsilon, delta)-DP.

    Parameters
    ----------
    alpha : float, default=1.0
    l1_ratio : float in [0, 1], default=0.5
{common}{target_bound}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
{fitted}
    """

    def __init__(self, alpha=1.0, l1_ratio=0.5, *, epsilon=1.0, delta=None, solver="auto",
                 passes=None, n_iter=None, step_size=None, clip=None, rule=None,
                 selection=None, smoothness=None, feature_bounds=None, batch_size=None,
                 fit_intercept=True, intercept_scaling=1.0, target_bound=None, solver_options=None,
                 random_state=None, warm_start=False, verbose=0,
                 leak_constants=False):
        store_params(self, locals())


    def _penalty(self):
        return penalty_of("elasticnet", self.alpha, self.l1_ratio)


class DPRidge(_DPOnePenaltyRegressor):
    """Private ridge regression: ``(1/n) ||y - X w - b||^2 + (alpha / 2) ||w||_2^2``.

    Parameters
    ----------
    alpha : float, default=1.0
{common}{target_bound}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
{fitted}
    """

    _penalty_name = "l2"


for _cls in (DPLasso, DPElasticNet, DPRidge):
    _cls.__doc__ = _cls.__doc__.format(common=COMMON_PARAMETERS, fitted=FITTED_ATTRIBUTES,
                                       target_bound=TARGET_BOUND)
