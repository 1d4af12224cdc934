"""DP-GCD kernel: incremental clipped gradient and an exact, sublinear noisy max.

Two pieces, one concern each.

:class:`NoisyMax` holds a score per coordinate and samples the index of a noisy
maximum without drawing p noises:

* ``"exponential"``: ``P(j) ∝ exp(s_j / b)`` (the exponential mechanism, i.e.
  Gumbel-max with Gumbel scale b), by exact inverse-CDF descent over exact
  128-bit integer block sums of the weights ``r_j = max(1, ceil(2^Q exp((s_j -
  ref) / b)))`` with a uniform integer below their sum (no rounding in the sums
  or the uniform), then an acceptance test with probability ``2^Q exp(..) / r_j``
  for the weights below 2^52 units (not exact integers; rare).  Every index,
  however far below the top, has its ideal probability within a factor
  ``exp(+-eta)``, eta about 2^-50 (gap / b + 320): docs/privacy.rst, "Noisy max
  under floating point".
* ``"laplace"``: ``argmax_j s_j + Lap(b)_j`` (report-noisy-max), exactly.  A
  threshold t is set so that few values exceed it: the larger of ``max_j s_j -
  8 b`` and the level that ``EXCEEDERS`` noisy values exceed on average.
  Coordinates scoring above t (few) get their Laplace draw explicitly.  A
  coordinate below t exceeds t with probability ``pi_j = exp((s_j - t) / b) / 2``
  (Laplace's upper tail is exponential), and given that, its value is
  ``t + Exp(b)`` (memorylessness).  The exceeders are found by thinning a
  Poisson process of rate ``rho_j ∝ r_j``, ``rho_j >= 2 log(2) pi_j >= -log(1 -
  pi_j)``, drawn from the same integer weights (one exact descent per event;
  the arrivals are sums of exponential draws), each first hit accepted with
  probability ``pi_j / (1 - exp(-rho_j))``: exactly independent Bernoulli(pi_j)
  indicators.  The largest value above t is the noisy max.  If no value exceeds
  t (probability at most 1/48, with one dominant score; about exp(-EXCEEDERS)
  when many are close), every remaining value is drawn from its law conditioned
  on lying below t (by rejection), in O(p).  The law of the output is that of
  the naive sampler.  Values are kept relative to t, and the Laplace and
  exponential draws use one 64-bit word each (cells of probability 2^-64): the
  floating-point error of the index law is a total variation below 2^-40 per
  draw (docs/privacy.rst).
* ``"argmax"``: no noise (epsilon = inf), first index of the largest score.

Scores live in blocks of ``B ~ sqrt(p)`` coordinates with their weight sum,
sums of chunks of 16 weights and maximum; changed blocks are recomputed exactly
(integers: no drift, no rounding), so a draw costs O(p / B + B / 16 + 16) plus
the coordinates near the top.

:class:`GreedyKernel` runs DP-GCD iterations (Algorithm 2 of Mangold et al.,
AISTATS 2023): select j by the noisy max of the rule's score, release the
clipped coordinate gradient with noise, take a proximal step.  It keeps the
unnormalised clipped gradient ``G_k = sum_i clip(X_ik loss'(z_i, y_i), C_k)``
incrementally: when w_j moves, only the rows of column j change their
derivative, and only the columns of those rows (a CSR copy) change their
terms; a full recomputation runs every ``refresh_every`` iterations or once the
incremental work exceeds four passes over the nonzeros.
"""
from libc.math cimport exp, expm1, log, sqrt, fabs, ldexp, floor, ceil, INFINITY, M_LN2
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, free
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_laplace, random_standard_normal, random_standard_uniform

import numpy as np

from ._core cimport (
    ColEntry, index_t, check_loss, clip, clipped_gradient, loss_derivative, penalty_value,
    prox_elastic_net, subdiff_distance, SIGNAL_CHECK_WORK, check_signals,
)
from ._noise cimport IntegerNoise, grid_release, noise_draw
from ._random cimport generator_bitgen

cdef enum:
    ARGMAX = 0
    EXPONENTIAL = 1
    LAPLACE = 2

cdef enum:
    GS_S = 0
    GS_R = 1
    GS_Q = 2

cdef enum:
    NO_NOISE = 0
    GRID_NOISE = 1            # the release on a public grid (sparsedp._noise)
    RAW_LAPLACE_NOISE = 2     # raw floating-point noise: the planted bug
    RAW_GAUSSIAN_NOISE = 3    # "raw_float_noise" only

SELECTIONS = {"argmax": ARGMAX, "exponential": EXPONENTIAL, "laplace": LAPLACE}
RULES = {"gs-s": GS_S, "gs-r": GS_R, "gs-q": GS_Q}
GRADIENT_RELEASES = {"none": NO_NOISE, "grid": GRID_NOISE, "raw_laplace": RAW_LAPLACE_NOISE,
                "raw_gaussian": RAW_GAUSSIAN_NOISE}

# Coordinates within TOP_WIDTH * b of the best score get explicit Laplace draws.
cdef double TOP_WIDTH = 8.0
# ... and at least this many noisy values exceed the threshold on average.
cdef double EXCEEDERS = 12.0
# The kept gradient is refreshed before its rounding drift can reach
# DRIFT_FRACTION / 2 of a coordinate gradient's sensitivity (GreedyKernel).
DRIFT_FRACTION = 2.0 ** -13
# NoisyMax's integer weights: r_k = max(1, ceil(2^Q exp((s_k - ref) / b))) with
# Q = 126 - HEAD_BITS - bit_length(p), so that the weights may grow 2^HEAD_BITS
# above ref and their sum stays below 2^126.  The weights are re-referenced
# when a score rises (HEAD_BITS - 1) log 2 b above ref, or when the best falls
# (Q - FLOOR_BITS) log 2 b below it (the top weights stay exact integers).
cdef int HEAD_BITS = 24
cdef int FLOOR_BITS = 60
cdef enum:
    CHUNK = 16      # coordinates per chunk sum (block sizes are multiples of 16)

cdef packed struct RowEntry:
    double value    # X_ik
    double clip     # C_k, the clipping threshold of its column
    int64_t col     # k


cdef void transpose_csc(const double[::1] data, const index_t[::1] indices,
                        const index_t[::1] indptr, const double[::1] C,
                        double intercept, bint with_intercept,
                        ColEntry[::1] cols, int64_t[::1] col_ptr,
                        RowEntry[::1] rows, int64_t[::1] row_ptr) noexcept nogil:
    """Column and row records of a CSC matrix (rows by a counting sort), and with
    ``with_intercept`` of one more last column of constant value ``intercept``.

    Row i's records come in increasing column order (columns are visited in
    order), as ``X.tocsr()`` with sorted indices: the records of ``[X, intercept
    * 1]``, without building it.  ``row_ptr`` is zero on entry.
    """
    cdef Py_ssize_t n = row_ptr.shape[0] - 1, p = indptr.shape[0] - 1, i, j, q
    cdef int64_t r, nnz = indptr[p]
    for j in range(p + 1):
        col_ptr[j] = indptr[j]
    for q in range(nnz):
        cols[q].value, cols[q].row = data[q], indices[q]
        row_ptr[indices[q] + 1] += 1
    if with_intercept:
        col_ptr[p + 1] = nnz + n
        for i in range(n):
            cols[nnz + i].value, cols[nnz + i].row = intercept, i
            row_ptr[i + 1] += 1
    for i in range(n):
        row_ptr[i + 1] += row_ptr[i]
    for j in range(p):
        for q in range(indptr[j], indptr[j + 1]):
            r = row_ptr[indices[q]]  # row_ptr[i] runs ahead as row i fills
            rows[r].value, rows[r].clip, rows[r].col = data[q], C[j], j
            row_ptr[indices[q]] = r + 1
    if with_intercept:  # the last record of every row
        for i in range(n):
            r = row_ptr[i]
            rows[r].value, rows[r].clip, rows[r].col = intercept, C[p], p
            row_ptr[i] = r + 1
    for i in range(n, 0, -1):  # back to the starts
        row_ptr[i] = row_ptr[i - 1]
    row_ptr[0] = 0


def entries(X, clip_thresholds, intercept_scaling=None):
    """``(columns, col_ptr, rows, row_ptr)``: the record arrays of GreedyKernel
    (CSC column records and, transposed, row records with their column's
    clipping threshold) for a CSC matrix ``X`` with int32 or int64 indices.

    ``intercept_scaling`` (None: none): the records of ``[X, intercept_scaling *
    1]``, the public intercept column last, packed here (no copy of X);
    ``clip_thresholds`` then has ``n_features + 1`` entries.
    """
    n, p = X.shape
    with_intercept = intercept_scaling is not None
    m = p + with_intercept
    nnz = X.nnz + n * with_intercept
    cols = np.empty(nnz, dtype=[("value", "f8"), ("row", "i8")])
    rows = np.empty(nnz, dtype=[("value", "f8"), ("clip", "f8"), ("col", "i8")])
    col_ptr = np.empty(m + 1, dtype=np.int64)
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    indices, indptr = np.ascontiguousarray(X.indices), np.ascontiguousarray(X.indptr)
    if indices.dtype != indptr.dtype:
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
    C = np.ascontiguousarray(clip_thresholds, dtype=np.float64)
    if C.shape != (m,):
        raise ValueError(f"clip_thresholds must have shape ({m},), got {C.shape}")
    s = float(intercept_scaling) if with_intercept else 0.0
    if indices.dtype == np.int32:
        transpose_csc[int32_t](data, indices, indptr, C, s, with_intercept, cols, col_ptr,
                               rows, row_ptr)
    else:
        transpose_csc[int64_t](data, indices.astype(np.int64, copy=False),
                               indptr.astype(np.int64, copy=False), C, s, with_intercept,
                               cols, col_ptr, rows, row_ptr)
    return cols, col_ptr, rows, row_ptr


def block_size(Py_ssize_t p):
    """Power of two near sqrt(p), in [16, 4096]."""
    cdef Py_ssize_t b = 16
    while b * b < p and b < 4096:
        b *= 2
    return b


cdef class NoisyMax:
    """Scores of p coordinates and an exact sampler of their noisy argmax.

    Parameters
    ----------
    scores : ndarray of shape (p,)
    scale : float
        b, the scale of the noise (Gumbel or Laplace); 0 for ``"argmax"``.
    selection : {"exponential", "laplace", "argmax"}
    generator : numpy.random.Generator
        Source of the noise (hold its lock around nogil sampling).
    """

    def __cinit__(self, scores, double scale, selection, generator):
        cdef Py_ssize_t k
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        if scores.ndim != 1 or scores.shape[0] < 1:
            raise ValueError("scores must be a non-empty 1-D array")
        if not np.all(np.isfinite(scores)):
            raise ValueError("scores must be finite")
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {sorted(SELECTIONS)}, "
                             f"got {selection!r}")
        self.selection = SELECTIONS[selection]
        if self.selection != ARGMAX and not (scale > 0 and scale < INFINITY):
            raise ValueError(f"the noise scale must be positive and finite, got {scale}")
        self.scale = scale if self.selection != ARGMAX else 0.0
        self.generator = generator
        self.rng = generator_bitgen(generator)
        self.p = scores.shape[0]
        self.block = block_size(self.p)
        self.n_blocks = (self.p + self.block - 1) // self.block
        self.score = scores.copy()
        self.units = 126 - HEAD_BITS - (<object> self.p).bit_length()
        self.x_head = (HEAD_BITS - 1) * M_LN2
        self.x_floor = max(self.units - FLOOR_BITS, 8) * M_LN2
        self.x_one = -(self.units + 1) * M_LN2   # below: 2^Q e^x < 1/2, r = 1
        self.two_q = ldexp(1.0, self.units)
        self.weight = <u128*> malloc(self.p * sizeof(u128))
        self.block_sum = <u128*> malloc(self.n_blocks * sizeof(u128))
        self.tail_prefix = <u128*> malloc(self.n_blocks * sizeof(u128))
        self.chunk_sum = <u128*> malloc(((self.p + CHUNK - 1) // CHUNK) * sizeof(u128))
        if self.weight == NULL or self.block_sum == NULL or self.tail_prefix == NULL \
                or self.chunk_sum == NULL:
            raise MemoryError()
        for k in range(self.p):
            self.weight[k] = 0
        self.block_max = np.zeros(self.n_blocks)
        self.dirty = np.zeros(self.n_blocks, dtype=np.uint8)
        self.dirty_list = np.zeros(self.n_blocks, dtype=np.int64)
        self.hit = np.zeros(self.p, dtype=np.int64)
        self.round = 0
        with nogil:
            self.rebuild()

    # ---- maintenance --------------------------------------------------------------
    def __dealloc__(self):
        free(self.weight)
        free(self.block_sum)
        free(self.tail_prefix)
        free(self.chunk_sum)

    cdef inline u128 integer_weight(self, double s) noexcept nogil:
        """r = max(1, ceil(2^Q exp((s - ref) / b))); 0 (and stale) past the headroom."""
        cdef double x = (s - self.ref) / self.scale
        if x > self.x_head:
            self.stale = True
            return 0
        if x < self.x_one:
            return 1
        return u128_ceil(exp(x) * self.two_q)  # exact scaling (no under/overflow)

    cdef void rebuild(self) noexcept nogil:
        """Re-reference the weights on the best score and recompute every block."""
        cdef Py_ssize_t k, bk
        cdef double best = -INFINITY
        for k in range(self.p):
            if self.score[k] > best:
                best = self.score[k]
        self.ref = best
        self.stale = False
        if self.scale > 0:
            for k in range(self.p):
                self.weight[k] = self.integer_weight(self.score[k])
        for bk in range(self.n_blocks):
            self.dirty[bk] = 0
            self.recompute_block(bk)
        self.n_dirty = 0
        self.summarise()
        self.n_rebuilds += 1

    cdef inline void recompute_block(self, Py_ssize_t bk) noexcept nogil:
        cdef Py_ssize_t k, end = min((bk + 1) * self.block, self.p)
        cdef u128 s = 0, c = 0
        cdef double m = -INFINITY
        for k in range(bk * self.block, end):
            c += self.weight[k]
            if (k + 1) % CHUNK == 0 or k + 1 == end:
                self.chunk_sum[k // CHUNK] = c
                s += c
                c = 0
            if self.score[k] > m:
                m = self.score[k]
        self.block_sum[bk] = s
        self.block_max[bk] = m

    cdef void summarise(self) noexcept nogil:
        cdef Py_ssize_t bk
        cdef u128 s = 0
        cdef double m = -INFINITY
        for bk in range(self.n_blocks):
            s += self.block_sum[bk]
            if self.block_max[bk] > m:
                m = self.block_max[bk]
        self.total = s
        self.best = m

    cdef inline void set_score(self, Py_ssize_t k, double s) noexcept nogil:
        """Change a score (takes effect in the sums at :meth:`flush`)."""
        cdef Py_ssize_t bk = k // self.block
        self.score[k] = s
        if self.scale > 0:
            self.weight[k] = self.integer_weight(s)
        if not self.dirty[bk]:
            self.dirty[bk] = 1
            self.dirty_list[self.n_dirty] = bk
            self.n_dirty += 1

    cdef void flush(self) noexcept nogil:
        """Recompute the changed blocks exactly; re-reference if the top moved far.

        The sums are exact integers whatever the order of the updates; a rebuild
        runs when a weight would pass 2^(Q + HEAD_BITS - 1) units (``stale``) or
        when the best falls x_floor b below ref (the draws stay exact below that,
        but more of them would take the acceptance test).
        """
        cdef Py_ssize_t i, bk
        for i in range(self.n_dirty):
            bk = self.dirty_list[i]
            self.dirty[bk] = 0
            self.recompute_block(bk)
        self.n_dirty = 0
        self.summarise()
        if self.scale > 0 and (self.stale
                               or (self.best - self.ref) / self.scale < -self.x_floor):
            self.rebuild()

    # ---- sampling -----------------------------------------------------------------
    cdef Py_ssize_t sample(self) noexcept nogil:
        if self.selection == EXPONENTIAL:
            return self.sample_exponential()
        if self.selection == LAPLACE:
            return self.sample_laplace()
        return self.argmax()

    cdef Py_ssize_t argmax(self) noexcept nogil:
        cdef Py_ssize_t bk, k, end
        for bk in range(self.n_blocks):
            if self.block_max[bk] == self.best:
                end = min((bk + 1) * self.block, self.p)
                for k in range(bk * self.block, end):
                    if self.score[k] == self.best:
                        return k
        return 0

    # Exact primitives: integer arithmetic on 64-bit words of the bit generator.
    cdef inline uint64_t word(self) noexcept nogil:
        return self.rng.next_uint64(self.rng.state)

    cdef u128 uniform_below(self, u128 n) noexcept nogil:
        """A uniform integer in [0, n), n >= 1, exactly (masked rejection, < 2 tries)."""
        cdef int bits = u128_bits(n - 1)
        cdef u128 x
        cdef uint64_t hi
        if bits == 0:
            return 0
        while True:
            if bits <= 64:
                x = self.word() >> (64 - bits)
            else:  # high word first (C leaves the order of arguments open)
                hi = self.word() >> (128 - bits)
                x = u128_words(hi, self.word())
            if x < n:
                return x

    cdef inline double std_exponential(self) noexcept nogil:
        """-log U, U = (2m + 1) 2^-64 for m uniform on 63 bits (cell midpoints)."""
        return -log(ldexp(<double> (2 * (self.word() >> 1) + 1), -64))

    cdef inline double std_laplace(self) noexcept nogil:
        """A sign bit and :meth:`std_exponential` from the other 63 bits of one word."""
        cdef uint64_t w = self.word()
        cdef double e = -log(ldexp(<double> (2 * (w >> 1) + 1), -64))
        return -e if w & 1 else e

    cdef Py_ssize_t scan_block(self, Py_ssize_t bk, u128 u, u128 acc,
                               double t) noexcept nogil:
        """Index in block bk where the cumulative weight, from ``acc``, passes u.

        Coordinates with a score above ``t`` are skipped.  Exact: the caller
        guarantees ``acc <= u < acc + (the block's weights)``.  Through the chunk
        sums when no score of the block is above t.
        """
        cdef Py_ssize_t k, c, start = bk * self.block, last = -1
        cdef Py_ssize_t end = min((bk + 1) * self.block, self.p)
        if self.block_max[bk] <= t:
            c = start // CHUNK
            while c < (end - 1) // CHUNK and not u < acc + self.chunk_sum[c]:
                acc += self.chunk_sum[c]
                c += 1
            start = c * CHUNK
        for k in range(start, end):
            if self.score[k] > t:
                continue
            last = k
            acc += self.weight[k]
            if u < acc:
                return k
        return last  # unreachable with exact sums

    cdef void acceptance(self, Py_ssize_t k, int64_t* zero_bits,
                         uint64_t* threshold) noexcept nogil:
        """k's acceptance probability ``2^-zero_bits threshold / 2^53``.

        The target weight of k is ``2^Q exp(x_k)``; its integer weight r_k is the
        ceiling (at least 1).  An r_k above 2^52 is the target weight itself (a
        double that large is an integer): accepted at once.  Otherwise accept
        with ``a = exp(la)``, ``la = x_k + Q log 2 - log r_k <= 0``, drawn as
        ``n = floor(-la / log 2)`` zero bits and a 53-bit uniform below
        ``ceil(2^53 exp(la + n log 2))`` (``exp(..) in (1/2, 1]``): exact to the
        rounding of ``la`` (relative ``(|x_k| + 100) 2^-52``).  ``zero_bits = -1``:
        never (``la`` below -2^40).
        """
        cdef u128 r = self.weight[k]
        cdef double la, f
        cdef int64_t n
        zero_bits[0], threshold[0] = 0, <uint64_t> 1 << 53
        if r > (<u128> 1 << 52):
            return
        la = ((self.score[k] - self.ref) / self.scale + self.units * M_LN2
              - log(u128_double(r)))
        if la >= 0.0:
            return
        if la < -1099511627776.0:
            zero_bits[0] = -1
            return
        n = <int64_t> floor(-la / M_LN2)
        f = exp(la + n * M_LN2)
        if f > 1.0:
            f = 1.0
        zero_bits[0], threshold[0] = n, <uint64_t> ceil(ldexp(f, 53))

    cdef bint accept(self, Py_ssize_t k) noexcept nogil:
        """A Bernoulli draw of k's acceptance probability (:meth:`acceptance`)."""
        cdef int64_t n
        cdef uint64_t m
        if self.weight[k] > (<u128> 1 << 52):
            return True
        self.acceptance(k, &n, &m)
        if n < 0:
            return False
        while n >= 64:
            if self.word() != 0:
                return False
            n -= 64
        if n > 0 and (self.word() >> (64 - n)) != 0:
            return False
        return (self.word() >> 11) < m

    cdef Py_ssize_t sample_exponential(self) noexcept nogil:
        """Exact inverse CDF over the integer weights r_k, then k's acceptance.

        P(k) is proportional to r_k a_k = 2^Q exp(x_k) up to the rounding of x_k
        and of exp (see :meth:`acceptance`), for every k: no weight underflows
        and no rounding enters the sums or the uniform.
        """
        cdef u128 u, acc
        cdef Py_ssize_t bk = 0, k
        while True:
            u = self.uniform_below(self.total)
            acc = 0
            for bk in range(self.n_blocks):
                if u < acc + self.block_sum[bk]:
                    break
                acc += self.block_sum[bk]
            k = self.scan_block(bk, u, acc, INFINITY)
            if self.accept(k):
                return k

    cdef Py_ssize_t sample_laplace(self) noexcept nogil:
        """Report-noisy-max, values kept relative to t (``y = v - t``).

        Primitives: :meth:`std_laplace` and :meth:`std_exponential` (one 64-bit
        word each, cells of probability 2^-64), Poisson arrivals as sums of
        :meth:`std_exponential`, tail coordinates by exact integer inverse CDF.
        """
        cdef double b = self.scale
        # E[#exceeders] = sum_j exp((s_j - t) / b) / 2 = EXCEEDERS at t = t_mean
        cdef double t_mean = self.ref + b * (log(u128_double(self.total))
                                             - self.units * M_LN2 - log(2.0 * EXCEEDERS))
        cdef double t = max(self.best - TOP_WIDTH * b, t_mean)
        cdef double best_y = -INFINITY, y, rate, pi, rho, arrival, tail_d
        cdef Py_ssize_t best_k = -1, bk, k, end
        cdef u128 tail = 0
        # explicit draws above t; tail weight sums per block
        for bk in range(self.n_blocks):
            if self.block_max[bk] > t:
                end = min((bk + 1) * self.block, self.p)
                for k in range(bk * self.block, end):
                    if self.score[k] > t:
                        y = (self.score[k] - t) + b * self.std_laplace()
                        if y > best_y:
                            best_y, best_k = y, k
                    else:
                        tail += self.weight[k]
            else:
                tail += self.block_sum[bk]
            self.tail_prefix[bk] = tail
        # tail exceeders: a Poisson process of rate rho_j = rate r_j / tail >= 2 log 2
        # pi_j (r_j >= 2^Q exp(x_j)), each first hit kept w.p. pi_j / (1 - e^-rho_j)
        if tail > 0:
            tail_d = u128_double(tail)
            rate = M_LN2 * exp(log(tail_d) - self.units * M_LN2 + (self.ref - t) / b)
            self.round += 1
            arrival = self.std_exponential()
            while arrival <= rate:
                k = self.descend_tail(self.uniform_below(tail), t)
                if self.hit[k] != self.round:
                    self.hit[k] = self.round
                    pi = 0.5 * exp((self.score[k] - t) / b)
                    rho = rate * (u128_double(self.weight[k]) / tail_d)
                    if random_standard_uniform(self.rng) * -expm1(-rho) < pi:
                        y = b * self.std_exponential()
                        if y > best_y:
                            best_y, best_k = y, k
                arrival += self.std_exponential()
        if best_y > 0.0:
            return best_k
        # nothing above t: every tail value is drawn conditioned on staying below t
        # (by rejection: P(y <= 0) >= 1/2 for a score <= t)
        self.n_fallbacks += 1
        for k in range(self.p):
            if self.score[k] > t:
                continue
            y = 1.0
            while y > 0.0:
                y = (self.score[k] - t) + b * self.std_laplace()
            if y > best_y:
                best_y, best_k = y, k
        return best_k

    cdef Py_ssize_t descend_tail(self, u128 u, double t) noexcept nogil:
        """Tail coordinate (score <= t) at cumulative tail weight u (exact)."""
        cdef Py_ssize_t lo = 0, hi = self.n_blocks - 1, mid
        while lo < hi:  # first block whose prefix exceeds u
            mid = (lo + hi) // 2
            if self.tail_prefix[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        return self.scan_block(lo, u, self.tail_prefix[lo - 1] if lo > 0 else 0, t)

    # ---- Python access (tests, diagnostics) ---------------------------------------
    def draw(self, Py_ssize_t size):
        """``size`` independent noisy-argmax indices (for tests)."""
        out = np.empty(size, dtype=np.int64)
        cdef int64_t[::1] o = out
        cdef Py_ssize_t i
        with self.generator.bit_generator.lock, nogil:
            for i in range(size):
                o[i] = self.sample()
        return out

    def update(self, indices, values):
        """Set ``scores[indices] = values`` (for tests)."""
        cdef Py_ssize_t i
        idx = np.asarray(indices, dtype=np.int64)
        val = np.asarray(values, dtype=np.float64)
        for i in range(idx.shape[0]):
            self.set_score(idx[i], val[i])
        self.flush()

    @property
    def scores(self):
        return np.asarray(self.score).copy()

    def integer_weights(self):
        """The integer weights r_k (Python ints; the sampler's proposal, exact)."""
        return [(int(u128_hi(self.weight[k])) << 64) | int(u128_lo(self.weight[k]))
                for k in range(self.p)]

    def acceptances(self):
        """Per k, ``(n, m)``: the exponential sampler accepts k w.p. ``m / 2^(53 + n)``.

        With :meth:`integer_weights`, the exact law of ``"exponential"`` draws:
        ``P(k) ∝ r_k m_k / 2^(53 + n_k)`` (``n = -1``: never).
        """
        cdef int64_t n
        cdef uint64_t m
        out = []
        for k in range(self.p):
            self.acceptance(k, &n, &m)
            out.append((int(n), int(m)))
        return out


cdef class GreedyKernel:
    """State of one DP-GCD run: iterate, margins, clipped gradient, scores.

    Parameters
    ----------
    X : canonical CSC matrix (n, p), float64
    y : ndarray of shape (n,)
    loss : int
        The datafit's kernel id (:func:`sparsedp._kernels.kernel_id`): SQUARED or
        LOGISTIC; any other value raises ValueError.
    smoothness, clip_thresholds, step_sizes : ndarrays of shape (p,)
        M_j, C_j (``inf``: no clipping) and gamma_j.
    l1, l2 : float
        Elastic-net strengths of the separable penalty.
    rule : {"gs-s", "gs-r", "gs-q"}
    selection : {"exponential", "laplace", "argmax"}
    selection_scale : float
        b, the scale of the selection noise on the scores.
    gradient_release : {"none", "grid", "raw_laplace", "raw_gaussian"}
        ``"grid"``: the clipped coordinate gradient, summed afresh over column j
        (``G_j``, before the division by n), is released as ``g_j (rint(G_j /
        g_j) + K) / n`` with K from ``noise`` (:mod:`sparsedp._noise`);
        ``"none"``: ``G_j / n``; ``"raw_*"``: raw floating-point Laplace or
        Gaussian noise of scale ``value_scales[j]`` on ``G_j / n`` (the planted
        bug ``"raw_float_noise"`` only).
    noise : IntegerNoise or None
        The integer noise law of the releases (``"grid"``).
    grid, inv_grid : ndarrays of shape (p,)
        The public grid of ``G_j`` and its rounded-down inverse (``"grid"``).
    value_scales : ndarray of shape (p,)
        Laplace scale or Gaussian standard deviation of the released gradient
        ``G_j / n`` of each coordinate.
    generator : numpy.random.Generator
    refresh_every : int
        Iterations between full recomputations of the gradient.
    refresh_work : float
        ... or once the incremental updates have touched this many times
        ``max(nnz, p)`` entries (``inf``: never).
    coef_init : ndarray of shape (p,), optional
    intercept_scaling : float or None
        None: the coordinates are X's columns.  A float s: one more coordinate,
        last, the public column ``s * 1`` (the run is that on ``[X, s * 1]``,
        whose records :func:`entries` packs without building it); p counts it,
        and every per-coordinate array has X's columns + 1 entries.
    """
    cdef readonly Py_ssize_t n, p
    cdef int loss, rule, gradient_release
    cdef double l1, l2
    cdef const ColEntry[::1] columns
    cdef const ColEntry* column_base      # &columns[0] (NULL when X has no nonzero)
    cdef const int64_t[::1] col_ptr
    cdef const RowEntry[::1] rows
    cdef const int64_t[::1] row_ptr
    cdef const double[::1] y, M, inv_sqrt_M, C, step, value_scale, grid, inv_grid
    cdef IntegerNoise noise
    cdef double[::1] w, margin, deriv, G
    cdef int64_t[::1] stamp, touched
    cdef Py_ssize_t touched_count
    cdef int64_t iteration, since_refresh, work, work_limit, refresh_every
    cdef readonly NoisyMax noisy_max
    cdef object generator
    cdef bitgen_t* rng
    cdef readonly int64_t n_refreshes

    def __cinit__(self, X, y, int loss, smoothness, clip_thresholds, step_sizes,
                  double l1, double l2, rule, selection, double selection_scale,
                  gradient_release, IntegerNoise noise, grid, inv_grid, value_scales,
                  generator, Py_ssize_t refresh_every=1000,
                  double refresh_work=4.0, coef_init=None, intercept_scaling=None):
        check_loss(loss)
        if rule not in RULES:
            raise ValueError(f"rule must be one of {sorted(RULES)}, got {rule!r}")
        if gradient_release not in GRADIENT_RELEASES:
            raise ValueError(f"gradient_release must be one of {sorted(GRADIENT_RELEASES)}, "
                             f"got {gradient_release!r}")
        self.n, self.p = X.shape[0], X.shape[1] + (intercept_scaling is not None)
        self.loss, self.rule = loss, RULES[rule]
        self.gradient_release = GRADIENT_RELEASES[gradient_release]
        self.l1, self.l2 = l1, l2
        M = np.ascontiguousarray(smoothness, dtype=np.float64)
        C = np.ascontiguousarray(clip_thresholds, dtype=np.float64)
        self.columns, self.col_ptr, self.rows, self.row_ptr = entries(X, C, intercept_scaling)
        cdef int64_t nnz = self.col_ptr[self.p]
        self.column_base = &self.columns[0] if nnz else NULL
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.M = M
        self.inv_sqrt_M = np.divide(1.0, np.sqrt(M), out=np.zeros_like(M), where=M > 0)
        self.C = C
        self.step = np.ascontiguousarray(step_sizes, dtype=np.float64)
        self.value_scale = np.ascontiguousarray(value_scales, dtype=np.float64)
        if self.gradient_release == GRID_NOISE and noise is None:
            raise ValueError("gradient_release='grid' needs an IntegerNoise")
        self.noise = noise
        self.grid = np.ascontiguousarray(grid, dtype=np.float64)
        self.inv_grid = np.ascontiguousarray(inv_grid, dtype=np.float64)
        self.w = (np.zeros(self.p) if coef_init is None
                  else np.array(coef_init, dtype=np.float64).reshape(self.p))
        self.margin = np.zeros(self.n)
        self.deriv = np.zeros(self.n)
        self.G = np.zeros(self.p)
        self.stamp = np.full(self.p, -1, dtype=np.int64)
        self.touched = np.zeros(self.p, dtype=np.int64)
        self.generator = generator
        self.rng = generator_bitgen(generator)
        self.refresh_every = max(1, refresh_every)
        limit = refresh_work * max(nnz, self.p)
        # Rounding drift of the kept gradient: an increment of G_k errs by at
        # most u (n + 2) C_k (|G_k| <= n C_k, |increment| <= 2 C_k); after W
        # increments since a refresh the drift is at most W u (n + 2) C_k.  A
        # refresh once W reaches 2**-13 / (u (n + 2)) keeps it within 2**-14 of
        # the gradient's sensitivity 2 C_k: the scores' sensitivity allows for it.
        limit = min(limit, DRIFT_FRACTION / ((self.n + 2) * 2.0 ** -53))
        self.work_limit = <int64_t> limit if limit < 2.0 ** 62 else 2 ** 62
        self.recompute()
        scores = np.array([self.score(k) for k in range(self.p)])
        self.noisy_max = NoisyMax(scores, selection_scale, selection, generator)

    cdef void recompute(self) noexcept nogil:
        """Margins, derivatives and the clipped gradient from scratch."""
        cdef Py_ssize_t i, j, q
        for i in range(self.n):
            self.margin[i] = 0.0
        for j in range(self.p):
            if self.w[j] != 0.0:
                for q in range(self.col_ptr[j], self.col_ptr[j + 1]):
                    self.margin[self.columns[q].row] += self.w[j] * self.columns[q].value
        for i in range(self.n):
            self.deriv[i] = loss_derivative(self.loss, self.margin[i], self.y[i])
        for j in range(self.p):
            self.G[j] = self.column_clipped_gradient(j, &self.deriv[0])
        self.since_refresh = 0
        self.work = 0

    cdef inline double column_clipped_gradient(self, Py_ssize_t j,
                                               const double* deriv) noexcept nogil:
        """``G_j = sum_i clip(X_ij deriv_i, C_j)`` summed afresh over column j."""
        return clipped_gradient(self.column_base + self.col_ptr[j],
                                self.col_ptr[j + 1] - self.col_ptr[j], deriv, self.C[j])

    cdef inline double prox_move(self, Py_ssize_t k, double g, double step) noexcept nogil:
        """prox_{step psi_k}(w_k - step g) - w_k."""
        return prox_elastic_net(self.w[k] - step * g, step, self.l1, self.l2) - self.w[k]

    cdef double score(self, Py_ssize_t k) noexcept nogil:
        """The rule's score of coordinate k, ``|.| / sqrt(M_k)`` normalised.

        Each is 1/sqrt(M_k)-Lipschitz in the coordinate gradient, so with
        ``C_k ∝ sqrt(M_k)`` every score has the same sensitivity.
        """
        cdef double g = self.G[k] / self.n, wk = self.w[k], m = self.M[k], d, h
        if m <= 0.0:
            return 0.0
        if self.rule == GS_S:
            return subdiff_distance(wk, g, self.l1, self.l2) * self.inv_sqrt_M[k]
        d = self.prox_move(k, g, 1.0 / m)
        if self.rule == GS_R:  # sqrt(M_k) |prox step|
            return m * fabs(d) * self.inv_sqrt_M[k]
        # GS-q: sqrt(2 h), h the decrease of the 1-D quadratic model (>= M d^2 / 2)
        h = -(g * d + 0.5 * m * d * d + penalty_value(wk + d, self.l1, self.l2)
              - penalty_value(wk, self.l1, self.l2))
        return sqrt(2.0 * h) if h > 0.0 else 0.0

    cdef inline void touch(self, int64_t k) noexcept nogil:
        """Mark coordinate k's score as changed in this iteration."""
        if self.stamp[k] != self.iteration:
            self.stamp[k] = self.iteration
            self.touched[self.touched_count] = k
            self.touched_count += 1

    cdef void move(self, Py_ssize_t j, double delta) noexcept nogil:
        """w_j += delta; margins, derivatives and the gradient follow."""
        cdef Py_ssize_t q, e
        cdef int64_t i
        cdef double d_old, d_new, v, c
        self.w[j] += delta
        self.touch(j)
        for q in range(self.col_ptr[j], self.col_ptr[j + 1]):
            i = self.columns[q].row
            self.margin[i] += delta * self.columns[q].value
            d_new = loss_derivative(self.loss, self.margin[i], self.y[i])
            d_old = self.deriv[i]
            if d_new == d_old:
                continue
            self.deriv[i] = d_new
            for e in range(self.row_ptr[i], self.row_ptr[i + 1]):
                v, c = self.rows[e].value, self.rows[e].clip
                self.G[self.rows[e].col] += clip(v * d_new, c) - clip(v * d_old, c)
                self.touch(self.rows[e].col)
            self.work += self.row_ptr[i + 1] - self.row_ptr[i]

    cdef double release(self, Py_ssize_t j) noexcept nogil:
        """The noisy coordinate gradient of coordinate j (see ``gradient_release``).

        On the grid, ``G_j`` is summed afresh over column j in CSC order (the
        incrementally kept ``G_j`` has rounding drift): its floating-point
        sensitivity is that of one sum of at most n clipped terms.
        """
        cdef double g, s = self.value_scale[j]
        if self.gradient_release == GRID_NOISE:
            g = self.column_clipped_gradient(j, &self.deriv[0])
            return grid_release(g, self.inv_grid[j], self.grid[j],
                                noise_draw(&self.noise.table, self.rng)
                                + self.noise.table.shift) / self.n
        g = self.G[j] / self.n
        if self.gradient_release == RAW_LAPLACE_NOISE and s > 0.0:
            g += random_laplace(self.rng, 0.0, s)
        elif self.gradient_release == RAW_GAUSSIAN_NOISE and s > 0.0:
            g += s * random_standard_normal(self.rng)
        return g

    def run(self, Py_ssize_t n_iter):
        """Run ``n_iter`` iterations in place.

        Checks for signals every few milliseconds of work: Ctrl-C raises
        KeyboardInterrupt between two iterations (the state consistent, the
        selections and releases of the interrupted call discarded).

        Returns
        -------
        selected : ndarray of int64, shape (n_iter,)
            The coordinate chosen at each iteration.
        released : ndarray of shape (n_iter,)
            The noisy coordinate gradient released at each iteration.
        """
        selected = np.empty(n_iter, dtype=np.int64)
        released = np.empty(n_iter)
        cdef int64_t[::1] sel = selected
        cdef double[::1] rel = released
        cdef Py_ssize_t t, j, i, k, ticks = 0
        cdef double g, delta
        cdef int64_t work_before
        with self.generator.bit_generator.lock, nogil:
            for t in range(n_iter):
                # a draw scans the block sums and a block; a refresh all nonzeros
                ticks += self.noisy_max.n_blocks + self.noisy_max.block
                if ticks >= SIGNAL_CHECK_WORK:
                    ticks = 0
                    check_signals()
                work_before = self.work
                j = self.noisy_max.sample()
                g = self.release(j)
                sel[t], rel[t] = j, g
                self.iteration += 1
                self.touched_count = 0
                delta = self.prox_move(j, g, self.step[j]) if self.step[j] > 0 else 0.0
                if delta != 0.0:
                    self.move(j, delta)
                self.since_refresh += 1
                ticks += self.work - work_before + self.touched_count
                if self.since_refresh >= self.refresh_every or self.work > self.work_limit:
                    ticks += self.col_ptr[self.p] + self.p
                    self.recompute()
                    self.n_refreshes += 1
                    for k in range(self.p):
                        self.noisy_max.set_score(k, self.score(k))
                else:
                    for i in range(self.touched_count):
                        k = self.touched[i]
                        self.noisy_max.set_score(k, self.score(k))
                self.noisy_max.flush()
        return selected, released

    def reset(self, coef):
        """Set the iterate to ``coef`` and recompute everything from it."""
        cdef Py_ssize_t k
        coef = np.asarray(coef, dtype=np.float64)
        if coef.shape != (self.p,):
            raise ValueError(f"coef must have shape ({self.p},), got {coef.shape}")
        np.asarray(self.w)[:] = coef
        self.recompute()
        for k in range(self.p):
            self.noisy_max.set_score(k, self.score(k))
        self.noisy_max.flush()

    def scores(self):
        """The current score of every coordinate (recomputed from the state)."""
        return np.array([self.score(k) for k in range(self.p)])

    def exact_gradient(self):
        """``(1/n) sum_i clip(X_ik loss'(z_i, y_i), C_k)`` from scratch (for tests)."""
        G = np.empty(self.p)
        cdef double[::1] fresh = np.empty(max(self.n, 1))
        cdef Py_ssize_t i, j
        for i in range(self.n):
            fresh[i] = loss_derivative(self.loss, self.margin[i], self.y[i])
        for j in range(self.p):
            G[j] = self.column_clipped_gradient(j, &fresh[0])
        return G / self.n

    @property
    def gradient(self):
        """The incrementally maintained clipped gradient ``G / n``."""
        return np.asarray(self.G) / self.n

    @property
    def coef(self):
        return np.asarray(self.w).copy()

    @property
    def margins(self):
        return np.asarray(self.margin).copy()
