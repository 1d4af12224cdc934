# numpy.random's Cython API: a bitgen_t from a Generator, for drawing noise
# inside nogil kernels. Hold the returned lock around every nogil section.
from libc.stdint cimport uint64_t
from numpy.random cimport bitgen_t

cdef bitgen_t* generator_bitgen(object generator) except NULL

# Equals numpy's random_standard_normal_fill draw for draw (numpy's ziggurat
# with its common case inlined); no lock taken: hold the generator's.
cdef void standard_normal_fill(bitgen_t* rng, Py_ssize_t count, double* out) noexcept nogil

# Equals numpy's random_bounded_uint64_fill(rng, 0, high - 1, count, False, out),
# i.e. Generator.integers(0, high, count), draw for draw (Lemire's method inlined).
cdef void uniform_index_fill(bitgen_t* rng, uint64_t high, Py_ssize_t count,
                             uint64_t* out) noexcept nogil

# numpy's SFC64 (numpy/random/src/sfc64/sfc64.h): its four state words, and its step,
# inline.  A fill draws from a local copy of the words (sfc64_words) and writes them
# back before anything else draws from the generator.
ctypedef struct Sfc64Words:
    uint64_t s[4]


cdef inline uint64_t sfc64_next(Sfc64Words* words) noexcept nogil:
    cdef uint64_t* s = words.s
    cdef uint64_t out = s[0] + s[1] + s[3]
    s[3] += 1
    s[0] = s[1] ^ (s[1] >> 11)
    s[1] = s[2] + (s[2] << 3)
    s[2] = ((s[2] << 24) | (s[2] >> 40)) + out
    return out

# ``rng``'s state words when ``rng`` is numpy's SFC64 and sfc64_next gives its words
# (checked at import), else NULL.
cdef Sfc64Words* sfc64_words(bitgen_t* rng) noexcept nogil
