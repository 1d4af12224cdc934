"""The PLD accountant (sparsedp.privacy.pld) against dp-accounting, the exact curves and RDP."""
import math
from functools import lru_cache

import numpy as np
import pytest

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution as dpa_pld  # noqa: E402

from sparsedp.privacy import (PrivacyLedger, calibrate_sampled_gaussian,  # noqa: E402
                              calibrate_sampled_gaussian_pld, gaussian_epsilon,
                              pure_composition_epsilon, sampled_gaussian_epsilon,
                              sampled_gaussian_epsilon_pld)
from sparsedp.privacy import pld as pld_module  # noqa: E402
from sparsedp.privacy.gdp import gdp_log_delta  # noqa: E402
from sparsedp.privacy.mechanisms import (BoundedRange, Gaussian, Laplace, PureDP,  # noqa: E402
                                         SampledGaussian, SampledGaussianWOR)
from sparsedp.privacy.pld import (DEFAULT_GRID, compose, gaussian_pld, laplace_pld,  # noqa: E402
                                  pure_pld, sampled_gaussian_pld)

DELTA = 1e-6
# (q, sigma, steps) of the issue, with its RDP and PLD epsilons at delta = 1e-6.  The
# issue's table gives 0.093 for (1/30000, 0.8, 150000), where its own pitfall paragraph
# and dp-accounting's pessimistic PLD give 0.109: 0.109 is the reference.
ISSUE_CASES = [
    (1 / 800, 1.0, 16_000, 1.211, 0.898),
    (1 / 800, 4.0, 40_000, 0.268, 0.245),
    (1 / 30000, 0.8, 150_000, 0.928, 0.109),
    (0.01, 1.0, 1_000, 2.437, 2.125),
    (1 / 800, 0.6, 800, 3.301, 2.314),
]


@lru_cache(maxsize=None)
def _ours(q, z, steps):
    return sampled_gaussian_epsilon_pld(z, q, steps, DELTA)


@lru_cache(maxsize=None)
def _dpa(q, z, steps, pessimistic):
    pld = dpa_pld.from_gaussian_mechanism(
        z, sampling_prob=q, value_discretization_interval=1e-4,
        pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
    return pld.self_compose(steps).get_epsilon_for_delta(DELTA)


@pytest.mark.parametrize("q, z, steps, rdp, pld", ISSUE_CASES)
def test_sampled_gaussian_pld_between_dp_accounting_bounds_and_below_rdp(q, z, steps, rdp, pld):
    ours = _ours(q, z, steps)
    assert ours >= _dpa(q, z, steps, False)  # dp-accounting's optimistic PLD: a lower bound
    pessimistic = _dpa(q, z, steps, True)
    assert abs(ours / pessimistic - 1.0) <= 0.01
    assert ours <= sampled_gaussian_epsilon(z, q, steps, DELTA)


@pytest.mark.parametrize("q, z, steps, rdp, pld", ISSUE_CASES)
def test_issue_rdp_and_pld_figures_are_reproduced(q, z, steps, rdp, pld):
    assert sampled_gaussian_epsilon(z, q, steps, DELTA) == pytest.approx(rdp, rel=0.01)
    assert _ours(q, z, steps) == pytest.approx(pld, rel=0.01)


def test_each_direction_is_composed_and_the_larger_is_reported():
    """At (0.01, 1, 1000) the two directions differ; the PLD reports the larger delta."""
    composed = compose([(sampled_gaussian_pld(1.0, 0.01), 1000)])
    assert not composed.symmetric
    eps = composed.epsilon(DELTA)
    logs = [d.log_delta(eps * 0.999) for d in composed.directions]
    assert max(logs) > math.log(DELTA)  # just below the answer, one direction misses delta
    assert composed.log_delta(eps) == max(d.log_delta(eps) for d in composed.directions)
    assert composed.log_delta(eps) <= math.log(DELTA)
    remove_only = pld_module.PrivacyLossDistribution(composed.remove)
    add_only = pld_module.PrivacyLossDistribution(composed.add)
    assert eps == pytest.approx(max(remove_only.epsilon(DELTA), add_only.epsilon(DELTA)),
                                rel=1e-9)


@pytest.mark.parametrize("z, steps", [(1.0, 1), (1.0, 100), (5.0, 1000), (20.0, 10), (0.5, 3)])
def test_gaussian_pld_upper_bounds_the_exact_gdp_epsilon(z, steps):
    exact = gaussian_epsilon(z, steps, DELTA)
    ours = compose([(gaussian_pld(z), steps)]).epsilon(DELTA)
    assert exact <= ours <= exact * (1.0 + 1e-3)


@pytest.mark.parametrize("b", [0.5, 1.0, 3.3, 10.0])
def test_laplace_pld_upper_bounds_the_exact_laplace_epsilon(b):
    # one use: delta(eps) = 1 - exp((eps - 1/b) / 2) exactly
    exact = 1.0 / b + 2.0 * math.log1p(-DELTA)
    ours = laplace_pld(b).epsilon(DELTA)
    assert exact <= ours <= exact * (1.0 + 1e-3)


@pytest.mark.parametrize("b, steps", [(2.0, 20), (10.0, 200)])
def test_composed_laplace_pld_between_dp_accounting_bounds(b, steps):
    ours = compose([(laplace_pld(b), steps)]).epsilon(DELTA)
    bounds = [dpa_pld.from_laplace_mechanism(b, value_discretization_interval=1e-4,
                                             pessimistic_estimate=p).self_compose(steps)
              .get_epsilon_for_delta(DELTA) for p in (False, True)]
    assert bounds[0] <= ours <= bounds[1] * (1.0 + 1e-3)


@pytest.mark.parametrize("eps0, steps", [(1.0, 1), (0.1, 100), (0.05, 400), (0.5, 10)])
def test_pure_pld_upper_bounds_the_optimal_composition(eps0, steps):
    """Randomized response composed k times is the optimal composition (Kairouz et al.)."""
    exact = pure_composition_epsilon(eps0, steps, DELTA, method="optimal")
    ours = compose([(pure_pld(eps0), steps)]).epsilon(DELTA)
    assert exact <= ours <= exact * (1.0 + 1e-3)


def test_a_coarser_nested_grid_is_never_tighter():
    """Connect-the-dots on 1e-3 has chords above those on 1e-4 (which it contains)."""
    fine = sampled_gaussian_epsilon_pld(1.0, 1 / 800, 2000, DELTA)
    coarse = sampled_gaussian_epsilon_pld(1.0, 1 / 800, 2000, DELTA, grid=1e-3)
    assert DEFAULT_GRID == 1e-4
    assert fine <= coarse


def test_connect_the_dots_does_not_drift_with_the_number_of_steps():
    """Rounding each step's loss up to the grid would add up to h / 2 per step
    (7.5 at 150,000 steps of grid 1e-4): the mean loss stays that of the mechanism."""
    remove = sampled_gaussian_pld(0.8, 1 / 30000).remove
    mass, mean, _ = remove._moments()
    # E_P[L] = KL(P || Q) <= log E_P[P/Q] = log(1 + q^2 (e^(1/z^2) - 1))
    kl_bound = math.log1p((1 / 30000) ** 2 * math.expm1(1 / 0.64))
    assert mass == pytest.approx(1.0, abs=1e-12)
    assert 0.0 <= mean * 1e-4 <= 2 * kl_bound + 1e-12
    assert _ours(1 / 30000, 0.8, 150_000) < 0.12


def test_truncated_tails_and_wrap_around_are_counted(monkeypatch):
    """A window cut where a quarter of the mass lies above it, or one too short for the
    composition (the FFT wraps around), still bounds the exact GDP epsilon."""
    exact = gaussian_epsilon(2.0, 50, DELTA)
    monkeypatch.setattr(pld_module, "_WINDOW_TAIL", 0.5)
    cut = compose([(gaussian_pld(2.0), 50)])
    assert cut.remove.upper_tail > DELTA
    assert cut.epsilon(DELTA) == math.inf
    monkeypatch.setattr(pld_module, "_WINDOW_TAIL", 1e-15)
    monkeypatch.setattr(pld_module, "_MAX_POINTS", 20_000)
    short = compose([(gaussian_pld(2.0), 50)])
    assert short.remove.pmf.size <= 2 * 20_000 and short.remove.lower_tail > 0  # n = 2^L
    assert short.epsilon(DELTA) >= exact
    for eps in (0.0, 0.5, 2.0, exact):
        assert short.log_delta(eps) >= gdp_log_delta(eps, math.sqrt(50) / 2.0) - 1e-9


def test_calibration_round_trip_and_saving_over_rdp():
    q, steps = 1 / 30000, 100_000
    z = calibrate_sampled_gaussian_pld(1.0, DELTA, q, steps)
    assert sampled_gaussian_epsilon_pld(z, q, steps, DELTA) <= 1.0
    assert sampled_gaussian_epsilon_pld(z * (1 - 1e-3), q, steps, DELTA) > 1.0
    z_rdp = calibrate_sampled_gaussian(1.0, DELTA, q, steps)
    assert 0.25 <= 1.0 - z / z_rdp <= 0.4  # the issue: 31% less noise at q = 1/30000
    assert calibrate_sampled_gaussian_pld(math.inf, DELTA, q, steps) == 0.0


def test_calibration_saves_13_percent_at_q_1_800():
    z = calibrate_sampled_gaussian_pld(1.0, DELTA, 1 / 800, 16_000)
    z_rdp = calibrate_sampled_gaussian(1.0, DELTA, 1 / 800, 16_000)
    assert 1.0 - z / z_rdp == pytest.approx(0.13, abs=0.01)
    assert sampled_gaussian_epsilon_pld(z, 1 / 800, 16_000, DELTA) <= 1.0


@pytest.mark.parametrize("coarse, most", [((64, 8), (9, 5, 3)), ((8,), (9, 4)),
                                          ((512,), (9, 13))])
def test_calibration_searches_coarser_grids_first(monkeypatch, coarse, most):
    """DP-SGD's calibration on dorothea's shape (rate 1/800, 4,000 steps): at most 9,
    5 and 3 evaluations on grids 64 and 8 times coarser and on the grid (a search on
    the grid alone made 9).  The grid's evaluations decide: from a grid 512 times
    coarser alone (whose boundary is 5 times the noise: the secant steps fail and
    hand over to the safe search, 12 evaluations on the grid) the answer is the
    same within rtol; each meets the condition and lies within 2e-6 of its
    boundary."""
    q, steps, grids = 1 / 800, 4000, []
    real = pld_module.sampled_gaussian_pld

    def counted(z, rate, grid):
        grids.append(grid)
        return real(z, rate, grid)
    monkeypatch.setattr(pld_module, "sampled_gaussian_pld", counted)
    monkeypatch.setattr(pld_module, "_COARSE", coarse)
    monkeypatch.setattr(pld_module, "_COARSEST", 1.0)
    z = calibrate_sampled_gaussian_pld(1.0, DELTA, q, steps)
    made = [grids.count(c * DEFAULT_GRID) for c in coarse] + [grids.count(DEFAULT_GRID)]
    assert sum(made) == len(grids)
    assert all(1 <= m <= bound for m, bound in zip(made, most)), made
    monkeypatch.undo()
    assert sampled_gaussian_epsilon_pld(z, q, steps, DELTA) <= 1.0
    assert sampled_gaussian_epsilon_pld(z * (1 - 2e-6), q, steps, DELTA) > 1.0


def test_ledger_with_a_sampled_gaussian_uses_the_pld():
    ledger = PrivacyLedger(delta=DELTA, relation="add-remove")
    ledger.add_sampled_gaussian("minibatch", 1.0, 1 / 800, count=16_000)
    eps, method = ledger.get_epsilon(return_method=True)
    assert method == "pld" and eps == _ours(1 / 800, 1.0, 16_000)
    ledger.add_laplace("smoothness", 10.0, relation="add-remove")
    both, method = ledger.get_epsilon(return_method=True)
    assert method == "pld"
    assert eps < both < eps + 0.1  # tighter than adding the Laplace's 0.1


def test_pld_accountant_only_for_ledgers_with_a_sampled_gaussian():
    """The other solvers' ledgers keep their cost: no FFT composition for them."""
    ledger = PrivacyLedger(delta=DELTA)
    ledger.add_gaussian("coordinate gradients", 5.0, count=1000)
    ledger.add_laplace("smoothness", 10.0)
    ledger.add_pure("selection", 0.05, count=100)
    assert "pld" not in [name for name, _ in ledger.candidates()]
    wor = PrivacyLedger(delta=DELTA)
    wor.add_sampled_gaussian_wor("batch", 1.0, 0.01, count=100)
    assert wor.candidate("pld") is None


def test_mechanisms_state_their_pld():
    grid = 1e-3
    assert Gaussian(2.0).pld(grid).log_delta(0.3) == gaussian_pld(2.0, grid).log_delta(0.3)
    assert Laplace(2.0).pld(grid).log_delta(0.3) == laplace_pld(2.0, grid).log_delta(0.3)
    assert PureDP(0.5).pld(grid).log_delta(0.3) == pure_pld(0.5, grid).log_delta(0.3)
    assert BoundedRange(0.5).pld(grid).log_delta(0.3) == pure_pld(0.5, grid).log_delta(0.3)
    sg = SampledGaussian(1.0, 0.01).pld(grid)
    assert sg.log_delta(0.3) == sampled_gaussian_pld(1.0, 0.01, grid).log_delta(0.3)
    assert SampledGaussianWOR(1.0, 0.01).pld(grid) is None
    assert Gaussian(0.0).pld().epsilon(DELTA) == math.inf
    assert sampled_gaussian_epsilon_pld(0.0, 0.01, 10, DELTA) == math.inf


def test_pld_masses_are_probabilities():
    for pld in (gaussian_pld(1.0), laplace_pld(1.0), pure_pld(0.3),
                sampled_gaussian_pld(0.7, 0.01)):
        for d in pld.directions:
            assert np.all(d.pmf >= 0)
            assert d.pmf.sum() + d.infinity_mass == pytest.approx(1.0, abs=1e-9)
            # the pair (P', Q' = P' e^-L) has Q' mass at most 1
            assert float(d.pmf @ np.exp(-d.losses)) <= 1.0 + 1e-9


@pytest.mark.parametrize("call, match", [
    (lambda: sampled_gaussian_epsilon_pld(1.0, 0.01, 10, DELTA, grid=0.0), "grid"),
    (lambda: sampled_gaussian_epsilon_pld(-1.0, 0.01, 10, DELTA), "noise_multiplier"),
    (lambda: sampled_gaussian_epsilon_pld(1.0, 1.5, 10, DELTA), "sampling_rate"),
    (lambda: sampled_gaussian_epsilon_pld(1.0, 0.01, 0, DELTA), "steps"),
    (lambda: calibrate_sampled_gaussian_pld(0.0, DELTA, 0.01, 10), "epsilon"),
    (lambda: compose([(gaussian_pld(1.0), 2), (gaussian_pld(1.0, 1e-3), 2)]), "one grid"),
    (lambda: compose([]), "at least one"),
    (lambda: compose([(gaussian_pld(1.0).compose(3), 2)]), "not compositions"),
])
def test_bad_inputs_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _exact_self_composition(numerators, bits, k):
    """Integer masses of k copies of the pmf numerators / 2^bits, and the denominator."""
    out, base, e = None, np.array(numerators, dtype=object), k
    while e:
        if e & 1:
            out = base if out is None else np.convolve(out, base)
        e >>= 1
        base = np.convolve(base, base) if e else base
    return out, 2 ** (bits * k)


def _spread_error(ours, numerators, bits, k, roundoff=None):
    """max over the window of |ours - exact| - roundoff (default ``ours.roundoff``; the
    bound is met if <= 0)."""
    masses, denominator = _exact_self_composition(numerators, bits, k)
    d = ours.remove
    idx = np.arange(d.pmf.size) + d.offset  # the one-step pmf starts at loss 0
    inside = (idx >= 0) & (idx < masses.size)
    exact = np.array([float(masses[i] / denominator) if ok else 0.0
                      for i, ok in zip(idx, inside)])
    roundoff = d.roundoff if roundoff is None else roundoff
    return float(np.max(np.abs(d.pmf - exact) - roundoff - np.finfo(float).eps * exact))


# seed 0: 24 dyadic masses (12 bits), composed 96 times; the composition is exact in
# integers.  Tolerance: the exact value's own rounding to double.
FFT_SEED, FFT_BITS, FFT_COUNT = 0, 12, 96


def _dyadic_pld():
    rng = np.random.default_rng(FFT_SEED)
    numerators = rng.multinomial(2 ** FFT_BITS, np.full(24, 1 / 24))
    d = pld_module.LossDistribution(1e-2, 0, numerators / 2.0 ** FFT_BITS, 0.0)
    return numerators, pld_module.PrivacyLossDistribution(d)


def test_fft_composition_is_within_its_roundoff_bound_of_the_exact_one():
    numerators, one = _dyadic_pld()
    ours = compose([(one, FFT_COUNT)])
    assert ours.remove.roundoff > 0
    assert _spread_error(ours, numerators, FFT_BITS, FFT_COUNT) <= 0.0


def test_fft_composition_in_double_without_its_bound_misses_the_exact_one(monkeypatch):
    """Planted bug: forward transforms in double and no round-off counted (clamping only)."""
    numerators, one = _dyadic_pld()
    monkeypatch.setattr(pld_module, "_WIDE", np.float64)
    monkeypatch.setattr(pld_module, "_U_WIDE", 2.0 ** -53)
    ours = compose([(one, FFT_COUNT)])
    assert _spread_error(ours, numerators, FFT_BITS, FFT_COUNT, roundoff=0.0) > 0.0
    assert _spread_error(ours, numerators, FFT_BITS, FFT_COUNT) <= 0.0  # its bound holds


def test_wide_forward_transform_meets_the_per_level_bound():
    """scipy.fft in long double really runs in long double: its error against an exact
    DFT (mpmath, 40 digits) is below _FFT_LEVEL * L * u_wide * ||x||_1 (seed 1, n = 256),
    which the same transform in double exceeds."""
    mpmath = pytest.importorskip("mpmath")
    if pld_module._WIDE is np.float64:
        pytest.skip("no extended precision on this platform")
    n, levels = 256, 8
    x = np.random.default_rng(1).random(n)
    x /= x.sum()
    with mpmath.workdps(40):
        exact = [mpmath.fsum(mpmath.mpf(float(v)) * mpmath.expjpi(-2 * mpmath.mpf(i * j) / n)
                             for i, v in enumerate(x)) for j in range(n // 2 + 1)]

        def error(f):  # str() of a long double round-trips it exactly
            return max(float(abs(mpmath.mpc(mpmath.mpf(str(fj.real)), mpmath.mpf(str(fj.imag)))
                                 - ej)) for fj, ej in zip(f, exact))

        wide_err = error(pld_module.fft.rfft(x.astype(np.longdouble)))
        double_err = error(pld_module.fft.rfft(x))
    bound = pld_module._FFT_LEVEL * levels * pld_module._U_WIDE * x.sum() * (1 + 1e-12)
    assert wide_err <= bound < double_err


def test_roundoff_enters_delta_with_the_hockey_stick_weights():
    d = pld_module.LossDistribution(0.5, 0, np.array([0.5, 0.25, 0.25]), 0.0, roundoff=1e-3)
    plain = pld_module.LossDistribution(0.5, 0, d.pmf, 0.0)
    weights = -np.expm1(0.2 - np.array([0.5, 1.0]))
    expected = math.exp(plain.log_delta(0.2)) + 1e-3 * weights.sum()
    assert math.exp(d.log_delta(0.2)) == pytest.approx(expected, rel=1e-10)
    assert d.log_delta(0.2) >= math.log(expected)


@pytest.mark.parametrize("q, z, steps, rdp, pld", ISSUE_CASES)
def test_roundoff_bound_costs_under_a_thousandth_of_delta(q, z, steps, rdp, pld):
    composed = compose([(sampled_gaussian_pld(z, q), steps)])
    for d in composed.directions:
        assert d.roundoff * d.pmf.size <= 1e-3 * DELTA


# A half fraction of the 2^4 design q x z x steps x delta (every pair of levels appears):
# dp-accounting's optimistic PLD <= ours <= its pessimistic PLD + 1%, and ours <= our RDP.
_GRID_LEVELS = ([1e-3, 0.05], [0.8, 2.0], [50, 2000], [1e-5, 1e-9])
GRID_CASES = [tuple(levels[i] for levels, i in zip(_GRID_LEVELS, idx))
              for idx in np.ndindex(2, 2, 2, 2) if sum(idx) % 2 == 0]


@pytest.mark.parametrize("q, z, steps, delta", GRID_CASES)
def test_sampled_gaussian_pld_between_dp_accounting_bounds_on_a_grid(q, z, steps, delta):
    ours = sampled_gaussian_epsilon_pld(z, q, steps, delta)
    theirs = [dpa_pld.from_gaussian_mechanism(
        z, sampling_prob=q, value_discretization_interval=1e-4, pessimistic_estimate=p,
        use_connect_dots=p).self_compose(steps).get_epsilon_for_delta(delta) for p in (False, True)]
    assert theirs[0] <= ours <= theirs[1] * 1.01
    assert ours >= theirs[1] * 0.99
    assert ours <= sampled_gaussian_epsilon(z, q, steps, delta)
