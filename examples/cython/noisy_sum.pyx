# cython: language_level=3, boundscheck=False, wraparound=False
"""A private sum and a private argmax written against sparsedp's Cython API.

Only the public cimport path ``sparsedp.random`` is used: the noise is drawn by
sparsedp's floating-point-safe samplers, nogil, from the bit generator of a
seeded :class:`numpy.random.Generator` whose lock is held around the draws.
Build with ``python setup.py build_ext --inplace`` (``setup.py`` next to this
file); see docs/cython_api.rst.
"""
from libc.math cimport fmax, fmin
from libc.stdint cimport int64_t, uint64_t

from sparsedp.random cimport (
    Batches, BatchSampler, GaussianWalk, IntegerNoise, NoiseTable, NoisyMax, Walk, batch_sampler,
    bitgen_t, generator_bitgen, grid_release, noise_draw, noise_fill, noise_table, sample_batch,
    standard_normal_fill, uniform_index_fill, walk_sum, walk_tables,
)

import numpy as np

from sparsedp.random import grid_for, grid_scale


cdef class PrivateSum:
    """The sum of at most ``n_max`` values clipped to ``[-clip, clip]``, released
    on a public grid with integer noise.

    Replace-one neighbours: the clipped sum has sensitivity ``2 clip``.  A
    release is ``grid * (rint(sum / grid) + J)`` with ``J = round(t N)``
    (``law="gaussian"``: the Gaussian mechanism of noise multiplier
    ``multiplier``, standard deviation ``multiplier * rho * 2 clip``) or ``J =
    floor(L) + 1/2`` (``law="laplace"``: ``1 / multiplier``-DP), and each
    release's law is within ``exp(+-eta)`` of the ideal one: account ``2 eta``
    more epsilon per release.

    Parameters
    ----------
    clip : float
        Clipping threshold C > 0.
    multiplier : float
        Noise over sensitivity (z for Gaussian, b_0 for Laplace), > 0.
    n_max : int
        The largest number of values summed (bounds the floating-point error of
        the sum, hence ``rho``).
    law : {"gaussian", "laplace"}, default="gaussian"
    """
    cdef readonly IntegerNoise noise
    cdef readonly double clip, grid, inv_grid, rho
    cdef readonly Py_ssize_t n_max
    cdef const NoiseTable* table

    def __init__(self, double clip, double multiplier, Py_ssize_t n_max, law="gaussian"):
        if not 0.0 < clip < float("inf"):
            raise ValueError(f"clip must be positive and finite, got {clip!r}")
        if n_max < 1:
            raise ValueError(f"n_max must be >= 1, got {n_max}")
        self.rho, points, scale = grid_scale(multiplier, n_max)
        grid, inv_grid = grid_for(2.0 * clip, self.rho, points)
        self.clip, self.n_max = clip, n_max
        self.grid, self.inv_grid = float(grid), float(inv_grid)
        self.noise = IntegerNoise(law, scale)
        self.table = noise_table(self.noise)

    @property
    def eta(self):
        """Each release's law is within ``exp(+-eta)`` of the ideal mechanism's."""
        return self.noise.eta

    def release(self, values, generator):
        """One private release of ``sum(clip(values, -clip, clip))`` (a float on
        the grid, up to the noise's half-integer shift for Laplace)."""
        cdef const double[::1] x = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
        if x.shape[0] > self.n_max:
            raise ValueError(f"at most n_max = {self.n_max} values, got {x.shape[0]}")
        if not np.all(np.isfinite(x)):
            raise ValueError("values must be finite")
        cdef bitgen_t* rng = generator_bitgen(generator)
        cdef double total = 0.0, out
        cdef Py_ssize_t i
        with nogil:
            for i in range(x.shape[0]):
                total += fmin(fmax(x[i], -self.clip), self.clip)
        with generator.bit_generator.lock, nogil:
            out = grid_release(total, self.inv_grid, self.grid,
                               <double> noise_draw(self.table, rng) + self.table.shift)
        return out


def integer_noise(IntegerNoise noise, generator, Py_ssize_t size):
    """``size`` draws of ``noise``'s integer law plus its shift (0, or 1/2 for
    Laplace), by the batch fill ``noise_fill``: the draws of ``noise_draw``, faster
    (noise for many releases at once: add ``grid`` times each to a rounded value)."""
    cdef const NoiseTable* table = noise_table(noise)
    cdef bitgen_t* rng = generator_bitgen(generator)
    out = np.empty(size)
    cdef double[::1] view = out
    if size > 0:
        with generator.bit_generator.lock, nogil:
            noise_fill(table, rng, size, &view[0])
    return out


def noisy_argmax(scores, double scale, selection, generator, Py_ssize_t size=1):
    """``size`` independent noisy-argmax indices of ``scores``.

    ``selection="exponential"``: ``P(j) ∝ exp(s_j / scale)``; ``"laplace"``:
    ``argmax_j s_j + Lap(scale)_j``.  For scores of sensitivity Delta, ``scale =
    2 Delta / epsilon_0`` makes each index epsilon_0-DP (plus the sampler's
    slack, docs/cython_api.rst).
    """
    cdef NoisyMax chooser = NoisyMax(scores, scale, selection, generator)
    out = np.empty(size, dtype=np.int64)
    cdef int64_t[::1] view = out
    cdef Py_ssize_t i
    with generator.bit_generator.lock, nogil:
        for i in range(size):
            view[i] = chooser.sample()
    return out


def lazy_gaussian_sums(GaussianWalk walk, steps, generator):
    """Per entry of ``steps``, the sum of that many integer Gaussian steps
    ``round(walk.scale N)``, drawn in O(log k) draws each."""
    cdef const int64_t[::1] k = np.ascontiguousarray(steps, dtype=np.int64)
    if k.shape[0] and (np.min(k) < 0 or np.max(k) > walk.max_steps):
        raise ValueError(f"steps must lie in [0, {walk.max_steps}]")
    cdef const Walk* tables = walk_tables(walk)
    cdef bitgen_t* rng = generator_bitgen(generator)
    out = np.empty(k.shape[0], dtype=np.int64)
    cdef int64_t[::1] view = out
    cdef Py_ssize_t i
    with generator.bit_generator.lock, nogil:
        for i in range(k.shape[0]):
            view[i] = walk_sum(tables, rng, k[i])
    return out


def poisson_batch(Batches batches, generator):
    """One batch of row indices (Poisson with the rate of ``batches``)."""
    cdef BatchSampler* sampler = batch_sampler(batches)
    cdef bitgen_t* rng = generator_bitgen(generator)
    rows = np.empty(batches.n, dtype=np.int64)
    cdef int64_t[::1] view = rows
    cdef int64_t size
    with generator.bit_generator.lock, nogil:
        size = sample_batch(sampler, rng, &view[0])
    return rows[:size].copy()


def standard_normals(generator, Py_ssize_t size):
    """``size`` standard normals drawn nogil: ``generator.standard_normal(size)``,
    draw for draw (numpy's ziggurat, its common case inlined)."""
    cdef bitgen_t* rng = generator_bitgen(generator)
    out = np.empty(size)
    cdef double[::1] view = out
    if size > 0:
        with generator.bit_generator.lock, nogil:
            standard_normal_fill(rng, size, &view[0])
    return out


def uniform_indices(generator, uint64_t high, Py_ssize_t size):
    """``size`` integers uniform in [0, high) drawn nogil:
    ``generator.integers(0, high, size)``, draw for draw."""
    if not 1 <= high <= 2 ** 63:
        raise ValueError(f"high must lie in [1, 2**63], got {high}")
    cdef bitgen_t* rng = generator_bitgen(generator)
    out = np.empty(size, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    if size > 0:
        with generator.bit_generator.lock, nogil:
            uniform_index_fill(rng, high, size, &view[0])
    return out.astype(np.int64)
