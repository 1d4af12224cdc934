"""The exact, sublinear noisy max over a score array (the noisy max of DP-GCD).

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
"""
from libc.math cimport exp, expm1, log, ldexp, floor, ceil, INFINITY, M_LN2
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_standard_uniform

import numpy as np

from ._random cimport generator_bitgen

cdef enum:
    ARGMAX = 0
    EXPONENTIAL = 1
    LAPLACE = 2

SELECTIONS = {"argmax": ARGMAX, "exponential": EXPONENTIAL, "laplace": LAPLACE}

# Coordinates within TOP_WIDTH * b of the best score get explicit Laplace draws.
cdef double TOP_WIDTH = 8.0
# ... and at least this many noisy values exceed the threshold on average.
cdef double EXCEEDERS = 12.0
# NoisyMax's integer weights: r_k = max(1, ceil(2^Q exp((s_k - ref) / b))) with
# Q = 126 - HEAD_BITS - bit_length(p), so that the weights may grow 2^HEAD_BITS
# above ref and their sum stays below 2^126.  The weights are re-referenced
# when a score rises (HEAD_BITS - 1) log 2 b above ref, or when the best falls
# (Q - FLOOR_BITS) log 2 b below it (the top weights stay exact integers).
cdef int HEAD_BITS = 24
cdef int FLOOR_BITS = 60
cdef enum:
    CHUNK = 16      # coordinates per chunk sum (block sizes are multiples of 16)


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

    def __init__(self, scores, double scale, selection, generator):
        cdef Py_ssize_t k
        if self.weight != NULL:
            raise RuntimeError("a NoisyMax is initialised once")
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

    cdef int check_ready(self) except -1:
        if self.weight == NULL:
            raise ValueError("this NoisyMax was not initialised (NoisyMax.__new__ without "
                             "__init__)")
        return 0

    def copy(self, generator):
        """A NoisyMax in this one's state (scores, weights, sums) drawing from ``generator``.

        Its draws and updates are those of a NoisyMax built afresh from the
        same scores, scale and selection (and updated alike), without the
        O(p) exponentials of the build: DP-GCD keeps one per start of a grid
        point's runs.
        """
        self.check_ready()
        cdef NoisyMax other = NoisyMax.__new__(NoisyMax)
        cdef Py_ssize_t n_chunks = (self.p + CHUNK - 1) // CHUNK
        other.p, other.block, other.n_blocks = self.p, self.block, self.n_blocks
        other.scale, other.ref, other.units = self.scale, self.ref, self.units
        other.selection = self.selection
        other.generator = generator
        other.rng = generator_bitgen(generator)
        other.score = np.array(self.score)
        other.block_max = np.array(self.block_max)
        other.weight = <u128*> malloc(self.p * sizeof(u128))
        other.block_sum = <u128*> malloc(self.n_blocks * sizeof(u128))
        other.tail_prefix = <u128*> malloc(self.n_blocks * sizeof(u128))  # scratch of a draw
        other.chunk_sum = <u128*> malloc(n_chunks * sizeof(u128))
        if other.weight == NULL or other.block_sum == NULL or other.tail_prefix == NULL \
                or other.chunk_sum == NULL:
            raise MemoryError()
        memcpy(other.weight, self.weight, self.p * sizeof(u128))
        memcpy(other.block_sum, self.block_sum, self.n_blocks * sizeof(u128))
        memcpy(other.chunk_sum, self.chunk_sum, n_chunks * sizeof(u128))
        other.total = self.total
        other.x_head, other.x_floor, other.x_one, other.two_q = (
            self.x_head, self.x_floor, self.x_one, self.two_q)
        other.stale = self.stale
        other.dirty = np.array(self.dirty)
        other.dirty_list = np.array(self.dirty_list)
        other.hit = np.array(self.hit)
        other.n_dirty, other.round, other.best = self.n_dirty, self.round, self.best
        other.n_fallbacks, other.n_rebuilds = self.n_fallbacks, self.n_rebuilds
        return other

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

    # ---- Python access -----------------------------------------------------------
    def draw(self, Py_ssize_t size):
        """``size`` independent noisy-argmax indices."""
        self.check_ready()
        out = np.empty(size, dtype=np.int64)
        cdef int64_t[::1] o = out
        cdef Py_ssize_t i
        with self.generator.bit_generator.lock, nogil:
            for i in range(size):
                o[i] = self.sample()
        return out

    def update(self, indices, values):
        """Set ``scores[indices] = values`` (Cython code: ``set_score``, then ``flush``)."""
        cdef Py_ssize_t i
        self.check_ready()
        idx = np.asarray(indices, dtype=np.int64)
        val = np.asarray(values, dtype=np.float64)
        if idx.ndim != 1 or val.shape != idx.shape:
            raise ValueError(f"indices and values must be 1-D of one length, got shapes "
                             f"{idx.shape} and {val.shape}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.p):
            raise IndexError(f"indices must be in [0, {self.p})")
        if not np.all(np.isfinite(val)):
            raise ValueError("scores must be finite")
        for i in range(idx.shape[0]):
            self.set_score(idx[i], val[i])
        self.flush()

    @property
    def scores(self):
        self.check_ready()
        return np.asarray(self.score).copy()

    @property
    def nbytes(self):
        """Bytes of its per-coordinate and per-block state (what :meth:`copy` copies)."""
        self.check_ready()
        cdef Py_ssize_t n_chunks = (self.p + CHUNK - 1) // CHUNK
        return (self.p * (sizeof(double) + sizeof(u128) + sizeof(int64_t))
                + self.n_blocks * (sizeof(double) + 2 * sizeof(u128) + 1 + sizeof(int64_t))
                + n_chunks * sizeof(u128))
