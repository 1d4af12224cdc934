# Floating-point-safe noise: integer noise of a known law on a public grid.
# See _noise.pyx and docs/privacy.rst ("Floating point").
from libc.math cimport fabs, rint
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
from numpy.random cimport bitgen_t

cdef enum:
    NOISE_SLOTS = 512          # alias slots (the top 9 bits of a word)
    NOISE_SLOT_SHIFT = 55      # slot = word >> 55; the low 55 bits against its threshold

ctypedef struct NoiseSlot:      # what the common case of a draw reads about a slot
    uint32_t threshold_hi       # threshold >> 40 (the first 15 bits compared)
    uint16_t alias
    uint16_t unused

ctypedef struct NoiseCell:      # ... and about a body cell (one 16-byte line part)
    int64_t start
    uint32_t width              # 0 beyond the body cells (forces the general path)
    uint32_t fast_hi            # fast_accept >> 48

ctypedef struct NoiseTable:
    int law                     # NOISE_GAUSSIAN or NOISE_LAPLACE
    double scale                # t (Gaussian) or b (Laplace), in grid units
    double shift                # added to a draw before release: 0, or 1/2 (Laplace)
    int64_t n_cells             # body cells 0 .. n_cells - 1; slot value n_cells: the tail
    int64_t tail_start          # K_T = n_cells * width
    int64_t tail_block          # B: the tail envelope halves every B integers
    uint64_t threshold[NOISE_SLOTS]
    uint16_t alias[NOISE_SLOTS]
    uint64_t fast_accept[NOISE_SLOTS]   # per body cell: accept at once below this
    int64_t cell_start[NOISE_SLOTS]     # body cell c: integers cell_start[c] + [0, cell_width[c])
    int64_t cell_width[NOISE_SLOTS]
    NoiseSlot slots[NOISE_SLOTS]
    NoiseCell cells[NOISE_SLOTS]

cdef enum:
    NOISE_GAUSSIAN = 0
    NOISE_LAPLACE = 1

# One draw of the table's integer law (every probability within a factor
# exp(+-eta) of the ideal law, eta = IntegerNoise.eta).  The caller holds the
# generator's lock.
cdef int64_t noise_draw(const NoiseTable* table, bitgen_t* rng) noexcept nogil
cdef int64_t noise_draw_from(const NoiseTable* table, bitgen_t* rng,
                             uint64_t first) noexcept nogil

# count draws plus the table's shift (the draws of noise_draw, its common case inlined)
cdef void noise_fill(const NoiseTable* table, bitgen_t* rng, Py_ssize_t count,
                     double* out) noexcept nogil

# grid * (rint(x * inv_grid) + noise): x released on the public grid (noise: a
# draw plus the table's shift).  Inline: the kernels call it once a step.
cdef inline double grid_release(double x, double inv_grid, double grid,
                                double noise) noexcept nogil:
    # rint(a) as (a + 1.5 * 2**52) - 1.5 * 2**52 for |a| < 2**51 (round to
    # nearest even, as rint; two additions instead of a libm call without SSE4.1)
    cdef double a = x * inv_grid
    if fabs(a) < 2251799813685248.0:
        a = (a + 6755399441055744.0) - 6755399441055744.0
    else:
        a = rint(a)
    return grid * (a + noise)


cdef class IntegerNoise:
    cdef NoiseTable table
    cdef readonly double eta
    cdef readonly str law
    cdef readonly double scale
