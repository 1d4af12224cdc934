# Lazy Gaussian noise: the sum of k rounded-Gaussian draws in O(log k) draws.
# See _walk.pyx.
from libc.stdint cimport int64_t
from numpy.random cimport bitgen_t
from ._noise cimport NoiseTable, noise_draw

cdef enum:
    WALK_LEVELS = 40   # tables for sums of up to 2**40 - 1 steps

ctypedef struct Walk:
    int levels                             # tables[b]: scale * 2**(b / 2), b < levels
    const NoiseTable* tables[WALK_LEVELS]


# The sum of k steps of the walk (0 <= k < 2**levels): one draw per set bit of k,
# from the table of scale ``scale * 2**(b / 2)``.  The caller holds the generator's lock.
cdef inline int64_t walk_sum(const Walk* walk, bitgen_t* rng, int64_t k) noexcept nogil:
    cdef int64_t total = 0
    cdef int b = 0
    while k:
        if k & 1:
            total += noise_draw(walk.tables[b], rng)
        k >>= 1
        b += 1
    return total


cdef class GaussianWalk:
    cdef Walk walk
    cdef list _noises                      # the IntegerNoise objects owning the tables
    cdef readonly double scale
    cdef readonly int64_t max_steps
    cdef readonly double table_eta         # the largest eta of the tables
    cdef readonly double lattice_eta       # rounded vs discrete Gaussian, per step
