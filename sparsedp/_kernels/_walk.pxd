# Lazy Gaussian noise: the sum of k rounded-Gaussian draws in O(log k) draws.
# See _walk.pyx.
from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t
from ._noise cimport NoiseTable, noise_draw

cdef enum:
    WALK_DIGIT_BITS = 4             # sums are drawn digit by digit in base 16
    WALK_DIGIT_MASK = 15
    WALK_DIGITS = 10                # sums of up to 16**10 - 1 steps
    WALK_TABLES = 150               # 15 tables per digit

ctypedef struct Walk:
    int digits                      # tables[15 i + d - 1]: scale * sqrt(d 16**i), d = 1 .. 15
    const NoiseTable* tables[WALK_TABLES]


# The sum of k steps of the walk (0 <= k < 16**digits): one draw per nonzero
# base-16 digit d of k at position i, from the table of scale
# ``scale * sqrt(d 16**i)``.  The caller holds the generator's lock.
cdef inline int64_t walk_sum(const Walk* walk, bitgen_t* rng, int64_t k) noexcept nogil:
    cdef int64_t total = 0, d
    cdef int base = 0
    while k:
        d = k & WALK_DIGIT_MASK
        if d:
            total += noise_draw(walk.tables[base + d - 1], rng)
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
