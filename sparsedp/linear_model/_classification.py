"""Private linear classifiers: DPLogisticRegression and DPLinearSVC (one-vs-rest)."""
import math
import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from .._validation import check_option
from .._warnings import find_stack_level
from ..datafits import Hinge, Logistic, SquaredHinge
from ..exceptions import PrivacyLeakWarning
from ._base import DPLinearModel, penalty_of, store_params
from ._params import COMMON_PARAMETERS, FITTED_ATTRIBUTES

__all__ = ["DPLinearSVC", "DPLogisticRegression"]

_MULTICLASS = """\
    Multiclass: one-vs-rest, one binary model per class on the same rows
    (K = the number of classes: of ``classes`` when declared, public).
    The K fits compose, so the budget is split: each fit gets the
    ``(epsilon_k, delta)`` whose K-fold Gaussian (GDP) composition is
    (epsilon, delta), checked on the first fit's ledger (K copies composed by
    the accountant); if the check fails (mechanisms that compose worse than
    Gaussians, e.g. DP-GCD's noisy max), each fit gets ``(epsilon / K, delta /
    K)`` (basic composition).  ``privacy_`` is the composition of the K
    ledgers, its mechanisms named by class.
"""


_CLASSES = """\
    classes : array-like of shape (n_classes,) or None, default=None
        The class labels, declared by the user and public (at least two
        distinct labels, no NaN).  ``classes_`` is then their sorted unique
        values, and the number of binary models (one-vs-rest for more than
        two), their budget split and the shapes of ``coef_``, ``n_iter_`` and
        ``solver_info_`` depend on them only: a declared class absent from
        ``y`` gets a model fit on all-negative labels (same mechanism, same
        budget).  A label of ``y`` outside ``classes`` is a ValueError.
        None: the classes are read from ``y`` (``np.unique(y)``), which
        depends on the data (removing the only row of a class changes them):
        a ``PrivacyLeakWarning`` and a leak on the report (its epsilon is
        ``inf``).
"""

_LEAK = ("the set of classes (classes_, the number of models and the shape of coef_) was "
         "read from the labels y; pass classes= to declare them (public)")


def _check_classes(classes, name):
    """The declared ``classes`` as ``classes_``: sorted unique labels, at least two, no NaN."""
    values = np.asarray(classes)
    if values.ndim != 1:
        raise ValueError(f"classes must be a 1-D array-like of class labels, got "
                         f"{classes!r}")
    if values.dtype.kind in "fc":
        nan = bool(np.isnan(values).any())
    elif values.dtype.kind == "O":
        nan = any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values)
    else:
        nan = False
    if nan:
        raise ValueError(f"classes must not hold NaN or None, got {classes!r}")
    try:
        values = np.unique(values)
    except TypeError as e:
        raise ValueError(f"classes must be labels of one sortable kind, got {classes!r}") \
            from e
    if values.size < 2:
        raise ValueError(f"{name} needs at least 2 declared classes, got {values.size}: "
                         f"{classes!r}")
    return values


def _check_targets(y):
    """scikit-learn's ``check_classification_targets`` for a validated 1-D ``y``,
    without its cost (a third of a millisecond) where the answer is known:
    integers and integer-valued floats are class labels (binary or multiclass)."""
    if y.dtype.kind in "biu" or (y.dtype.kind == "f" and np.array_equal(y, np.floor(y))):
        return
    check_classification_targets(y)


class _DPClassifier(ClassifierMixin, DPLinearModel):

    @staticmethod
    def _classifier():
        return True

    def fit(self, X, y):
        """Fit the model privately (one-vs-rest for more than two classes).

        Parameters
        ----------
        X : {sparse matrix, array-like} of shape (n_samples, n_features)
            CSC preferred; CSR and COO are converted once, dense arrays once
            to CSC.  Never densified.
        y : array-like of shape (n_samples,)
            Class labels (any hashable values numpy can sort); all among
            ``classes`` when it is declared.

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y)
        _check_targets(y)
        declared = self.classes is not None
        if declared:
            classes = _check_classes(self.classes, type(self).__name__)
            unknown = np.unique(y[~np.isin(y, classes)])
            if unknown.size:
                raise ValueError(f"y has labels not in the declared classes "
                                 f"{classes.tolist()!r}: {unknown.tolist()!r}")
        else:
            classes = np.unique(y)
            if classes.size < 2:
                raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes "
                                 f"in the data, got one class: {classes[0]!r}")
        params = self._check_params(*X.shape)
        if not declared and math.isfinite(params["epsilon"]):
            warnings.warn(f"classes: {_LEAK}", PrivacyLeakWarning,
                          stacklevel=find_stack_level())
        design = self._design(X, params)
        if classes.size == 2:
            targets, names = [np.where(y == classes[1], 1.0, -1.0)], ["model"]
        else:
            targets = [np.where(y == c, 1.0, -1.0) for c in classes]
            names = [f"class {c}" for c in classes]
        coefs, intercepts, n_iter, ledger, results = self._fit_targets(design, targets, params,
                                                                       names)
        if not declared:  # after the fits: the budget split is today's, the leak on top
            ledger.add_leak("classes", _LEAK)
        self.coef_, self.intercept_ = self._set_fitted(coefs, intercepts, n_iter, ledger, params,
                                                       results)
        self.classes_ = classes
        return self

    def decision_function(self, X):
        """Signed scores: shape (n_samples,) for two classes (positive: ``classes_[1]``),
        else (n_samples, n_classes)."""
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class of largest score."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]


class DPLogisticRegression(_DPClassifier):
    """Private logistic regression under (epsilon, delta)-DP.

    Minimises ``(1/n) sum_i log(1 + exp(-y_i (x_i . w + b))) + penalty(w, b)``
    with ``penalty`` none, L1 (``alpha ||.||_1``), L2 (``alpha / 2 ||.||^2``) or
    the elastic net (scikit-learn's ``C`` is ``1 / (alpha n)`` for L2).

{multiclass}
    Parameters
    ----------
    penalty : {{"l2", "l1", "elasticnet", None}}, default="l2"
    alpha : float, default=1e-3
    l1_ratio : float in [0, 1] or None, default=None
        With ``penalty="elasticnet"`` only.
{classes}{common}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
{fitted}
    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sparsedp.linear_model import DPLogisticRegression
    >>> X = sp.random(400, 1000, density=0.02, format="csr", rng=0)
    >>> y = (X[:, [0]].toarray().ravel() > 0).astype(int)
    >>> clf = DPLogisticRegression(classes=[0, 1], epsilon=1.0,
    ...                            smoothness=np.full(1000, 0.25), random_state=0).fit(X, y)
    >>> clf.predict(X[:3]).shape, clf.privacy_.epsilon <= 1.0
    ((3,), True)
    """

    _loss = "logistic"
    _derivative_scale = 0.5  # |loss'(0, y)| = 1/2

    def __init__(self, penalty="l2", *, alpha=1e-3, l1_ratio=None, classes=None, epsilon=1.0,
                 delta=None, solver="auto", passes=None, n_iter=None, step_size=None, clip=None,
                 rule=None, selection=None, smoothness=None, feature_bounds=None,
                 batch_size=None, fit_intercept=True, intercept_scaling=1.0,
                 solver_options=None, random_state=None, warm_start=False, verbose=0,
                 leak_constants=False):
        store_params(self, locals())

    def _datafit(self):
        return Logistic()

    def _penalty(self):
        return penalty_of(self.penalty, self.alpha, self.l1_ratio)

    def predict_proba(self, X):
        """Class probabilities (one-vs-rest sigmoids normalised for more than two
        classes), columns in the order of ``classes_``."""
        scores = self._decision(X)
        if scores.shape[1] == 1:
            p = expit(scores.ravel())
            return np.column_stack([1.0 - p, p])
        p = expit(scores)
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        return np.log(self.predict_proba(X))


class DPLinearSVC(_DPClassifier):
    """Private linear support vector classifier under (epsilon, delta)-DP.

    ``loss="squared_hinge"`` (default, as scikit-learn's ``LinearSVC``):
    ``(1/n) sum_i max(0, 1 - y_i s_i)^2 + penalty``, a smooth loss, through
    the primal solvers (DP-CD, DP-GCD, DP-SGD).  ``loss="hinge"``: the SVM
    ``(1/n) sum_i max(0, 1 - y_i s_i) + (alpha / 2) ||w||^2`` through its dual
    (DP-SCD; L2 penalty only).

{multiclass}
    Parameters
    ----------
    penalty : {{"l2", "l1"}}, default="l2"
        "l1" with ``loss="squared_hinge"`` only.
    loss : {{"squared_hinge", "hinge"}}, default="squared_hinge"
    alpha : float, default=1e-3
{classes}{common}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
{fitted}
    """

    def __init__(self, penalty="l2", loss="squared_hinge", *, alpha=1e-3, classes=None,
                 epsilon=1.0, delta=None, solver="auto", passes=None, n_iter=None, step_size=None,
                 clip=None, rule=None, selection=None, smoothness=None, feature_bounds=None,
                 batch_size=None, fit_intercept=True, intercept_scaling=1.0,
                 solver_options=None, random_state=None, warm_start=False, verbose=0,
                 leak_constants=False):
        store_params(self, locals())

    @property
    def _loss(self):
        return check_option(self.loss, "loss", ("squared_hinge", "hinge"))

    _derivative_scale = 2.0  # |squared hinge'(0, y)| = 2

    def _datafit(self):
        return Hinge() if self._loss == "hinge" else SquaredHinge()

    def _penalty(self):
        penalty = check_option(self.penalty, "penalty", ("l2", "l1"))
        if penalty == "l1" and self._loss == "hinge":
            raise ValueError("loss='hinge' (DP-SCD) needs penalty='l2'")
        return penalty_of(penalty, self.alpha, None)


for _cls in (DPLogisticRegression, DPLinearSVC):
    _cls.__doc__ = _cls.__doc__.format(common=COMMON_PARAMETERS, fitted=FITTED_ATTRIBUTES,
                                       multiclass=_MULTICLASS, classes=_CLASSES)
