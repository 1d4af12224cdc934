"""The audit's own machinery: Clopper-Pearson bounds, the epsilon bound, the
learners on synthetic mechanisms, and the transparency of the noise-table cache."""
import math

import numpy as np
import pytest
from scipy.stats import binom

from _audit import (audit, cp_lower, cp_upper, eps_lower_bound, learn_bits,
                    learn_threshold, learn_values)
import _mechanisms as mech

pytestmark = pytest.mark.audit


def test_clopper_pearson_against_binomial_tails():
    """The one-sided bounds are the exact binomial tail inversions."""
    alpha = 1e-3
    for k, n in ((0, 100), (3, 100), (50, 100), (100, 100), (7, 10_000)):
        lo, hi = float(cp_lower(k, n, alpha)), float(cp_upper(k, n, alpha))
        if k > 0:  # P(X >= k | p = lo) = alpha
            assert math.isclose(binom.sf(k - 1, n, lo), alpha, rel_tol=1e-6)
        else:
            assert lo == 0.0
        if k < n:  # P(X <= k | p = hi) = alpha
            assert math.isclose(binom.cdf(k, n, hi), alpha, rel_tol=1e-6)
        else:
            assert hi == 1.0
    # zero successes in n: the familiar -log(alpha) / n
    assert math.isclose(float(cp_upper(0, 10_000, alpha)), -math.log(alpha) / 10_000,
                        rel_tol=1e-3)


def test_eps_lower_bound():
    assert float(eps_lower_bound(5000, 10_000, 5000, 10_000, 0.0)) < 0
    big = float(eps_lower_bound(9000, 10_000, 10, 10_000, 0.0))
    assert 5.0 < big < math.log(0.9 / 0.001)
    assert float(eps_lower_bound(5, 10_000, 0, 10_000, 1e-2)) == -math.inf


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_threshold_audit_of_laplace_is_tight_and_sound(eps):
    """Laplace mechanism, shift = sensitivity: 0.8 eps <= eps_lb <= eps
    (100,000 draws per dataset, seeded)."""
    rng = np.random.default_rng(17)
    d = rng.laplace(0.0, 1.0 / eps, 100_000)
    d2 = 1.0 + rng.laplace(0.0, 1.0 / eps, 100_000)
    r = audit(d, d2, learn_threshold, 0.0)
    assert 0.8 * eps <= r.epsilon_lower_bound <= eps, r


def test_threshold_audit_detects_halved_noise():
    rng = np.random.default_rng(18)
    d = rng.laplace(0.0, 0.5, 20_000)
    d2 = 1.0 + rng.laplace(0.0, 0.5, 20_000)
    assert audit(d, d2, learn_threshold, 0.0).epsilon_lower_bound > 1.0


def test_value_audit_of_randomised_response():
    """Randomised response at eps = 1 (P = e / (1 + e)): 0.8 <= eps_lb <= 1."""
    rng = np.random.default_rng(19)
    p = math.e / (1 + math.e)
    d = (rng.random(200_000) < p).astype(np.int64)
    d2 = (rng.random(200_000) >= p).astype(np.int64)
    r = audit(d, d2, learn_values, 0.0)
    assert 0.8 <= r.epsilon_lower_bound <= 1.0, r


def test_bit_attack_on_synthetic_raw_noise():
    """Mironov's setting: x + N in floating point with x, x' differing in their
    low-order bits; the grid release of the same values is not attacked."""
    rng = np.random.default_rng(20)
    a, a2 = -0.49, 0.91
    raw = a + 2.0 * rng.standard_normal(20_000)
    raw2 = a2 + 2.0 * rng.standard_normal(20_000)
    r = audit(raw, raw2, learn_bits, 1e-3)
    assert r.epsilon_lower_bound > 3.0, r
    g = 2.8 / 1024  # a grid: the sensitivity over 1024 (dyadic in the grid's units)
    k = np.rint(1024 * rng.standard_normal(20_000) * 2.0 / 2.8)
    k2 = np.rint(1024 * rng.standard_normal(20_000) * 2.0 / 2.8)
    grid = g * (np.rint(a / g) + k)
    grid2 = g * (np.rint(a2 / g) + k2)
    # the grid release is a Gaussian mechanism of multiplier ~1.43: eps(1e-3) ~ 2
    assert audit(grid, grid2, learn_bits, 1e-3).epsilon_lower_bound < 2.0


def test_noise_table_cache_is_transparent():
    """The audit hands the solvers memoised IntegerNoise tables: same fits bit for bit."""
    X, y, _, M, clip = mech.dp_cd_datasets(64, 128)
    Xg, yg, _, Mg, clipg = mech.dp_gcd_datasets(16, 64, monotone=True)
    Xs, _ = mech.smoothness_datasets()

    def fits():
        from sparsedp.datafits import Squared
        from sparsedp.solvers import dp_cd, dp_gcd
        from sparsedp.solvers._smoothness import private_smoothness
        a = dp_cd(X, y, Squared(), epsilon=5.0, delta=1e-3, passes=1, clip=clip,
                  smoothness=M, order="shuffle", averaging=False, random_state=3).coef
        b = dp_gcd(Xg, yg, Squared(), epsilon=12.5, delta=0.5, n_iter=20, clip=clipg,
                   smoothness=Mg, selection="exponential", random_state=4).info["released"]
        c = private_smoothness(Xs, Squared(), 1.0, np.array([mech.SM_BOUND]),
                               np.random.default_rng(5))[0]
        return np.concatenate([a, b, c])

    plain = fits()
    with mech.cached_noise_tables():
        first = fits()
        again = fits()  # from the cache
    np.testing.assert_array_equal(plain.view(np.int64), first.view(np.int64))
    np.testing.assert_array_equal(plain.view(np.int64), again.view(np.int64))


@pytest.mark.parametrize("bug", ["noise_halved", "no_clipping", "sensitivity_halved",
                                 "monotone_selection", "raw_float_noise"])
def test_injected_bug_changes_the_fit_not_its_claims_and_is_undone(bug):
    """Inside ``faults.injected(bug)`` the audited fits change (DP-CD's coefficients
    unless the bug is a selection's; DP-GCD's releases or selections) while what
    they claim -- the ledger's epsilon, the multiplier, the noise scales -- stays
    that of the real mechanism; on exit the fits are the real ones again, bit for bit."""
    from faults import injected
    from sparsedp.datafits import Squared
    from sparsedp.solvers import dp_cd, dp_gcd
    X, y, _, M, clip = mech.dp_cd_datasets(64, 128)
    Xg, yg, _, Mg, clipg = mech.dp_gcd_datasets(16, 64, monotone=False)

    def fits():
        a = dp_cd(X, y, Squared(), epsilon=5.0, delta=1e-3, passes=1, clip=clip,
                  smoothness=M, order="shuffle", averaging=False, random_state=3)
        b = dp_gcd(Xg, yg, Squared(), epsilon=12.5, delta=0.5, n_iter=20, clip=clipg,
                   smoothness=Mg, selection="laplace", step_size=mech.GCD_STEP,
                   random_state=4)
        return a, b

    def outputs(a, b):
        return np.concatenate([a.coef, b.info["released"], b.info["selected"]])

    def claims(a, b):
        return (a.privacy.epsilon, b.privacy.epsilon, a.info["noise_multiplier"],
                b.info["selection_scale"], *a.info["noise_scales"], *b.info["noise_scales"])

    real = fits()
    with injected(bug):
        broken = fits()
    again = fits()
    assert claims(*broken) == claims(*real)
    changed = outputs(*broken) != outputs(*real)
    assert changed.any()
    if bug != "monotone_selection":
        assert (broken[0].coef != real[0].coef).any()  # DP-CD's releases too
    np.testing.assert_array_equal(outputs(*again), outputs(*real))
