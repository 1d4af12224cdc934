"""Behaviour kept: a table of fits, every solver and estimator, against their recorded results.

Each fit of :data:`FITS` (fixed data, fixed seed) must give the coefficients, intercept,
iteration count, reported epsilon and public noise figures recorded in
``tests/data/recorded_fits.json``: a refactoring that changes a law, a calibration or a
draw fails here. Recorded on Python 3.11, numpy 2.4; the tolerance (1e-9 relative, 1e-12
absolute) leaves room for the last bits of scipy's special functions across the versions
CI runs, not for another draw or another noise.

Record again only for a change of behaviour that is meant (say so in the commit)::

    python tests/test_recorded_fits.py --record
"""
import json
import math
import pathlib
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from problems import make_sparse_problem  # noqa: E402

from sparsedp import DPLasso, DPLinearSVC, DPLogisticRegression, DPRidge  # noqa: E402
from sparsedp.datafits import Hinge, Logistic, Squared  # noqa: E402
from sparsedp.penalties import L1, L2, ElasticNet  # noqa: E402
from sparsedp.solvers import dp_cd, dp_gcd, dp_scd, dp_sgd, exact  # noqa: E402

RECORD = pathlib.Path(__file__).resolve().parent / "data" / "recorded_fits.json"
RTOL, ATOL = 1e-9, 1e-12
#: the public figures of ``info`` compared, where a fit has them
INFO_KEYS = ("noise_multiplier", "epsilon0", "selection", "selection_scale", "steps", "grid",
             "noise_scale", "noise_sd", "sampling_rate", "lazy")


def _data(logistic, p=30, seed=0):
    X, y = make_sparse_problem(n=80, p=p, density=0.2, seed=seed, logistic=logistic)
    return X, y


def _public(p):
    return np.full(p, 0.25)


def _fits():
    """name -> a function returning a Result or a fitted estimator."""
    Xs, ys = _data(False)
    Xl, yl = _data(True, seed=1)
    M = _public(30)
    common = dict(epsilon=1.0, delta=1e-5, random_state=7)
    return {
        "dp_cd squared L1": lambda: dp_cd(Xs, ys, Squared(), L1(0.02), passes=3, clip=1.0,
                                          smoothness=M, **common),
        "dp_cd logistic L2 outer 2, no averaging": lambda: dp_cd(
            Xl, yl, Logistic(), L2(0.05), passes=4, outer=2, averaging=False, clip=0.5,
            smoothness=M, **common),
        "dp_cd logistic elastic net, private smoothness, intercept": lambda: dp_cd(
            Xl, yl, Logistic(), ElasticNet(0.02, 0.5), passes=2, clip=1.0, smoothness=0.1,
            feature_bounds=3.0, fit_intercept=True, **common),
        "dp_gcd squared L1 gs-r laplace": lambda: dp_gcd(
            Xs, ys, Squared(), L1(0.02), n_iter=5, clip=1.0, smoothness=M,
            selection="laplace", **common),
        "dp_gcd logistic L1 gs-q exponential gaussian": lambda: dp_gcd(
            Xl, yl, Logistic(), L1(0.01), n_iter=6, clip=1.0, smoothness=M, rule="gs-q",
            selection="exponential", gradient_noise="gaussian", **common),
        "dp_gcd logistic L1 gs-s default selection, intercept": lambda: dp_gcd(
            Xl, yl, Logistic(), L1(0.01), n_iter=4, clip=1.0, smoothness=M, rule="gs-s",
            fit_intercept=True, **common),
        "dp_sgd logistic L2 lazy poisson": lambda: dp_sgd(
            Xl, yl, Logistic(), L2(0.01), passes=3, clip=1.0, global_smoothness=0.25,
            batch_size=8, **common),
        "dp_sgd squared L1 eager fixed": lambda: dp_sgd(
            Xs, ys, Squared(), L1(0.01), passes=2, clip=1.0, global_smoothness=2.0, batch_size=10,
            sampling="fixed", **common),
        "dp_scd logistic L2 poisson lazy": lambda: dp_scd(
            Xl, yl, Logistic(), L2(0.05), passes=3, clip=1.0, batch_size=8, lazy=True,
            **common),
        "dp_scd hinge fixed eager noise_alpha": lambda: dp_scd(
            Xl, yl, Hinge(), L2(0.05), passes=2, clip=1.0, batch_size=8, sampling="fixed",
            lazy=False, noise_alpha=True, **common),
        "exact squared L1": lambda: exact(Xs, ys, Squared(), L1(0.02)),
        "DPLasso gcd": lambda: DPLasso(alpha=0.02, epsilon=1.0, smoothness=M, solver="gcd",
                                       random_state=7).fit(Xs, ys),
        "DPLasso cd": lambda: DPLasso(alpha=0.02, epsilon=1.0, smoothness=M, solver="cd",
                                      random_state=7).fit(Xs, ys),
        "DPRidge sgd": lambda: DPRidge(alpha=0.05, epsilon=1.0, smoothness=M, solver="sgd",
                                       random_state=7).fit(Xs, ys),
        "DPLogisticRegression l1": lambda: DPLogisticRegression(
            penalty="l1", alpha=0.01, epsilon=1.0, smoothness=M, classes=[-1, 1],
            random_state=7).fit(Xl, yl),
        "DPLogisticRegression l2 scd": lambda: DPLogisticRegression(
            penalty="l2", alpha=0.05, epsilon=1.0, solver="scd", classes=[-1, 1],
            random_state=7).fit(Xl, yl),
        "DPLinearSVC": lambda: DPLinearSVC(alpha=0.05, epsilon=1.0, smoothness=M,
                                           classes=[-1, 1], random_state=7).fit(Xl, yl),
    }


def _plain(value):
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def summary(fitted):
    """The compared figures of a Result or a fitted estimator, as plain JSON values."""
    if hasattr(fitted, "coef_"):  # an estimator
        coef = np.ravel(fitted.coef_)
        intercept = np.ravel(fitted.intercept_).tolist()
        ledger, info = fitted.privacy_, {}
        n_iter = int(np.max(fitted.n_iter_)) if hasattr(fitted, "n_iter_") else None
        extra = {"solver": fitted.solver_}
    else:
        coef, intercept = fitted.coef, _plain(getattr(fitted, "intercept", None))
        ledger, info, n_iter = fitted.privacy, fitted.info or {}, int(fitted.n_iter)
        extra = {}
    out = {"coef": np.asarray(coef, dtype=float).tolist(), "intercept": intercept,
           "n_iter": n_iter, **extra}
    if ledger is not None:
        eps, method = ledger.get_epsilon(return_method=True)
        out["epsilon"], out["method"] = _plain(float(eps)), method
    for key in INFO_KEYS:
        if key in info and np.ndim(info[key]) == 0:
            out[key] = _plain(info[key])
    return out


def _close(a, b, where):
    if isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), where
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                   rtol=RTOL, atol=ATOL, err_msg=where)
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=RTOL, abs=ATOL), where
    else:
        assert a == b, where


def run(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return summary(_fits()[name]())


@pytest.fixture(scope="module")
def recorded():
    return json.loads(RECORD.read_text())


def test_the_record_covers_the_table(recorded):
    assert sorted(recorded) == sorted(_fits())


@pytest.mark.parametrize("name", sorted(_fits()))
def test_fit_as_recorded(name, recorded):
    got, want = run(name), recorded[name]
    assert sorted(got) == sorted(want), name
    for key in want:
        _close(got[key], want[key], f"{name}: {key}")


if __name__ == "__main__" and "--record" in sys.argv:
    RECORD.parent.mkdir(exist_ok=True)
    table = {name: run(name) for name in sorted(_fits())}
    RECORD.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(table)} fits in {RECORD}")
