"""DP-CD kernel: noisy proximal randomized coordinate steps, lazy averaging.

One step (Algorithm 1 of Mangold et al., ICML 2022, lines 4-7): draw j
uniformly, compute the clipped coordinate gradient
``g_j = (1/n) sum_i clip(X_ij loss'(z_i, y_i), C_j)`` over column j's nonzeros,
release it on its grid with discretised Gaussian noise of sd ``sigma_j`` and take
``theta_j <- prox_{gamma_j psi_j}(theta_j - gamma_j noisy g_j)``.  The margin ``z = X theta`` and the derivative cache
``d_i = loss'(z_i, y_i)`` are refreshed over the same nonzeros, so a step costs
O(nnz of column j) and at most nnz(X_j) exponentials (none if theta_j stays),
computed by a vectorised loop (``_core.sigmoid_neg_fill``).

Periodic averaging (line 9) is lazy: ``wsum_j`` holds the sum of theta_j over
the iterates already accounted and ``stamp_j`` the first iterate index at which
the current theta_j holds (both in block j's header), so a step is O(1) in p;
the average of iterates 1..k is ``(wsum + theta * (k + 1 - stamp)) / k``.

Memory layout.  Random coordinates touch memory at random, so a step costs its
cache misses more than its arithmetic.  Everything a step reads about coordinate
j is one contiguous block (:class:`CoordinateBlocks`): a 48-byte header (step
size, clipping threshold, theta_j, the lazy average's wsum_j and stamp_j, number
of nonzeros) followed by the column's
nonzeros as packed (value, row) pairs, 10 bytes with uint16 rows (at most
65,536 samples) and 12 with int32 rows, or, where every value is 1 (binary data),
the rows alone (2 or 4 bytes); a table of byte offsets
(prefetched before the block) says where each block starts.  A step with a
column of m nonzeros thus reads about ``(48 + 10 m) / 64`` cache lines, all
prefetched.  The noise scale is not stored: ``sigma_j = z * 2 C_j / n`` for the
run's one multiplier z.  A step that moves theta_j updates the lazy average in
the header it has already read (no other line touched).
Coordinates come from their own generator, ``BATCH`` at a time
(``integers(0, p, BATCH)``) into a ring of two batches that persists across
calls (results do not depend on how the steps are split into calls); the next
batch is always drawn, so the two-stage prefetch pipeline (an offset ``2 *
LOOKAHEAD`` steps ahead, its block's cache lines ``LOOKAHEAD`` steps ahead)
runs on across batch boundaries.  The noise: the clipped gradient is released
on its public grid, ``g_j (rint(G_j / g_j) + J)`` with ``J`` the integer noise of
:mod:`sparsedp._noise` (``BATCH`` draws at a time), so that no raw floating-point
noisy value exists (docs/privacy.rst, "Floating point").
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from numpy.random cimport bitgen_t

import weakref

import numpy as np

from ._cd_blocks cimport (
    NARROW_ONES, NARROW_VALUES, WIDE_ONES, WIDE_VALUES, Header, block_add, block_gradient,
    block_move, block_pack, block_pack_constant, record_size,
)
from ._core cimport (
    check_loss, prefetch, prefetch_write, prox_elastic_net, SIGNAL_CHECK_WORK, check_signals,
)
from ._noise cimport IntegerNoise, grid_release, noise_fill
from ._random cimport generator_bitgen, uniform_index_fill
from .._validation import check_csc_structure
from ._immutable import immutable_key, is_alive

cdef extern from "numpy/random/distributions.h":
    # Generator.integers(0, high + 1) draws one with exactly this call (Lemire's method)
    uint64_t random_bounded_uint64(bitgen_t* state, uint64_t off, uint64_t rng,
                                   uint64_t mask, bint use_masked) noexcept nogil

cdef enum:
    BATCH = 256     # coordinates drawn at a time (Generator.integers(0, p, BATCH))
    RING = 2 * BATCH  # two batches: one being consumed, the next already drawn
    MASK = RING - 1
    LOOKAHEAD = 10  # steps ahead at which a block's cache lines are prefetched (measured:
                    # 8-12 best, 16 10-15% slower, docs/dp_cd.rst)
    HEADER_AHEAD = 32  # blocks ahead at which a walk over every header prefetches


MAX_NARROW_SAMPLES = 1 << 16

cdef enum:
    NO_NOISE = 0       # epsilon = inf
    GRID_NOISE = 1     # the release on a public grid (sparsedp._noise)

NOISE_MODES = {"none": NO_NOISE, "grid": GRID_NOISE}


#: immutable matrices (:mod:`sparsedp._kernels._immutable`) whose released blocks
#: are kept for the next fit (the most recent): a sweep's fits on one problem pack
#: its columns once per process
BLOCKS_KEPT = 2
_FREE_BLOCKS = {}


cdef int records(bint narrow_rows, bint ones) noexcept:
    """The layout of a block's records."""
    if narrow_rows:
        return NARROW_ONES if ones else NARROW_VALUES
    return WIDE_ONES if ones else WIDE_VALUES


def _all_ones(X, intercept_scaling):
    """Every stored value of X is 1 (and the intercept's column, if any, is 1 too)."""
    return bool(np.all(np.asarray(X.data) == 1.0)) and intercept_scaling in (None, 1.0)


def _forget(key):
    """A weak reference's callback: drop the layout kept under ``key``."""
    def forget(_):
        if _FREE_BLOCKS is not None:  # (None at interpreter shutdown)
            _FREE_BLOCKS.pop(key, None)
    return forget


cdef class CoordinateBlocks:
    """Per-coordinate parameters, iterate and column of a CSC matrix, one block each.

    Block j (at byte ``offsets[j]``, 8-byte aligned) is a 48-byte header (step
    size, clipping threshold, theta_j, the lazy average's wsum_j and stamp_j,
    nnz) followed by column j's nonzeros as packed (value, row) pairs in CSC
    order: 10 bytes with uint16 rows when X has at most 65,536 rows
    (``narrow_rows``), 12 with int32 rows otherwise; where every value is 1
    (binary data, ``ones``) the rows alone, 2 or 4 bytes (random access costs
    its cache misses: smaller blocks, fewer lines).  ``offsets[p]`` is the total
    size; the buffer is 64-byte aligned.  The kernel trusts the layout, so Python
    code never sees it (theta: :meth:`get_theta`, :meth:`set_theta`; the average:
    :meth:`reset_average`, :meth:`get_average`; both at a period's start:
    :meth:`restart`).  A new instance starts as after ``restart(theta)``.  Not thread-safe: one
    :func:`dp_cd_steps` call at a time per instance.

    The columns' part of the layout depends on X alone: for an immutable X
    (:func:`sparsedp._kernels._immutable.immutable_key`: read-only arrays, as a
    sweep's :class:`~sparsedp.experiments.Problem` holds) a :meth:`release`\ d
    instance's buffer is kept (:data:`BLOCKS_KEPT` matrices at most) and the
    next instance on the same X only rewrites the headers (:attr:`reused`): on
    dorothea's shape 0.3 ms instead of 2.3 ms.

    Parameters
    ----------
    X : canonical CSC matrix (sorted indices, float64 data), at most 2**31 - 1 rows.
    step_sizes, clip_thresholds, theta : arrays of shape (n_features,).
    narrow_rows : bool or None
        Rows as uint16 (at most 65,536 rows) or int32; None: uint16 when they fit.
    ones : bool or None
        The nonzeros as rows alone, their value 1: every stored value of X is 1 (and
        ``intercept_scaling`` is None or 1); None: when it holds.  The same steps, bit
        for bit, as with (value, row) records.
    intercept_scaling : float or None
        None: one block per column of X.  A float s: one more block, last, for
        the public column ``s * 1`` (the blocks of ``[X, s * 1]``, packed without
        building it); ``n_features`` counts it.
    """
    cdef object _buffer, _offsets, _kept
    cdef readonly Py_ssize_t n_samples, n_features
    cdef readonly bint narrow_rows
    #: the nonzeros are rows alone, their value 1 (binary X)
    cdef readonly bint ones
    cdef int layout
    #: the layout came from an earlier instance's :meth:`release`, not packed anew
    cdef readonly bint reused
    cdef char* base
    cdef const int64_t* offset

    def __cinit__(self, X, step_sizes, clip_thresholds, theta, narrow_rows=None,
                  intercept_scaling=None, ones=None):
        if X.shape[0] > np.iinfo(np.int32).max:
            raise ValueError(f"DP-CD supports at most 2**31 - 1 samples, got {X.shape[0]}")
        if narrow_rows is None:
            narrow_rows = X.shape[0] <= MAX_NARROW_SAMPLES
        elif narrow_rows and X.shape[0] > MAX_NARROW_SAMPLES:
            raise ValueError(f"narrow_rows holds at most {MAX_NARROW_SAMPLES} samples, "
                             f"got {X.shape[0]}")
        cdef bint with_intercept = intercept_scaling is not None
        cdef double s = float(intercept_scaling) if with_intercept else 0.0
        cdef Py_ssize_t n = X.shape[0], p = X.shape[1] + with_intercept, j, q
        if p < 1:
            raise ValueError("X must have at least one feature")
        for name, values in (("step_sizes", step_sizes),
                             ("clip_thresholds", clip_thresholds), ("theta", theta)):
            if np.shape(values) != (p,):
                raise ValueError(f"{name} must have shape ({p},), got {np.shape(values)}")
        cdef const double[::1] steps = np.ascontiguousarray(step_sizes, dtype=np.float64)
        cdef const double[::1] clips = np.ascontiguousarray(clip_thresholds, dtype=np.float64)
        cdef const double[::1] start = np.ascontiguousarray(theta, dtype=np.float64)
        self.narrow_rows = narrow_rows
        self.n_samples, self.n_features = n, p
        key = immutable_key(X, intercept_scaling, bool(self.narrow_rows), ones)
        kept = None if key is None else _FREE_BLOCKS.pop(key[0], None)
        if kept is not None and is_alive(kept[0], key[1]):
            # columns and nnz packed, the layout decided
            self._offsets, self._buffer, self.ones = kept[1], kept[2], kept[3]
            self.layout = records(self.narrow_rows, self.ones)
            self.reused = True
        else:
            self.ones = _all_ones(X, intercept_scaling) if ones is None else ones
            if self.ones and not _all_ones(X, intercept_scaling):
                raise ValueError("ones=True needs every stored value of X to be 1 "
                                 "(and intercept_scaling None or 1)")
            self._pack(X, s, with_intercept)
        if key is not None:  # a kept layout goes when one of X's arrays does
            self._kept = (key[0], [weakref.ref(root, _forget(key[0])) for root in key[1]])
        cdef int64_t[::1] offsets = self._offsets
        cdef unsigned char[::1] buffer = self._buffer
        self.base = <char*> &buffer[0]
        self.offset = &offsets[0]
        cdef Header* h
        for j in range(p):
            if j + HEADER_AHEAD < p:  # one cache miss a block: prefetched well ahead
                prefetch_write(self.header(j + HEADER_AHEAD))
            h = self.header(j)
            h.step, h.clip, h.theta = steps[j], clips[j], start[j]
            h.wsum, h.stamp = 0.0, 1

    def _pack(self, X, double s, bint with_intercept):
        """Lay out the blocks (``layout``): offsets, each header's nnz and each column's
        nonzeros (the rest of the headers is left to the caller)."""
        cdef Py_ssize_t n = self.n_samples, p = self.n_features, j
        cdef const double[::1] data = np.ascontiguousarray(X.data, dtype=np.float64)
        cdef const int32_t[::1] indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        check_csc_structure(X)  # the packing loop and the kernel trust it
        counts = np.diff(X.indptr).astype(np.int64)
        if with_intercept:
            counts = np.append(counts, n)
        cdef const int64_t[::1] nnz = counts
        cdef const int64_t[::1] indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        cdef int layout = records(self.narrow_rows, self.ones)
        self.layout = layout
        sizes = sizeof(Header) + record_size(layout) * counts
        self._offsets = np.zeros(p + 1, dtype=np.int64)
        np.cumsum((sizes + 7) // 8 * 8, out=self._offsets[1:])
        raw = np.zeros(self._offsets[p] + 64, dtype=np.uint8)
        shift = (-raw.ctypes.data) % 64
        self._buffer = raw[shift:shift + self._offsets[p]]
        cdef int64_t[::1] offsets = self._offsets
        cdef unsigned char[::1] buffer = self._buffer
        cdef char* base = <char*> &buffer[0]
        cdef Header* h
        cdef const double* column_values = &data[0] if data.shape[0] else NULL
        cdef const int32_t* column_rows = &indices[0] if indices.shape[0] else NULL
        for j in range(p):
            h = <Header*> (base + offsets[j])
            h.nnz = nnz[j]
            if with_intercept and j == p - 1:  # the intercept column: s at every row
                block_pack_constant(layout, h, s)
            elif h.nnz:
                block_pack(layout, h, column_values + indptr[j], column_rows + indptr[j])

    def release(self):
        """Give the blocks up: their layout is kept for the next CoordinateBlocks of
        this immutable X (see :data:`BLOCKS_KEPT`); this instance is unusable after."""
        if self.base == NULL:
            return
        self.base = NULL
        if self._kept is not None and all(ref() is not None for ref in self._kept[1]):
            _FREE_BLOCKS[self._kept[0]] = (self._kept[1], self._offsets, self._buffer,
                                           self.ones)
            for stale in [k for k, v in _FREE_BLOCKS.items()
                          if any(ref() is None for ref in v[0])]:
                del _FREE_BLOCKS[stale]
            while len(_FREE_BLOCKS) > BLOCKS_KEPT:
                del _FREE_BLOCKS[next(iter(_FREE_BLOCKS))]
        self._kept = self._buffer = self._offsets = None

    cdef int check_live(self) except -1:
        if self.base == NULL:
            raise ValueError("these CoordinateBlocks were released")
        return 0

    cdef inline Header* header(self, Py_ssize_t j) noexcept nogil:
        return <Header*> (self.base + self.offset[j])

    def get_theta(self):
        """A copy of the iterate theta."""
        self.check_live()
        out = np.empty(self.n_features)
        cdef double[::1] view = out
        cdef Py_ssize_t j
        for j in range(self.n_features):
            if j + HEADER_AHEAD < self.n_features:
                prefetch(self.header(j + HEADER_AHEAD))
            view[j] = self.header(j).theta
        return out

    def reset_average(self):
        """Start a new average: no iterate accounted yet (``wsum = 0``, ``stamp = 1``)."""
        self.check_live()
        cdef Py_ssize_t j
        for j in range(self.n_features):
            if j + HEADER_AHEAD < self.n_features:
                prefetch_write(self.header(j + HEADER_AHEAD))
            self.header(j).wsum = 0.0
            self.header(j).stamp = 1

    def get_average(self, Py_ssize_t k):
        """The average of the inner iterates 1..k since :meth:`reset_average`
        (steps 0..k-1 of :func:`dp_cd_steps` with ``averaging=True``)."""
        self.check_live()
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        out = np.empty(self.n_features)
        cdef double[::1] view = out
        cdef Py_ssize_t j
        cdef int64_t last = 1
        cdef Header* h
        for j in range(self.n_features):
            if j + HEADER_AHEAD < self.n_features:
                prefetch(self.header(j + HEADER_AHEAD))
            h = self.header(j)
            last = max(last, h.stamp)
            view[j] = (h.wsum + h.theta * (k + 1 - h.stamp)) / k
        if k + 1 < last:  # a step after iterate k already moved theta
            raise ValueError(f"k = {k} is before the last recorded move (iterate {last - 1})")
        return out

    def restart(self, theta, margin=None):
        """:meth:`set_theta` then :meth:`reset_average` in one walk over the blocks
        (a period's start: each walk costs a cache miss per coordinate).

        ``margin`` (optional, shape (n_samples,)): overwritten, in the same walk,
        with the blocks' matrix times ``theta`` as scipy's CSC product computes it
        (columns in order, each column's rows in order, from +0.0; a column of
        weight 0 is skipped, since adding its +-0.0 products changes no value):
        the values of ``X @ theta`` bit for bit (the intercept's column last, as
        ``Problem.margin`` adds it), read from the packed columns that the steps
        keep in cache instead of from X.
        """
        self._write_theta(theta, True, margin)

    def set_theta(self, theta):
        """Overwrite the iterate with ``theta`` (shape (n_features,))."""
        self._write_theta(theta, False, None)

    cdef _write_theta(self, theta, bint reset_average, margin):
        """theta_j <- theta[j] in every header; with ``reset_average`` also start a
        new average (``wsum = 0``, ``stamp = 1``); with ``margin``, the product."""
        self.check_live()
        if np.shape(theta) != (self.n_features,):
            raise ValueError(f"theta must have shape ({self.n_features},)")
        cdef const double[::1] view = np.ascontiguousarray(theta, dtype=np.float64)
        cdef bint with_margin = margin is not None
        cdef double[::1] z
        cdef double* z_ = NULL
        if with_margin:
            if not (isinstance(margin, np.ndarray) and margin.dtype == np.float64
                    and margin.shape == (self.n_samples,) and margin.flags.c_contiguous
                    and margin.flags.writeable):
                raise ValueError(f"margin must be a writeable contiguous float64 array of "
                                 f"shape ({self.n_samples},)")
            margin.fill(0.0)
            z = margin
            z_ = &z[0] if self.n_samples else NULL
        cdef Py_ssize_t j
        cdef Header* h
        cdef double w
        for j in range(self.n_features):
            if j + HEADER_AHEAD < self.n_features:
                prefetch_write(self.header(j + HEADER_AHEAD))
            h = self.header(j)
            w = view[j]
            h.theta = w
            if reset_average:
                h.wsum, h.stamp = 0.0, 1
            if with_margin and w != 0.0:
                block_add(self.layout, h, w, z_)



cdef inline void prefetch_block(const char* first, const char* end) noexcept nogil:
    """Prefetch the first three cache lines of a block ``[first, end)``, and its last.

    Branch-free (a loop over the lines would end in a mispredicted branch every
    step): enough for blocks within four cache lines (columns of about 13 nonzeros
    or fewer); longer ones stream.
    """
    cdef const char* last = end - 1
    prefetch(first)
    prefetch(first + 64 if first + 64 < last else last)
    prefetch(first + 128 if first + 128 < last else last)
    prefetch(last)


cdef class RandomStreams:
    """The coordinates and the noise of one DP-CD run, drawn a batch at a time.

    Coordinates come from ``index_generator``: with ``selection="uniform"``
    (Algorithm 1) as ``integers(0, p, BATCH)``; with ``"shuffle"`` as a stream of
    fresh uniformly random permutations, one after the other (every coordinate
    once per pass), each a Fisher-Yates shuffle of ``arange(p)`` swapping ``i``
    with ``integers(0, i + 1)`` for ``i = p - 1, ..., 1``.  Noise comes from
    ``noise_generator``: ``noise.draw`` (the integer law of the releases on a grid,
    :class:`~sparsedp._noise.IntegerNoise`) BATCH at a time, one per noisy step.
    Buffers persist across :func:`dp_cd_steps` calls, so a run does not depend on how its steps are split into calls; draws left in the buffers
    at the end are unused.  Neither stream looks at the data.
    """
    cdef object index_generator, noise_generator
    cdef bitgen_t* index_rng
    cdef bitgen_t* noise_rng
    cdef uint64_t p
    cdef bint shuffle
    cdef int64_t[::1] permutation
    cdef Py_ssize_t permutation_pos
    cdef int64_t indices[RING]  # two halves of BATCH, consumed in turn
    cdef Py_ssize_t index_pos  # next index to consume; at least BATCH after it are drawn
    cdef bint primed
    cdef IntegerNoise noise
    cdef double draws[BATCH]
    cdef Py_ssize_t draw_pos

    def __cinit__(self, Py_ssize_t n_features, index_generator, noise_generator,
                  selection="uniform", IntegerNoise noise=None):
        if n_features < 1:
            raise ValueError("n_features must be >= 1")
        if selection not in ("uniform", "shuffle"):
            raise ValueError(
                f"selection must be 'uniform' or 'shuffle', got {selection!r}")
        self.index_generator = index_generator
        self.noise_generator = noise_generator
        self.index_rng = generator_bitgen(index_generator)
        self.noise_rng = generator_bitgen(noise_generator)
        self.p = n_features
        self.shuffle = selection == "shuffle"
        self.permutation = np.empty(n_features if self.shuffle else 0, dtype=np.int64)
        self.permutation_pos = n_features
        self.index_pos = 0
        self.primed = False
        self.noise = noise
        self.draw_pos = BATCH

    cdef inline void refill_indices(self, Py_ssize_t half) noexcept nogil:
        """Draw the next BATCH coordinates into half 0 or 1 of the ring."""
        cdef Py_ssize_t b, i, j, p = self.p
        cdef int64_t t
        cdef int64_t* out = &self.indices[half * BATCH]
        if not self.shuffle:
            uniform_index_fill(self.index_rng, p, BATCH, <uint64_t*> out)
        else:
            for b in range(BATCH):
                if self.permutation_pos == p:  # next pass: a fresh permutation
                    for i in range(p):
                        self.permutation[i] = i
                    for i in range(p - 1, 0, -1):  # Fisher-Yates
                        j = <Py_ssize_t> random_bounded_uint64(self.index_rng, 0, i, 0, False)
                        t = self.permutation[i]
                        self.permutation[i] = self.permutation[j]
                        self.permutation[j] = t
                    self.permutation_pos = 0
                out[b] = self.permutation[self.permutation_pos]
                self.permutation_pos += 1

    cdef inline void consumed_until(self, Py_ssize_t pos) noexcept nogil:
        """Indices before ring position ``pos`` (1..RING) are used: move on, and
        draw the successor of a half that is used up into it."""
        if pos % BATCH == 0:
            self.refill_indices(pos // BATCH - 1)
            pos %= RING
        self.index_pos = pos

    cdef inline void prime(self) noexcept nogil:
        """Fill both halves (first call only)."""
        if not self.primed:
            self.refill_indices(0)
            self.refill_indices(1)
            self.index_pos = 0
            self.primed = True

    cdef inline double integer_noise(self) noexcept nogil:
        """The next draw of the run's integer noise law (``noise``, plus its shift),
        BATCH at a time."""
        if self.draw_pos == BATCH:
            noise_fill(&self.noise.table, self.noise_rng, BATCH, self.draws)
            self.draw_pos = 0
        self.draw_pos += 1
        return self.draws[self.draw_pos - 1]


def dp_cd_steps(
    int loss,
    CoordinateBlocks blocks not None,
    const double[::1] y,
    double[::1] margin,
    double[::1] deriv,
    noise,
    double grid_per_clip,
    double inv_grid_per_clip,
    bint averaging,
    Py_ssize_t k_start,
    Py_ssize_t n_steps,
    double l1,
    double l2,
    RandomStreams streams not None,
):
    """Run steps ``k_start .. k_start + n_steps - 1`` of one DP-CD inner loop in place.

    Parameters
    ----------
    loss : int
        The datafit's kernel id (:func:`sparsedp._kernels.kernel_id`): SQUARED or
        LOGISTIC; any other value raises ValueError.
    blocks : CoordinateBlocks
        Per-coordinate parameters, ``theta`` and columns; ``theta`` updated in place.
    y : labels.
    margin, deriv : ``X @ theta`` and ``loss'(margin, y)``, updated in place.
    noise : {"none", "grid"}
        ``"grid"``: the clipped coordinate gradient (a sum, before the division
        by n) is released as ``g_j (rint(G_j / g_j) + K)`` with the public grid
        ``g_j = grid_per_clip * C_j`` (its inverse ``inv_grid_per_clip / C_j``
        rounded down) and K from ``streams``' integer noise law
        (:mod:`sparsedp._noise`); ``"none"``: no noise.
    grid_per_clip, inv_grid_per_clip : float
        The grid of coordinate j over C_j, and a rounded-down inverse.
    averaging : bool
        Keep the lazy running sum of the iterates in the blocks' headers (read
        with :meth:`CoordinateBlocks.get_average`): ``wsum_j`` sums theta_j over
        the iterates before ``stamp_j``, the first iterate index at which the
        current theta_j holds.
    k_start, n_steps : step range within the inner loop (0-based).
    l1, l2 : elastic-net penalty strengths.
    streams : RandomStreams
        The run's coordinates and noise (state carried from call to call).

    Checks for signals every few milliseconds of work (between batches of
    steps): Ctrl-C raises KeyboardInterrupt, the blocks, margins and streams left
    as after the last whole batch.

    Returns
    -------
    n_moves : int
        Number of steps that changed theta.
    """
    cdef Py_ssize_t p = blocks.n_features
    cdef double n = margin.shape[0]
    cdef int mode = NOISE_MODES[noise]
    cdef Py_ssize_t k, b, pos, size, done = 0, n_moves = 0, work = 0
    cdef int64_t j
    cdef int64_t* ring = streams.indices
    cdef const char* base = blocks.base
    cdef const int64_t* offset = blocks.offset
    cdef Header* h
    cdef int layout = blocks.layout
    cdef const double* y_
    cdef double* margin_
    cdef double* deriv_
    cdef double grad, old, new, delta, inv_n = 1.0 / n
    check_loss(loss)
    blocks.check_live()
    if <uint64_t> p != streams.p:
        raise ValueError(f"streams were made for {streams.p} features, "
                         f"blocks hold {p}")
    if not y.shape[0] == margin.shape[0] == deriv.shape[0] == blocks.n_samples:
        raise ValueError(f"y, margin and deriv must have one entry per sample "
                         f"({blocks.n_samples})")
    if mode == GRID_NOISE and streams.noise is None:
        raise ValueError("noise='grid' needs streams made with an IntegerNoise")
    if n_steps <= 0 or blocks.n_samples == 0:
        return 0
    y_, margin_, deriv_ = &y[0], &margin[0], &deriv[0]
    with streams.index_generator.bit_generator.lock, \
            streams.noise_generator.bit_generator.lock, nogil:
        streams.prime()
        pos = streams.index_pos
        for b in range(pos, pos + 2 * LOOKAHEAD):  # start the prefetch pipeline
            prefetch(&offset[ring[b & MASK]])
        for b in range(pos, pos + LOOKAHEAD):
            j = ring[b & MASK]
            prefetch_block(base + offset[j], base + offset[j + 1])
        while done < n_steps:
            # steps up to the end of the current half; the other half is drawn,
            # so lookahead runs on across the boundary
            pos = streams.index_pos
            size = min(BATCH - pos % BATCH, n_steps - done)
            for b in range(pos, pos + size):
                prefetch(&offset[ring[(b + 2 * LOOKAHEAD) & MASK]])
                j = ring[(b + LOOKAHEAD) & MASK]
                prefetch_block(base + offset[j], base + offset[j + 1])
                j = ring[b]
                h = blocks.header(j)
                work += h.nnz
                grad = block_gradient(layout, h, deriv_)
                if mode == GRID_NOISE:
                    grad = grid_release(grad, inv_grid_per_clip / h.clip,
                                        grid_per_clip * h.clip, streams.integer_noise())
                grad *= inv_n
                if h.step == 0.0:
                    continue
                old = h.theta
                new = prox_elastic_net(old - h.step * grad, h.step, l1, l2)
                if new == old:
                    continue
                delta = new - old
                block_move(layout, loss, h, delta, margin_, deriv_, y_)
                if averaging:
                    # old held for the iterates stamp .. k; new from k + 1 on
                    k = k_start + done + b - pos
                    h.wsum += old * (k + 1 - h.stamp)
                    h.stamp = k + 1
                h.theta = new
                n_moves += 1
            done += size
            streams.consumed_until(pos + size)
            work += size
            if work >= SIGNAL_CHECK_WORK:
                work = 0
                check_signals()
    return n_moves
