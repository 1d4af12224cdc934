"""Floating-point-safe noise: public grids and integer noise of a known law.

A mechanism that adds floating-point noise to a floating-point value releases
low-order bits that depend on the value (Mironov 2012).  Every release in
sparsedp is instead

    ``y = g * (rint(x / g) + J)``,

with a public grid ``g`` and a noise ``J`` on a fixed lattice drawn from a law
whose probabilities are known: ``y`` is a function of the lattice point
``rint(x / g) + J`` and of public constants, so its bits say nothing beyond it.
The grid is ``g = Delta rho / S`` for the release's sensitivity Delta, a power of
two S (grid points per sensitivity) and rho >= 1, which covers the rounding of
the floating-point computation of x and of ``x / g`` (:func:`float_sum_factor`):
neighbouring datasets give integers ``k = rint(x / g)`` at most S apart (rint is
monotone and commutes with shifts by the even integer S).  The noise is

* Gaussian: ``J = round(t N)``, N standard normal, ``t = z S``.  Since ``k + J
  = round(k + t N)``, the release is a post-processing of the Gaussian
  mechanism ``k + t N`` on an integer of sensitivity S: noise multiplier
  ``t / S = z``, and every privacy curve of that Gaussian mechanism (GDP, Renyi,
  zCDP) holds;
* Laplace: ``J = floor(L)``, L Laplace of scale ``b = b_0 S``, released as ``J +
  1/2`` (``P(J = j) ∝ exp(-|j + 1/2| / b)``).  Since ``k + floor(L) = floor(k +
  L)``, the release is a post-processing of the Laplace mechanism ``k + L``:
  ``S / b = 1 / b_0``-DP, with the Laplace mechanism's Renyi curve.

The sampler (:func:`noise_draw`, a few nanoseconds a draw: about half of
numpy's ``standard_normal``) uses only 64-bit words of a numpy bit generator,
integer arithmetic and, rarely, a floating-point acceptance test.  It draws
``m = |J|`` (Gaussian; ``J = m`` or ``-m - 1`` for Laplace) from ``P(m) ∝ p(m)``:

* below ``K_T`` (the end of the body cells, 4.5 t or 12 b and a little more) m
  lies in one of at most 511 cells of consecutive integers, each of a
  power-of-two width; a cell is chosen by an alias table over 512 slots (9 bits
  of a word pick the slot, the next 55 bits are compared with the slot's integer
  threshold: cell probabilities are exact multiples of 2**-64), an integer in the
  cell uniformly (the word's low bits: exact, no multiplication), and it is kept
  with probability ``p(m) / p(cell start)`` (at once when a 63-bit uniform is
  below a lower bound of that ratio over the cell, over 99% of draws: the
  cells are narrow where the mass is, ``body_cells``; otherwise a
  Gaussian's ratio is compared through its main term first, and log_shape's
  logarithms are computed only near the threshold: :func:`keep_in_cell`);
* beyond ``K_T``: block ``j`` geometric(1/2) (trailing zeros of words: exact),
  an integer uniformly in the block of ``B`` integers, kept with probability
  ``p(m) 2^j / p(K_T) <= 1`` (log-concavity: ``p(m + B) <= p(m) / 2``);
* a sign bit.  A Gaussian 0 is kept with probability ``p(0) / 2`` relative to its
  cell's start (the acceptance test halves it), so that both signs of 0 give 0
  with ``P(J = 0) = p(0)``: no redraw.

In the common case one word decides everything (``_noise.pxd``, ``noise_draw``):
the comparisons read their first 15 and 10 bits from it, and only a draw that
these leave undecided reads the rest of the uniform from fresh words, so the law
is that of full-width uniforms drawn lazily.

Rejection sampling makes the accepted law proportional to the ideal one up to
the relative errors of the cell probabilities (quantised to 2**-64, computed
exactly when the table is built) and of the acceptance probabilities
(double-precision ratios, well within 2**-44): every probability is within a
factor ``exp(+-eta)`` of the ideal law, with ``eta`` computed at build time
(:attr:`IntegerNoise.eta`, at most ``NOISE_ETA = 2**-40``).  The accounting
adds ``2 eta`` to epsilon per draw (and scales delta by ``exp(eta)``), see
:meth:`sparsedp.accounting.PrivacyLedger.add_sampler_error`.  Gaussian draws
beyond 38 t (ideal probability below 1e-300) are never returned.
"""
import math

from libc.math cimport exp, fabs, floor, ldexp, log, log2, rint, M_LN2
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
from numpy.random cimport bitgen_t

import numpy as np

from ._random cimport Sfc64State, generator_bitgen, sfc64_next, sfc64_state

cdef extern from *:
    """
    #include <stdint.h>
    static inline uint64_t sparsedp_mulhi(uint64_t a, uint64_t b, uint64_t* lo) {
        __uint128_t p = (__uint128_t) a * b; *lo = (uint64_t) p; return (uint64_t)(p >> 64);
    }
    static inline int sparsedp_ctz(uint64_t x) { return __builtin_ctzll(x); }
    #include <math.h>
    /* w / total = m 2**s / (M 2**64) exactly, m and M the 53-bit integer significands
       of the positive doubles w <= total; 0 <= s <= 64 (else -1: w / total < 2**-64,
       or w > total) */
    static int sparsedp_ratio(double w, double total, uint64_t* m, uint64_t* M) {
        int e, E;
        double fw = frexp(w, &e), ft = frexp(total, &E);
        *m = (uint64_t) ldexp(fw, 53); *M = (uint64_t) ldexp(ft, 53);
        return (w > 0 && w <= total && 64 + e - E >= 0) ? 64 + e - E : -1;
    }
    /* round(w / total * 2**64), halves up, exact (128-bit integers); UINT64_MAX if
       the ratio is out of range (sparsedp_ratio) */
    static uint64_t sparsedp_quantise(double w, double total) {
        uint64_t m, M;
        int s = sparsedp_ratio(w, total, &m, &M);
        if (s < 0) return UINT64_MAX;
        __uint128_t num = (__uint128_t) m << s;  /* < 2**117 */
        __uint128_t q = (2 * num + M) / (2 * (__uint128_t) M);
        return q > UINT64_MAX ? UINT64_MAX : (uint64_t) q;
    }
    /* |units - w / total * 2**64| / (w / total * 2**64): the relative error of units
       (its numerator exact; the division rounded, relative error 2**-53); inf if
       the ratio is out of range or units is too far */
    static double sparsedp_quantise_error(double w, double total, uint64_t units) {
        uint64_t m, M;
        int s = sparsedp_ratio(w, total, &m, &M);
        if (s < 0) return INFINITY;
        __uint128_t num = (__uint128_t) m << s, got = (__uint128_t) units * M;
        __uint128_t diff = got > num ? got - num : num - got;
        if (diff >> 64) return INFINITY;
        return (double) (uint64_t) diff / (double) num;
    }
    """
    uint64_t mulhi "sparsedp_mulhi"(uint64_t a, uint64_t b, uint64_t* lo) noexcept nogil
    int ctz "sparsedp_ctz"(uint64_t x) noexcept nogil
    uint64_t quantise "sparsedp_quantise"(double w, double total) noexcept nogil
    double quantise_error "sparsedp_quantise_error"(double w, double total,
                                                    uint64_t units) noexcept nogil

NOISE_ETA = 2.0 ** -40          # the largest eta a table may have (checked at build)
GRID_POINTS = 1024              # S: grid points per sensitivity (a power of two)
# t or b in grid units is at least this (grid_scale raises S until it is).  Below
# about 6,000 the last body cell of some Gaussian tables holds too little mass to
# be quantised within NOISE_ETA ("noise table too coarse", first at t = 1121);
# none fails from 8192 to 2**40 (tests/test_noise.py sweeps it).
MIN_SCALE = 8192.0
GAUSSIAN_BODY = 4.5             # K_T = ceil(4.5 t): cells below, geometric tail beyond
LAPLACE_BODY = 12.0             # K_T = ceil(12 b)
BODY_CELLS = 480                # body cells: at most 480 (and a Gaussian's few head cells)
ZERO_CELL = 2.0 ** -17          # a Gaussian's cell 0: about t 2**-17 wide (body_cells)
GAUSSIAN_CUTOFF = 38.0          # draws beyond 38 t are refused (probability < 1e-300)
cdef double TWO63 = 9223372036854775808.0
cdef double TWO51 = 2251799813685248.0
cdef double CUTOFF = GAUSSIAN_CUTOFF
cdef uint64_t LOW55 = (<uint64_t> 1 << 55) - 1
cdef uint64_t LOW63 = (<uint64_t> 1 << 63) - 1
cdef uint64_t LOW15 = (<uint64_t> 1 << 15) - 1
cdef uint64_t LOW10 = (<uint64_t> 1 << 10) - 1


cdef inline uint64_t next64(bitgen_t* rng) noexcept nogil:
    return rng.next_uint64(rng.state)


cdef inline uint64_t bounded(bitgen_t* rng, uint64_t m) noexcept nogil:
    """Uniform integer in [0, m), m >= 1, exactly (Lemire's multiply-and-reject)."""
    cdef uint64_t lo, hi, threshold
    hi = mulhi(next64(rng), m, &lo)
    if lo < m:
        threshold = (0 - m) % m
        while lo < threshold:
            hi = mulhi(next64(rng), m, &lo)
    return hi


cdef inline double log_shape(double k, double t) noexcept nogil:
    """log of I(k) = int_{-1/2}^{1/2} exp(-(k u)/t^2 - u^2/(2 t^2)) du, t >= 1024, k <= 40 t.

    P(k) = phi(k / t) I(k) / t for the discretised Gaussian; the double series
    in a = k / t^2 <= 0.04 and c = 1 / (2 t^2) is truncated far below 2**-60.
    """
    cdef double a = k / (t * t), c = 0.5 / (t * t), a2 = a * a
    # sum over l even of a^l / (l! (2m + l + 1) 2^(2m + l)), for m = 0, 1, 2
    cdef double s0 = 1.0 + a2 * (1.0 / 24.0 + a2 * (1.0 / 1920.0 + a2 * (
        1.0 / 322560.0 + a2 * (1.0 / 92897280.0 + a2 * (1.0 / 40874803200.0)))))
    cdef double s1 = 1.0 / 12.0 + a2 * (1.0 / 160.0 + a2 * (1.0 / 10752.0 + a2 * (
        1.0 / 2949120.0)))
    cdef double s2 = 1.0 / 80.0 + a2 * (1.0 / 1792.0)
    return log(s0 - c * s1 + 0.5 * c * c * s2)


cdef inline double gaussian_main(double scale, int64_t k, int64_t k0) noexcept nogil:
    """-(k - k0)(k + k0) / (2 t^2): the Gaussian's log ratio without its shape term."""
    return -(<double> (k - k0)) * (<double> (k + k0)) / (2.0 * scale * scale)


cdef double log_ratio(int law, double scale, int64_t k, int64_t k0) noexcept nogil:
    """log P(k) - log P(k0) for 0 <= k0 <= k (the ideal law, unnormalised)."""
    if law == NOISE_LAPLACE:
        return -(<double> (k - k0)) / scale
    return (gaussian_main(scale, k, k0)
            + log_shape(<double> k, scale) - log_shape(<double> k0, scale))


cdef inline double zero_share(const NoiseTable* table, int64_t k) noexcept nogil:
    """ln 2 for a Gaussian 0 (either sign gives 0: each keeps half of P(0)), else 0."""
    return M_LN2 if k == 0 and table.law == NOISE_GAUSSIAN else 0.0


cdef inline double keep_log_ratio(const NoiseTable* table, int64_t k, int64_t start) noexcept nogil:
    """log of the probability of keeping k drawn uniformly in the cell from ``start``:
    P(k) / P(start), halved for a Gaussian 0 (:func:`zero_share`)."""
    return log_ratio(table.law, table.scale, k, start) - zero_share(table, k)


cdef inline bint keep(double log_p, uint64_t v) noexcept nogil:
    """v uniform in [0, 2^63): true with probability exp(log_p) (<= 1), to 2**-52."""
    return <double> v < exp(log_p) * TWO63


cdef double SHAPE_MARGIN = 2.0 ** -40   # room for the rounding of both computations


cdef inline bint keep_in_cell(const NoiseTable* table, int64_t k, int64_t start,
                              uint64_t v) noexcept nogil:
    """``keep(keep_log_ratio(table, k, start), v)``: the same decision, for a body cell.

    A Gaussian's log ratio is ``-(k - start)(k + start) / (2 t^2)`` (the main
    term) plus ``log_shape(k) - log_shape(start)``, which lies in ``[0, gap]``
    (log_shape increases with k; ``table.shape_bound = exp(2 gap + 2**-40) (1 +
    2**-40)``).  So ``v`` below ``exp(main) 2^63 (1 - 2**-40)`` is below the
    threshold ``keep`` computes and ``v`` at or above ``exp(main) 2^63
    shape_bound`` is above it, whatever their rounding (relative errors near
    1e-15, far inside the 2**-40 margins): only a ``v`` between the two (a
    probability near ``gap``, at most 1e-6) needs the two logarithms of
    ``log_shape``.
    """
    cdef double main, x, u
    if table.law != NOISE_GAUSSIAN:
        return keep(keep_log_ratio(table, k, start), v)
    main = gaussian_main(table.scale, k, start) - zero_share(table, k)
    x = exp(main) * TWO63
    u = <double> v
    if u < x * (1.0 - SHAPE_MARGIN):
        return True
    if u >= x * table.shape_bound:
        return False
    return keep(keep_log_ratio(table, k, start), v)


cdef int64_t noise_draw_from(const NoiseTable* table, bitgen_t* rng,
                             uint64_t first) noexcept nogil:
    # A draw whose first word is ``first`` (then fresh words), with the common
    # case's reading of a word (_noise.pxd, noise_draw).  A comparison that the
    # first bits leave undecided (equal prefix, or an acceptance uniform above the
    # fast bound) reads the rest of its bits from a fresh word: the law is that of
    # full 55- and 63-bit uniforms, drawn lazily.
    # It reads the packed slots and cells of the common case (in cache: the common
    # case has just read them) wherever they hold what it needs, and the full
    # threshold, acceptance bound and width only where they decide.
    cdef uint64_t word, v, slot, thr_hi, prefix, own, offset, alias
    cdef int64_t cell, k, j, kj, neg, start
    cdef double log_p, t, bt, btail
    cdef bint first_word = True
    while True:
        if first_word:
            word, first_word = first, False
        else:
            word = next64(rng)
        slot = word >> 55
        thr_hi = table.slots[slot].threshold_hi  # threshold >> 40
        prefix = (word >> 40) & LOW15
        if prefix != thr_hi:
            own = prefix < thr_hi
        else:  # the remaining 40 bits of the 55-bit uniform
            own = (prefix << 40 | next64(rng) >> 24) < table.threshold[slot]
        alias = table.slots[slot].alias
        cell = <int64_t> (alias ^ ((slot ^ alias) & (0 - own)))
        neg = <int64_t> (word & 1)
        if cell < table.n_cells:
            # exactly uniform in the cell: its width is a power of two
            if table.wide:
                offset = next64(rng) & <uint64_t> (table.cell_width[cell] - 1)
            else:
                offset = (word >> 1) & table.cells[cell].offset_mask  # width - 1
            start = table.cells[cell].start
            k = start + <int64_t> offset
            v = (word >> 30) & LOW10
            if v >= table.cells[cell].fast_hi:  # fast_accept >> 53; the remaining 53 bits
                v = v << 53 | next64(rng) >> 11
                if v >= table.fast_accept[cell] and not keep_in_cell(table, k, start, v):
                    continue
        else:
            j = 0
            word = next64(rng)
            while word == 0:
                j += 64
                word = next64(rng)
            j += ctz(word)
            kj = table.tail_start + j * table.tail_block
            k = kj + <int64_t> bounded(rng, table.tail_block)
            t = table.scale
            if table.law == NOISE_GAUSSIAN:
                if k > CUTOFF * t:
                    continue
                # log P(kj) - log P(K_T) + j ln 2, without cancelling large terms
                bt = table.tail_block / t
                btail = table.tail_start / t
                log_p = (j * (M_LN2 - bt * btail - 0.5 * j * bt * bt)
                         + log_shape(<double> kj, t) - log_shape(<double> table.tail_start, t))
            else:
                log_p = j * (M_LN2 - table.tail_block / t)
            log_p += log_ratio(table.law, t, k, kj)
            if not keep(log_p if log_p < 0.0 else 0.0, next64(rng) & LOW63):
                continue
        # Laplace: k or -k - 1 (P(J) ∝ exp(-|J + 1/2| / b)); Gaussian: k or -k
        # (0 either way: its cell has half its weight), branch-free
        return (k ^ -neg) + (neg & table.gaussian)


cdef void noise_fill(const NoiseTable* table, bitgen_t* rng, Py_ssize_t count,
                     double* out) noexcept nogil:
    """``count`` draws of :func:`noise_draw` plus the table's shift: those of
    :func:`noise_fill_int` (the same draws however the count is split), converted."""
    cdef int64_t ints[256]
    cdef Py_ssize_t i, size
    cdef double shift = table.shift
    while count > 0:
        size = min(count, 256)
        noise_fill_int(table, rng, size, ints)
        for i in range(size):
            out[i] = <double> ints[i] + shift
        out += size
        count -= size


cdef void noise_fill_int(const NoiseTable* table, bitgen_t* rng, Py_ssize_t count,
                         int64_t* out) noexcept nogil:
    """``count`` draws of :func:`noise_draw` (integers, without the shift): the same
    words in the same order, numpy's SFC64's drawn inline (``sfc64_state``)."""
    cdef Sfc64State* shared = sfc64_state(rng)
    # one loop, compiled for each kind of table and source of words
    if shared != NULL:
        if table.wide:
            fill_words(table, rng, shared, count, out, True)
        else:
            fill_words(table, rng, shared, count, out, False)
    elif table.wide:
        fill_words(table, rng, NULL, count, out, True)
    else:
        fill_words(table, rng, NULL, count, out, False)


cdef inline void fill_words(const NoiseTable* table, bitgen_t* rng, Sfc64State* shared,
                            Py_ssize_t count, int64_t* out, bint wide) noexcept nogil:
    """noise_fill_int's draws: words from ``shared``'s local copy (written back
    around a draw that takes the general path, which draws through ``rng``, and at
    the end), or (NULL) through ``rng``'s library."""
    cdef Sfc64State local
    cdef int64_t gaussian = table.gaussian
    cdef uint64_t word, offset
    cdef const NoiseCell* ce
    cdef Py_ssize_t i
    if shared != NULL:
        local = shared[0]
    for i in range(count):
        word = sfc64_next(&local) if shared != NULL else rng.next_uint64(rng.state)
        ce = noise_cell(table, word)
        if ce == NULL:
            if shared != NULL:
                shared[0] = local
            out[i] = noise_draw_from(table, rng, word)
            if shared != NULL:
                local = shared[0]
            continue
        if wide:
            offset = (sfc64_next(&local) if shared != NULL else rng.next_uint64(rng.state)) \
                & <uint64_t> (table.cell_width[ce - table.cells] - 1)
        else:
            offset = (word >> 1) & ce.offset_mask
        out[i] = noise_signed(ce, word, offset, gaussian)
    if shared != NULL:
        shared[0] = local


cdef double MIN_CELL_MASS = 2.0 ** -20   # of the mass: a cell's probability then
                                        # quantises within 2**-44 of the ideal
cdef uint64_t SLOT_UNITS = (<uint64_t> 1) << 55    # a slot's units (NOISE_SLOT_SHIFT)


cdef int64_t add_cell(NoiseTable* table, double mass, int64_t k, int64_t w) except -1:
    """Body cell ``table.n_cells`` from k, of width w doubled until it holds
    MIN_CELL_MASS of the mass; returns its end."""
    if table.n_cells >= NOISE_SLOTS - 1:
        raise RuntimeError("the body cells do not fit the alias table")
    cdef double p = exp(log_ratio(table.law, table.scale, k, 0))
    while <double> w * p < MIN_CELL_MASS * mass:
        w *= 2
    table.cell_start[table.n_cells] = k
    table.cell_width[table.n_cells] = w
    table.n_cells += 1
    return k + w


cdef int body_cells(NoiseTable* table, int64_t body_end, double mass) except -1:
    """The body cells over ``[0, body_end)``: ``table.cell_start``, ``cell_width`` (each
    a power of two: the offset in a cell is a word's bits), ``n_cells``, and
    ``tail_start`` (K_T), where the last ends.

    A draw in a cell of width w from s takes the general path when its first 10 bits
    of acceptance uniform are not below the cell's lower bound of ``P(k) / P(s)``:
    with probability about ``s w / t^2`` (Gaussian) or ``w / b`` (Laplace), so the
    cells are made narrow where the mass is.  W is the smallest power of two that
    covers the body with at most BODY_CELLS cells; the first cells have width W / 2,
    as many as keep the count within BODY_CELLS, the rest W.  A Gaussian 0 is kept
    half the time (both signs give it), so cell 0's fast bound is 1/2: its cell is
    made about ``t ZERO_CELL`` wide (3e-6 of the mass) and followed by cells of
    doubling width up to W / 2.  A cell that would hold less than MIN_CELL_MASS of
    the mass is widened (doubling), so that its quantised probability (a multiple
    of 2**-64) is within 2**-44 of the ideal.  On Gaussian tables 0.6-0.85% of draws
    take the general path (1.3-2.0% with cells of width W alone).
    """
    cdef int64_t coarse = 1, fine, k = 0, n_coarse, n_fine
    while (body_end + coarse - 1) // coarse > BODY_CELLS:
        coarse *= 2
    fine = max(coarse // 2, 1)
    table.n_cells = 0
    if table.law == NOISE_GAUSSIAN:
        k = add_cell(table, mass, 0, min(fine, <int64_t> ldexp(
            1.0, max(0, <int> floor(log2(table.scale * ZERO_CELL))))))
        while k < fine:  # k is a power of two: [k, 2k)
            k = add_cell(table, mass, k, k)
    n_coarse = (body_end - k + coarse - 1) // coarse
    n_fine = 2 * max(0, min(BODY_CELLS - table.n_cells - n_coarse, n_coarse))
    while n_fine and k < body_end:  # two fine cells for a coarse one: one cell more
        k = add_cell(table, mass, k, fine)
        n_fine -= 1
    while k < body_end:
        k = add_cell(table, mass, k, coarse)
    table.tail_start = k
    return 0


cdef void vose(const uint64_t* units, uint64_t* threshold, uint16_t* alias) noexcept nogil:
    """Integer alias table over NOISE_SLOTS slots of SLOT_UNITS units (Vose): slot i
    keeps its own cell below ``threshold[i]``, else ``alias[i]``; cell c gets exactly
    ``units[c]`` units (the units sum to NOISE_SLOTS SLOT_UNITS)."""
    cdef uint64_t work[NOISE_SLOTS]
    cdef uint16_t small[NOISE_SLOTS]
    cdef uint16_t large[NOISE_SLOTS]
    cdef int n_small = 0, n_large = 0, i
    cdef uint16_t s, g
    for i in range(NOISE_SLOTS):
        work[i], threshold[i], alias[i] = units[i], 0, <uint16_t> i
        if units[i] < SLOT_UNITS:
            small[n_small] = <uint16_t> i
            n_small += 1
        else:
            large[n_large] = <uint16_t> i
            n_large += 1
    while n_small and n_large:  # both stacks: the last in is taken first
        n_small -= 1
        n_large -= 1
        s, g = small[n_small], large[n_large]
        threshold[s], alias[s] = work[s], g
        work[g] -= SLOT_UNITS - work[s]
        if work[g] < SLOT_UNITS:
            small[n_small] = g
            n_small += 1
        else:
            large[n_large] = g
            n_large += 1
    for i in range(n_large):  # exactly full
        threshold[large[i]], alias[large[i]] = SLOT_UNITS, large[i]
    for i in range(n_small):
        threshold[small[i]], alias[small[i]] = SLOT_UNITS, small[i]


cdef class IntegerNoise:
    """The integer noise law of one run and its sampler's tables.

    Parameters
    ----------
    law : {"gaussian", "laplace"}
        ``round(scale N)`` (N standard normal: the discretised Gaussian) or
        ``floor(L) + 1/2`` (L Laplace of scale ``scale``), in grid units.
    scale : float
        At least :data:`MIN_SCALE`.

    Attributes
    ----------
    eta : float
        Every probability of the sampler's law is within ``exp(+-eta)`` of the
        ideal law's (cell probabilities exactly as built, plus 2**-44 for the
        floating-point acceptance tests); at most :data:`NOISE_ETA`.
    """

    def __cinit__(self, law, double scale):
        if law not in ("gaussian", "laplace"):
            raise ValueError(f"law must be 'gaussian' or 'laplace', got {law!r}")
        if not (MIN_SCALE <= scale < 2.0 ** 40):
            raise ValueError(f"scale must be in [{MIN_SCALE}, 2**40), got {scale!r}")
        self.law, self.scale = law, scale
        cdef int code = NOISE_GAUSSIAN if law == "gaussian" else NOISE_LAPLACE
        cdef NoiseTable* tb = &self.table
        cdef double weights[NOISE_SLOTS]
        cdef uint64_t units[NOISE_SLOTS]
        cdef uint64_t sum_units = 0
        cdef double low, alias_error = 0.0, total
        cdef Py_ssize_t i, n_cells, largest = 0
        cdef int64_t tail_start, block, widest = 0
        tb.law, tb.scale = code, scale
        tb.shift = 0.5 if code == NOISE_LAPLACE else 0.0
        tb.gaussian = 1 if code == NOISE_GAUSSIAN else 0
        body = GAUSSIAN_BODY if code == NOISE_GAUSSIAN else LAPLACE_BODY
        mass = scale * math.sqrt(math.pi / 2) if code == NOISE_GAUSSIAN else scale
        body_cells(tb, math.ceil(body * scale), mass)
        n_cells, tail_start = tb.n_cells, tb.tail_start
        if code == NOISE_GAUSSIAN:  # P(k + B) <= P(k) / 2 for k >= K_T
            block = math.ceil(scale * scale * math.log(2.0) / (tail_start - 0.5) * (1 + 1e-9))
        else:
            block = math.ceil(scale * math.log(2.0) * (1 + 1e-9))
        tb.tail_block = block
        # weights relative to P(0): cell c gets its width times P(its start), the
        # tail (slot value n_cells) 2 B P(K_T); the other slots none
        for i in range(NOISE_SLOTS):
            weights[i] = 0.0
        for i in range(n_cells):
            weights[i] = <double> tb.cell_width[i] * exp(log_ratio(code, scale, tb.cell_start[i], 0))
            widest = max(widest, tb.cell_width[i])
        weights[n_cells] = 2.0 * <double> block * exp(log_ratio(code, scale, tail_start, 0))
        total = math.fsum([weights[i] for i in range(n_cells + 1)])
        # round(w_c / total * 2**64) exactly (doubles' significands in 128-bit
        # integers); the rounding's remainder (a few hundred units, the sum being
        # 2**64 = 0 modulo 2**64) to the largest cell, where it is relatively smallest
        for i in range(NOISE_SLOTS):
            units[i] = quantise(weights[i], total) if i <= n_cells else 0
            if units[i] == <uint64_t> -1:
                raise RuntimeError("a noise cell's probability is out of range")
            sum_units += units[i]
            if units[i] > units[largest]:
                largest = i
        units[largest] -= sum_units
        vose(units, tb.threshold, tb.alias)
        for i in range(NOISE_SLOTS):
            tb.fast_accept[i] = 0
            if i >= n_cells:
                tb.cell_start[i], tb.cell_width[i] = 0, 1
        for i in range(n_cells):
            low = exp(log_ratio(code, scale, tb.cell_start[i] + tb.cell_width[i] - 1,
                                tb.cell_start[i]))
            if code == NOISE_GAUSSIAN and i == 0:
                low = min(low, 0.5)  # 0 is kept with probability 1/2 (see keep_log_ratio)
            tb.fast_accept[i] = <uint64_t> (low * (1.0 - 2.0 ** -45) * TWO63)
        tb.wide = widest > (<int64_t> 1) << NOISE_OFFSET_BITS
        for i in range(NOISE_SLOTS):  # the common case's packed copies
            tb.slots[i].threshold_hi = <uint32_t> (tb.threshold[i] >> 40)
            tb.slots[i].alias = tb.alias[i]
            tb.slots[i].unused = 0
            tb.cells[i].start = tb.cell_start[i]
            tb.cells[i].offset_mask = 0 if (tb.wide or i >= n_cells) \
                else <uint32_t> (tb.cell_width[i] - 1)
            # 0 beyond the body cells: the tail always takes the general path
            tb.cells[i].fast_hi = <uint32_t> (tb.fast_accept[i] >> 53) if i < n_cells else 0
        # log_shape(k) - log_shape(start) over the body: in [0, log_shape(K_T) -
        # log_shape(0)] (at most 1e-6 for t >= MIN_SCALE), doubled for room
        gap = (log_shape(<double> tail_start, scale) - log_shape(0.0, scale)
               if code == NOISE_GAUSSIAN else 0.0)
        tb.shape_bound = math.exp(2.0 * gap + SHAPE_MARGIN) * (1.0 + SHAPE_MARGIN)
        # cell probabilities as built (exact) against the ideal (double precision,
        # relative error well below 2**-48)
        for i in range(n_cells + 1):
            alias_error = max(alias_error, quantise_error(weights[i], total, units[i]))
        self.eta = 2.0 * (alias_error + 2.0 ** -46 + 2.0 ** -44)
        if self.eta > NOISE_ETA:
            raise RuntimeError(f"noise table too coarse (eta = {self.eta:.3g})")

    @property
    def tail_start(self):
        """K_T: the end of the body cells, where the geometric tail begins."""
        return self.table.tail_start

    @property
    def cells(self):
        """The body cells' starts and widths (powers of two), two int64 arrays."""
        n = self.table.n_cells
        return (np.array([self.table.cell_start[i] for i in range(n)], dtype=np.int64),
                np.array([self.table.cell_width[i] for i in range(n)], dtype=np.int64))

    def draw(self, generator, Py_ssize_t size):
        """``size`` draws of J (Laplace: before the shift 1/2) from ``generator``."""
        out = np.empty(size, dtype=np.int64)
        self.fill(generator, out)
        return out

    def fill(self, generator, out):
        """Draws of J into ``out`` (a C-contiguous int64 array), as :meth:`draw`."""
        if not (isinstance(out, np.ndarray) and out.dtype == np.int64 and out.ndim == 1
                and out.flags.c_contiguous and out.flags.writeable):
            raise TypeError("out must be a writeable, C-contiguous, one-dimensional int64 "
                            f"numpy array, got {type(out).__name__}"
                            + (f" of dtype {out.dtype} and shape {out.shape}"
                               if isinstance(out, np.ndarray) else ""))
        cdef int64_t[::1] view = out
        cdef bitgen_t* rng = generator_bitgen(generator)
        if view.shape[0] == 0:
            return out
        with generator.bit_generator.lock, nogil:
            noise_fill_int(&self.table, rng, view.shape[0], &view[0])
        return out

    def release(self, values, inv_grid, grid, generator):
        """``grid * (rint(values * inv_grid) + K)`` element-wise, K from this law.

        ``values``, ``inv_grid`` and ``grid`` broadcast to one shape; draws in
        C order.
        """
        x, inv, g = np.broadcast_arrays(np.asarray(values, dtype=np.float64),
                                        np.asarray(inv_grid, dtype=np.float64),
                                        np.asarray(grid, dtype=np.float64))
        shape = x.shape
        x, inv, g = (np.ascontiguousarray(a).reshape(-1) for a in (x, inv, g))
        out = np.empty(x.shape[0])
        cdef const double[::1] xv = x, iv = inv, gv = g
        cdef double[::1] ov = out
        cdef bitgen_t* rng = generator_bitgen(generator)
        cdef Py_ssize_t i
        with generator.bit_generator.lock, nogil:
            for i in range(xv.shape[0]):
                ov[i] = grid_release(xv[i], iv[i], gv[i],
                                     noise_draw(&self.table, rng) + self.table.shift)
        return out.reshape(shape)


def _keep_decisions(IntegerNoise noise, k, start, v):
    """For tests: the acceptance of ``k`` in the cell from ``start`` with uniform
    ``v`` (< 2**63), by ``keep_in_cell`` and by the full computation it stands
    for (two bool arrays; they must be equal)."""
    cdef const int64_t[::1] kv = np.ascontiguousarray(k, dtype=np.int64)
    cdef const int64_t[::1] sv = np.ascontiguousarray(start, dtype=np.int64)
    cdef const uint64_t[::1] vv = np.ascontiguousarray(v, dtype=np.uint64)
    fast, full = np.empty(kv.shape[0], dtype=bool), np.empty(kv.shape[0], dtype=bool)
    cdef Py_ssize_t i
    for i in range(kv.shape[0]):
        fast[i] = keep_in_cell(&noise.table, kv[i], sv[i], vv[i])
        full[i] = keep(keep_log_ratio(&noise.table, kv[i], sv[i]), vv[i])
    return fast, full


def float_sum_factor(n_terms):
    """rho >= 1: the computed value's sensitivity is at most rho times the exact one.

    A value computed as a floating-point sum of at most ``n_terms`` terms of
    absolute value at most C, one of which changes between neighbours (moving
    the exact sum by Delta <= 2 C), then multiplied by ``inv_grid``: the computed
    products differ by at most ``Delta (1 + n gamma_n) + 2 u n C`` times
    ``inv_grid (1 + u)`` (gamma_n = n u / (1 - n u), u = 2**-53; Higham,
    Accuracy and Stability of Numerical Algorithms, eq. 4.4, for any order of
    summation).  ``1 + 4 (n + 2)^2 u`` covers it with room (and the rounding of
    ``inv_grid`` itself).
    """
    n = float(n_terms)
    u = 2.0 ** -53
    if n * u > 2.0 ** -20:
        raise ValueError(f"too many terms for a sound floating-point sum bound: {n_terms}")
    return 1.0 + 4.0 * (n + 2.0) ** 2 * u + 2.0 ** -50


def grid_scale(multiplier, n_terms):
    """The grid and the integer law of a release with noise multiplier ``multiplier``.

    Parameters
    ----------
    multiplier : float
        z (Gaussian: noise standard deviation over the sensitivity) or b
        (Laplace: scale over the sensitivity).
    n_terms : int
        Bound on the number of terms of the floating-point sum that computes
        the released value (:func:`float_sum_factor`).

    Returns
    -------
    rho : float
        :func:`float_sum_factor` of ``n_terms``.
    points : int
        S, grid points per sensitivity: a power of two, at least
        :data:`GRID_POINTS`, raised until ``multiplier * S >= MIN_SCALE``.  The
        grid of a value of sensitivity Delta is ``Delta rho / S`` (its inverse
        rounded down: ``S / (Delta rho) (1 - 2**-50)``).
    scale : float
        ``multiplier * S``: the integer law's scale (t or b); the noise added
        has standard deviation (or Laplace scale) ``multiplier * rho * Delta``.
    """
    if not (multiplier > 0 and math.isfinite(multiplier)):
        raise ValueError(f"the noise multiplier must be positive and finite, got {multiplier!r}")
    rho = float_sum_factor(n_terms)
    points = GRID_POINTS
    while multiplier * points < MIN_SCALE:
        points *= 2
    return rho, points, float(multiplier * points)


def grid_for(sensitivity, rho, points):
    """The grid ``Delta rho / S`` of a value of sensitivity Delta, and its inverse
    rounded down (both 0 where Delta is 0).

    With :func:`grid_scale`'s ``rho`` and ``points``: the computed values
    ``x * inv_grid`` of neighbouring datasets differ by at most S, so their
    ``rint`` by at most S (rint is monotone and ``rint(a + S) = rint(a) + S`` for
    the even integer S).
    """
    delta = np.asarray(sensitivity, dtype=np.float64)
    grid = delta * (rho / points)
    with np.errstate(divide="ignore"):
        inv_grid = np.where(delta > 0, points / (delta * rho) * (1.0 - 2.0 ** -50), 0.0)
    return grid, inv_grid
