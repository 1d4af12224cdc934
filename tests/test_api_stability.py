"""The public contract (docs/stability.rst): names, keywords, deprecation path."""
import inspect

import numpy as np
import pytest

import sparsedp
from sparsedp.solvers import dp_cd, dp_gcd, dp_scd, dp_sgd, exact

# The keywords of the API contract (../shared/API.md), per function.
CONTRACT = {
    exact: "X y datafit penalty tol max_epochs",
    dp_cd: "X y datafit penalty epsilon delta passes clip step_size outer smoothness "
           "random_state trace fit_intercept intercept_scaling intercept_init",
    dp_gcd: "X y datafit penalty epsilon delta n_iter clip step_size rule selection "
            "smoothness random_state trace fit_intercept intercept_scaling intercept_init",
    dp_sgd: "X y datafit penalty epsilon delta passes clip step_size batch_size sampling "
            "random_state trace",
    dp_scd: "X y datafit penalty epsilon delta passes clip batch_size random_state trace",
}


@pytest.mark.parametrize("function", list(CONTRACT), ids=lambda f: f.__name__)
def test_contract_keywords_exist(function):
    params = inspect.signature(function).parameters
    missing = [k for k in CONTRACT[function].split() if k not in params]
    assert not missing, f"{function.__name__} lost {missing}"
    assert function.__doc__ and "Returns" in function.__doc__


def test_estimators_and_attributes_are_public():
    for name in ("DPLasso", "DPElasticNet", "DPRidge", "DPLogisticRegression", "DPLinearSVC"):
        cls = getattr(sparsedp, name)
        assert cls is getattr(sparsedp.linear_model, name)
        for attr in ("coef_", "intercept_", "n_iter_", "privacy_"):
            assert attr in cls.__doc__, (name, attr)


def test_removed_history_is_gone():
    """Nothing is released yet: the former spellings are removed, not carried."""
    assert "selection" not in inspect.signature(dp_cd).parameters  # now order=
    from sparsedp.solvers import Result
    assert not hasattr(Result, "objective") and not hasattr(Result, "trace")
    import importlib.util
    assert importlib.util.find_spec("sparsedp.demo") is None  # sparsedp compare
    for name in ("DPLasso", "DPElasticNet", "DPRidge", "DPLogisticRegression", "DPLinearSVC"):
        params = inspect.signature(getattr(sparsedp, name)).parameters
        assert "max_passes" not in params and params["passes"].default is None  # passes=
    from sparsedp.experiments import Problem
    assert "sgd_smoothness" not in inspect.signature(Problem).parameters  # global_smoothness=


def test_shared_keywords_have_one_default():
    """A keyword two private solvers share has the same default in both (docs/stability.rst,
    "One meaning per name"); the budget and the clip have none."""
    defaults = {}
    for spec in sparsedp.solvers.REGISTRY.values():
        for name, p in inspect.signature(spec.function).parameters.items():
            defaults.setdefault(name, {})[spec.name] = p.default
    del defaults["penalty"]  # DP-SCD's is required: it must be L2(alpha > 0) (API contract)
    for name, per_solver in defaults.items():
        assert len(set(map(repr, per_solver.values()))) == 1, (name, per_solver)
    assert all(d is inspect.Parameter.empty for d in defaults["clip"].values())


def test_accounting_is_an_alias_of_privacy():
    """``sparsedp.accounting`` (API contract) gives the public names of ``sparsedp.privacy``."""
    import sparsedp.accounting
    import sparsedp.privacy
    assert sparsedp.accounting.__all__ == sparsedp.privacy.__all__
    for name in sparsedp.privacy.__all__:
        assert getattr(sparsedp.accounting, name) is getattr(sparsedp.privacy, name), name


def test_version_is_semantic():
    parts = sparsedp.__version__.split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts)


@pytest.mark.parametrize("function", [dp_cd, dp_gcd], ids=lambda f: f.__name__)
def test_intercept_keywords_default_to_no_intercept(function):
    params = inspect.signature(function).parameters
    assert params["fit_intercept"].default is False
    assert params["intercept_scaling"].default == 1.0
    assert params["intercept_init"].default is None
    for name in ("fit_intercept", "intercept_scaling", "intercept_init"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert name in function.__doc__


def test_result_has_an_intercept():
    from sparsedp.solvers import Result
    assert Result(coef=np.zeros(2), n_iter=0).intercept == 0.0
    assert "intercept" in Result.__doc__
