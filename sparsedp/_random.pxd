# numpy.random's Cython API: a bitgen_t from a Generator, for drawing noise
# inside nogil kernels. Hold the returned lock around every nogil section.
from numpy.random cimport bitgen_t

cdef bitgen_t* generator_bitgen(object generator) except NULL
