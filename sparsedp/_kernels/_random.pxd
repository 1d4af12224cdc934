# numpy.random's Cython API: a bitgen_t from a Generator, for drawing noise
# inside nogil kernels. Hold the returned lock around every nogil section.
from libc.stdint cimport uint32_t, uint64_t
from numpy.random cimport bitgen_t

cdef bitgen_t* generator_bitgen(object generator) except NULL

# Equals numpy's random_standard_normal_fill draw for draw (numpy's ziggurat
# with its common case inlined); no lock taken: hold the generator's.
cdef void standard_normal_fill(bitgen_t* rng, Py_ssize_t count, double* out) noexcept nogil

# Equals numpy's random_bounded_uint64_fill(rng, 0, high - 1, count, False, out),
# i.e. Generator.integers(0, high, count), draw for draw (Lemire's method inlined).
cdef void uniform_index_fill(bitgen_t* rng, uint64_t high, Py_ssize_t count,
                             uint64_t* out) noexcept nogil

# numpy's SFC64 (numpy/random/src/sfc64/sfc64.h): its state, and its steps, inline.
ctypedef struct Sfc64State:
    uint64_t s[4]
    int has_uint32                  # next_uint32 returns uinteger (a word's high half) next
    uint32_t uinteger


cdef inline uint64_t sfc64_next(Sfc64State* st) noexcept nogil:
    cdef uint64_t* s = st.s
    cdef uint64_t out = s[0] + s[1] + s[3]
    s[3] += 1
    s[0] = s[1] ^ (s[1] >> 11)
    s[1] = s[2] + (s[2] << 3)
    s[2] = ((s[2] << 24) | (s[2] >> 40)) + out
    return out


cdef inline uint32_t sfc64_next32(Sfc64State* st) noexcept nogil:
    cdef uint64_t word
    if st.has_uint32:
        st.has_uint32 = 0
        return st.uinteger
    word = sfc64_next(st)
    st.has_uint32 = 1
    st.uinteger = <uint32_t> (word >> 32)
    return <uint32_t> word

# ``rng``'s state when ``rng`` is numpy's SFC64 and the steps above give its words
# (checked at import), else NULL.  A fill draws from a local copy of it and writes
# the copy back before anything else draws from ``rng``.
cdef Sfc64State* sfc64_state(bitgen_t* rng) noexcept nogil

