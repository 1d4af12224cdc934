# numpy.random's Cython API: a bitgen_t from a Generator, for drawing noise
# inside nogil kernels. Hold the returned lock around every nogil section.
from numpy.random cimport bitgen_t

cdef bitgen_t* generator_bitgen(object generator) except NULL

# Equals numpy's random_standard_normal_fill draw for draw (numpy's ziggurat
# with its common case inlined); no lock taken: hold the generator's.
cdef void standard_normal_fill(bitgen_t* rng, Py_ssize_t count, double* out) noexcept nogil
