"""sparsedp's floating-point-safe samplers and noisy max, for Python and Cython.

The objects below are built here, in Python, and drawn from in ``nogil`` Cython
code through the public ``cimport`` path ``sparsedp.random`` (the installed
``sparsedp/random.pxd``), as numpy.random's bit generators are.  See
:doc:`/cython_api` for what each sampler guarantees and a complete example.

* :class:`IntegerNoise`: integer Gaussian or Laplace noise of a known law, for
  releases on a public grid (:func:`grid_scale`, :func:`grid_for`);
* :class:`GaussianWalk`: sums of k rounded-Gaussian steps in O(log k) draws;
* :class:`Batches`: Poisson (or fixed-size) batches of rows;
* :class:`NoisyMax`: the exponential mechanism and report-noisy-max over a
  score array.

Every draw takes 64-bit words from the ``bitgen_t`` of a
:class:`numpy.random.Generator`; Cython code holds
``generator.bit_generator.lock`` around its ``nogil`` draws.
"""
import os

from ._kernels._noise import (
    GRID_POINTS, MIN_SCALE, NOISE_ETA, IntegerNoise, float_sum_factor, grid_for, grid_scale,
)
from ._kernels._noisy_max import NoisyMax
from ._kernels._sampling import Batches
from ._kernels._walk import GaussianWalk

__all__ = [
    "Batches", "GRID_POINTS", "GaussianWalk", "IntegerNoise", "MIN_SCALE", "NOISE_ETA",
    "NoisyMax", "float_sum_factor", "get_include", "grid_for", "grid_scale",
]


def get_include():
    """The directory to put on Cython's include path for ``cimport sparsedp.random``.

    It holds ``sparsedp/random.pxd`` and the private ``.pxd`` files it cimports.
    For an installed (non-editable) sparsedp this is the ``site-packages``
    directory, which Cython searches anyway; an editable install needs it.
    The C headers come from :func:`numpy.get_include`, and the compiled module
    links numpy's ``npyrandom`` library (``numpy/random/lib``), as any module
    that uses numpy.random's C distributions.

    Returns
    -------
    str
        Absolute path of the directory containing the ``sparsedp`` package.
    """
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
