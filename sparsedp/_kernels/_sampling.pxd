# Batches of rows: Poisson (an exact-law batch size, then a uniform subset) or
# fixed size (a uniform subset).  See _sampling.pyx.
from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t

cdef extern from "numpy/random/distributions.h":
    uint64_t random_bounded_uint64(bitgen_t* state, uint64_t off, uint64_t rng,
                                   uint64_t mask, bint use_masked) noexcept nogil


ctypedef struct BatchSampler:
    int64_t n                   # rows
    int64_t fixed               # > 0: batches of exactly this size; 0: Poisson
    int64_t first               # Poisson: sizes first .. first + n_sizes - 1 have
    int64_t n_sizes             # probability > 0
    const uint64_t* cum_hi      # Poisson: P(K <= k) * 2**128 = cum_hi[k] * 2**64 + cum_lo[k]
    const uint64_t* cum_lo      # (the last is 2**128 - 1 + 1: every draw is below it)
    unsigned char* chosen       # n marks, all 0 between draws


# A uniformly random subset of m distinct rows of [0, n) into rows[0 .. m - 1]
# (Floyd's algorithm, exact bounded integers; order: as drawn).
cdef inline void uniform_subset(BatchSampler* s, bitgen_t* rng, int64_t m,
                                int64_t* rows) noexcept nogil:
    cdef int64_t j, r, i
    for i in range(m):
        j = s.n - m + i
        r = <int64_t> random_bounded_uint64(rng, 0, <uint64_t> j, 0, False)
        if s.chosen[r]:
            r = j
        s.chosen[r] = 1
        rows[i] = r
    for i in range(m):
        s.chosen[rows[i]] = 0


# One batch: its size (and rows[0 .. size - 1]).
cdef inline int64_t sample_batch(BatchSampler* s, bitgen_t* rng, int64_t* rows) noexcept nogil:
    cdef uint64_t hi, lo
    cdef int64_t k = 0, m
    if s.fixed:
        m = s.fixed
    else:  # K by inversion of its 128-bit CDF: the smallest k with (hi, lo) < cum[k]
        hi = rng.next_uint64(rng.state)
        lo = rng.next_uint64(rng.state)
        while k < s.n_sizes - 1 and (hi > s.cum_hi[k] or (hi == s.cum_hi[k] and lo >= s.cum_lo[k])):
            k += 1
        m = s.first + k
    if m == s.n:
        for k in range(m):
            rows[k] = k
    else:
        uniform_subset(s, rng, m, rows)
    return m


cdef class Batches:
    cdef BatchSampler sampler
    cdef object _arrays
    cdef readonly double rate
    cdef readonly int64_t n, fixed, max_size
    cdef readonly double eta, tv
