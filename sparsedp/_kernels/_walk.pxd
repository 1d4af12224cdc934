# Lazy Gaussian noise: the sum of k rounded-Gaussian draws in O(log k) draws
# (walk_sum), or in as many reads of draws made in bulk (walk_sum_buffered, the
# kernels').  See _walk.pyx.
from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t
from ._noise cimport NoiseTable, noise_draw, noise_fill_int

cdef enum:
    WALK_DIGIT_BITS = 4             # sums are drawn digit by digit in base 16
    WALK_DIGIT_MASK = 15
    WALK_DIGITS = 10                # sums of up to 16**10 - 1 steps
    WALK_TABLES = 150               # 15 tables per digit
    WALK_BUFFER = 1024              # draws a table's buffer holds at most (WalkDraws)

ctypedef struct Walk:
    int digits                      # tables[15 i + d - 1]: scale * sqrt(d 16**i), d = 1 .. 15
    const NoiseTable* tables[WALK_TABLES]


# The sum of k steps of the walk (0 <= k < 16**digits): one draw per nonzero
# base-16 digit d of k at position i, from the table of scale
# ``scale * sqrt(d 16**i)``.  The caller holds the generator's lock.
cdef inline int64_t walk_sum(const Walk* walk, bitgen_t* rng, int64_t k) noexcept nogil:
    cdef int64_t total = 0, d
    cdef int base = 0
    while k:
        d = k & WALK_DIGIT_MASK
        if d:
            total += noise_draw(walk.tables[base + d - 1], rng)
        k >>= WALK_DIGIT_BITS
        base += WALK_DIGIT_MASK
    return total


# A run's table draws, drawn ahead: a table's draws come in bulk (16, then twice as
# many each time up to WALK_BUFFER: the table in cache once for many draws, and a
# short run wastes few) and are taken in order, each once.  The sums have
# walk_sum's law (every draw a fresh one of its table's law); the stream's words go
# to other draws.  Entry WALK_TABLES holds a 0 that is never used up: the table of
# a zero digit (see walk_sum_buffered).
ctypedef struct WalkDraws:
    const Walk* walk
    int64_t pos[WALK_TABLES + 1]    # next unused draw of table b
    int64_t end[WALK_TABLES + 1]    # draws in table b's buffer (pos == end: none left)
    int64_t draws[WALK_TABLES + 1][WALK_BUFFER]


cdef inline void walk_draws_init(WalkDraws* wd, const Walk* walk) noexcept nogil:
    cdef int b
    wd.walk = walk
    for b in range(WALK_TABLES):
        wd.pos[b] = wd.end[b] = 8       # empty; the first fill draws 16
    wd.pos[WALK_TABLES], wd.end[WALK_TABLES] = 0, 1
    wd.draws[WALK_TABLES][0] = 0


cdef inline int64_t take_draw(WalkDraws* wd, bitgen_t* rng, int b,
                              int64_t used) noexcept nogil:
    """The next draw of table b (``used`` = 1), or the 0 of entry WALK_TABLES
    (``used`` = 0)."""
    cdef int64_t pos = wd.pos[b], size
    if pos == wd.end[b]:
        size = min(2 * wd.end[b], <int64_t> WALK_BUFFER)
        noise_fill_int(wd.walk.tables[b], rng, size, wd.draws[b])
        wd.end[b], pos = size, 0
    wd.pos[b] = pos + used
    return wd.draws[b][pos]


cdef inline int64_t digit_draw(WalkDraws* wd, bitgen_t* rng, int base,
                               int64_t d) noexcept nogil:
    """The draw of digit value d from the digit's tables ``base ..``: the next of
    table ``base + d - 1``, or for d = 0 the 0 of entry WALK_TABLES (no branch)."""
    return take_draw(wd, rng, <int> (base + d - 1) if d else WALK_TABLES, d != 0)


# walk_sum's law from ``wd``'s buffers.  A sum of 16 to 255 steps reads two buffers,
# digit 0's and digit 1's, a zero digit's being the 0 of entry WALK_TABLES: no
# branch on its digits (they vary from sum to sum: a branch would be mispredicted
# often); a sum of fewer than 16 steps reads one.
cdef inline int64_t walk_sum_buffered(WalkDraws* wd, bitgen_t* rng, int64_t k) noexcept nogil:
    cdef int64_t total = 0
    cdef int base = 0
    if k < 16:  # one digit (a run whose sums are mostly that short predicts this)
        return digit_draw(wd, rng, 0, k)
    if k < 256:
        return (digit_draw(wd, rng, 0, k & WALK_DIGIT_MASK)
                + digit_draw(wd, rng, WALK_DIGIT_MASK, k >> WALK_DIGIT_BITS))
    while k:
        total += digit_draw(wd, rng, base, k & WALK_DIGIT_MASK)
        k >>= WALK_DIGIT_BITS
        base += WALK_DIGIT_MASK
    return total


# A run's WalkDraws, one per walk of ``walks`` (kept across the kernel calls of a run)
cdef class WalkBuffers:
    cdef void* _memory                     # malloc'd: pages are touched only as used
    cdef WalkDraws* draws                  # draws[r]: those of walks[r]
    cdef readonly list walks


cdef class GaussianWalk:
    cdef Walk walk
    cdef list _noises                      # the IntegerNoise objects owning the tables
    cdef readonly double scale
    cdef readonly int64_t max_steps
    cdef readonly double table_eta         # the largest eta of the tables
    cdef readonly double lattice_eta       # rounded vs discrete Gaussian, per step
