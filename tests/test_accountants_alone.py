"""Each accountant alone against an independent computation (closed forms in 40-digit
mpmath), not only through the ledger's minimum: a bug in an accountant that another
accountant hides in the minimum (issue 35: advanced composition without its linear
term) fails here."""
import math

import mpmath
import pytest

from oracles import dp_accounting_pld_epsilon, gdp_delta, kov_delta
from sparsedp.privacy.accountants import ACCOUNTANTS, candidate
from sparsedp.privacy.mechanisms import BoundedRange, Gaussian, PureDP

mpmath.mp.dps = 40

#: heterogeneous pure mechanisms: (epsilon0, count)
PURE = [(0.5, 40), (0.05, 300), (1.3, 2)]
DELTAS = [1e-3, 1e-6, 1e-10]


def pure_mechanisms():
    return [PureDP(eps0, count=count, name=f"pure {eps0}") for eps0, count in PURE]


def test_every_accountant_is_checked_here():
    """A new accountant needs its own independent check (update this module)."""
    assert set(ACCOUNTANTS) == {"gdp", "basic", "advanced", "zcdp", "rdp", "optimal", "pld"}


def test_basic_is_the_sum_of_the_epsilons():
    exact = mpmath.fsum(mpmath.mpf(e) * c for e, c in PURE)
    profile = candidate(pure_mechanisms(), "basic")
    for delta in DELTAS:
        eps = profile.epsilon(delta)
        assert exact <= eps <= exact * (1 + 1e-14)


@pytest.mark.parametrize("delta", DELTAS)
def test_advanced_is_dwork_roth_theorem_3_20(delta):
    """Heterogeneous advanced composition (Dwork and Roth 2014, Thm. 3.20):
    sqrt(2 log(1/delta) sum c_i eps_i^2) + sum c_i eps_i (e^eps_i - 1), rounded up."""
    sq = mpmath.fsum(c * mpmath.mpf(e) ** 2 for e, c in PURE)
    lin = mpmath.fsum(c * mpmath.mpf(e) * mpmath.expm1(e) for e, c in PURE)
    exact = mpmath.sqrt(2 * mpmath.log(1 / mpmath.mpf(delta)) * sq) + lin
    profile = candidate(pure_mechanisms(), "advanced")
    eps = profile.epsilon(delta)
    assert exact <= eps <= exact * (1 + 1e-13)
    # its log delta at that epsilon is the same curve, read the other way
    assert profile.log_delta(float(exact) * (1 + 1e-9)) == pytest.approx(
        math.log(delta), rel=1e-6)


def test_advanced_of_40_uses_at_one_half():
    """The issue's case: 40 uses of a 0.5-DP mechanism at delta 1e-6; without the linear
    term it would say 16.62."""
    eps = candidate([PureDP(0.5, count=40)], "advanced").epsilon(1e-6)
    assert eps == pytest.approx(math.sqrt(2 * math.log(1e6) * 10) + 20 * math.expm1(0.5),
                                rel=1e-12)
    assert eps > 29.5


@pytest.mark.parametrize("eps0, k", [(0.5, 40), (0.1, 500), (1.0, 7)])
@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.6])
def test_optimal_is_kairouz_oh_viswanath(eps0, k, fraction):
    profile = candidate([PureDP(eps0, count=k)], "optimal")
    epsilon = fraction * k * eps0
    exact = kov_delta(epsilon, eps0, k)
    assert exact > 0
    assert profile.log_delta(epsilon) == pytest.approx(float(mpmath.log(exact)), rel=1e-9,
                                                       abs=1e-9)


GAUSSIANS = [(30.0, 100), (5.0, 3), (80.0, 2000)]  # (noise multiplier, count)


def gaussian_mechanisms():
    return [Gaussian(z, count=c, name=f"gaussian {z}") for z, c in GAUSSIANS]


def test_gdp_composes_exactly():
    """Gaussians compose into mu-GDP with mu^2 = sum count / z^2; the profile is that
    curve exactly."""
    mu = mpmath.sqrt(mpmath.fsum(mpmath.mpf(c) / mpmath.mpf(z) ** 2 for z, c in GAUSSIANS))
    profile = candidate(gaussian_mechanisms(), "gdp")
    for epsilon in (0.3, 1.0, 2.5):
        assert profile.log_delta(epsilon) == pytest.approx(
            float(mpmath.log(gdp_delta(epsilon, mu))), rel=1e-9)
    for delta in DELTAS:
        eps = profile.epsilon(delta)
        assert float(gdp_delta(eps, mu)) <= delta * (1 + 1e-9)
        assert float(gdp_delta(eps * (1 - 1e-6), mu)) > delta


@pytest.mark.parametrize("delta", DELTAS)
def test_zcdp_is_between_the_exact_curve_and_the_simple_conversion(delta):
    """For Gaussians rho = sum count / (2 z^2) = mu^2 / 2: the zCDP conversion can be no
    better than the exact GDP epsilon, and no worse than rho + 2 sqrt(rho log(1/delta))
    (Bun and Steinke 2016, Prop. 1.3)."""
    mu2 = mpmath.fsum(mpmath.mpf(c) / mpmath.mpf(z) ** 2 for z, c in GAUSSIANS)
    rho = mu2 / 2
    simple = rho + 2 * mpmath.sqrt(rho * mpmath.log(1 / mpmath.mpf(delta)))
    exact = candidate(gaussian_mechanisms(), "gdp").epsilon(delta)
    eps = candidate(gaussian_mechanisms(), "zcdp").epsilon(delta)
    assert exact * (1 - 1e-9) <= eps <= float(simple) * (1 + 1e-12)
    # pure mechanisms: eps0^2 / 2 per use (1/8 for bounded range), the same sandwich
    mechs = [PureDP(0.05, count=300), BoundedRange(0.1, count=50)]
    rho = mpmath.mpf(300) * mpmath.mpf(0.05) ** 2 / 2 + 50 * mpmath.mpf(0.1) ** 2 / 8
    simple = rho + 2 * mpmath.sqrt(rho * mpmath.log(1 / mpmath.mpf(delta)))
    eps = candidate(mechs, "zcdp").epsilon(delta)
    assert float(simple) * 0.5 <= eps <= float(simple) * (1 + 1e-12)


@pytest.mark.parametrize("delta", DELTAS)
def test_rdp_of_gaussians_is_above_the_exact_curve_and_near_it(delta):
    """RDP's conversion is an upper bound on the exact (GDP) epsilon; for these
    Gaussians it is within 15 % of it."""
    exact = candidate(gaussian_mechanisms(), "gdp").epsilon(delta)
    eps = candidate(gaussian_mechanisms(), "rdp").epsilon(delta)
    assert exact * (1 - 1e-9) <= eps <= 1.15 * exact


@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_pld_of_a_sampled_gaussian_is_dp_accountings(delta):
    """The PLD accountant alone (it answers when a Poisson-sampled Gaussian is among the
    mechanisms): between dp-accounting's optimistic and pessimistic PLD estimates at
    the same discretisation, and below RDP."""
    pytest.importorskip("dp_accounting")
    from sparsedp.privacy.mechanisms import SampledGaussian
    mechs = [SampledGaussian(1.0, sampling_rate=0.01, count=1000)]
    eps = candidate(mechs, "pld").epsilon(delta)
    low = dp_accounting_pld_epsilon(1.0, 0.01, 1000, delta, pessimistic=False)
    high = dp_accounting_pld_epsilon(1.0, 0.01, 1000, delta, pessimistic=True)
    assert low * (1 - 1e-3) <= eps <= high * (1 + 1e-3)
    assert eps < candidate(mechs, "rdp").epsilon(delta)
