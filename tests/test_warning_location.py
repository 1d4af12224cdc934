"""Warnings name the user's line (issue 34): every warning sparsedp raises, from the
estimators, the functional API, the private search and the experiments runner,
points at the line of this file that made the call, whatever the call depth inside
the package (:func:`sparsedp._warnings.find_stack_level`)."""
import numpy as np
import pytest
import scipy.sparse as sp

from sparsedp import DPLasso, DPLogisticRegression, DPRidge, PrivacyLeakWarning
from sparsedp._warnings import find_stack_level
from sparsedp.datafits import Squared
from sparsedp.penalties import L1, L2
from sparsedp.solvers import dp_cd, dp_gcd, dp_sgd


def data(n=40, p=5):
    rng = np.random.default_rng(0)
    X = sp.random(n, p, density=0.5, format="csc", rng=0)
    y = rng.standard_normal(n)
    labels = np.where(rng.standard_normal(n) > 0, 1, -1)
    return X, y, labels


def assert_here(record):
    """Every warning recorded names this file (not sparsedp's, not ``sys``)."""
    assert len(record) > 0
    assert [w.filename for w in record] == [__file__] * len(record), \
        [(w.filename, w.lineno, str(w.message)[:60]) for w in record]


def test_find_stack_level_outside_the_package_is_one():
    """Called from user code, the caller is the first frame outside sparsedp."""
    assert find_stack_level() == 1


# ---- the estimators -----------------------------------------------------------------

def test_estimator_leak_constants_names_the_fit_line():
    X, y, _ = data()
    est = DPLasso(alpha=0.01, solver="cd", passes=1, leak_constants=True, random_state=0)
    with pytest.warns(PrivacyLeakWarning) as record:
        line = _line() + 1
        est.fit(X, y)
    assert_here(record)
    assert {w.lineno for w in record} == {line}
    messages = " ".join(str(w.message) for w in record)
    assert "leak_constants=True" in messages and "smoothness constants" in messages


def test_classes_leak_names_the_fit_line():
    X, _, labels = data()
    clf = DPLogisticRegression(solver="cd", passes=1, smoothness=np.full(X.shape[1], 0.25),
                               clip=1.0, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="classes") as record:
        line = _line() + 1
        clf.fit(X, labels)
    assert_here(record)
    assert record[0].lineno == line


def test_undetected_scales_warning_names_the_fit_line():
    """_constants.py: too few rows for the budget, the private scales take unit priors."""
    X, y, _ = data(n=5)
    with pytest.warns(UserWarning, match="saw nothing above their noise") as record:
        DPRidge(solver="cd", passes=1, epsilon=0.1, random_state=0).fit(X, y)
    assert_here(record)


def test_ignored_warm_start_names_the_fit_line():
    """_base.py: a solver without a starting point ignores warm_start."""
    X, y, _ = data()
    est = DPRidge(alpha=0.1, solver="scd", passes=1, warm_start=True, epsilon=1.0,
                  random_state=0)
    est.fit(X, y)
    with pytest.warns(UserWarning, match="warm_start is ignored") as record:
        est.fit(X, y)
    assert_here(record)


# ---- the functional API -------------------------------------------------------------

@pytest.mark.parametrize("solve, penalty, budget, match", [
    (dp_cd, L1(0.01), {"passes": 1}, "smoothness constants"),
    (dp_gcd, L1(0.01), {"n_iter": 3}, "smoothness constants"),
    (dp_sgd, L2(0.01), {"passes": 1}, "global smoothness"),
], ids=["dp_cd", "dp_gcd", "dp_sgd"])
def test_functional_leak_names_the_call(solve, penalty, budget, match):
    X, y, _ = data()
    with pytest.warns(PrivacyLeakWarning, match=match) as record:
        solve(X, y, Squared(), penalty, epsilon=1.0, delta=1e-5, clip=1.0, smoothness="leak",
              random_state=0, **budget)
    assert_here(record)


# ---- the private search and the experiments runner ----------------------------------

def test_private_search_trial_warning_names_the_fit_line():
    """A trial's warning (tiny data: the private scales see nothing) names search.fit."""
    from sparsedp.model_selection import PrivateSearch
    X, y, _ = data(n=60)
    search = PrivateSearch(DPRidge(solver="cd", passes=1), {"step_size": [0.5, 1.0]},
                           epsilon=1.0, delta=1e-5, random_state=0)
    with pytest.warns(UserWarning, match="saw nothing above their noise") as record:
        search.fit(X.tocsr(), y)
    assert_here(record)


def test_run_grid_warnings_name_the_call():
    from sparsedp.experiments import Problem, run_grid
    X, y, _ = data()
    problem = Problem("leaky", X, y, Squared(), L1(0.02), smoothness="leak")
    grid = {"dp_cd": {"passes": [1], "clip": [1.0]}, "dp_scd": {"passes": [1], "clip": [1.0]}}
    with pytest.warns(UserWarning) as record:
        run_grid(problem, grid, epsilon=1.0, delta=1e-5, n_runs=1, progress=False)
    assert_here(record)
    messages = [str(w.message) for w in record]
    assert any(m.startswith("not run: dp_scd") for m in messages)
    assert any("not private" in m for m in messages)


def _line():
    """The line number of the caller's call."""
    import sys
    return sys._getframe(1).f_lineno


def test_a_warning_at_import_names_the_import_line(tmp_path, monkeypatch):
    """A module of the package that warns while it is imported (as _random.pyx does when
    numpy's normal stream is not the expected one): the warning names the user's import
    line, past the package's frames and the import machinery's."""
    import sys
    import sparsedp._warnings as w
    package = tmp_path / "fakepkg"
    package.mkdir()
    (package / "__init__.py").write_text("from . import inner\n")
    (package / "inner.py").write_text(
        "import warnings\nfrom sparsedp._warnings import find_stack_level\n"
        "warnings.warn('at import', RuntimeWarning, stacklevel=find_stack_level())\n")
    monkeypatch.setattr(w, "PACKAGE_DIR", str(package) + "/")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fakepkg", raising=False)
    monkeypatch.delitem(sys.modules, "fakepkg.inner", raising=False)
    with pytest.warns(RuntimeWarning, match="at import") as record:
        __import__("fakepkg")  # an import statement's call
    assert_here(record)
