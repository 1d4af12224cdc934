# Floating-point-safe noise: integer noise of a known law on a public grid.
# See _noise.pyx and docs/privacy.rst ("Floating point").
from libc.math cimport fabs, rint
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
from numpy.random cimport bitgen_t

cdef enum:
    NOISE_SLOTS = 512          # alias slots (the top 9 bits of a word)
    NOISE_SLOT_SHIFT = 55      # slot = word >> 55; the low 55 bits against its threshold
    NOISE_ACCEPT_SHIFT = 30    # bits 30..39: the first 10 bits of the acceptance uniform
    NOISE_OFFSET_BITS = 29     # bits 1..29: the offset in a cell of width <= 2**29

ctypedef struct NoiseSlot:      # what the common case of a draw reads about a slot
    uint32_t threshold_hi       # threshold >> 40 (the first 15 bits compared)
    uint16_t alias
    uint16_t unused

ctypedef struct NoiseCell:      # ... and about a cell (16 bytes)
    int64_t start
    uint32_t offset_mask        # width - 1 (widths are powers of two); 0 for a wide table
    uint32_t fast_hi            # fast_accept >> 53; 0 for the tail (forces the general path)

ctypedef struct NoiseTable:
    int law                     # NOISE_GAUSSIAN or NOISE_LAPLACE
    int wide                    # cells wider than 2**29: the offset from a fresh word
    int64_t gaussian            # 1 (Gaussian: J = -k) or 0 (Laplace: J = -k - 1) when negative
    double scale                # t (Gaussian) or b (Laplace), in grid units
    double shift                # added to a draw before release: 0, or 1/2 (Laplace)
    int64_t n_cells             # body cells 0 .. n_cells - 1; slot value n_cells: the tail
    int64_t tail_start          # K_T: the end of the last body cell
    int64_t tail_block          # B: the tail envelope halves every B integers
    double shape_bound          # Gaussian: exp of a bound on log_shape(k) - log_shape(start)
                                # over the body, with room (noise_draw_from's acceptance)
    uint64_t threshold[NOISE_SLOTS]
    uint16_t alias[NOISE_SLOTS]
    uint64_t fast_accept[NOISE_SLOTS]   # per body cell: accept at once below this
    int64_t cell_start[NOISE_SLOTS]     # body cell c: integers cell_start[c] + [0, cell_width[c])
    int64_t cell_width[NOISE_SLOTS]     # a power of two
    NoiseSlot slots[NOISE_SLOTS]
    NoiseCell cells[NOISE_SLOTS]

cdef enum:
    NOISE_GAUSSIAN = 0
    NOISE_LAPLACE = 1

# The general path of a draw whose first word is ``first`` (then fresh words):
# every decision the common case below leaves open (Gaussian: a 0 is kept with
# probability 1/2 and a sign bit makes it 0 either way).
cdef int64_t noise_draw_from(const NoiseTable* table, bitgen_t* rng,
                             uint64_t first) noexcept nogil

# One draw of the table's integer law (every probability within a factor
# exp(+-eta) of the ideal law, eta = IntegerNoise.eta).  The caller holds the
# generator's lock.  Inline, the common case (over 99% of draws): one word, read as
# slot (bits 55-63), the first 15 bits of the alias comparison (40-54), the
# first 10 bits of the acceptance uniform (30-39), the offset in the cell
# (1-29; a fresh word's low bits for a wide table) and the sign (bit 0); two
# table reads, no multiplication, one branch that is almost never taken.  A
# word that leaves a comparison undecided goes to noise_draw_from, which takes
# the same decisions on the same words: the law is that of full-width uniforms.
cdef inline const NoiseCell* noise_cell(const NoiseTable* table, uint64_t word) noexcept nogil:
    # the cell of the draw whose first word is ``word`` when the common case decides
    # it, else NULL (noise_draw_from decides)
    cdef uint64_t slot = word >> 55
    cdef uint64_t prefix = (word >> 40) & 0x7FFF
    cdef uint64_t thr_hi = table.slots[slot].threshold_hi
    cdef uint64_t alias = table.slots[slot].alias
    # the slot or its alias, branch-free (which one is random: a branch would be
    # mispredicted half the time)
    cdef uint64_t cell = alias ^ ((slot ^ alias) & (0 - <uint64_t> (prefix < thr_hi)))
    cdef const NoiseCell* ce = &table.cells[cell]
    if (prefix == thr_hi) | (((word >> 30) & 0x3FF) >= ce.fast_hi):
        return NULL
    return ce


cdef inline int64_t noise_signed(const NoiseCell* ce, uint64_t word, uint64_t offset,
                                 int64_t gaussian) noexcept nogil:
    # k = the cell's start + offset, signed by the word's bit 0: k, -k (Gaussian: 0
    # either way, kept half as often) or -k - 1 (Laplace), branch-free
    cdef int64_t neg = <int64_t> (word & 1)
    return ((ce.start + <int64_t> offset) ^ -neg) + (neg & gaussian)


cdef inline int64_t noise_draw_word(const NoiseTable* table, bitgen_t* rng, uint64_t word,
                                    bint wide, int64_t gaussian) noexcept nogil:
    # the draw whose first word is ``word``; ``wide`` and ``gaussian`` are the
    # table's (parameters, so that a fill reads them once)
    cdef const NoiseCell* ce = noise_cell(table, word)
    if ce == NULL:
        return noise_draw_from(table, rng, word)
    if wide:
        return noise_signed(ce, word, rng.next_uint64(rng.state)
                            & <uint64_t> (table.cell_width[ce - table.cells] - 1), gaussian)
    return noise_signed(ce, word, (word >> 1) & ce.offset_mask, gaussian)


cdef inline int64_t noise_draw(const NoiseTable* table, bitgen_t* rng) noexcept nogil:
    if table.wide:
        return noise_draw_word(table, rng, rng.next_uint64(rng.state), True, table.gaussian)
    return noise_draw_word(table, rng, rng.next_uint64(rng.state), False, table.gaussian)

# count draws plus the table's shift (the draws of noise_draw)
cdef void noise_fill(const NoiseTable* table, bitgen_t* rng, Py_ssize_t count,
                     double* out) noexcept nogil
# count draws of noise_draw as integers (no shift)
cdef void noise_fill_int(const NoiseTable* table, bitgen_t* rng, Py_ssize_t count,
                         int64_t* out) noexcept nogil

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
