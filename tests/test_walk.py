"""The lazy Gaussian walk: sums of k steps drawn at once have the law of k eager draws."""
import math

import numpy as np
import pytest
from scipy import stats

from sparsedp._kernels._walk import LATTICE_CONSTANT
from sparsedp.random import GaussianWalk, IntegerNoise
from sparsedp.solvers._release import WalkRelease

SCALE = 2.0 ** 26


@pytest.mark.parametrize("buffered", [False, True])
@pytest.mark.parametrize("k", [1, 2, 3, 7, 16, 64, 100, 1000])
def test_sum_of_k_steps_has_the_law_of_k_draws(k, buffered):
    """KS two-sample test (fixed seeds, 20,000 sums each) against k summed draws of
    round(t N), one table draw at a time and as the kernels draw them (buffered)."""
    walk = GaussianWalk(SCALE, 4096)
    lazy = walk.sums(np.random.default_rng(1), np.full(20000, k), buffered=buffered)
    eager = IntegerNoise("gaussian", SCALE).draw(np.random.default_rng(2), 20000 * k)
    eager = eager.reshape(20000, k).sum(axis=1)
    assert stats.ks_2samp(lazy, eager).pvalue > 1e-3
    # and against the Gaussian of variance k t^2 (the walk's ideal)
    assert stats.kstest(lazy / (SCALE * math.sqrt(k)), "norm").pvalue > 1e-3


def test_sums_detect_a_wrong_scale():
    """The same test rejects sums whose scale is 10% off (it has power)."""
    walk = GaussianWalk(SCALE, 4096)
    lazy = walk.sums(np.random.default_rng(1), np.full(20000, 64))
    assert stats.kstest(lazy / (1.1 * SCALE * 8.0), "norm").pvalue < 1e-3


def test_buffered_sums_take_each_tables_draws_in_order_and_zero_digits_draw_nothing():
    """Buffered (the kernels' draws): a table's draws come 16 at a time, then 32, ...,
    exactly ``IntegerNoise.draw`` of that table in the stream's order, and are taken in
    turn; a zero digit adds 0 and draws nothing."""
    walk = GaussianWalk(SCALE, 4096)
    table = [[IntegerNoise("gaussian", SCALE * math.sqrt(d * 16 ** i)) for d in range(1, 16)]
             for i in range(3)]
    # 16 = digits (0, 1): digit 1's table alone, 16 draws then 32
    got = walk.sums(np.random.default_rng(3), np.full(48, 16), buffered=True)
    rng = np.random.default_rng(3)
    want = np.concatenate([table[1][0].draw(rng, 16), table[1][0].draw(rng, 32)])
    np.testing.assert_array_equal(got, want)
    # 17 = digits (1, 1): the first sum fills digit 0's buffer, then digit 1's
    got = walk.sums(np.random.default_rng(4), np.full(16, 17), buffered=True)
    rng = np.random.default_rng(4)
    low = table[0][0].draw(rng, 16)
    np.testing.assert_array_equal(got, low + table[1][0].draw(rng, 16))
    # 258 = digits (2, 0, 1): the loop over digits, digit 1 skipped
    got = walk.sums(np.random.default_rng(5), [258], buffered=True)
    rng = np.random.default_rng(5)
    assert got[0] == table[0][1].draw(rng, 16)[0] + table[2][0].draw(rng, 16)[0]
    # zero steps: 0 from no table
    assert np.all(walk.sums(np.random.default_rng(6), np.zeros(5, dtype=np.int64),
                            buffered=True) == 0)


def test_zero_steps_and_reproducibility():
    walk = GaussianWalk(SCALE, 100)
    assert np.all(walk.sums(np.random.default_rng(0), np.zeros(10, dtype=np.int64)) == 0)
    a = walk.sums(np.random.default_rng(5), np.arange(100))
    b = walk.sums(np.random.default_rng(5), np.arange(100))
    np.testing.assert_array_equal(a, b)


def test_slack_constants():
    walk = GaussianWalk(SCALE, 1000)
    assert walk.lattice_eta == pytest.approx(LATTICE_CONSTANT / SCALE ** 2)
    assert walk.step_eta == pytest.approx(walk.table_eta + 2 * walk.lattice_eta)
    assert 0 < walk.table_eta <= 2.0 ** -40


def test_lattice_constant_bounds_rounded_vs_discrete_gaussian():
    """R_s(m) / D_s(m) on |m| <= 38 s, computed in extended precision at a small scale s."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    s = 40
    z = mpmath.nsum(lambda m: mpmath.e ** (-m * m / (2 * s * s)), [-mpmath.inf, mpmath.inf])
    worst = 0
    for m in [0, 1, s, 5 * s, 20 * s, 38 * s]:
        r = mpmath.ncdf(-(m - 0.5) / s) - mpmath.ncdf(-(m + 0.5) / s)  # no cancellation
        d = mpmath.e ** (-m * m / (2 * s * s)) / z
        worst = max(worst, abs(mpmath.log(r / d)))
    assert worst <= LATTICE_CONSTANT / s ** 2
    assert worst >= 0.9 * LATTICE_CONSTANT / s ** 2  # and the constant is tight at 38 s


@pytest.mark.parametrize("kwargs, match", [
    (dict(scale=2.0 ** 39, max_steps=100), "2\\*\\*40"),
    (dict(scale=SCALE, max_steps=0), "max_steps"),
])
def test_walk_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GaussianWalk(kwargs["scale"], kwargs["max_steps"])


def test_walk_release_sensitivity_and_scales():
    r = WalkRelease(1.5, 10, 10000, 2.0, 5000, data_multipliers=(4096, 4300))
    assert r.sensitivity_int == r.points + 100
    np.testing.assert_allclose(r.scales, 1.5 * r.sensitivity_int * np.array([4096, 4300]))
    assert r.grid == pytest.approx(2.0 * r.rho / r.points)
    assert r.noise_sd == pytest.approx(1.5 * 2.0 * (1 + 100 / r.points), rel=1e-6)
    assert r.scales.max() * math.sqrt(15 * 16 ** 3) < 2.0 ** 40  # 5000 < 16**4: 4 digits
    with pytest.raises(ValueError, match="too large"):
        WalkRelease(1e9, 10, 10, 1.0, 5000)


def test_narrow_walk_scale_keeps_two_digits_narrow():
    """A walk of scale at most NARROW_WALK_SCALE draws sums of up to 255 steps from
    tables whose cells hold at most 2**29 integers (one word a draw); just above it,
    the widest such table is wide."""
    from sparsedp.solvers._release import NARROW_WALK_SCALE
    widest = [int(IntegerNoise("gaussian", NARROW_WALK_SCALE * math.sqrt(d * 16 ** i))
                  .cells[1].max()) for i in (0, 1) for d in range(1, 16)]
    assert max(widest) <= 2 ** 29
    assert IntegerNoise("gaussian", 2.0 * NARROW_WALK_SCALE * math.sqrt(240)).cells[1].max() \
        > 2 ** 29


@pytest.mark.parametrize("z, dim, multipliers, max_steps", [
    (0.96, 100_000, (1024, 2049), 16_801),   # DP-SGD, dorothea-shaped, L2 frame
    (0.72, 100_000, (1024, 2049), 801),
    (3.7, 100_000, (1,), 169),               # DP-SCD, L = 100
    (1.5, 10_000, (1,), 5000),
    (4.0, 1_000_000, (1024, 2049), 1000),   # the fine-grid floor wins over narrowness
])
def test_walk_release_grid_is_fine_and_narrow_where_possible(z, dim, multipliers, max_steps):
    """S: a power of two, at least 2**10 ceil(sqrt(dim)) (the rounding's share of
    Delta_int at most 2**-10), and the largest keeping the walks' scales at most
    NARROW_WALK_SCALE above that floor (or the largest within the 2**40 bound)."""
    from sparsedp._kernels._walk import MAX_TABLE_SCALE, top_spread
    from sparsedp.solvers._release import NARROW_WALK_SCALE
    r = WalkRelease(z, 1, dim, 1.0, max_steps, data_multipliers=multipliers)
    S, extra = r.points, math.ceil(math.sqrt(dim))
    assert S & (S - 1) == 0 and S >= 2 ** 10 * extra
    assert (extra / S) <= 2.0 ** -10
    assert r.scales.max() * math.sqrt(top_spread(max_steps)) < MAX_TABLE_SCALE

    def top(points):
        return z * (points + extra) * max(multipliers)
    fits_tables = top(2 * S) * math.sqrt(top_spread(max_steps)) < MAX_TABLE_SCALE
    if top(S) <= NARROW_WALK_SCALE:
        assert not (top(2 * S) <= NARROW_WALK_SCALE and fits_tables)  # the largest such S
    else:
        assert S // 2 < 2 ** 10 * extra  # narrower would break the fine-grid floor
    np.testing.assert_allclose(r.scales, z * (S + extra) * np.array(multipliers))
