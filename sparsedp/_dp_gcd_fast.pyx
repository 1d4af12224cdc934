"""DP-GCD kernel: incremental clipped gradient and an exact, sublinear noisy max.

Two pieces, one concern each.

:class:`NoisyMax` holds a score per coordinate and samples the index of a noisy
maximum without drawing p noises:

* ``"exponential"``: ``P(j) ∝ exp(s_j / b)`` (the exponential mechanism, i.e.
  Gumbel-max with Gumbel scale b), by inverse-CDF descent over block sums of the
  weights ``exp((s_j - ref) / b)``: one uniform per draw.
* ``"laplace"``: ``argmax_j s_j + Lap(b)_j`` (report-noisy-max), exactly.  A
  threshold t is set so that few values exceed it: the larger of ``max_j s_j -
  8 b`` and the level that ``EXCEEDERS`` noisy values exceed on average.
  Coordinates scoring above t (few) get their Laplace draw explicitly.  A
  coordinate below t exceeds t with probability ``pi_j = exp((s_j - t) / b) / 2``
  (Laplace's upper tail is exponential), and given that, its value is
  ``t + Exp(b)`` (memorylessness).  The exceeders are found by thinning a
  Poisson process of rate ``rho_j = 2 log(2) pi_j >= -log(1 - pi_j)`` drawn from
  the same weights (one tree descent per event), each first hit accepted with
  probability ``pi_j / (1 - exp(-rho_j))``: exactly independent Bernoulli(pi_j)
  indicators.  The largest value above t is the noisy max.  If no value exceeds
  t (probability below ``max(exp(-8) / 2, exp(-EXCEEDERS))``), every remaining
  value is drawn from its law conditioned on lying below t, in O(p).  The law of
  the output is that of the naive sampler.
* ``"argmax"``: no noise (epsilon = inf), first index of the largest score.

Scores live in blocks of ``B ~ sqrt(p)`` coordinates with their weight sum and
maximum; changed blocks are recomputed exactly (no drift), so a draw costs
O(p / B + B) plus the coordinates near the top.

:class:`GreedyKernel` runs DP-GCD iterations (Algorithm 2 of Mangold et al.,
AISTATS 2023): select j by the noisy max of the rule's score, release the
clipped coordinate gradient with noise, take a proximal step.  It keeps the
unnormalised clipped gradient ``G_k = sum_i clip(X_ik loss'(z_i, y_i), C_k)``
incrementally: when w_j moves, only the rows of column j change their
derivative, and only the columns of those rows (a CSR copy) change their
terms; a full recomputation runs every ``refresh_every`` iterations or once the
incremental work exceeds four passes over the nonzeros.
"""
from libc.math cimport exp, expm1, log, sqrt, fabs, INFINITY, M_LN2
from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_standard_uniform, random_laplace, random_standard_exponential,
    random_standard_normal, random_poisson,
)

import numpy as np

from ._core cimport clip, loss_derivative, prox_elastic_net, penalty_value
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
    LAPLACE_NOISE = 1
    GAUSSIAN_NOISE = 2

SELECTIONS = {"argmax": ARGMAX, "exponential": EXPONENTIAL, "laplace": LAPLACE}
RULES = {"gs-s": GS_S, "gs-r": GS_R, "gs-q": GS_Q}
VALUE_NOISES = {"none": NO_NOISE, "laplace": LAPLACE_NOISE, "gaussian": GAUSSIAN_NOISE}

# Coordinates within TOP_WIDTH * b of the best score get explicit Laplace draws.
cdef double TOP_WIDTH = 8.0
# ... and at least this many noisy values exceed the threshold on average.
cdef double EXCEEDERS = 12.0
# The weights exp((s - ref) / b) are re-referenced when the best score moves
# this many b away from ref (keeps every sum finite and the top weights normal).
cdef double REF_RANGE = 500.0


cdef packed struct RowEntry:
    double value    # X_ik
    double clip     # C_k, the clipping threshold of its column
    int64_t col     # k


cdef packed struct ColEntry:
    double value    # X_ij
    int64_t row     # i


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
    cdef readonly Py_ssize_t p, block, n_blocks
    cdef readonly double scale, ref
    cdef int selection
    cdef object generator
    cdef bitgen_t* rng
    cdef double[::1] score, weight, block_sum, block_max, tail_prefix
    cdef unsigned char[::1] dirty
    cdef int64_t[::1] dirty_list, hit
    cdef Py_ssize_t n_dirty
    cdef int64_t round
    cdef double total, best
    cdef readonly int64_t n_fallbacks, n_rebuilds

    def __cinit__(self, scores, double scale, selection, generator):
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
        self.weight = np.zeros(self.p)
        self.block_sum = np.zeros(self.n_blocks)
        self.block_max = np.zeros(self.n_blocks)
        self.tail_prefix = np.zeros(self.n_blocks)
        self.dirty = np.zeros(self.n_blocks, dtype=np.uint8)
        self.dirty_list = np.zeros(self.n_blocks, dtype=np.int64)
        self.hit = np.zeros(self.p, dtype=np.int64)
        self.round = 0
        with nogil:
            self.rebuild()

    # ---- maintenance --------------------------------------------------------------
    cdef void rebuild(self) noexcept nogil:
        """Re-reference the weights on the best score and recompute every block."""
        cdef Py_ssize_t k, bk
        cdef double best = -INFINITY
        for k in range(self.p):
            if self.score[k] > best:
                best = self.score[k]
        self.ref = best
        if self.scale > 0:
            for k in range(self.p):
                self.weight[k] = exp((self.score[k] - best) / self.scale)
        for bk in range(self.n_blocks):
            self.dirty[bk] = 0
            self.recompute_block(bk)
        self.n_dirty = 0
        self.summarise()
        self.n_rebuilds += 1

    cdef inline void recompute_block(self, Py_ssize_t bk) noexcept nogil:
        cdef Py_ssize_t k, end = min((bk + 1) * self.block, self.p)
        cdef double s = 0.0, m = -INFINITY
        for k in range(bk * self.block, end):
            s += self.weight[k]
            if self.score[k] > m:
                m = self.score[k]
        self.block_sum[bk] = s
        self.block_max[bk] = m

    cdef void summarise(self) noexcept nogil:
        cdef Py_ssize_t bk
        cdef double s = 0.0, m = -INFINITY
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
            self.weight[k] = exp((s - self.ref) / self.scale)
        if not self.dirty[bk]:
            self.dirty[bk] = 1
            self.dirty_list[self.n_dirty] = bk
            self.n_dirty += 1

    cdef void flush(self) noexcept nogil:
        """Recompute the changed blocks exactly; re-reference if the top moved far."""
        cdef Py_ssize_t i, bk
        for i in range(self.n_dirty):
            bk = self.dirty_list[i]
            self.dirty[bk] = 0
            self.recompute_block(bk)
        self.n_dirty = 0
        self.summarise()
        if self.scale > 0 and fabs(self.best - self.ref) > REF_RANGE * self.scale:
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

    cdef Py_ssize_t descend(self, const double* sums, double u, double t) noexcept nogil:
        """Index k with cumulative weight crossing u (blocks weighted by ``sums``).

        Coordinates with a score above ``t`` are skipped (``t = INFINITY``: none).
        """
        cdef Py_ssize_t bk, last = -1
        cdef double acc = 0.0
        for bk in range(self.n_blocks):
            if sums[bk] <= 0.0:
                continue
            last = bk
            if acc + sums[bk] > u:
                break
            acc += sums[bk]
        if last < 0:
            return -1
        return self.scan_block(last, u, acc, t)

    cdef inline Py_ssize_t scan_block(self, Py_ssize_t bk, double u, double acc,
                                      double t) noexcept nogil:
        """Index in block bk where the cumulative weight, from ``acc``, crosses u.

        Coordinates with a score above ``t`` are skipped; if rounding puts u past
        the block's last weight, that last coordinate (-1 if none).
        """
        cdef Py_ssize_t k, last = -1
        for k in range(bk * self.block, min((bk + 1) * self.block, self.p)):
            if self.score[k] > t or self.weight[k] <= 0.0:
                continue
            last = k
            acc += self.weight[k]
            if acc > u:
                return k
        return last

    cdef Py_ssize_t sample_exponential(self) noexcept nogil:
        cdef double u = random_standard_uniform(self.rng) * self.total
        cdef Py_ssize_t k = self.descend(&self.block_sum[0], u, INFINITY)
        return k if k >= 0 else self.argmax()

    cdef Py_ssize_t sample_laplace(self) noexcept nogil:
        cdef double b = self.scale
        # E[#exceeders] = sum_j exp((s_j - t) / b) / 2 = EXCEEDERS at t = t_mean
        cdef double t_mean = self.ref + b * (log(0.5 * self.total) - log(EXCEEDERS))
        cdef double t = max(self.best - TOP_WIDTH * b, t_mean)
        cdef double best_value = -INFINITY, v, tail, rate, pi, rho, u, a
        cdef Py_ssize_t best_k = -1, bk, k, end
        cdef int64_t e, n_events
        # explicit draws above t; tail weight sums per block
        tail = 0.0
        for bk in range(self.n_blocks):
            if self.block_max[bk] > t:
                end = min((bk + 1) * self.block, self.p)
                for k in range(bk * self.block, end):
                    if self.score[k] > t:
                        v = self.score[k] + random_laplace(self.rng, 0.0, b)
                        if v > best_value:
                            best_value, best_k = v, k
                    else:
                        tail += self.weight[k]
            else:
                tail += self.block_sum[bk]
            self.tail_prefix[bk] = tail
        # tail exceeders: thinned Poisson process of rate 2 log 2 pi_j
        if tail > 0.0:
            # pi_j = exp((s_j - t) / b) / 2 = weight_j exp((ref - t) / b) / 2
            rate = M_LN2 * exp(log(tail) + (self.ref - t) / b)
            n_events = random_poisson(self.rng, rate)
            self.round += 1
            for e in range(n_events):
                u = random_standard_uniform(self.rng) * tail
                k = self.descend_tail(u, t)
                if k < 0 or self.hit[k] == self.round:
                    continue
                self.hit[k] = self.round
                pi = 0.5 * exp((self.score[k] - t) / b)
                rho = 2.0 * M_LN2 * pi
                if random_standard_uniform(self.rng) * -expm1(-rho) < pi:
                    v = t + b * random_standard_exponential(self.rng)
                    if v > best_value:
                        best_value, best_k = v, k
        if best_value > t:
            return best_k
        # nothing above t: every tail value is drawn conditioned on staying below t
        self.n_fallbacks += 1
        for k in range(self.p):
            if self.score[k] > t:
                continue
            a = (t - self.score[k]) / b
            u = random_standard_uniform(self.rng) * (1.0 - 0.5 * exp(-a))
            v = self.score[k] + (b * log(2.0 * u) if u < 0.5 else -b * log(2.0 * (1.0 - u)))
            if v > best_value:
                best_value, best_k = v, k
        return best_k

    cdef Py_ssize_t descend_tail(self, double u, double t) noexcept nogil:
        """Tail coordinate (score <= t) at cumulative tail weight u."""
        cdef Py_ssize_t lo = 0, hi = self.n_blocks - 1, mid
        while lo < hi:  # first block whose prefix exceeds u
            mid = (lo + hi) // 2
            if self.tail_prefix[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        return self.scan_block(lo, u, self.tail_prefix[lo - 1] if lo > 0 else 0.0, t)

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


cdef class GreedyKernel:
    """State of one DP-GCD run: iterate, margins, clipped gradient, scores.

    Parameters
    ----------
    X : canonical CSC matrix (n, p), float64
    y : ndarray of shape (n,)
    kind : int
        Datafit code (0 squared, 1 logistic).
    smoothness, clip_thresholds, step_sizes : ndarrays of shape (p,)
        M_j, C_j (``inf``: no clipping) and gamma_j.
    l1, l2 : float
        Elastic-net strengths of the separable penalty.
    rule : {"gs-s", "gs-r", "gs-q"}
    selection : {"exponential", "laplace", "argmax"}
    selection_scale : float
        b, the scale of the selection noise on the scores.
    value_noise : {"none", "laplace", "gaussian"}
    value_scales : ndarray of shape (p,)
        Laplace scale or Gaussian standard deviation of the released gradient
        ``G_j / n`` of each coordinate.
    generator : numpy.random.Generator
    refresh_every : int
        Iterations between full recomputations of the gradient.
    refresh_work : float
        ... or once the incremental updates have touched this many times
        ``max(nnz, p)`` entries (``inf``: never).
    """
    cdef readonly Py_ssize_t n, p
    cdef int kind, rule, value_noise
    cdef double l1, l2
    cdef const ColEntry[::1] columns
    cdef const int64_t[::1] col_ptr
    cdef const RowEntry[::1] rows
    cdef const int64_t[::1] row_ptr
    cdef const double[::1] y, M, inv_sqrt_M, C, step, value_scale
    cdef double[::1] w, margin, deriv, G
    cdef int64_t[::1] stamp, touched
    cdef Py_ssize_t touched_count
    cdef int64_t iteration, since_refresh, work, work_limit, refresh_every
    cdef readonly NoisyMax tree
    cdef object generator
    cdef bitgen_t* rng
    cdef readonly int64_t n_refreshes

    def __cinit__(self, X, y, int kind, smoothness, clip_thresholds, step_sizes,
                  double l1, double l2, rule, selection, double selection_scale,
                  value_noise, value_scales, generator, Py_ssize_t refresh_every=1000,
                  double refresh_work=4.0):
        if rule not in RULES:
            raise ValueError(f"rule must be one of {sorted(RULES)}, got {rule!r}")
        if value_noise not in VALUE_NOISES:
            raise ValueError(f"value_noise must be one of {sorted(VALUE_NOISES)}, "
                             f"got {value_noise!r}")
        self.n, self.p = X.shape
        self.kind, self.rule = kind, RULES[rule]
        self.value_noise = VALUE_NOISES[value_noise]
        self.l1, self.l2 = l1, l2
        M = np.ascontiguousarray(smoothness, dtype=np.float64)
        C = np.ascontiguousarray(clip_thresholds, dtype=np.float64)
        cols = np.empty(X.nnz, dtype=[("value", "f8"), ("row", "i8")])
        cols["value"], cols["row"] = X.data, X.indices
        self.columns = cols
        self.col_ptr = X.indptr.astype(np.int64)
        Xr = X.tocsr()
        Xr.sort_indices()
        rows = np.empty(Xr.nnz, dtype=[("value", "f8"), ("clip", "f8"), ("col", "i8")])
        rows["value"], rows["col"] = Xr.data, Xr.indices
        rows["clip"] = C[Xr.indices]
        self.rows = rows
        self.row_ptr = Xr.indptr.astype(np.int64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.M = M
        self.inv_sqrt_M = np.divide(1.0, np.sqrt(M), out=np.zeros_like(M), where=M > 0)
        self.C = C
        self.step = np.ascontiguousarray(step_sizes, dtype=np.float64)
        self.value_scale = np.ascontiguousarray(value_scales, dtype=np.float64)
        self.w = np.zeros(self.p)
        self.margin = np.zeros(self.n)
        self.deriv = np.zeros(self.n)
        self.G = np.zeros(self.p)
        self.stamp = np.full(self.p, -1, dtype=np.int64)
        self.touched = np.zeros(self.p, dtype=np.int64)
        self.generator = generator
        self.rng = generator_bitgen(generator)
        self.refresh_every = max(1, refresh_every)
        limit = refresh_work * max(X.nnz, self.p)
        self.work_limit = <int64_t> limit if limit < 2.0 ** 62 else 2 ** 62
        self.recompute()
        scores = np.array([self.score(k) for k in range(self.p)])
        self.tree = NoisyMax(scores, selection_scale, selection, generator)

    cdef void recompute(self) noexcept nogil:
        """Margins, derivatives and the clipped gradient from scratch."""
        cdef Py_ssize_t i, j, q
        cdef double g
        for i in range(self.n):
            self.margin[i] = 0.0
        for j in range(self.p):
            if self.w[j] != 0.0:
                for q in range(self.col_ptr[j], self.col_ptr[j + 1]):
                    self.margin[self.columns[q].row] += self.w[j] * self.columns[q].value
        for i in range(self.n):
            self.deriv[i] = loss_derivative(self.kind, self.margin[i], self.y[i])
        for j in range(self.p):
            g = 0.0
            for q in range(self.col_ptr[j], self.col_ptr[j + 1]):
                g += clip(self.columns[q].value * self.deriv[self.columns[q].row],
                          self.C[j])
            self.G[j] = g
        self.since_refresh = 0
        self.work = 0

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
        if self.rule == GS_S:  # distance of -grad to the subdifferential
            g += self.l2 * wk
            if wk != 0.0:
                d = fabs(g + (self.l1 if wk > 0 else -self.l1))
            else:
                d = fabs(g) - self.l1
                d = d if d > 0.0 else 0.0
            return d * self.inv_sqrt_M[k]
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
            d_new = loss_derivative(self.kind, self.margin[i], self.y[i])
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
        """The noisy coordinate gradient G_j / n + noise."""
        cdef double g = self.G[j] / self.n, s = self.value_scale[j]
        if self.value_noise == LAPLACE_NOISE and s > 0.0:
            g += random_laplace(self.rng, 0.0, s)
        elif self.value_noise == GAUSSIAN_NOISE and s > 0.0:
            g += s * random_standard_normal(self.rng)
        return g

    def run(self, Py_ssize_t n_iter):
        """Run ``n_iter`` iterations in place.

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
        cdef Py_ssize_t t, j, i, k
        cdef double g, delta
        with self.generator.bit_generator.lock, nogil:
            for t in range(n_iter):
                j = self.tree.sample()
                g = self.release(j)
                sel[t], rel[t] = j, g
                self.iteration += 1
                self.touched_count = 0
                delta = self.prox_move(j, g, self.step[j]) if self.step[j] > 0 else 0.0
                if delta != 0.0:
                    self.move(j, delta)
                self.since_refresh += 1
                if self.since_refresh >= self.refresh_every or self.work > self.work_limit:
                    self.recompute()
                    self.n_refreshes += 1
                    for k in range(self.p):
                        self.tree.set_score(k, self.score(k))
                else:
                    for i in range(self.touched_count):
                        k = self.touched[i]
                        self.tree.set_score(k, self.score(k))
                self.tree.flush()
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
            self.tree.set_score(k, self.score(k))
        self.tree.flush()

    def scores(self):
        """The current score of every coordinate (recomputed from the state)."""
        return np.array([self.score(k) for k in range(self.p)])

    def exact_gradient(self):
        """``(1/n) sum_i clip(X_ik loss'(z_i, y_i), C_k)`` from scratch (for tests)."""
        G = np.empty(self.p)
        cdef Py_ssize_t j, q
        cdef double g
        for j in range(self.p):
            g = 0.0
            for q in range(self.col_ptr[j], self.col_ptr[j + 1]):
                g += clip(self.columns[q].value * loss_derivative(
                    self.kind, self.margin[self.columns[q].row],
                    self.y[self.columns[q].row]), self.C[j])
            G[j] = g
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
