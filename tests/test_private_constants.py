"""Private by default: the constants an estimator needs, estimated inside its budget.

The mechanisms (:mod:`sparsedp.solvers._scales`, DP-GCD's estimate after
selection) are audited in ``tests/audit/test_audit_private_constants.py``;
here: the law of the released counts, the estimates against the exact values,
and the estimators' path (no leak, the ledger, the epsilon).
"""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from sparsedp import DPLasso, DPLogisticRegression, DPRidge
from sparsedp.datafits import Logistic, Squared
from sparsedp.exceptions import PrivacyLeakWarning
from sparsedp.linear_model import CONSTANTS_SHARE, FEATURE_SHARE
from sparsedp.penalties import L1
from sparsedp.privacy import PrivacyLedger, calibrate_gaussian, gdp_epsilon
from sparsedp.solvers import dp_gcd
from sparsedp.solvers._scales import (N_BINS, bin_centre, bin_upper, clip_to_bounds,
                                      log_bins, noisy_counts, private_row_scales,
                                      row_statistics, smoothness_from_histogram)


def _binary(n, p, density, seed):
    rng = np.random.default_rng(seed)
    return sp.random(n, p, density=density, format="csc", rng=rng, data_rvs=np.ones)


# ---- the log-scale bins ---------------------------------------------------------------

def test_powers_of_two_are_their_bins_upper_edge():
    """Binary and integer data get exact bounds: 2**k is its bin's upper edge, and a
    value just above it falls in the next bin."""
    for k in (-3, 0, 1, 10):
        v = 2.0 ** k
        assert bin_upper(log_bins([v]))[0] == v
        assert log_bins([v * (1 + 1e-12)])[0] == log_bins([v])[0] + 1
    assert log_bins([0.0, -0.0, 2.0 ** -50])[:2].tolist() == [0, 0]
    assert log_bins([1e300])[0] == N_BINS - 1
    v = np.array([0.3, 7.0, 1234.5])  # every value inside its bin, centre within 2**(1/4)
    k = log_bins(v)
    assert np.all((bin_upper(k - 1) < v) & (v <= bin_upper(k)))
    assert np.all(np.abs(np.log2(bin_centre(k) / v)) <= 0.25 + 1e-12)


# ---- the released counts: their law -------------------------------------------------------

def test_noisy_counts_follow_the_gaussian_law():
    """Released counts minus the true counts: a discretised Gaussian of the stated sd
    (Kolmogorov-Smirnov against N(0, sd^2) at the grid's resolution, 20,000 draws,
    seed fixed; and the mean within 4 standard errors)."""
    sd = 3.0
    counts = np.arange(20_000) % 7
    noisy, eta = noisy_counts(counts, sd, np.random.default_rng(5))
    err = noisy - counts
    assert abs(err.mean()) < 4 * sd / math.sqrt(err.size)
    assert abs(err.std() / sd - 1) < 0.03
    assert stats.kstest(err / sd, "norm").pvalue > 1e-3
    assert 0 < eta <= 2.0 ** -40


# ---- the estimates against the exact values -------------------------------------------

def test_row_scales_of_binary_data():
    """Binary rows: the bound is exactly 1 and the mean squared row norm (the rows'
    nonzeros) within the bins' resolution, 2**(1/2), of the exact one."""
    X = _binary(5_000, 200, 0.05, 0)
    ledger = PrivacyLedger(delta=1e-8)
    scales = private_row_scales(X, None, 2.0, np.random.default_rng(1), ledger)
    exact = X.multiply(X).sum() / X.shape[0]
    assert scales.bound == 1.0
    assert abs(math.log2(scales.mean_sq_norm / exact)) <= 0.5
    [m] = ledger.entries
    assert m.kind == "gaussian" and m.noise_multiplier == pytest.approx(2.0)
    assert m.sensitivity == pytest.approx(2.0)  # sqrt(2 k), k = 2 histograms


def test_zeros_alone_are_no_scale(monkeypatch):
    """Found by the audit of DP-SGD's default (docs/audit.rst): on 64 rows the counts of
    the rows' scales can stay below the detection threshold while the zeros' bin (an
    empty row, or noise) passes it.  A scale of 0 is no bound: the global smoothness
    bound beta * 0 made ``DPLogisticRegression(solver="sgd")`` fail ("global_smoothness
    == 0.0").  Bin 0 alone counts as nothing seen: the unit-scale priors, flagged."""
    import sparsedp.solvers._scales as scales_module

    def only_the_zeros(counts, sd, entries, relation, generator, ledger, what):
        noisy = np.zeros(counts.shape)
        noisy[..., 0] = 1e6  # the zeros' bin of every histogram passes, nothing else
        return noisy
    monkeypatch.setattr(scales_module, "_release", only_the_zeros)
    X = _binary(64, 16, 0.2, 3)
    y = np.arange(64.0)
    scales = private_row_scales(X, y, 2.0, np.random.default_rng(0), PrivacyLedger(delta=1e-4))
    assert scales.bound == 1.0 and scales.mean_sq_norm == 16.0  # p B^2
    assert scales.target_rms == 1.0 and scales.target_bound == 1.0
    assert set(scales.undetected) == {"bound on |X_ij|", "row norms", "scale of y"}
    with pytest.warns(UserWarning, match="saw nothing above their noise"):
        est = DPLogisticRegression(solver="sgd", fit_intercept=False, classes=[-1.0, 1.0],
                                   random_state=0).fit(X, np.where(y % 2, 1.0, -1.0))
    assert np.all(np.isfinite(est.coef_)) and est.privacy_.epsilon <= 1.0


def test_target_scale_of_the_squared_loss():
    rng = np.random.default_rng(2)
    X = sp.csc_array(rng.standard_normal((5_000, 3)))
    y = 40.0 * rng.standard_normal(5_000)
    scales = private_row_scales(X, y, 2.0, rng, PrivacyLedger(delta=1e-8))
    assert abs(math.log2(scales.target_rms / np.sqrt(np.mean(y ** 2)))) <= 0.3
    assert scales.target_bound >= np.quantile(np.abs(y), 0.99)


def test_per_feature_smoothness_of_well_scaled_features():
    """Features of very different scales (1e-3 to 1e4): each M_j within 30 % of
    beta mean_i X_ij^2 of the clipped data, the bounds near each feature's top."""
    rng = np.random.default_rng(3)
    scales = np.array([1e-3, 1.0, 30.0, 1e4])
    X = sp.csc_array(rng.uniform(-1, 1, (20_000, 4)) * scales)
    M, bounds = smoothness_from_histogram(X, 2.0, 2.0, rng, PrivacyLedger(delta=1e-8), 1.0)
    Xc = clip_to_bounds(X, bounds)
    exact = 2.0 * np.asarray(Xc.multiply(Xc).mean(axis=0)).ravel()
    np.testing.assert_allclose(M, exact, rtol=0.3)
    assert np.all((bounds >= scales / 2) & (bounds <= scales * 1.42))


def test_clip_to_bounds_clips_each_column_and_copies():
    X = sp.csc_array(np.array([[3.0, -5.0], [-0.5, 1.0]]))
    out = clip_to_bounds(X, [1.0, 2.0])
    np.testing.assert_array_equal(out.toarray(), [[1.0, -2.0], [-0.5, 1.0]])
    assert X.toarray()[0, 0] == 3.0


def test_dp_gcd_estimates_the_selected_coordinates_smoothness():
    """dp_gcd(smoothness=fraction, feature_bounds=B) with fewer iterations than
    coordinates: the selected coordinate's M_j is released after its selection,
    close to the exact one, NaN for the others; one Gaussian per iteration on the
    ledger; the steps gamma / M_j."""
    rng = np.random.default_rng(4)
    n, p = 4_000, 50
    X = _binary(n, p, 0.02, 4).tolil()
    X[:, 0] = (rng.random((n, 1)) < 0.5).astype(float)  # the column that decides
    X = sp.csc_array(X)
    y = np.where(X[:, [0]].toarray().ravel() > 0, 1.0, -1.0)
    res = dp_gcd(X, y, Logistic(), L1(1e-3), epsilon=5.0, delta=1e-6, n_iter=2, clip=10.0,
                 smoothness=0.2, feature_bounds=1.0, random_state=0)
    est = res.info["step_smoothness"]
    chosen = np.unique(res.info["selected"])
    assert 0 in chosen
    exact = 0.25 * np.asarray(X.multiply(X).mean(axis=0)).ravel()
    np.testing.assert_allclose(est[chosen], exact[chosen], rtol=0.1)
    assert np.all(np.isnan(np.delete(est, chosen)))
    entry = [m for m in res.privacy.entries if "each selected coordinate" in m.name]
    assert len(entry) == 1 and entry[0].count == 2 and entry[0].kind == "gaussian"
    assert res.privacy.epsilon <= 5.0


# ---- the estimators: private by default ---------------------------------------------------

PROBLEMS = {
    "lasso": (DPLasso, dict(alpha=1e-2)),
    "ridge": (DPRidge, dict(alpha=1e-2)),
    "logistic-l1": (DPLogisticRegression, dict(penalty="l1", alpha=1e-3, classes=[0, 1])),
    "logistic-l2": (DPLogisticRegression, dict(penalty="l2", alpha=1e-3, classes=[0, 1])),
}


def _data(n=2_000, p=30, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.3, format="csr", rng=rng)
    w = np.zeros(p)
    w[:3] = [3.0, -2.0, 1.0]
    t = X @ w + 0.1 * rng.standard_normal(n)
    return X, t, (t > np.median(t)).astype(int)


@pytest.mark.parametrize("solver", ["cd", "gcd", "sgd"])
@pytest.mark.parametrize("name", list(PROBLEMS))
def test_defaults_are_private(name, solver):
    """Nothing given but epsilon: no PrivacyLeakWarning, a finite epsilon at most the
    request, and the estimates on the ledger as mechanisms."""
    cls, kw = PROBLEMS[name]
    X, t, labels = _data()
    y = labels if cls is DPLogisticRegression else t
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est = cls(**kw, epsilon=1.0, solver=solver, random_state=0).fit(X, y)
    eps = est.privacy_.epsilon
    assert math.isfinite(eps) and eps <= 1.0
    names = [m.name for m in est.privacy_.entries]
    assert any(name.startswith("constants: data scales") for name in names)
    assert not est.privacy_.leaks


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_leak_constants_is_the_only_way_to_leak(name):
    cls, kw = PROBLEMS[name]
    X, t, labels = _data()
    y = labels if cls is DPLogisticRegression else t
    with pytest.warns(PrivacyLeakWarning):
        est = cls(**kw, epsilon=1.0, leak_constants=True, random_state=0).fit(X, y)
    assert est.privacy_.epsilon == math.inf
    assert not any(m.name.startswith("constants") for m in est.privacy_.entries)


def test_the_estimates_share_of_the_budget():
    """DP-CD with per-feature constants: two Gaussian estimates, the per-row scales
    at multiplier ``1 / (sqrt(CONSTANTS_SHARE) mu)`` and the per-feature histograms
    at ``1 / (sqrt(FEATURE_SHARE) mu)``, the fit at ``sqrt(1 - both) mu``: GDP
    composes the whole ledger back to the request."""
    X, t, _ = _data(seed=1)
    delta = 1e-6
    est = DPLasso(alpha=1e-2, epsilon=1.0, delta=delta, solver="cd", random_state=0).fit(X, t)
    mu = 1.0 / calibrate_gaussian(1.0, delta, 1)
    estimates = [m for m in est.privacy_.entries if m.name.startswith("constants")]
    assert len(estimates) == 2
    assert sorted(m.gdp_mu() for m in estimates) == pytest.approx(
        sorted(math.sqrt(s) * mu for s in (CONSTANTS_SHARE, FEATURE_SHARE)), rel=1e-9)
    assert est.privacy_.epsilon == pytest.approx(1.0, abs=2e-3)
    assert est.privacy_.epsilon <= 1.0
    fit_mu = math.sqrt(sum(m.gdp_mu() ** 2 for m in est.privacy_.entries
                           if not m.name.startswith("constants")))
    assert fit_mu == pytest.approx(math.sqrt(1 - CONSTANTS_SHARE - FEATURE_SHARE) * mu,
                                   rel=1e-6)
    assert gdp_epsilon(mu, delta) == pytest.approx(1.0, abs=1e-6)


def test_prediction_clips_as_the_fit_did():
    """DP-CD's per-feature bounds clip X for the fit and for predict alike."""
    X, t, _ = _data(seed=2)
    est = DPLasso(alpha=1e-2, epsilon=1.0, solver="cd", random_state=0).fit(X, t)
    b = est.feature_clip_
    assert b.shape == (X.shape[1],) and np.all(b > 0)
    Xbig = sp.csr_array(X * 1e6)
    expected = clip_to_bounds(sp.csc_array(Xbig), b) @ est.coef_ + est.intercept_
    np.testing.assert_allclose(est.predict(Xbig), expected)


def test_the_private_default_learns():
    """The 2,000 x 30 lasso: the private default beats w = 0 clearly: the median
    relative error of seeds 0-9 is below half of w = 0's.  A single fit misses that
    about one time in 20 (5 of seeds 20-119 reach w = 0's error: the private
    constants' noise at epsilon = 1 on 2,000 rows), so the median of 10 misses it
    with probability about 6e-5."""
    X, t, _ = _data(seed=3)
    Xc = sp.csc_array(X)
    from sparsedp.solvers import exact
    pen = L1(1e-2)
    f_star = exact(Xc, t, Squared(), pen).diagnostics.objective
    zero = (Squared().value(np.zeros(X.shape[0]), t) - f_star) / f_star
    errors = []
    for seed in range(10):
        est = DPLasso(alpha=1e-2, epsilon=1.0, fit_intercept=False, random_state=seed).fit(X, t)
        Xm = clip_to_bounds(Xc, est.feature_clip_) if est.feature_clip_ is not None else Xc
        F = Squared().value(Xm @ est.coef_, t) + pen.value(est.coef_)
        errors.append((F - f_star) / f_star)
    assert np.median(errors) < zero / 2, errors


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_leak_constants_must_be_a_bool(value):
    X, t, _ = _data()
    with pytest.raises((TypeError, ValueError), match="leak_constants"):
        DPLasso(alpha=1e-2, leak_constants=value).fit(X, t)


def test_row_statistics_of_a_csc_matrix_without_its_csr_copy():
    """The rows' largest |X_ij| and squared norms read from the CSC arrays directly are
    those of the CSR copy, bit for bit (each row's entries in column order in both;
    values of many magnitudes, empty rows, and the CSR input itself)."""
    rng = np.random.default_rng(8)
    X = sp.random(300, 2000, density=0.01, format="csc", rng=rng,
                  data_rvs=lambda k: rng.standard_normal(k) * 10.0 ** rng.integers(-8, 8, k))
    keep = np.ones(300)
    keep[::7] = 0.0  # empty rows
    X = sp.csc_array(sp.diags(keep) @ X)
    X.eliminate_zeros()
    X.sort_indices()
    y = rng.standard_normal(300)
    Xr = X.tocsr()
    rows = np.repeat(np.arange(300), np.diff(Xr.indptr))
    row_max = np.zeros(300)
    np.maximum.at(row_max, rows, np.abs(Xr.data))
    sq_norm = np.bincount(rows, weights=Xr.data ** 2, minlength=300)
    assert np.any(np.diff(Xr.indptr) == 0)  # empty rows
    for A in (X, Xr):
        got = row_statistics(A, y)
        np.testing.assert_array_equal(got[0], row_max)
        np.testing.assert_array_equal(got[1], sq_norm)
        np.testing.assert_array_equal(got[2], np.abs(y))
    assert len(row_statistics(X, norms=False)) == 1
