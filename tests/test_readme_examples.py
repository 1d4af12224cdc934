"""What a new user runs first: the README's examples, private by default and better than
w = 0 on what they print; and each privacy warning's advice, followed literally, gives a
private fit.  (``docs/getting_started.rst``'s example: ``test_linear_model.py::
test_getting_started_example_runs_and_learns``.)"""
import contextlib
import io
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sparsedp import DPLasso, DPLogisticRegression
from sparsedp.datafits import Logistic, Squared
from sparsedp.exceptions import PrivacyLeakWarning
from sparsedp.penalties import L1, L2
from sparsedp.solvers import dp_cd, dp_gcd, dp_sgd

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture(scope="module")
def readme_run():
    """Every ``python`` block of the README, in order, in one namespace (as a reader
    pasting them would): the namespace after each block, and what it printed."""
    if not README.exists():
        pytest.skip("README.md not beside the tests")
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    ns, out = {}, []
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # private by default: no leak
        for code in blocks:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                exec(compile(code, str(README), "exec"), ns)
            out.append((dict(ns), buf.getvalue()))
    return out


def test_readme_estimator_is_private_and_learns(readme_run):
    ns, printed = readme_run[0]
    clf, X, y = ns["clf"], ns["X"], ns["y"]
    assert math.isfinite(clf.privacy_.epsilon) and clf.privacy_.epsilon <= 1.0
    assert not clf.privacy_.leaks
    assert set(range(10)) <= set(np.flatnonzero(clf.coef_[0]))   # "features 0-9 found"
    majority = max(np.mean(y), 1 - np.mean(y))                    # w = 0's accuracy
    assert clf.score(X, y) > majority + 0.3
    assert "gcd [0 1 2 3 4 5 6 7 8 9]" in printed


def test_readme_functional_examples_are_private_and_beat_w0(readme_run):
    ns, _ = readme_run[1]
    F0 = Squared().value(np.zeros(ns["X"].shape[0]), ns["y"])
    ns, printed = readme_run[2]   # dp_cd
    res = ns["res"]
    assert res.privacy.epsilon <= 1.0 and not res.privacy.leaks
    assert res.diagnostics.objective < F0 / 3
    assert res.info["feature_clip"] is not None   # the private default clipped X
    ns, _ = readme_run[3]   # dp_gcd
    res = ns["res"]
    assert res.privacy.epsilon <= 1.0 and not res.privacy.leaks
    chosen = res.info["selected"]
    assert np.mean(np.isin(chosen, [0, 1, 2])) >= 0.7   # "mostly 0, 1 and 2"
    ns, _ = readme_run[4]   # dp_sgd, dp_scd
    assert ns["res"].privacy.epsilon <= 1.0


def test_readme_audit_is_consistent_with_the_claim(readme_run):
    ns, printed = readme_run[5]
    report = ns["report"]
    assert not report.violated and report.claimed_epsilon == 1.0
    assert report.n_trials == 500 and len(report.bounds) == 2
    assert "claimed 1: consistent" in printed


# ---- each warning's advice, followed literally --------------------------------------

def _data(n=3_000, p=20, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.3, format="csc", rng=rng)
    t = X @ np.r_[[2.0, -1.0], np.zeros(p - 2)] + 0.1 * rng.standard_normal(n)
    return X, t


def _private(fit):
    """``fit()`` with PrivacyLeakWarning an error; its ledger private within 1."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        out = fit()
    ledger = getattr(out, "privacy_", None) or out.privacy
    assert ledger.private and ledger.epsilon <= 1.0
    return out


def test_the_smoothness_leak_advice():
    """'leave smoothness None for a private estimate, or pass public constants'."""
    X, t = _data()
    kw = dict(epsilon=1.0, delta=1e-6, clip=1.0, random_state=0)
    for fn, extra in ((dp_cd, dict(passes=2)), (dp_gcd, dict(n_iter=5))):
        with pytest.warns(PrivacyLeakWarning, match="leave smoothness None") as rec:
            fn(X, t, Squared(), L1(1e-3), smoothness="leak", **kw, **extra)
        assert "pass public constants" in str(rec[0].message)
        _private(lambda: fn(X, t, Squared(), L1(1e-3), smoothness=None, **kw, **extra))
        _private(lambda: fn(X, t, Squared(), L1(1e-3), smoothness=np.full(20, 0.3), **kw,
                            **extra))
    with pytest.warns(PrivacyLeakWarning, match="leave smoothness None for a private estimate, "
                                                "or pass global_smoothness"):
        dp_sgd(X, t, Squared(), L2(1e-3), passes=1, smoothness="leak", **kw)
    _private(lambda: dp_sgd(X, t, Squared(), L2(1e-3), passes=1, **kw))
    _private(lambda: dp_sgd(X, t, Squared(), L2(1e-3), passes=1, global_smoothness=0.6, **kw))


def test_the_estimators_leak_advice():
    """leak_constants=True: 'leave leak_constants False for a private estimate'."""
    X, t = _data()
    with pytest.warns(PrivacyLeakWarning, match="leave leak_constants False"):
        DPLasso(alpha=1e-3, leak_constants=True, random_state=0).fit(X, t)
    _private(lambda: DPLasso(alpha=1e-3, leak_constants=False, random_state=0).fit(X, t))


def test_the_classes_advice():
    """'pass classes= to declare them'."""
    X, t = _data()
    y = t > np.median(t)
    with pytest.warns(PrivacyLeakWarning, match="classes="):
        DPLogisticRegression(random_state=0).fit(X, y)
    _private(lambda: DPLogisticRegression(classes=[False, True], random_state=0).fit(X, y))


def test_the_small_data_advice():
    """Too few rows to see a scale: 'Give public constants (feature_bounds, smoothness,
    clip, target_bound)' -- given, no warning and a private fit."""
    X, t = _data(n=200, p=10)
    with pytest.warns(UserWarning, match="Give public constants"):
        DPLasso(alpha=1e-3, solver="cd", random_state=0).fit(X, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = _private(lambda: DPLasso(alpha=1e-3, solver="cd", feature_bounds=1.0,
                                       smoothness=np.full(10, 0.2), clip=1.0, target_bound=3.0,
                                       random_state=0).fit(X, t))
    assert not any(m.name.startswith("constants") for m in est.privacy_.entries)
