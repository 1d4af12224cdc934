"""sparsedp.random.IntegerNoise: the integer noise laws against their exact laws, the
tables' eta (a replica of the tables, replayed draw for draw), the batch fill of the
public Cython API, and the grid's floating-point sensitivity bound."""
import math

import numpy as np
import pytest
from scipy import special, stats

from sparsedp.random import (
    MIN_SCALE, NOISE_ETA, IntegerNoise, float_sum_factor, grid_for, grid_scale,
)


def gaussian_pmf(k, t):
    """P(round(t N) = k) = Phi((k + 1/2) / t) - Phi((k - 1/2) / t), without cancellation."""
    k = np.abs(np.asarray(k, dtype=np.float64))
    hi, lo = (k - 0.5) / (t * math.sqrt(2)), (k + 0.5) / (t * math.sqrt(2))
    return 0.5 * (special.erfc(hi) - special.erfc(lo))


def laplace_pmf(j, b):
    """P(floor(L) = j), L Laplace of scale b: exp(-|j + 1/2| / b) sinh(1/(2b)) ... exactly
    (1 - e^{-1/b}) / 2 * e^{-m / b} with m = j (j >= 0) or -j - 1 (j < 0)."""
    j = np.asarray(j)
    m = np.where(j >= 0, j, -j - 1)
    return 0.5 * (-np.expm1(-1.0 / b)) * np.exp(-m / b)


def binned_chi2(draws, edges, probs):
    counts = np.histogram(draws, bins=edges)[0]
    expected = probs * draws.size
    return stats.chisquare(counts, expected * counts.sum() / expected.sum()).pvalue


@pytest.mark.parametrize("t", [8192.0, 3.3e5, 2.0 ** 33])
def test_gaussian_draws_follow_the_discretised_gaussian(t):
    """2e6 draws in 60 equal-probability bins of the exact law: chi-square p > 1e-4;
    a law with sd 1% larger is rejected (the test can fail)."""
    noise = IntegerNoise("gaussian", t)
    assert noise.eta <= NOISE_ETA
    draws = noise.draw(np.random.default_rng(1), 2_000_000)
    qs = stats.norm.ppf(np.linspace(0, 1, 61)[1:-1]) * t
    edges = np.r_[-np.inf, np.round(qs) + 0.5, np.inf]
    cdf = lambda x, s: stats.norm.cdf(x / s)  # noqa: E731  (exact at half-integer edges)
    probs = np.diff(cdf(edges, t))
    assert binned_chi2(draws, edges, probs) > 1e-4
    assert binned_chi2(draws, edges, np.diff(cdf(edges, 1.01 * t))) < 1e-8
    assert abs(draws.mean()) < 5 * t / math.sqrt(draws.size)


def test_gaussian_small_values_have_their_exact_probabilities():
    """Near 0 (where every cell is narrow) the frequency of each value matches P(k)
    (16e6 draws, seed 3: about 780 of each value, within 5 standard deviations)."""
    t = 8192.0
    draws = IntegerNoise("gaussian", t).draw(np.random.default_rng(3), 16_000_000)
    ks = np.arange(-3, 4)
    freq = np.array([(draws == k).sum() for k in ks])
    expected = gaussian_pmf(ks, t) * draws.size
    z = (freq - expected) / np.sqrt(expected)
    assert np.all(np.abs(z) < 5), z


@pytest.mark.parametrize("b", [8192.0, 7.7e4])
def test_laplace_draws_follow_the_floored_laplace(b):
    """J = floor(L): P(J = j) = (1 - e^{-1/b}) / 2 e^{-m/b}, m = j or -j - 1."""
    noise = IntegerNoise("laplace", b)
    draws = noise.draw(np.random.default_rng(2), 2_000_000)
    assert (draws >= 0).mean() == pytest.approx(0.5, abs=0.002)
    qs = stats.laplace.ppf(np.linspace(0, 1, 61)[1:-1]) * b
    edges = np.r_[-np.inf, np.floor(qs), np.inf]  # bins [floor(q_i), floor(q_{i+1}))
    cdf = lambda x, s: stats.laplace.cdf(x, scale=s)  # noqa: E731 (P(floor(L) < e) = P(L < e))
    assert binned_chi2(draws, edges - 1e-9, np.diff(cdf(edges, b))) > 1e-4
    assert binned_chi2(draws, edges - 1e-9, np.diff(cdf(edges, 1.01 * b))) < 1e-8
    # released with the shift 1/2: symmetric around 0
    assert abs((draws + 0.5).mean()) < 6 * b * math.sqrt(2) / math.sqrt(draws.size)


def test_tails_beyond_the_cells_follow_the_law():
    """The geometric-envelope tail (beyond the body cells, from about 4.5 t / 12 b): its frequency and its
    conditional law.  Scale 8192: 3e7 Gaussian draws give ~200 tail draws."""
    t = 8192.0
    noise = IntegerNoise("gaussian", t)
    K_T = noise.tail_start  # the end of the body cells: at least 4.5 t (_noise.pyx)
    assert 4.5 * t <= K_T < 4.7 * t
    draws = noise.draw(np.random.default_rng(5), 30_000_000)
    tail = np.abs(draws[np.abs(draws) >= K_T])
    p_tail = 2 * stats.norm.sf((K_T - 0.5) / t)
    assert abs(tail.size - p_tail * draws.size) < 5 * math.sqrt(p_tail * draws.size)
    # conditional law of |k| given |k| >= K_T: P(|N| t >= x) / P(|N| t >= K_T - 1/2)
    cond = lambda x: 1 - stats.norm.sf((x + 0.5) / t) / stats.norm.sf((K_T - 0.5) / t)  # noqa
    assert stats.kstest(tail, cond).pvalue > 1e-3
    b = 8192.0
    lap = IntegerNoise("laplace", b)
    K_T = lap.tail_start
    assert 12 * b <= K_T < 12.5 * b
    m = lap.draw(np.random.default_rng(6), 30_000_000)
    m = np.where(m >= 0, m, -m - 1)
    tail = m[m >= K_T]
    p_tail = math.exp(-K_T / b)
    assert abs(tail.size - p_tail * m.size) < 5 * math.sqrt(p_tail * m.size)
    assert stats.kstest(tail - K_T, lambda x: 1 - np.exp(-(np.floor(x) + 1) / b)).pvalue > 1e-3


# A replica of the sampler (sparsedp/_kernels/_noise.pyx) in Python: its tables,
# built by the documented construction, and noise_draw word for word on the raw
# 64-bit words of the generator (Generator.bit_generator.random_raw).  Replaying
# IntegerNoise.draw bit for bit shows that the compiled tables are the replica's,
# whose cell probabilities are then checked against the ideal law.
LOW10, LOW15, LOW55, LOW63 = 2 ** 10 - 1, 2 ** 15 - 1, 2 ** 55 - 1, 2 ** 63 - 1


def log_shape(k, t):
    """log of int_{-1/2}^{1/2} exp(-(k u)/t^2 - u^2/(2 t^2)) du, the kernel's series."""
    a, c = k / (t * t), 0.5 / (t * t)
    a2 = a * a
    s0 = 1.0 + a2 * (1.0 / 24.0 + a2 * (1.0 / 1920.0 + a2 * (
        1.0 / 322560.0 + a2 * (1.0 / 92897280.0 + a2 * (1.0 / 40874803200.0)))))
    s1 = 1.0 / 12.0 + a2 * (1.0 / 160.0 + a2 * (1.0 / 10752.0 + a2 * (1.0 / 2949120.0)))
    s2 = 1.0 / 80.0 + a2 * (1.0 / 1792.0)
    return math.log(s0 - c * s1 + 0.5 * c * c * s2)


def log_ratio(law, scale, k, k0):
    """log P(k) - log P(k0), 0 <= k0 <= k, of the ideal law (unnormalised)."""
    d = float(k - k0)
    if law == "laplace":
        return -d / scale
    return (-d * float(k + k0) / (2.0 * scale * scale)
            + log_shape(float(k), scale) - log_shape(float(k0), scale))


def replica_tables(law, scale):
    """The cells, alias table and fast-acceptance bounds the construction builds."""
    body_end = math.ceil((4.5 if law == "gaussian" else 12.0) * scale)
    mass = scale * math.sqrt(math.pi / 2) if law == "gaussian" else scale
    coarse = 1  # W: the smallest power of two giving at most 480 cells over the body
    while -(-body_end // coarse) > 480:
        coarse *= 2
    fine = max(coarse // 2, 1)
    widths = []  # before widening (doubling) to 2**-20 of the mass
    if law == "gaussian":  # cell 0 about t 2**-17 wide, then doubling widths to W / 2
        widths.append(min(fine, 2 ** max(0, math.floor(math.log2(scale * 2.0 ** -17)))))
        while sum(widths) < fine:
            widths.append(sum(widths))
    n_coarse = -(-(body_end - sum(widths)) // coarse)
    widths += [fine] * (2 * max(0, min(480 - len(widths) - n_coarse, n_coarse)))
    starts, k = [], 0
    for w in widths:  # the planned cells (fine ones past the body's end dropped) ...
        if k >= body_end:
            break
        while w * math.exp(log_ratio(law, scale, k, 0)) < 2.0 ** -20 * mass:
            w *= 2
        starts.append(k)
        k += w
    while k < body_end:  # ... then cells of width W
        w = coarse
        while w * math.exp(log_ratio(law, scale, k, 0)) < 2.0 ** -20 * mass:
            w *= 2
        starts.append(k)
        k += w
    widths = [b - a for a, b in zip(starts, starts[1:] + [k])]
    tail_start = k
    if law == "gaussian":
        block = math.ceil(scale * scale * math.log(2.0) / (tail_start - 0.5) * (1 + 1e-9))
    else:
        block = math.ceil(scale * math.log(2.0) * (1 + 1e-9))
    weights = [w * math.exp(log_ratio(law, scale, s, 0)) for s, w in zip(starts, widths)]
    weights.append(2.0 * block * math.exp(log_ratio(law, scale, tail_start, 0)))
    A, B = math.fsum(weights).as_integer_ratio()
    exact = [(a * B * 2 ** 64, b * A) for a, b in (w.as_integer_ratio() for w in weights)]
    units = [(2 * num + den) // (2 * den) for num, den in exact]
    units[units.index(max(units))] += 2 ** 64 - sum(units)  # the remainder: largest cell
    padded = units + [0] * (512 - len(units))  # Vose's alias method on integer units
    threshold, alias, work = [0] * 512, list(range(512)), list(padded)
    small = [i for i, u in enumerate(padded) if u < 2 ** 55]
    large = [i for i, u in enumerate(padded) if u >= 2 ** 55]
    while small and large:
        s, g = small.pop(), large.pop()
        threshold[s], alias[s] = work[s], g
        work[g] -= 2 ** 55 - work[s]
        (small if work[g] < 2 ** 55 else large).append(g)
    for i in large + small:
        threshold[i], alias[i] = 2 ** 55, i
    fast = []
    for i, (s, w) in enumerate(zip(starts, widths)):
        low = math.exp(log_ratio(law, scale, s + w - 1, s))
        if law == "gaussian" and i == 0:
            low = min(low, 0.5)  # a Gaussian 0 is kept with probability 1/2
        fast.append(int(low * (1.0 - 2.0 ** -45) * 2.0 ** 63))
    return dict(law=law, scale=scale, starts=starts, widths=widths, tail_start=tail_start,
                block=block, threshold=threshold, alias=alias, fast=fast, units=units,
                weights=weights, wide=max(widths) > 2 ** 29)


def replay_draws(tb, words, size, paths):
    """``size`` draws of noise_draw from the iterator ``words``; ``paths`` counts
    the branches taken.  A word reads, from the top: slot (9 bits), the first 15
    bits of the 55-bit alias uniform, the first 10 bits of the 63-bit acceptance
    uniform, the offset in the cell (29 bits, or a fresh word's low bits in a
    table with cells wider than 2**29) and the sign."""
    law, t = tb["law"], tb["scale"]
    n_cells = len(tb["starts"])

    def bounded(m):  # Lemire's method, exact
        product = next(words) * m
        if product % 2 ** 64 < m:
            while product % 2 ** 64 < (2 ** 64 - m) % m:
                product = next(words) * m
                paths["lemire retry"] += 1
        return product >> 64

    def keep(log_p, v):
        return float(v) < math.exp(log_p) * 2.0 ** 63

    out = []
    while len(out) < size:
        word = next(words)
        slot = word >> 55
        thr = tb["threshold"][slot]
        prefix = (word >> 40) & LOW15
        if prefix != thr >> 40:
            own = prefix < thr >> 40
        else:
            paths["alias undecided"] += 1
            own = (prefix << 40 | next(words) >> 24) < thr
        cell = slot if own else tb["alias"][slot]
        neg = word & 1
        if cell < n_cells:
            start, width = tb["starts"][cell], tb["widths"][cell]
            if tb["wide"]:
                paths["offset from a fresh word"] += 1
                k = start + (next(words) & (width - 1))
            else:
                k = start + ((word >> 1) & (width - 1))
            v = (word >> 30) & LOW10
            if v >= tb["fast"][cell] >> 53:
                paths["slow acceptance"] += 1
                v = v << 53 | next(words) >> 11
                log_p = log_ratio(law, t, k, start) - (math.log(2.0) if (
                    law == "gaussian" and k == 0) else 0.0)
                if v >= tb["fast"][cell] and not keep(log_p, v):
                    paths["rejected"] += 1
                    continue
        else:
            paths["tail"] += 1
            j, word = 0, next(words)
            while word == 0:
                j, word = j + 64, next(words)
            j += (word & -word).bit_length() - 1
            kj = tb["tail_start"] + j * tb["block"]
            k = kj + bounded(tb["block"])
            if law == "gaussian":
                if k > 38.0 * t:
                    continue
                bt, btail = tb["block"] / t, tb["tail_start"] / t
                log_p = (j * (math.log(2.0) - bt * btail - 0.5 * j * bt * bt)
                         + log_shape(float(kj), t) - log_shape(float(tb["tail_start"]), t))
            else:
                log_p = j * (math.log(2.0) - tb["block"] / t)
            log_p += log_ratio(law, t, k, kj)
            if not keep(min(log_p, 0.0), next(words) & LOW63):
                paths["rejected"] += 1
                continue
        if law == "laplace":
            out.append(-k - 1 if neg else k)
        else:
            out.append(-k if neg else k)  # 0 either way (kept with probability 1/2)
    return np.array(out, dtype=np.int64)


def raw_words(seed, bit_generator=np.random.PCG64):
    """The 64-bit words of ``Generator(bit_generator(seed))``, as the sampler reads them
    (a word at a time: what the caller leaves unread stays in the generator)."""
    bits = bit_generator(seed)
    while True:
        yield int(bits.random_raw())


@pytest.mark.parametrize("law,scale,size", [
    ("gaussian", 8192.0, 400_000), ("gaussian", 5e6, 100_000), ("gaussian", 2.0 ** 30, 50_000),
    ("gaussian", 2.0 ** 35, 50_000), ("laplace", 9000.0, 400_000)])
def test_tables_quantise_within_eta(law, scale, size):
    """The replica's alias table gives each cell (and the tail) an exact multiple of
    2**-64 within the public eta of the ideal law, and IntegerNoise.draw is the
    replica's sampler on those tables, draw for draw (seed 4), through every path
    (tail, slow acceptance and rejection, the offset from a fresh word in cells wider
    than 2**29; the scale 8192 runs hit the tail a few times).  Cell widths are
    powers of two (the offset is a word's bits: exactly uniform)."""
    from collections import Counter
    noise = IntegerNoise(law, scale)
    tb = replica_tables(law, scale)
    n_cells = len(tb["starts"])
    units = [0] * 512
    for i in range(512):
        units[i] += tb["threshold"][i]
        units[tb["alias"][i]] += 2 ** 55 - tb["threshold"][i]
    assert units[:n_cells + 1] == tb["units"] and sum(units) == 2 ** 64
    got = np.array(units[:n_cells + 1], dtype=float) / 2.0 ** 64
    w = np.array(tb["weights"])
    np.testing.assert_allclose(got, w / w.sum(), rtol=noise.eta / 2)
    assert 0 < noise.eta <= NOISE_ETA
    starts, widths = np.array(tb["starts"]), np.array(tb["widths"])
    assert np.all(np.diff(starts) == widths[:-1]) and starts[-1] + widths[-1] == tb["tail_start"]
    assert np.all(widths & (widths - 1) == 0) and len(starts) <= 511
    built_starts, built_widths = noise.cells
    np.testing.assert_array_equal(built_starts, starts)
    np.testing.assert_array_equal(built_widths, widths)
    assert noise.tail_start == tb["tail_start"] >= (4.5 if law == "gaussian" else 12) * scale
    paths = Counter()
    ours = replay_draws(tb, raw_words(4), size, paths)
    np.testing.assert_array_equal(noise.draw(np.random.default_rng(4), size), ours)
    assert paths["slow acceptance"] > 0 and paths["rejected"] > 0, paths
    # numpy's SFC64 (the solvers' noise streams): its words drawn by the inline step,
    # the same draws, and the generator left where the replica's words end
    size //= 4
    words = raw_words(4, np.random.SFC64)
    ours = replay_draws(tb, words, size, Counter())
    generator = np.random.Generator(np.random.SFC64(4))
    np.testing.assert_array_equal(noise.draw(generator, size), ours)
    assert int(generator.bit_generator.random_raw()) == next(words)
    if scale <= 9000.0:
        assert paths["tail"] > 0, paths
    if scale >= 2.0 ** 35:
        assert tb["wide"] and paths["offset from a fresh word"] >= size, paths
    else:
        assert not tb["wide"] and paths["offset from a fresh word"] == 0, paths


def general_path_rate(tb):
    """The probability that a draw's word leaves the common case (noise_draw_word):
    its alias prefix equals the slot's (2**-15), its 10-bit acceptance uniform is not
    below the cell's fast bound, or it picks the tail; exact from the tables."""
    n_cells = len(tb["starts"])
    p = np.array(tb["units"], dtype=float) / 2.0 ** 64  # cells, then the tail
    fast_hi = np.array([f >> 53 for f in tb["fast"]], dtype=float)
    return 2.0 ** -15 + float(np.sum(p[:n_cells] * (1.0 - fast_hi / 1024.0)) + p[n_cells])


@pytest.mark.parametrize("law,bound", [("gaussian", 0.0086), ("laplace", 0.026)])
def test_few_draws_take_the_general_path(law, bound):
    """The body cells are narrow where the mass is (body_cells), so that few draws
    need the general path: at most 0.86% (Gaussian) and 2.6% (Laplace) of first words
    over two octaves of scales, where cells of one width (the previous layout) sent
    1.3-2.0% and 2.5-3.3%.  A Gaussian's cell 0, whose 0 is kept half the time, is
    tiny.  The computed rate is checked against the replica's count over 200,000 draws
    (binomial, 5 standard deviations)."""
    from collections import Counter
    rates = []
    for scale in 8192.0 * 2.0 ** np.arange(0, 2, 0.125):
        tb = replica_tables(law, float(scale))
        rates.append(general_path_rate(tb))
        if law == "gaussian":  # cell 0's share: 0.6% with the previous layout
            assert tb["units"][0] / 2.0 ** 64 * (1 - (tb["fast"][0] >> 53) / 1024) < 2.0 ** -14
    assert max(rates) <= bound, rates
    tb, paths, size = replica_tables(law, 3.3e5), Counter(), 200_000
    replay_draws(tb, raw_words(5), size, paths)
    words = size + paths["rejected"]
    taken = paths["slow acceptance"] + paths["tail"]
    expected = general_path_rate(tb) - 2.0 ** -15  # the alias's prefix: counted apart
    assert abs(taken - expected * words) < 5 * math.sqrt(expected * words), (taken, expected)


def test_log_ratio_is_the_exact_discretised_gaussian_ratio():
    """The series the sampler (and its replica above) computes log P(k) / P(k0) with,
    against the exact law."""
    t = 1024.0
    for k, k0 in ((5, 0), (3000, 2990), (4700, 4608), (30000, 29000)):
        exact = math.log(gaussian_pmf(k, t) / gaussian_pmf(k0, t))
        assert log_ratio("gaussian", t, k, k0) == pytest.approx(exact, rel=1e-9, abs=1e-13)
    assert log_ratio("laplace", 100.0, 250, 50) == -2.0


@pytest.mark.parametrize("law,scale", [("gaussian", 8192.0), ("gaussian", 3.3e5),
                                        ("gaussian", 2.0 ** 39), ("laplace", 9000.0)])
def test_cell_acceptance_shortcut_is_the_full_test(law, scale):
    """The slow acceptance in a body cell decides from the main term of the log ratio
    and skips log_shape's two logarithms unless the uniform lies within about 1e-6 of
    the threshold: the same decision as the full test ``keep(keep_log_ratio)`` for
    uniforms at random, and just below, at and above the threshold where the full test
    flips (a 0 in cell 0 included), where the shortcut must fall through to it."""
    from sparsedp._kernels._noise import _keep_decisions
    noise = IntegerNoise(law, scale)
    starts, widths = noise.cells
    rng = np.random.default_rng(3)
    cell = rng.integers(0, starts.size, 4000)
    cell[:40] = 0
    k = starts[cell] + rng.integers(0, widths[cell])
    k[:20] = 0
    near, start_near = [], []
    for kk, ss in zip(k, starts[cell]):
        log_p = log_ratio(law, scale, int(kk), int(ss))
        if law == "gaussian" and kk == 0:
            log_p -= math.log(2.0)
        threshold = int(math.exp(log_p) * 2.0 ** 63)
        for delta in (-2 ** 30, -2 ** 14, -2 ** 11, -1, 0, 1, 2 ** 11, 2 ** 14, 2 ** 30):
            near.append(min(max(threshold + delta, 0), 2 ** 63 - 1))
            start_near.append((kk, ss))
    kn, sn = np.array(start_near).T
    v = np.concatenate([rng.integers(0, 2 ** 63, k.size, dtype=np.uint64),
                        np.array(near, dtype=np.uint64)])
    fast, full = _keep_decisions(noise, np.concatenate([k, kn]), np.concatenate([starts[cell], sn]), v)
    np.testing.assert_array_equal(fast, full)
    at_threshold = full[k.size:]
    assert at_threshold.any() and not at_threshold.all()


def test_same_generator_state_same_draws():
    a = IntegerNoise("gaussian", 10000.0).draw(np.random.default_rng(9), 1000)
    b = IntegerNoise("gaussian", 10000.0).draw(np.random.default_rng(9), 1000)
    c = IntegerNoise("gaussian", 10000.0).draw(np.random.default_rng(10), 1000)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_releases_are_lattice_points():
    """y / g is an integer (Gaussian) or an integer + 1/2 (Laplace), exactly:
    the low-order bits of y carry nothing but the lattice point."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=1000) * 3.7
    g = 2.0 ** -12 * 0.3
    inv = 1.0 / g * (1 - 2.0 ** -50)
    for law, shift in (("gaussian", 0.0), ("laplace", 0.5)):
        y = IntegerNoise(law, 16384.0).release(x, inv, g, np.random.default_rng(1))
        lattice = np.round(y / g - shift)
        np.testing.assert_array_equal(y, g * (lattice + shift))


def test_neighbouring_sums_round_at_most_S_apart():
    """Sums of n terms in [-C, C] (one term changed from -C to +C, the rest random,
    summed left to right and pairwise) times the rounded-down inverse grid: rint
    differs by at most S, also for values placed on rounding boundaries."""
    rng = np.random.default_rng(0)
    for n in (1, 7, 800, 20_000):
        rho, points, _ = grid_scale(1.0, n)
        C = 0.37
        grid, inv = grid_for(2 * C, rho, points)
        worst = 0
        for trial in range(200):
            terms = rng.uniform(-C, C, size=n)
            terms[rng.integers(n)] = -C
            a = terms.copy()
            a[np.flatnonzero(terms == -C)[0]] = C
            for s1, s2 in ((np.cumsum(terms)[-1], np.cumsum(a)[-1]),
                           (terms.sum(), a.sum())):
                worst = max(worst, abs(np.rint(s1 * inv) - np.rint(s2 * inv)))
            # adversarial: x' = x + 2C exactly at a rounding boundary of x
            base = (rng.integers(-1000, 1000) + 0.5) / inv
            worst = max(worst, abs(np.rint(base * inv) - np.rint((base + 2 * C) * inv)))
        assert worst <= points
    assert float_sum_factor(1) > 1 and float_sum_factor(10**6) < 1 + 5e-4
    with pytest.raises(ValueError, match="too many terms"):
        float_sum_factor(2**40)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="law"):
        IntegerNoise("cauchy", 2000.0)
    with pytest.raises(ValueError, match="scale"):
        IntegerNoise("gaussian", 10.0)
    with pytest.raises(ValueError, match="scale"):
        IntegerNoise("laplace", math.inf)
    with pytest.raises(ValueError, match="multiplier"):
        grid_scale(0.0, 10)
    with pytest.raises(TypeError, match="Generator"):
        IntegerNoise("gaussian", 10000.0).draw(np.random.RandomState(0), 3)
    noise, rng = IntegerNoise("gaussian", 10000.0), np.random.default_rng(0)
    for out in (np.empty(3), np.empty((2, 2), dtype=np.int64), np.empty(6, dtype=np.int64)[::2],
                [0, 0, 0]):
        with pytest.raises(TypeError, match="out must be a writeable, C-contiguous"):
            noise.fill(rng, out)
    frozen = np.empty(3, dtype=np.int64)
    frozen.flags.writeable = False
    with pytest.raises(TypeError, match="out must be"):
        noise.fill(rng, frozen)
    assert noise.fill(rng, np.empty(0, dtype=np.int64)).size == 0


def test_grid_scale_keeps_the_integer_law_fine():
    """S >= 1024, and raised for small multipliers so that the law's scale is >= 8192."""
    assert grid_scale(9.0, 100)[1:] == (1024, 9216.0)
    assert grid_scale(3.0, 100)[1:] == (4096, 12288.0)
    rho, points, scale = grid_scale(0.01, 100)
    assert points == 2 ** 20 and scale == 0.01 * 2 ** 20 >= MIN_SCALE


def test_every_scale_from_min_scale_builds_a_table_within_eta():
    """Gaussian tables at every integer scale in [8192, 11192) and both laws at 300
    log-uniform real scales in [8192, 2**40) (seed 0) build within NOISE_ETA; below
    MIN_SCALE (where t = 1121 was "too coarse") the scale is refused with a ValueError."""
    for t in range(int(MIN_SCALE), int(MIN_SCALE) + 3000):
        assert IntegerNoise("gaussian", float(t)).eta <= NOISE_ETA
    scales = np.exp(np.random.default_rng(0).uniform(np.log(MIN_SCALE), 40 * np.log(2), 300))
    for scale in scales:
        for law in ("gaussian", "laplace"):
            assert IntegerNoise(law, float(scale)).eta <= NOISE_ETA
    with pytest.raises(ValueError, match="scale must be in"):
        IntegerNoise("gaussian", 1121.0)


@pytest.mark.parametrize("law,scale", [("gaussian", 8192.0), ("gaussian", 2.0 ** 30),
                                       ("laplace", 16384.0), ("laplace", 3e7)])
@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.SFC64])
def test_batch_fill_equals_the_draws(example, law, scale, bit_generator):
    """The batch fill (``noise_fill``, common case inlined; public cimport, through
    the example module) returns the very draws of IntegerNoise.draw (plus the
    Laplace shift 1/2), and leaves the generator in the same state."""
    noise = IntegerNoise(law, scale)
    g1, g2 = (np.random.Generator(bit_generator(5)) for _ in range(2))
    a, b = noise.draw(g1, 200_000), example.integer_noise(noise, g2, 200_000)
    np.testing.assert_array_equal(a + (0.5 if law == "laplace" else 0.0), b)
    assert g1.integers(2**62) == g2.integers(2**62)


@pytest.mark.parametrize("scale", [2.0 ** 38.6, 2.0 ** 39.9])
def test_fill_on_tables_with_cells_wider_than_2_to_32(example, scale):
    """Cells >= 2**32 wide have no packed copy: the batch fill must take the general path
    (it once returned the cells' starts, a few hundred values), with the law of draw."""
    noise = IntegerNoise("gaussian", scale)
    filled = example.integer_noise(noise, np.random.default_rng(0), 50000)
    drawn = noise.draw(np.random.default_rng(1), 50000)
    assert len(np.unique(filled)) > 49000
    assert stats.ks_2samp(filled, drawn).pvalue > 1e-3
    assert stats.kstest(filled / scale, "norm").pvalue > 1e-3
