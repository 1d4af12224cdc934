"""The classifiers' classes are public: declared by ``classes=``, else a recorded leak.

Under replace-one neighbours, replacing the only row of a class must not change the
form of the output (``classes_``, the number of models, the shapes of ``coef_``,
``n_iter_``, ``solver_info_``) nor the budget split: with ``classes`` declared these
depend on the declared labels only.  Read from ``y`` (``classes=None``), they depend on
the data: a ``PrivacyLeakWarning`` and an infinite epsilon (docs/estimators.rst,
"Declared classes").
"""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from sparsedp import DPLinearSVC, DPLogisticRegression
from sparsedp.exceptions import PrivacyLeakWarning

CLASSIFIERS = [DPLogisticRegression, DPLinearSVC]


def _data(n=120, p=8, seed=0):
    X = sp.random(n, p, density=0.4, format="csr", rng=seed)
    y = np.arange(n) % 3  # classes 0, 1, 2
    return X, y


def _kw(p, **extra):
    return dict(solver="cd", passes=1, smoothness=np.full(p, 0.25), epsilon=1.0,
                delta=1e-5, random_state=0, **extra)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_declared_class_missing_from_y_gives_the_neighbours_output_form(cls):
    X, y = _data()
    neighbour = y.copy()
    neighbour[neighbour == 2] = 0  # no row of class 2 left
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        full = cls(classes=[0, 1, 2], **_kw(X.shape[1])).fit(X, y)
        missing = cls(classes=[0, 1, 2], **_kw(X.shape[1])).fit(X, neighbour)
    np.testing.assert_array_equal(missing.classes_, full.classes_)
    np.testing.assert_array_equal(missing.classes_, [0, 1, 2])
    assert missing.coef_.shape == full.coef_.shape == (3, X.shape[1])
    assert missing.intercept_.shape == full.intercept_.shape == (3,)
    assert len(missing.solver_info_) == len(full.solver_info_) == 3
    assert missing.n_iter_.shape == full.n_iter_.shape == (3,)
    # the same mechanisms at the same budget: the same noise, the same report
    assert [i["noise_multiplier"] for i in missing.solver_info_] == \
        [i["noise_multiplier"] for i in full.solver_info_]
    assert missing.privacy_.epsilon == full.privacy_.epsilon <= 1.0
    assert missing.privacy_.private and "class 2" in str(missing.privacy_)
    assert missing.predict(X).shape == (X.shape[0],)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_declared_binary_class_missing_from_y_is_fit_on_all_negative_labels(cls):
    X, y = _data()
    ones = np.ones(X.shape[0], dtype=int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = cls(classes=[0, 1], **_kw(X.shape[1])).fit(X, ones)
        ref = cls(classes=[0, 1], **_kw(X.shape[1])).fit(X, y % 2)
    assert clf.coef_.shape == ref.coef_.shape == (1, X.shape[1])
    assert clf.privacy_.epsilon == ref.privacy_.epsilon <= 1.0


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_classes_read_from_y_is_a_leak(cls):
    X, y = _data()
    with pytest.warns(PrivacyLeakWarning, match="classes=") as record:
        clf = cls(**_kw(X.shape[1])).fit(X, y)
    assert any("read from the labels" in str(w.message) for w in record)
    assert math.isinf(clf.privacy_.epsilon) and not clf.privacy_.private
    assert "classes" in [name for name, _ in clf.privacy_.leaks]
    assert clf.privacy_.to_dict()["method"] == "leak"
    # today's fit otherwise: the classes of y, the budget split over them
    declared = cls(classes=[0, 1, 2], **_kw(X.shape[1])).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, declared.classes_)
    np.testing.assert_array_equal(clf.coef_, declared.coef_)
    assert clf.privacy_.get_epsilon(ignore_leaks=True) == declared.privacy_.epsilon
    # binary: the one model's ledger records it too
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        binary = cls(**_kw(X.shape[1])).fit(X, y % 2)
    assert math.isinf(binary.privacy_.epsilon)


def test_no_warning_without_noise():
    """epsilon = inf is not private anyway: nothing to warn about the classes."""
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = DPLogisticRegression(**{**_kw(X.shape[1]), "epsilon": math.inf}).fit(X, y)
    assert math.isinf(clf.privacy_.epsilon)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_label_outside_the_declared_classes_is_named(cls):
    X, y = _data()
    with pytest.raises(ValueError, match=r"not in the declared classes.*\[2\]"):
        cls(classes=[0, 1], **_kw(X.shape[1])).fit(X, y)
    labels = np.where(y == 0, "a", np.where(y == 1, "b", "zebra"))
    with pytest.raises(ValueError, match="zebra"):
        cls(classes=["a", "b"], **_kw(X.shape[1])).fit(X, labels)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("classes", [[1], [1, 1], [], ["a"]], ids=repr)
def test_fewer_than_two_declared_classes(cls, classes):
    X, y = _data()
    with pytest.raises(ValueError, match="at least 2 declared classes"):
        cls(classes=classes, **_kw(X.shape[1])).fit(X, np.ones(X.shape[0]))


@pytest.mark.parametrize("classes, match", [([0.0, np.nan], "NaN"), ([0, None], "NaN or None"),
                                            ([[0, 1], [2, 3]], "1-D"), ("ab", "1-D")])
def test_bad_declared_classes(classes, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(classes=classes, **_kw(X.shape[1])).fit(X, y % 2)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_predictions_use_the_declared_labels(cls):
    X, y = _data()
    labels = np.where(y % 2 == 0, "a", "b")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = cls(classes=["b", "a", "a"], **_kw(X.shape[1])).fit(X, labels)
        only_b = cls(classes=["a", "b"], **_kw(X.shape[1])).fit(X, np.full(X.shape[0], "b"))
    np.testing.assert_array_equal(clf.classes_, ["a", "b"])  # sorted, unique
    assert set(clf.predict(X)) <= {"a", "b"}
    assert set(only_b.predict(X)) <= {"a", "b"}
    np.testing.assert_array_equal(only_b.classes_, ["a", "b"])
    if hasattr(clf, "predict_proba"):
        assert clf.predict_proba(X).shape == (X.shape[0], 2)
    assert 0.0 <= clf.score(X, labels) <= 1.0


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_classes_is_a_parameter(cls):
    classes = ["x", "y", "z"]
    est = cls(classes=classes, alpha=0.01)
    assert est.classes is classes  # stored unchanged (scikit-learn's rule)
    assert est.get_params()["classes"] is classes
    assert cls().get_params()["classes"] is None
    copy = clone(est)
    assert copy.get_params()["classes"] == classes and copy.alpha == 0.01
    assert copy.set_params(classes=[0, 1]).classes == [0, 1]
    assert "classes :" in cls.__doc__


def test_cross_validation_with_declared_classes_keeps_the_form():
    """A fold without a class still gives one model per declared class."""
    from sklearn.model_selection import cross_val_score
    X, y = _data(n=90)
    y = y.copy()
    y[y == 2] = 0
    y[:3] = 2  # class 2 only in the first fold
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        scores = cross_val_score(DPLogisticRegression(classes=[0, 1, 2], **_kw(X.shape[1])),
                                 X, y, cv=3)
    assert scores.shape == (3,)
