"""The public audit API (sparsedp.audit, issue 35): its bounds against independent
computations, its verdicts on mechanisms of known epsilon (honest: consistent; planted
under-noising: violated), its parallel runs, its pairs and canaries, its errors."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from sparsedp.audit import (NeighbouringPair, audit, audit_samples, canary_dataset,
                            epsilon_lower_bound, learn_linear, learn_threshold,
                            one_run_audit, one_run_epsilon, one_run_p_value,
                            worst_case_pairs)
from sparsedp.datafits import Logistic, Squared
from sparsedp.privacy import gdp_epsilon
from sparsedp.solvers import dp_cd, dp_sgd


# ---- the one-run bound (Steinke, Nasr and Jagielski 2023) ---------------------------

def _p_value_by_loops(m, r, v, eps, delta):
    """The same bound, term by term in exact rationals' stead: plain loops over the
    binomial pmf (math.comb), the maximum over i written out."""
    q = math.exp(eps) / (1 + math.exp(eps))
    pmf = [math.comb(r, k) * q ** k * (1 - q) ** (r - k) for k in range(r + 1)]
    tail = sum(pmf[v:])
    worst = max(sum(pmf[v - i:v]) / i for i in range(1, v + 1))
    return min(1.0, tail + 2 * m * delta * worst)


@pytest.mark.parametrize("m, r, v, eps, delta", [
    (100, 40, 30, 0.5, 1e-5), (1000, 200, 140, 1.0, 1e-5), (50, 50, 50, 3.0, 1e-3),
    (1000, 100, 55, 0.1, 0.0), (10, 6, 1, 2.0, 1e-2)])
def test_one_run_p_value_is_the_papers_bound(m, r, v, eps, delta):
    assert math.isclose(one_run_p_value(m, r, v, eps, delta),
                        _p_value_by_loops(m, r, v, eps, delta), rel_tol=1e-9, abs_tol=1e-300)


def test_one_run_epsilon_is_the_largest_rejected():
    """The returned epsilon is rejected (p-value below 0.05), 1e-5 more is not."""
    for m, r, v, delta in ((1000, 200, 150, 1e-5), (1000, 200, 200, 0.0), (500, 100, 70, 1e-6)):
        eps = one_run_epsilon(m, r, v, delta, 0.95)
        assert eps > 0
        assert one_run_p_value(m, r, v, eps, delta) < 0.05
        assert one_run_p_value(m, r, v, eps + 1e-5, delta) >= 0.05
    assert one_run_epsilon(1000, 200, 100, 1e-5) == 0.0  # chance level: nothing


def test_one_run_bound_holds_at_its_confidence_under_randomised_response():
    """eps-randomised response is the worst eps-DP guesser: over 400 simulated runs
    (eps = 1, 100 guesses, seed fixed) the 90% bound exceeds eps in at most 10% of
    runs (binomial: at most 10% + 3 standard errors), and is not vacuous."""
    rng = np.random.default_rng(0)
    eps, r = 1.0, 100
    right = rng.binomial(r, math.exp(eps) / (1 + math.exp(eps)), size=400)
    bounds = np.array([one_run_epsilon(1000, r, int(v), 0.0, 0.9) for v in right])
    assert np.mean(bounds > eps) <= 0.1 + 3 * math.sqrt(0.09 / 400)
    assert np.median(bounds) > 0.3


# ---- audits of mechanisms of known epsilon ------------------------------------------

def test_audit_samples_of_a_gaussian_is_sound_and_tight():
    """N(0, 1) against N(1, 1): exactly 1-GDP; the bound at delta = 1e-3 is below the
    exact epsilon and above 70% of it (200,000 outputs a side, seed fixed); noise
    halved (2-GDP) is reported as a violation of the 1-GDP claim."""
    rng = np.random.default_rng(1)
    claim = gdp_epsilon(1.0, 1e-3)
    r = audit_samples(rng.normal(0, 1, 200_000), rng.normal(1, 1, 200_000), delta=1e-3,
                      epsilon=claim, confidence=0.999)
    assert 0.7 * claim <= r.epsilon_lower_bound <= claim and not r.violated, r
    bad = audit_samples(rng.normal(0, 0.5, 50_000), rng.normal(1, 0.5, 50_000), delta=1e-3,
                        epsilon=claim, confidence=0.999)
    assert bad.violated, bad


def test_joint_events_see_noise_shared_between_coordinates():
    """Two coordinates with one noise value shared: each alone is a Gaussian release
    (mu = 1), but their difference is noiseless and moves by 1 between D and D'.
    Per-coordinate thresholds stay below the 1-GDP claim; the linear learner finds
    the difference and reports the violation."""
    rng = np.random.default_rng(2)
    n = 20_000
    shared, shared2 = rng.normal(size=n), rng.normal(size=n)
    d = np.stack([shared, shared], axis=1)            # D: (0, 0) + (N, N)
    d2 = np.stack([shared2 + 1.0, shared2], axis=1)   # D': (1, 0) + (N, N)
    claim = gdp_epsilon(1.0, 1e-3)
    alone = audit_samples(d, d2, delta=1e-3, epsilon=claim, events=[learn_threshold])
    assert not alone.violated, alone
    joint = audit_samples(d, d2, delta=1e-3, epsilon=claim, events=[learn_linear])
    assert joint.violated and joint.epsilon_lower_bound > 5, joint
    assert "x[0]" in joint.event and "x[1]" in joint.event
    assert audit_samples(d, d2, delta=1e-3, epsilon=claim).violated  # "auto" has both


def _cd_fit(epsilon):
    def fit(data, seed):
        X, y = data
        return dp_cd(X, y, Squared(), epsilon=epsilon, delta=1e-5, passes=1, clip=1.0,
                     smoothness=np.ones(X.shape[1]), order="shuffle", averaging=False,
                     random_state=seed)
    return fit


def test_audit_of_a_fit_on_worst_case_pairs():
    """DP-CD at epsilon = 1 on the worst-case pairs: consistent with its claim; the
    same fit run at epsilon = 30 while claiming 1 (a planted budget bug): violated."""
    pairs = worst_case_pairs("dp_cd", n_samples=16, n_features=4)
    honest = audit(_cd_fit(1.0), pairs, epsilon=1.0, delta=1e-5, n_trials=600, random_state=3)
    assert not honest.violated and len(honest.bounds) == 2, honest
    planted = audit(_cd_fit(30.0), pairs, epsilon=1.0, delta=1e-5, n_trials=600,
                    random_state=3)
    assert planted.violated, planted
    assert "pairs" in str(planted) and "VIOLATED" in str(planted)


def test_audit_runs_in_parallel_with_the_same_outputs():
    """n_jobs=2 (joblib) reproduces n_jobs=1: the same seeds, the same report."""
    pytest.importorskip("joblib")
    pair = worst_case_pairs("dp_cd", n_samples=16, n_features=4)[1]
    one = audit(_cd_fit(5.0), pair, epsilon=5.0, delta=1e-5, n_trials=40, random_state=4)
    two = audit(_cd_fit(5.0), pair, epsilon=5.0, delta=1e-5, n_trials=40, random_state=4,
                n_jobs=2)
    assert (one.epsilon_lower_bound, one.event, one.k1, one.k2) == (
        two.epsilon_lower_bound, two.event, two.k1, two.k2)


def test_seeds_are_independent_seed_sequences():
    seen = []

    def record(data, seed):
        seen.append(seed)
        return np.random.default_rng(seed).normal()
    audit(record, (0, 1), epsilon=1.0, delta=0.0, n_trials=10, random_state=5)
    assert all(isinstance(s, np.random.SeedSequence) for s in seen)
    assert len({tuple(s.spawn_key) for s in seen}) == 20


# ---- the pairs ------------------------------------------------------------------

@pytest.mark.parametrize("solver, loss", [("dp_cd", "squared"), ("gcd", "squared"),
                                          ("dp_sgd", "logistic"), ("scd", "squared")])
def test_worst_case_pairs_differ_in_row_0_only(solver, loss):
    for pair in worst_case_pairs(solver, n_samples=12, n_features=3, loss=loss):
        (X, y), (X2, y2) = pair.d, pair.d_prime
        assert X.shape == X2.shape == (12, 3) and y.shape == y2.shape == (12,)
        diff_rows = np.flatnonzero(np.asarray(abs(X - X2).sum(axis=1)).ravel()
                                   + (y != y2))
        np.testing.assert_array_equal(diff_rows, [0])
        if pair.relation == "add-remove":
            assert X2[0].nnz == 0  # removed: an empty row, n unchanged
        if loss == "logistic":
            assert set(np.unique(y)) <= {-1.0, 1.0}


def test_worst_case_pair_moves_each_release_by_its_sensitivity():
    """Without noise, one DP-CD pass from 0 releases -C_j/n per column on D and
    +C_j/n on D' (row 0's clipped term flips, every other term saturated and equal):
    the coefficients differ by the sensitivity 2 C_j / n times the step."""
    pair = worst_case_pairs("dp_cd", n_samples=16, n_features=4)[1]
    coefs = []
    for X, y in (pair.d, pair.d_prime):
        coefs.append(dp_cd(X, y, Squared(), epsilon=math.inf, delta=1e-5, passes=1, clip=2.0,
                           smoothness=np.ones(4), order="shuffle", averaging=False,
                           random_state=0).coef)
    C_j = 2.0 * math.sqrt(1 / 4)
    np.testing.assert_allclose(coefs[0] - coefs[1], 2 * C_j / 16, rtol=1e-12)


# ---- one-run auditing --------------------------------------------------------------

def test_canary_dataset():
    X = sp.random(5, 3, density=0.5, format="csr", rng=0)
    y = np.arange(5.0)
    inc = np.array([True, False, True])
    Xa, ya = canary_dataset(X, y, inc)
    assert Xa.shape == (8, 6)
    np.testing.assert_array_equal(Xa[:5, :3].toarray(), X.toarray())
    assert Xa[:5, 3:].nnz == 0
    np.testing.assert_array_equal(Xa[5:, 3:].toarray(), np.diag([1.0, 0.0, 1.0]))
    assert Xa[6].nnz == 0  # left out: an empty row, not stored zeros
    Xr, yr = canary_dataset(X, y, inc, loss="logistic", relation="replace-one")
    np.testing.assert_array_equal(Xr[5:, 3:].toarray(), np.diag([1e6, -1e6, 1e6]))
    np.testing.assert_array_equal(yr[5:], 1.0)
    signs = np.array([[1.0, -1.0], [-1.0, -1.0], [1.0, 1.0]])
    Xd, yd = canary_dataset(X, y, inc, relation="replace-one", signs=signs)
    assert Xd.shape == (8, 5)
    np.testing.assert_array_equal(Xd[5:, 3:].toarray(), signs)
    np.testing.assert_array_equal(yd[5:], [1e6, -1e6, 1e6])
    Xe, _ = canary_dataset(X, y, inc, signs=signs)
    np.testing.assert_array_equal(Xe[5:, 3:].toarray(), signs * inc[:, None])


def _sgd_fit(epsilon):
    def fit(data, seed):
        X, y = data
        return dp_sgd(X, y, Logistic(), epsilon=epsilon, delta=1e-5, passes=10, clip=1.0,
                      batch_size=X.shape[0], step_size=1.0, global_smoothness=0.25,
                      random_state=seed)
    return fit


def _cd_fit_logistic(epsilon):
    def fit(data, seed):
        X, y = data
        return dp_cd(X, y, Logistic(), epsilon=epsilon, delta=1e-5, passes=5, clip=1.0,
                     order="shuffle", smoothness=np.full(X.shape[1], 0.25),
                     random_state=seed)
    return fit


def test_one_run_audit_of_dp_cd_with_dense_canaries():
    """DP-CD spends its budget over its coordinates: one-column canaries see a 1/sqrt(p)
    share of it, dense ones their sum.  At epsilon = 30 (claimed honestly) dense
    canaries bound epsilon above 1 while one-column canaries see nothing; claiming 1
    for that fit is a violation; at epsilon = 1 the bound is below the claim."""
    rng = np.random.default_rng(8)
    X = sp.random(300, 30, density=0.1, format="csr", rng=rng)
    y = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    kw = dict(delta=1e-5, n_canaries=400, loss="logistic", relation="replace-one",
              random_state=9)
    dense = one_run_audit(_cd_fit_logistic(30.0), X, y, epsilon=1.0, canaries="dense", **kw)
    assert dense.violated and dense.canaries == "dense", dense
    column = one_run_audit(_cd_fit_logistic(30.0), X, y, epsilon=30.0, **kw)
    assert column.epsilon_lower_bound < 0.5, column
    honest = one_run_audit(_cd_fit_logistic(1.0), X, y, epsilon=1.0, canaries="dense", **kw)
    assert not honest.violated, honest


def test_one_run_audit_of_dp_sgd():
    """One full-batch DP-SGD fit with 500 canaries: at epsilon = 1 the bound is below
    the claim; the same fit without noise claiming 1 (a planted bug): every guess
    right and a bound above 1."""
    rng = np.random.default_rng(6)
    X = sp.random(200, 20, density=0.2, format="csr", rng=rng)
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    honest = one_run_audit(_sgd_fit(1.0), X, y, epsilon=1.0, delta=1e-5, n_canaries=500,
                           loss="logistic", random_state=7)
    assert not honest.violated, honest
    planted = one_run_audit(_sgd_fit(math.inf), X, y, epsilon=1.0, delta=1e-5,
                            n_canaries=500, loss="logistic", random_state=7)
    assert planted.correct == planted.guesses == 100 and planted.violated, planted


# ---- bad input ------------------------------------------------------------------------

def test_bad_input_gets_clear_errors():
    x = np.zeros(10)
    with pytest.raises(ValueError, match="delta"):
        audit_samples(x, x, delta=1.0)
    with pytest.raises(ValueError, match="confidence"):
        audit_samples(x, x, delta=0.0, confidence=1.0)
    with pytest.raises(ValueError, match="NaN or infinite"):
        audit_samples(np.full(10, np.nan), x, delta=0.0)
    with pytest.raises(ValueError, match="different shapes"):
        audit_samples(np.zeros((10, 2)), np.zeros((10, 3)), delta=0.0)
    with pytest.raises(ValueError, match="shape"):
        audit_samples(np.zeros((10, 2, 2)), np.zeros((10, 2, 2)), delta=0.0)
    with pytest.raises(ValueError, match="events"):
        audit_samples(x, x, delta=0.0, events="nope")
    with pytest.raises(TypeError, match="callable"):
        audit(3, (0, 1), epsilon=1.0, delta=0.0)
    with pytest.raises(TypeError, match="NeighbouringPair"):
        audit(lambda d, s: 0.0, [1, 2, 3], epsilon=1.0, delta=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        audit(lambda d, s: 0.0, (0, 1), epsilon=-1.0, delta=0.0)
    with pytest.raises(ValueError, match="different shapes"):
        audit(lambda d, s: np.zeros(np.random.default_rng(s).integers(1, 3)), (0, 1),
              epsilon=1.0, delta=0.0, n_trials=20, random_state=0)
    with pytest.raises(ValueError, match="v <= r <= m"):
        one_run_p_value(10, 5, 6, 1.0, 0.0)
    with pytest.raises(ValueError, match="relation"):
        worst_case_pairs("dp_cd", relation="nope")
    with pytest.raises(ValueError, match="solver"):
        worst_case_pairs("nope")
    with pytest.raises(ValueError, match="canaries"):
        one_run_audit(_sgd_fit(1.0), sp.random(5, 2, format="csr"), np.ones(5), epsilon=1.0,
                      delta=1e-5, n_canaries=10, canaries="nope")
    with pytest.raises(ValueError, match="guesses"):
        one_run_audit(_sgd_fit(1.0), sp.random(5, 2, format="csr"), np.ones(5), epsilon=1.0,
                      delta=1e-5, n_canaries=10, guesses=11)
    assert isinstance(NeighbouringPair(1, 2).relation, str)
    assert epsilon_lower_bound(0, 10, 0, 10, 0.0, 0.01) == -math.inf


def test_a_fits_output_is_its_coefficients_and_intercept():
    """What an audit reads of a run: a Result's coef then intercept, an estimator's
    coef_ then intercept_ (a bug in the intercept must not hide), arrays as they are."""
    from sparsedp import DPLasso
    from sparsedp.audit._audit import output_array
    X = sp.random(40, 3, density=0.5, format="csr", rng=0)
    y = np.arange(40.0) / 40
    res = dp_cd(X, y, Squared(), epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
                smoothness=np.ones(3), fit_intercept=True, random_state=0)
    np.testing.assert_array_equal(output_array(res), np.r_[res.coef, res.intercept])
    est = DPLasso(alpha=0.1, solver="cd", smoothness=np.ones(3), feature_bounds=1.0,
                  clip=1.0, target_bound=1.0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(output_array(est), np.r_[est.coef_, est.intercept_])
    np.testing.assert_array_equal(output_array(est, intercept=False), est.coef_)
    np.testing.assert_array_equal(output_array(2.5), [2.5])
