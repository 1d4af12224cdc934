"""The noisy max under floating point (docs/privacy.rst, "Noisy max under
floating point").

* Exponential mechanism: the sampler's law is known exactly (an exact uniform
  integer below the sum of the integer weights r_k, then k's acceptance
  probability ``m_k / 2^(53 + n_k)``), so it is computed in rational arithmetic
  (r_k and (n_k, m_k) recomputed from the public ``scores``, ``ref``, ``scale``
  and ``units`` with the kernel's double operations: ``problems.noisy_max_weights``
  and ``acceptances``; the sampler's draws, replayed word for word from random
  and from chosen generator words, pin them to the kernel's own, boundary by
  boundary)
  and compared, index by index, with the ideal law ``exp(s_k / b) / Z``
  evaluated independently with mpmath at 60 digits: the log-ratio must be within
  ``eta(g_k) = 2^-50 (g_k / b + log p + 320)`` (g_k the gap to the best score)
  for every index, including indices 1000 b or 10^5 b below the best (weights
  that underflow double precision), ties, p = 1 and p = 2, and score vectors
  at the edges of the re-reference range.  The same exact laws on neighbouring
  score vectors (every score moved by at most Delta, in opposite directions)
  give probability ratios within ``exp(eps0 + 2 eta)``.
* Both mechanisms: draws against the exact law (chi-square or exact binomial
  tests, fixed seeds, p-value above 1e-3 required).
"""
import bisect
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from problems import NOISY_MAX_HEAD_BITS as HEAD_BITS
from problems import noisy_max_weights
from sparsedp.random import NoisyMax

mpmath = pytest.importorskip("mpmath")
mpmath.mp.dps = 60



def eta_bound(scores, b):
    """The documented per-index bound on |log P~(k) / P(k)|."""
    scores = np.asarray(scores, dtype=float)
    gaps = (scores.max() - scores) / b
    return 2.0 ** -50 * (gaps + math.log(len(scores)) + 320.0)


def ideal_log_law(scores, b):
    """log P(k) = s_k / b - log sum_j exp(s_j / b), with mpmath (doubles read exactly)."""
    x = [mpmath.mpf(float(s)) / mpmath.mpf(b) for s in scores]
    top = max(x)
    log_z = top + mpmath.log(mpmath.fsum(mpmath.exp(v - top) for v in x))
    return [v - log_z for v in x]


def acceptances(nm):
    """Per k, ``(n, m)``: the exponential sampler accepts k w.p. ``m / 2^(53 + n)``
    (``n = -1``: never), as ``NoisyMax.acceptance`` computes it (the same double
    operations, libm's exp and log): an r_k above 2^52 at once, otherwise
    ``a = exp(la)``, ``la = (s_k - ref) / b + Q log 2 - log r_k``, as ``n`` zero bits
    and a 53-bit threshold ``ceil(2^53 exp(la + n log 2))``.
    ``test_exponential_descent_replays_the_integer_inverse_cdf_with_acceptance``
    and ``test_exponential_replay_pins_every_weight_at_its_boundaries`` replay
    the sampler's draws with it and ``problems.noisy_max_weights``, word for word."""
    out = []
    for s, r in zip(nm.scores, noisy_max_weights(nm)):
        if r > 2 ** 52:
            out.append((0, 2 ** 53))
            continue
        la = (s - nm.ref) / nm.scale + nm.units * math.log(2) - math.log(float(r))
        if la >= 0.0:
            out.append((0, 2 ** 53))
        elif la < -1099511627776.0:
            out.append((-1, 2 ** 53))
        else:
            n = math.floor(-la / math.log(2))
            out.append((n, math.ceil(math.ldexp(min(math.exp(la + n * math.log(2)), 1.0), 53))))
    return out


def implemented_law(nm):
    """The exact law of the exponential sampler, as Fractions."""
    weights = []
    for r, (n, m) in zip(noisy_max_weights(nm), acceptances(nm)):
        weights.append(Fraction(0) if n < 0 else Fraction(r * m, 2 ** (53 + n)))
    total = sum(weights)
    return [w / total for w in weights]


def log_fraction(f):
    return mpmath.log(mpmath.mpf(f.numerator)) - mpmath.log(mpmath.mpf(f.denominator))


def log_errors(nm, scores, b):
    """|log P~(k) - log P(k)| for every k (mpmath floats)."""
    law = implemented_law(nm)
    assert all(q > 0 for q in law)  # no index is ever lost
    return [abs(log_fraction(q) - lp) for q, lp in zip(law, ideal_log_law(scores, b))]


def chi2_pvalue(counts, probs):
    probs = np.asarray(probs, dtype=float)
    keep = probs * counts.sum() >= 5  # pool the cells expected below 5 draws
    observed = np.r_[counts[keep], counts[~keep].sum()]
    expected = np.r_[probs[keep], probs[~keep].sum()] * counts.sum()
    if expected[-1] == 0:
        assert observed[-1] == 0
        observed, expected = observed[:-1], expected[:-1]
    return stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue


def laplace_law(s, b):
    """P(argmax_k s_k + Lap(b)_k = j) by quadrature (independent of the sampler)."""
    s = np.asarray(s, dtype=float)
    probs = []
    for j in range(len(s)):
        others = np.delete(s, j)

        def density(x):
            return stats.laplace.pdf(x, s[j], b) * np.exp(
                np.sum(stats.laplace.logcdf(x, others, b)))
        probs.append(integrate.quad(density, s[j] - 60 * b, s[j] + 60 * b,
                                    points=[s[j]], limit=500, epsabs=1e-13)[0])
    return np.array(probs)


# Adversarial score vectors (in units of b = 1 unless scaled below)
VECTORS = {
    "p=1": [0.3],
    "p=2 close": [0.0, -0.25],
    "p=2 gap 40": [0.0, -40.0],
    "p=2 gap 1000": [0.0, -1000.0],
    "ties": [1.0, 1.0, 1.0, 0.5, 0.5, -3.0],
    "all tied": [2.5] * 37,
    "underflow edge": [0.0, -700.0, -744.0, -745.2, -746.0, -800.0, -1075.0],
    "huge gaps": [0.0, -1.0, -1000.0, -5000.0, -1e5],
    "one top, many tiny": [0.0] + [-60.0 - 0.01 * i for i in range(300)],
}


@pytest.mark.parametrize("name", list(VECTORS))
@pytest.mark.parametrize("b", [1.0, 0.013])
def test_exponential_law_is_exact_to_eta(name, b):
    s = np.asarray(VECTORS[name]) * b
    nm = NoisyMax(s, b, "exponential", np.random.default_rng(0))
    err = log_errors(nm, s, b)
    bound = eta_bound(s, b)
    assert all(e <= bd for e, bd in zip(err, bound)), (max(err), name)
    # and in fact far inside: the roundings of (s - ref) / b, exp and log only
    assert max(err) < 1e-12 * (1 + (s.max() - s.min()) / b)


def test_exponential_law_at_the_edges_of_the_reference_range():
    b = 0.7
    s = np.array([0.0, -0.5, -3.0, -8.0, -11.0, -30.0, -900.0]) * b
    nm = NoisyMax(s, b, "exponential", np.random.default_rng(1))
    rebuilds = nm.n_rebuilds
    # a score just below the headroom (no rebuild): weights up to 2^(Q + 23)
    up = (HEAD_BITS - 1) * math.log(2) * b * (1 - 1e-9)
    nm.update([1], [up])
    s[1] = up
    assert nm.n_rebuilds == rebuilds
    assert max(noisy_max_weights(nm)) > 2 ** (nm.units + HEAD_BITS - 2)
    assert max(log_errors(nm, s, b)) < 1e-11
    # the best falls to just above the floor (no rebuild): most weights are
    # no longer exact integers, they take the acceptance test
    floor = (max(nm.units - 60, 8)) * math.log(2) * b * (1 - 1e-9)
    s[:] = [-floor, -floor - 6 * b, -floor - 7 * b, -floor - 9 * b, -floor - 40 * b,
            -floor - 800 * b, -floor - 2000 * b]
    nm.update(np.arange(len(s)), s)
    assert nm.n_rebuilds == rebuilds
    assert sum(n >= 0 and m < 2 ** 53 for n, m in acceptances(nm)) >= 4
    err = log_errors(nm, s, b)
    assert all(e <= bd for e, bd in zip(err, eta_bound(s, b)))
    # draws through the acceptance test follow the law
    draws = nm.draw(300_000)
    probs = [float(q) for q in implemented_law(nm)]
    assert chi2_pvalue(np.bincount(draws, minlength=len(s)), probs) > 1e-3
    # one step further: rebuilds, law unchanged
    nm.update([0], [s[0] - b])
    s[0] -= b
    assert nm.n_rebuilds == rebuilds + 1
    assert max(log_errors(nm, s, b)) < 1e-11


def test_exponential_neighbouring_ratios_stay_within_eps0():
    # P~_D(k) / P~_D'(k) for s' = s + Delta on k and s - Delta elsewhere (the
    # worst case of the e^eps0 bound, approached as P(k) -> 0), from the exact law
    # of the sampler on both score vectors; indices deep below the top (the old
    # double-precision sampler gave them probability 0 on one side: ratio inf)
    eps0 = 0.8
    delta = 0.01
    b = 2 * delta / eps0
    s = np.array([0.0, -0.3, -2.0, -40.0, -700.0, -745.5, -1000.0, -3000.0]) * b
    eta = eta_bound(np.r_[s, s.min() - 2 * delta], b).max()  # both vectors' gaps
    worst = 0.0
    for k in range(len(s)):
        for sign in (1.0, -1.0):
            s2 = s - sign * delta
            s2[k] = s[k] + sign * delta
            p1 = implemented_law(NoisyMax(s, b, "exponential", np.random.default_rng(0)))
            p2 = implemented_law(NoisyMax(s2, b, "exponential", np.random.default_rng(0)))
            for j in range(len(s)):
                ratio = abs(log_fraction(p1[j]) - log_fraction(p2[j]))
                assert ratio <= eps0 + 2 * eta
                worst = max(worst, float(ratio))
    assert worst > eps0 - 1e-6  # the bound is attained (deep indices)


@pytest.mark.parametrize("name", ["p=2 close", "ties", "all tied", "one top, many tiny"])
def test_exponential_draws_follow_the_exact_law(name):
    b = 0.5
    s = np.asarray(VECTORS[name]) * b
    nm = NoisyMax(s, b, "exponential", np.random.default_rng(2))
    counts = np.bincount(nm.draw(200_000), minlength=len(s))
    law = [float(mpmath.exp(v)) for v in ideal_log_law(s, b)]
    assert chi2_pvalue(counts, law) > 1e-3


def test_exponential_rare_index_exact_binomial():
    # P(1) = 1 / (1 + e^10) = 4.54e-5: 2e6 draws, exact two-sided binomial test
    s = np.array([0.0, -10.0])
    n = 2_000_000
    hits = int(NoisyMax(s, 1.0, "exponential", np.random.default_rng(3)).draw(n).sum())
    assert stats.binomtest(hits, n, 1 / (1 + math.exp(10))).pvalue > 1e-3


def test_p_equal_one_and_huge_gaps_never_pick_the_far_index():
    for selection in ("exponential", "laplace"):
        assert np.all(NoisyMax(np.array([4.0]), 1.0, selection,
                               np.random.default_rng(4)).draw(1000) == 0)
        far = NoisyMax(np.array([0.0, -1000.0, -1000.0]), 1.0, selection,
                       np.random.default_rng(5))
        assert np.all(far.draw(20_000) == 0)  # P(other) ~ e^-1000


@pytest.mark.parametrize("name, b, draws", [
    ("p=2 close", 1.0, 100_000),
    ("ties", 1.0, 100_000),
    ("all tied", 0.3, 100_000),
    ("p=2 gap 40", 1.0, 20_000),
    ("ties", 0.05, 100_000),
])
def test_laplace_draws_follow_the_exact_law(name, b, draws):
    s = np.asarray(VECTORS[name], dtype=float)
    nm = NoisyMax(s, b, "laplace", np.random.default_rng(6))
    counts = np.bincount(nm.draw(draws), minlength=len(s))
    law = np.full(len(s), 1 / len(s)) if np.all(s == s[0]) else laplace_law(s, b)
    assert abs(law.sum() - 1) < 1e-8
    assert chi2_pvalue(counts, law) > 1e-3


def test_laplace_two_candidates_closed_form():
    # P(the lower of two wins) = e^-d (2 + d) / 4 for a gap of d b
    for d, seed in ((0.0, 7), (0.7, 8), (3.0, 9)):
        n = 400_000
        hits = int(NoisyMax(np.array([d, 0.0]), 1.0, "laplace",
                            np.random.default_rng(seed)).draw(n).sum())
        assert stats.binomtest(hits, n, math.exp(-d) * (2 + d) / 4).pvalue > 1e-3


def test_laplace_fallback_follows_the_law():
    # one dominant score: nothing exceeds t in ~2% of draws, which then draw every
    # tail value conditioned below t (by rejection)
    s = np.array([5.0, 0.0, 0.3, -0.2, 0.1, -1.0])
    nm = NoisyMax(s, 1.0, "laplace", np.random.default_rng(10))
    counts = np.bincount(nm.draw(300_000), minlength=len(s))
    assert nm.n_fallbacks > 1000
    assert chi2_pvalue(counts, laplace_law(s, 1.0)) > 1e-3


def test_laplace_over_many_blocks_with_ties_and_deep_scores():
    # 5000 coordinates: 3 tied on top, 20 within a few b, the rest far below
    # (integer weights of 1), a block of them beyond the underflow of exp
    rng = np.random.default_rng(11)
    p, b = 5000, 1.0
    s = rng.uniform(-900.0, -30.0, p)
    top = rng.choice(p, 23, replace=False)
    s[top[:3]] = 0.0
    s[top[3:]] = rng.uniform(-4.0, -0.5, 20)
    nm = NoisyMax(s, b, "laplace", np.random.default_rng(12))
    assert sum(r == 1 for r in noisy_max_weights(nm)) > 4000
    counts = np.bincount(nm.draw(100_000), minlength=p)
    observed = np.r_[counts[top], counts.sum() - counts[top].sum()]
    assert observed[-1] == 0  # P(a score 30 b below wins) < 5000 e^-30
    law = laplace_law(s[top], b)
    assert chi2_pvalue(observed[:-1], law) > 1e-3


def test_integer_weights_are_the_rounded_up_exponential():
    # r_k = max(1, ceil(2^Q exp((s_k - ref) / b))), exact above 2^52 (the replica's
    # weights: the replays below pin them to the kernel's)
    s = np.array([0.0, -1.0, -30.0, -60.0, -68.0, -200.0, -2000.0])
    nm = NoisyMax(s, 1.0, "exponential", np.random.default_rng(13))
    q = nm.units
    assert q == 126 - HEAD_BITS - len(s).bit_length()
    for r, x, (n, m) in zip(noisy_max_weights(nm), s, acceptances(nm)):
        target = mpmath.ldexp(mpmath.exp(mpmath.mpf(x)), q)
        assert r >= 1
        assert r - 1 < target * (1 + mpmath.mpf(2) ** -50)
        if r > 2 ** 52:
            assert (n, m) == (0, 2 ** 53)
            assert abs(r / target - 1) < 2 ** -50
        else:  # accepted w.p. target / r, exactly to the rounding of exp and log
            assert abs(mpmath.mpf(m) / 2 ** (53 + n) * r / target - 1) \
                < 2.0 ** -50 * (abs(x) + 125)


def test_exponential_descent_replays_the_integer_inverse_cdf_with_acceptance():
    # draw for draw from the same 64-bit words, including the acceptance draws
    # (zero bits, then a 53-bit uniform) of weights that are not exact integers
    b = 1.0
    s = np.array([0.0, -6.0, -7.5, -9.0])  # 2^60 e^-6 < 2^52: not integers
    nm = NoisyMax(s, b, "exponential", np.random.default_rng(14))
    floor = max(nm.units - 60, 8) * math.log(2) * b * (1 - 1e-9)
    s = s - floor
    nm.update(np.arange(4), s)
    acc = acceptances(nm)
    r = noisy_max_weights(nm)
    assert any(m < 2 ** 53 for _, m in acc)
    lazy = nm.draw(3000)
    words = iter(int(w) for w in np.random.default_rng(14).bit_generator.random_raw(50_000))
    assert np.array_equal(lazy, replay_exponential(words, r, acc, 3000))


def test_exponential_replay_pins_every_weight_at_its_boundaries():
    # chosen 64-bit words: for every index k, the first and the last uniform integer
    # of its cell [r_0 + .. + r_(k-1), r_0 + .. + r_k), the integer sum itself (the
    # masked rejection refuses it), and k's acceptance test passed and failed by
    # one unit (the last word of zero bits, the 53-bit threshold m - 1 against m):
    # the kernel draws what the replica's weights and acceptances say only if every
    # r_k, every partial sum and every (n_k, m_k) is exactly the kernel's
    b = 0.7
    rng = np.random.default_rng(15)
    x = rng.uniform(-20.0, 0.0, 300)                 # exact integers above 2^52
    x[0] = 0.0
    x[10:60] = rng.uniform(-64.0, -29.0, 50)         # below 2^52: acceptance test
    x[60:72] = [-65.1, -65.15, -65.16, -65.2, -66.0, -70.0, -100.0, -744.0, -746.0,
                -1000.0, -3e12, -1e13]              # weights of 1, ever more zero bits
    x[100:110] = 3.0                                 # ties
    generator = np.random.Generator(np.random.MT19937(15))
    nm = NoisyMax(x * b, b, "exponential", generator)
    rebuilds = nm.n_rebuilds
    nm.update([1, 2, 0], [10.0 * b, -64.5 * b, -5.0 * b])  # above ref, no re-reference
    assert nm.n_rebuilds == rebuilds and nm.ref < max(nm.scores)
    r, acc = noisy_max_weights(nm), acceptances(nm)
    assert any(w > 2 ** 52 for w in r) and r.count(1) >= 10
    assert any(1 < w <= 2 ** 52 and 0 <= n and m < 2 ** 53 for w, (n, m) in zip(r, acc))
    assert any(n >= 64 for n, _ in acc) and any(n < 0 for n, _ in acc)
    for words, expected in boundary_replays(r, acc):
        assert replay_exponential(iter(words), r, acc, len(expected), exhaust=True) \
            == expected  # the chosen words do what they were chosen for
        set_next_words(generator.bit_generator, words)
        assert nm.draw(len(expected)).tolist() == expected


def replay_exponential(words, r, acc, size, exhaust=False):
    """``size`` draws of the exponential sampler replayed in Python from its 64-bit
    ``words`` (an iterator), the weights ``r`` and the acceptances ``acc``: a uniform
    integer below ``sum(r)`` by masked rejection (the high word first above 64
    bits), the inverse CDF, then k's acceptance test (``n`` zero bits, then a word
    whose top 53 bits must be below ``m``; none above 2^52 units).  ``exhaust``:
    every word must be read."""
    cum, total = list(itertools.accumulate(r)), sum(r)
    bits = (total - 1).bit_length()
    replay = []
    while len(replay) < size:
        x = total
        while x >= total:
            x = (next(words) >> (64 - bits)) if bits <= 64 else \
                (next(words) >> (128 - bits) << 64) | next(words)
        k = bisect.bisect_right(cum, x)
        if r[k] > 2 ** 52:
            replay.append(k)
            continue
        n, m = acc[k]
        ok = n >= 0
        while ok and n >= 64:
            ok, n = next(words) == 0, n - 64
        if ok and n > 0:
            ok = next(words) >> (64 - n) == 0
        if ok and next(words) >> 11 < m:
            replay.append(k)
    if exhaust:
        assert next(words, None) is None
    return replay


def boundary_replays(r, acc, max_words=312):
    """Batches of at most ``max_words`` 64-bit words and the indices the exponential
    sampler draws from them (see ``test_exponential_replay_pins_every_weight_at_its_
    boundaries``); each batch ends with an accepted draw."""
    cum, total = list(itertools.accumulate(r)), sum(r)
    bits = (total - 1).bit_length()
    mask = 2 ** 64 - 1

    def uniform(x):  # the words that the masked rejection reads as x
        return [x << (64 - bits)] if bits <= 64 else [(x >> 64) << (128 - bits), x & mask]

    def zero_bits(n, passed):  # n zero bits, or the last of them set
        words = [0] * (n // 64) + ([(1 << (64 - n % 64)) - 1] if n % 64 else [])
        if not passed:
            words[-1] = words[-1] + 1
        return words

    pending = uniform(total) if total < 2 ** bits else []  # refused: x >= sum
    groups = []
    for k, (w, (n, m)) in enumerate(zip(r, acc)):
        for x in sorted({cum[k] - w, cum[k] - 1}):
            if w > 2 ** 52:  # accepted at once, no word read
                groups.append((pending + uniform(x), k))
                pending = []
                continue
            if n < 0:  # never accepted, no word read
                pending += uniform(x)
                continue
            if n > 0:
                pending += uniform(x) + zero_bits(n, False)
            if m < 2 ** 53:
                pending += uniform(x) + zero_bits(n, True) + [m << 11]
            groups.append((pending + uniform(x) + zero_bits(n, True)
                           + [((m - 1) << 11) | 0x7FF], k))
            pending = []
    batches, words, expected = [], [], []
    for group, k in groups:
        assert len(group) <= max_words
        if len(words) + len(group) > max_words:
            batches.append((words, expected))
            words, expected = [], []
        words, expected = words + group, expected + [k]
    return batches + [(words, expected)]


def _untemper(y):
    """The MT19937 key word whose tempered output is the 32-bit ``y``."""
    y ^= y >> 18
    y ^= (y << 15) & 0xEFC60000
    z = y
    for _ in range(5):
        z = y ^ ((z << 7) & 0x9D2C5680)
    y = z & 0xFFFFFFFF
    z = y
    for _ in range(3):
        z = y ^ (z >> 11)
    return z & 0xFFFFFFFF


def set_next_words(bit_generator, words):
    """Make an MT19937's next 64-bit words ``words`` (at most 312), in place: at
    position 0 it outputs its 624 key words, tempered, before its next twist, two
    32-bit outputs per 64-bit word, the high one first (checked on a copy through
    ``next_uint64``, the function the kernel calls)."""
    halves = [h for w in words for h in (w >> 32, w & 0xFFFFFFFF)]
    state = bit_generator.state
    key = np.array(state["state"]["key"], dtype=np.uint32)
    assert len(halves) <= len(key)
    key[:len(halves)] = [_untemper(h) for h in halves]
    state["state"] = {"key": key, "pos": 0}
    check = np.random.MT19937()
    check.state = state
    assert [check.ctypes.next_uint64(check.ctypes.state) for _ in words] == words
    bit_generator.state = state


@pytest.mark.parametrize("selection, scale", [("laplace", 0.05), ("exponential", 0.05),
                                              ("argmax", 0.0)])
def test_a_copy_is_the_same_sampler_on_its_own_state(selection, scale):
    """``copy(generator)`` (DP-GCD copies the noisy max of a kept start): after draws
    and updates of the original, the copy's draws and updates are the original's,
    given the same generator words, and neither changes the other."""
    rng = np.random.default_rng(3)
    scores = rng.normal(0.0, 0.2, size=3000)
    words = np.random.default_rng(11)
    original = NoisyMax(scores, scale, selection, words)
    original.draw(25)
    original.update(rng.integers(0, 3000, 200), rng.normal(0.0, 0.3, size=200))
    twin = original.copy(np.random.default_rng(12))
    words.bit_generator.state = np.random.default_rng(12).bit_generator.state
    np.testing.assert_array_equal(original.draw(400), twin.draw(400))
    changed, values = rng.integers(0, 3000, 500), rng.normal(0.0, 0.5, size=500)
    for sampler in (original, twin):
        sampler.update(changed, values)
    np.testing.assert_array_equal(original.draw(400), twin.draw(400))
    np.testing.assert_array_equal(original.scores, twin.scores)
    assert (original.n_rebuilds, original.ref) == (twin.n_rebuilds, twin.ref)
    twin.update([0], [original.scores[0] + 1.0])  # the copy's state is its own
    assert original.scores[0] != twin.scores[0]
    for not_a_generator in (None, 3, np.random.RandomState(0)):
        with pytest.raises(TypeError, match="numpy.random.Generator"):
            original.copy(not_a_generator)


def test_a_noisy_max_is_initialised_once():
    sampler = NoisyMax(np.zeros(4), 1.0, "laplace", np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="initialised once"):
        sampler.__init__(np.zeros(4), 1.0, "laplace", np.random.default_rng(0))
    bare = NoisyMax.__new__(NoisyMax)  # no __init__: a clear error, never a crash
    for call in (lambda: bare.copy(np.random.default_rng(0)), lambda: bare.draw(1),
                 lambda: bare.update([0], [1.0]), lambda: bare.scores):
        with pytest.raises(ValueError, match="not initialised"):
            call()


def test_updates_outside_the_scores_are_clear_errors():
    sampler = NoisyMax(np.zeros(4), 1.0, "laplace", np.random.default_rng(0))
    with pytest.raises(IndexError, match=r"\[0, 4\)"):
        sampler.update([4], [1.0])
    with pytest.raises(IndexError):
        sampler.update([-1], [1.0])
    with pytest.raises(ValueError, match="finite"):
        sampler.update([0], [np.nan])
    with pytest.raises(ValueError, match="one length"):
        sampler.update([0, 1], [1.0])
    np.testing.assert_array_equal(sampler.scores, np.zeros(4))  # nothing changed
