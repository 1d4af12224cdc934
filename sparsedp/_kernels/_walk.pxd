# Lazy Gaussian noise: the sum of k rounded-Gaussian draws in O(log k) draws.
# See _walk.pyx.
from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t
from ._noise cimport NoiseTable, noise_draw, noise_draw_from

cdef extern from "numpy/random/distributions.h":
    uint64_t random_bounded_uint64(bitgen_t* state, uint64_t off, uint64_t rng,
                                   uint64_t mask, bint use_masked) noexcept nogil

cdef enum:
    WALK_DIGIT_BITS = 4             # sums are drawn digit by digit in base 16
    WALK_DIGIT_MASK = 15
    WALK_DIGITS = 10                # sums of up to 16**10 - 1 steps
    WALK_TABLES = 150               # 15 tables per digit

ctypedef struct Walk:
    int digits                      # tables[15 i + d - 1]: scale * sqrt(d 16**i), d = 1 .. 15
    const NoiseTable* tables[WALK_TABLES]


# One draw of a wide-celled table (the walks' scales, t >= 2**24): the common
# case of _noise.noise_draw_from inlined.  Its first word decides the alias
# comparison, a body cell and a fast acceptance (reading one slot and one cell
# record, the cell's start and width included); the integer within the cell is
# then exactly uniform (numpy's Lemire draw on fresh words, as noise_draw_from's
# wide-cell path), and a Gaussian -0 is redrawn.  Any other first word goes to
# noise_draw_from, which takes the same decisions: the law is noise_draw's.
cdef inline int64_t walk_draw(const NoiseTable* table, bitgen_t* rng) noexcept nogil:
    cdef uint64_t word, slot, thr_hi, prefix, alias, own, width
    cdef int64_t cell, k, neg
    while True:
        word = rng.next_uint64(rng.state)
        slot = word >> 55
        thr_hi = table.slots[slot].threshold_hi
        prefix = (word >> 40) & 0x7FFF
        alias = table.slots[slot].alias
        own = prefix < thr_hi
        cell = <int64_t> (alias ^ ((slot ^ alias) & (0 - own)))
        if prefix == thr_hi or cell >= table.n_cells:
            return noise_draw_from(table, rng, word)
        width = table.cells[cell].width       # 0 for a cell of 2**32 or more
        if ((word >> 1) & 0x7FFF) >= table.cells[cell].fast_hi or width <= (1 << 18):
            return noise_draw_from(table, rng, word)
        neg = <int64_t> (word & 1)
        k = table.cells[cell].start + <int64_t> random_bounded_uint64(rng, 0, width - 1, 0, False)
        if k == 0 and neg:
            continue
        return (k ^ -neg) + neg


# The sum of k steps of the walk (0 <= k < 16**digits): one draw per nonzero
# base-16 digit d of k at position i, from the table of scale
# ``scale * sqrt(d 16**i)``.  The caller holds the generator's lock.
cdef inline int64_t walk_sum(const Walk* walk, bitgen_t* rng, int64_t k) noexcept nogil:
    cdef int64_t total = 0, d
    cdef int base = 0
    while k:
        d = k & WALK_DIGIT_MASK
        if d:
            total += walk_draw(walk.tables[base + d - 1], rng)
        k >>= WALK_DIGIT_BITS
        base += WALK_DIGIT_MASK
    return total


cdef class GaussianWalk:
    cdef Walk walk
    cdef list _noises                      # the IntegerNoise objects owning the tables
    cdef readonly double scale
    cdef readonly int64_t max_steps
    cdef readonly double table_eta         # the largest eta of the tables
    cdef readonly double lattice_eta       # rounded vs discrete Gaussian, per step
