"""numpy.random's Cython API for the kernels.

Every kernel draws its noise from the ``bitgen_t`` behind a
:class:`numpy.random.Generator`, through numpy's own C distributions
(``random_standard_normal`` is the ziggurat of ``Generator.standard_normal``),
so that a seeded ``random_state`` reproduces a fit exactly and the draws are
the very ones numpy would make.  The caller must hold
``generator.bit_generator.lock`` around the nogil section that draws.
"""
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_standard_normal, random_laplace, random_standard_uniform,
    random_bounded_uint64,
)

import numpy as np

cdef const char* CAPSULE_NAME = "BitGenerator"


cdef bitgen_t* generator_bitgen(object generator) except NULL:
    """The ``bitgen_t`` of a numpy Generator (raises TypeError otherwise)."""
    if not isinstance(generator, np.random.Generator):
        raise TypeError(
            f"expected a numpy.random.Generator, got {type(generator).__name__}")
    capsule = generator.bit_generator.capsule
    if not PyCapsule_IsValid(capsule, CAPSULE_NAME):
        raise TypeError("invalid BitGenerator capsule")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, CAPSULE_NAME)


def standard_normal(generator, Py_ssize_t size):
    """Draw ``size`` standard normals in a nogil loop (test helper).

    Equals ``generator.standard_normal(size)`` for the same generator state.
    """
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef double[::1] out = np.empty(size)
    cdef Py_ssize_t k
    with generator.bit_generator.lock, nogil:
        for k in range(size):
            out[k] = random_standard_normal(rng)
    return np.asarray(out)


def laplace(generator, double scale, Py_ssize_t size):
    """Draw ``size`` centred Laplace variates in a nogil loop (test helper).

    Equals ``generator.laplace(0.0, scale, size)`` for the same generator state.
    """
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef double[::1] out = np.empty(size)
    cdef Py_ssize_t k
    with generator.bit_generator.lock, nogil:
        for k in range(size):
            out[k] = random_laplace(rng, 0.0, scale)
    return np.asarray(out)


def uniform_index(generator, unsigned long long high, Py_ssize_t size):
    """Draw ``size`` integers uniform in [0, high) (test helper).

    Equals ``generator.integers(0, high, size)`` for the same generator state
    (numpy's bounded draw: off=0, rng=high-1, mask unused, use_masked=0,
    i.e. Lemire's rejection).
    """
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef unsigned long long[::1] out = np.empty(size, dtype=np.uint64)
    cdef Py_ssize_t k
    with generator.bit_generator.lock, nogil:
        for k in range(size):
            out[k] = random_bounded_uint64(rng, 0, high - 1, 0, 0)
    return np.asarray(out).astype(np.int64)
