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
