# sparsedp's floating-point-safe samplers and noisy max for other Cython code:
#
#     from sparsedp.random cimport generator_bitgen, IntegerNoise, noise_table, noise_draw
#
# The public cimport path (docs/cython_api.rst).  The names below are stable;
# they are defined in the private modules sparsedp._kernels._random, _noise,
# _walk, _sampling and _noisy_max, whose other names may change.  Objects are
# built in Python (sparsedp.random: IntegerNoise, GaussianWalk, Batches,
# NoisyMax); the draws run nogil on the bitgen_t of a numpy Generator, with
# ``generator.bit_generator.lock`` held around them.  A module that cimports
# these links numpy's npyrandom library (examples/cython/setup.py).

from numpy.random cimport bitgen_t

# The bitgen_t behind a numpy.random.Generator (TypeError otherwise).
# Standard normals and bounded integers drawn exactly as numpy's
# Generator.standard_normal and Generator.integers(0, high) draw them.
from sparsedp._kernels._random cimport generator_bitgen, standard_normal_fill, uniform_index_fill

# Integer noise of a known law on a public grid: IntegerNoise(law, scale) owns
# a NoiseTable; noise_draw returns one integer J (law NOISE_GAUSSIAN:
# round(scale N); NOISE_LAPLACE: floor(L), released as J + table.shift = J + 1/2),
# every probability within exp(+-IntegerNoise.eta) of the ideal law's;
# noise_fill writes count draws plus the shift; grid_release(x, inv_grid, grid,
# noise) = grid * (rint(x * inv_grid) + noise).
from sparsedp._kernels._noise cimport (
    NOISE_GAUSSIAN, NOISE_LAPLACE, NoiseTable, IntegerNoise, grid_release, noise_draw,
    noise_fill,
)

# The integer Gaussian walk drawn lazily: walk_sum(walk, rng, k) is the sum of k
# steps round(scale N) in O(log k) draws, its law within exp(+-k step_eta) of the
# k-fold sum (GaussianWalk.step_eta).
from sparsedp._kernels._walk cimport GaussianWalk, Walk, walk_sum

# Poisson (or fixed-size) batches of rows: sample_batch(sampler, rng, rows)
# writes a batch into rows[0 .. size - 1] and returns its size; its law is within
# exp(+-Batches.eta) and total variation Batches.tv of Poisson sampling.
from sparsedp._kernels._sampling cimport Batches, BatchSampler, sample_batch

# The noisy max over a score array (exponential mechanism / report-noisy-max
# with Laplace noise / plain argmax): NoisyMax(scores, scale, selection,
# generator); nogil methods sample() -> index, set_score(k, s), flush().
from sparsedp._kernels._noisy_max cimport NoisyMax


cdef inline const NoiseTable* noise_table(IntegerNoise noise) except NULL:
    """The table that ``noise_draw`` and ``noise_fill`` read (owned by ``noise``:
    keep ``noise`` alive while drawing)."""
    if noise is None:
        raise TypeError("expected an IntegerNoise, got None")
    return &noise.table


cdef inline const Walk* walk_tables(GaussianWalk walk) except NULL:
    """The tables that ``walk_sum`` reads (owned by ``walk``)."""
    if walk is None:
        raise TypeError("expected a GaussianWalk, got None")
    return &walk.walk


cdef inline BatchSampler* batch_sampler(Batches batches) except NULL:
    """The sampler that ``sample_batch`` runs (owned by ``batches``; one draw
    at a time: it marks the rows it picks in a shared array)."""
    if batches is None:
        raise TypeError("expected a Batches, got None")
    return &batches.sampler
