"""DP-GCD kernel: the incremental clipped gradient and the iterations.

:class:`GreedyKernel` runs DP-GCD iterations (Algorithm 2 of Mangold et al.,
AISTATS 2023): select j by the noisy max of the rule's score, release the
clipped coordinate gradient with noise, take a proximal step.  It keeps the
unnormalised clipped gradient ``G_k = sum_i clip(X_ik loss'(z_i, y_i), C_k)``
incrementally: when w_j moves, only the rows of column j change their
derivative, and only the columns of those rows (a CSR copy) change their
terms; a full recomputation runs every ``refresh_every`` iterations or once the
incremental work exceeds four passes over the nonzeros.  The selection is
:class:`sparsedp._kernels._noisy_max.NoisyMax`, a public primitive of its own
(:mod:`sparsedp.random`).
"""
from libc.math cimport sqrt, fabs
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcmp
from numpy.random cimport bitgen_t

import threading
import weakref
from collections import OrderedDict

import numpy as np

from ._core cimport (
    ColEntry, index_t, check_loss, clip, clipped_gradient, loss_derivative, penalty_value,
    prox_elastic_net, subdiff_distance, SIGNAL_CHECK_WORK, check_signals,
)
from ._noise cimport IntegerNoise, grid_release, noise_draw
from ._noisy_max cimport NoisyMax
from ._random cimport generator_bitgen
from ._immutable import _read_only_root, immutable_key, is_alive, kept_derived

cdef enum:
    GS_S = 0
    GS_R = 1
    GS_Q = 2

cdef enum:
    NO_NOISE = 0
    GRID_NOISE = 1            # the release on a public grid (sparsedp._noise)

RULES = {"gs-s": GS_S, "gs-r": GS_R, "gs-q": GS_Q}
GRADIENT_RELEASES = {"none": NO_NOISE, "grid": GRID_NOISE}

# The kept gradient is refreshed before its rounding drift can reach
# DRIFT_FRACTION / 2 of a coordinate gradient's sensitivity (GreedyKernel).
DRIFT_FRACTION = 2.0 ** -13

cdef packed struct RowEntry:
    double value    # X_ik
    int64_t col     # k


cdef void transpose_csc(const double[::1] data, const index_t[::1] indices,
                        const index_t[::1] indptr, double intercept, bint with_intercept,
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
            rows[r].value, rows[r].col = data[q], j
            row_ptr[indices[q]] = r + 1
    if with_intercept:  # the last record of every row
        for i in range(n):
            r = row_ptr[i]
            rows[r].value, rows[r].col = intercept, p
            row_ptr[i] = r + 1
    for i in range(n, 0, -1):  # back to the starts
        row_ptr[i] = row_ptr[i - 1]
    row_ptr[0] = 0


def entries(X, intercept_scaling=None):
    """``(columns, col_ptr, rows, row_ptr)``: the record arrays of GreedyKernel
    (CSC column records and, transposed, the row records) for a CSC matrix ``X``
    with int32 or int64 indices, read-only.

    ``intercept_scaling`` (None: none): the records of ``[X, intercept_scaling *
    1]``, the public intercept column last, packed here (no copy of X).

    The records of an immutable ``X`` (every array of its data, indices and
    indptr, and every array they view, read-only, as a read-only memory map or
    :class:`sparsedp.experiments.Problem`'s copy) are kept while ``X``'s
    arrays live (:data:`RECORDS_KEPT` at most): the fits of a sweep build them
    once per process.
    """
    key = immutable_key(X, intercept_scaling)
    if key is not None:
        hit = _RECORDS.pop(key[0], None)
        if hit is not None and is_alive(hit[0], key[1]):
            _RECORDS[key[0]] = hit  # the most recent last
            return hit[1]
    records = _entries(X, intercept_scaling)
    if key is not None:
        for a in records:
            a.setflags(write=False)
        _RECORDS[key[0]] = ([weakref.ref(root) for root in key[1]], records)
        for stale in [k for k, v in _RECORDS.items() if any(ref() is None for ref in v[0])]:
            del _RECORDS[stale]
        while len(_RECORDS) > RECORDS_KEPT:
            del _RECORDS[next(iter(_RECORDS))]
    return records


#: immutable matrices whose records are kept (the most recent)
RECORDS_KEPT = 4
_RECORDS = {}

#: starts from w = 0 kept (the most recent), see :func:`_kept_start`
STARTS_KEPT = 8
_STARTS = []


def _start_key(X, y, int loss, intercept_scaling, int rule, double l1, double l2):
    """``(key, roots)`` of a fit from w = 0 on immutable X and y, else None."""
    return immutable_key(X, intercept_scaling, loss, rule, l1, l2, "start at 0", also=(y,))


def _kept_start(key, C, M):
    """``(G, scores)``, the clipped gradient and the rule's scores at w = 0 kept for
    ``key`` and thresholds and smoothness constants with the bits of ``C`` and ``M``,
    or None.

    At w = 0 they depend only on X, y, the loss, the rule, the penalty, M and C:
    the runs of a grid point (other seeds, the same C) and the grid points that
    share a clip start from the same ones.  Kept for immutable X and y alone
    (:func:`_start_key`).
    """
    for entry in list(_STARTS):  # a snapshot: another thread may change the list
        parts, refs, kept_C, kept_M, G, scores = entry
        if (parts == key[0] and is_alive(refs, key[1])
                and (kept_C is C or _same_bits(kept_C, C))
                and (kept_M is M or _same_bits(kept_M, M))):
            for k in range(len(_STARTS)):  # the most recent last
                if _STARTS[k] is entry:
                    del _STARTS[k]
                    _STARTS.append(entry)
                    break
            return G, scores
    return None


def _same_bits(const double[::1] a, const double[::1] b):
    """Whether two float64 vectors hold the same bits (memcmp: stops at the first
    difference, where ``np.array_equal`` compares every element and allocates)."""
    if a.shape[0] != b.shape[0]:
        return False
    return a.shape[0] == 0 or memcmp(&a[0], &b[0], a.shape[0] * sizeof(double)) == 0


def _keep_start(key, C, M, G, scores):
    _STARTS[:] = [e for e in _STARTS if all(ref() is not None for ref in e[1])]
    # C and M themselves when immutable (a later fit's same object then matches
    # without comparing 2 x 8p bytes), else read-only copies
    kept = [a if _read_only_root(a) is not None else np.array(a) for a in (C, M)]
    kept += [np.array(a) for a in (G, scores)]
    for a in kept:
        if a.flags.writeable:
            a.setflags(write=False)
    _STARTS.append((key[0], [weakref.ref(root) for root in key[1]], *kept))
    while len(_STARTS) > STARTS_KEPT:
        del _STARTS[0]
    return kept[3]


#: noisy maxes built on kept starts' scores, kept to be copied (the most recent:
#: at most MAXES_KEPT of them and MAXES_BYTES together; 3.3 MB each at p = 10**5,
#: so the 20 (clip, n_iter) points of a sweep's DP-GCD grid on dorothea stay kept),
#: see :func:`_start_noisy_max`
MAXES_KEPT = 32
MAXES_BYTES = 80 << 20
_MAXES = OrderedDict()
_MAXES_LOCK = threading.Lock()


def _start_noisy_max(scores, double scale, selection, generator, bint kept):
    """The NoisyMax of a fit's start: built on ``scores``, or, for the scores of a
    kept start (:func:`_kept_start`, ``kept``), a copy of the one built for them with
    this ``scale`` and ``selection`` (the same state: only the O(p) exponentials of
    the build are saved, the draws are the fit's own; the first fit of a start
    builds it)."""
    if not kept:
        return NoisyMax(scores, scale, selection, generator)
    key = (id(scores), scale, selection)
    with _MAXES_LOCK:
        entry = _MAXES.get(key)
        if entry is not None and entry[0]() is scores:
            _MAXES.move_to_end(key)
            return (<NoisyMax> entry[1]).copy(generator)
    built = NoisyMax(scores, scale, selection, generator)
    with _MAXES_LOCK:
        _MAXES[key] = (weakref.ref(scores), built)
        for stale in [k for k, (ref, _) in _MAXES.items() if ref() is None]:
            del _MAXES[stale]
        total = sum((<NoisyMax> m).nbytes for _, m in _MAXES.values())
        while len(_MAXES) > MAXES_KEPT or (len(_MAXES) > 1 and total > MAXES_BYTES):
            total -= (<NoisyMax> _MAXES.popitem(last=False)[1][1]).nbytes
    return built.copy(generator)


def _entries(X, intercept_scaling):
    n, p = X.shape
    with_intercept = intercept_scaling is not None
    m = p + with_intercept
    nnz = X.nnz + n * with_intercept
    cols = np.empty(nnz, dtype=[("value", "f8"), ("row", "i8")])
    rows = np.empty(nnz, dtype=[("value", "f8"), ("col", "i8")])
    col_ptr = np.empty(m + 1, dtype=np.int64)
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    indices, indptr = np.ascontiguousarray(X.indices), np.ascontiguousarray(X.indptr)
    if indices.dtype != indptr.dtype:
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
    s = float(intercept_scaling) if with_intercept else 0.0
    if indices.dtype == np.int32:
        transpose_csc[int32_t](data, indices, indptr, s, with_intercept, cols, col_ptr,
                               rows, row_ptr)
    else:
        transpose_csc[int64_t](data, indices.astype(np.int64, copy=False),
                               indptr.astype(np.int64, copy=False), s, with_intercept,
                               cols, col_ptr, rows, row_ptr)
    return cols, col_ptr, rows, row_ptr


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
    gradient_release : {"none", "grid"}
        ``"grid"``: the clipped coordinate gradient, summed afresh over column j
        (``G_j``, before the division by n), is released as ``g_j (rint(G_j /
        g_j) + K) / n`` with K from ``noise`` (:mod:`sparsedp._noise`);
        ``"none"``: ``G_j / n``.
    noise : IntegerNoise or None
        The integer noise law of the releases (``"grid"``).
    grid, inv_grid : ndarrays of shape (p,)
        The public grid of ``G_j`` and its rounded-down inverse (``"grid"``).
    generator : numpy.random.Generator
    refresh_every : int
        Iterations between full recomputations of the gradient.
    refresh_work : float
        ... or once the incremental updates have touched this many times
        ``max(nnz, p)`` entries (``inf``: never).
    coef_init : ndarray of shape (p,), optional
    step_estimate : tuple or None
        None: the steps are ``step_sizes``.  ``(noise, grid, inv_grid, beta, bound,
        floor, gamma)``: the smoothness constant of each selected coordinate is
        estimated privately after its selection, the first time it is selected
        (the sum ``S_j = sum_i min(beta X_ij^2, bound)`` over column j, released on
        the public grid as ``grid (rint(S_j inv_grid) + K) / n``, K from ``noise``,
        then raised to ``floor`` and capped at ``bound``), and its step is ``gamma``
        over it.  Each term lies in ``[0, bound]``: the sum's sensitivity is
        ``bound`` (replace-one).  :attr:`step_smoothness` holds the released
        estimates (NaN where none was released).
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
    cdef const double[::1] y, M, inv_sqrt_M, C, step, grid, inv_grid
    cdef IntegerNoise noise
    cdef double[::1] w, margin, deriv, G
    cdef int64_t[::1] stamp, touched
    cdef Py_ssize_t touched_count
    cdef int64_t iteration, since_refresh, work, work_limit, refresh_every
    cdef readonly NoisyMax noisy_max
    cdef object generator
    cdef bitgen_t* rng
    cdef readonly int64_t n_refreshes
    #: the clipped gradient and scores at w = 0 came from an earlier fit (:func:`_kept_start`)
    cdef readonly bint reused_start
    cdef bint estimate_steps
    cdef IntegerNoise step_noise
    cdef double step_grid, step_inv_grid, step_beta, step_bound, step_floor, step_gamma
    cdef double[::1] est_M

    def __cinit__(self, X, y, int loss, smoothness, clip_thresholds, step_sizes,
                  double l1, double l2, rule, selection, double selection_scale,
                  gradient_release, IntegerNoise noise, grid, inv_grid,
                  generator, Py_ssize_t refresh_every=1000,
                  double refresh_work=4.0, coef_init=None, intercept_scaling=None,
                  step_estimate=None):
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
        if C.shape != (self.p,):
            raise ValueError(f"clip_thresholds must have shape ({self.p},), got {C.shape}")
        self.columns, self.col_ptr, self.rows, self.row_ptr = entries(X, intercept_scaling)
        cdef int64_t nnz = self.col_ptr[self.p]
        self.column_base = &self.columns[0] if nnz else NULL
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.M = M
        self.inv_sqrt_M = kept_derived(M, ("inv_sqrt",), lambda: np.divide(
            1.0, np.sqrt(M), out=np.zeros_like(M), where=M > 0))
        self.C = C
        self.step = np.ascontiguousarray(step_sizes, dtype=np.float64)
        if self.gradient_release == GRID_NOISE and noise is None:
            raise ValueError("gradient_release='grid' needs an IntegerNoise")
        self.noise = noise
        self.estimate_steps = step_estimate is not None
        # the released estimates (NaN: none yet); only a run that estimates reads them
        self.est_M = np.full(self.p if self.estimate_steps else 0, np.nan)
        if self.estimate_steps:
            (self.step_noise, self.step_grid, self.step_inv_grid, self.step_beta,
             self.step_bound, self.step_floor, self.step_gamma) = step_estimate
            if not (self.step_floor > 0 and self.step_bound >= self.step_floor):
                raise ValueError("step_estimate needs 0 < floor <= bound")
        self.grid = np.ascontiguousarray(grid, dtype=np.float64)
        self.inv_grid = np.ascontiguousarray(inv_grid, dtype=np.float64)
        self.w = (np.zeros(self.p) if coef_init is None
                  else np.array(coef_init, dtype=np.float64).reshape(self.p))
        self.margin = np.zeros(self.n)
        self.deriv = np.zeros(self.n)
        self.G = np.empty(self.p)  # every entry set by recompute or start_at_zero
        self.stamp = np.full(self.p, -1, dtype=np.int64)
        self.touched = np.empty(self.p, dtype=np.int64)  # entries below touched_count only
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
        key = None if coef_init is not None else _start_key(X, y, loss, intercept_scaling,
                                                            self.rule, l1, l2)
        start = None if key is None else _kept_start(key, C, M)
        self.reused_start = start is not None
        cdef double[::1] score_view
        cdef Py_ssize_t k
        if start is None:
            self.recompute()
            scores = np.empty(self.p)
            score_view = scores
            for k in range(self.p):
                score_view[k] = self.score(k)
            if key is not None:
                scores = _keep_start(key, C, M, self.G, scores)
        else:
            self.start_at_zero(start[0])
            scores = start[1]  # NoisyMax keeps a copy
        self.noisy_max = _start_noisy_max(scores, selection_scale, selection, generator,
                                          key is not None)

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

    cdef void start_at_zero(self, const double[::1] G) noexcept nogil:
        """:meth:`recompute` at w = 0 with the clipped gradient ``G`` known (kept)."""
        cdef Py_ssize_t i, j
        for i in range(self.n):
            self.margin[i] = 0.0
            self.deriv[i] = loss_derivative(self.loss, 0.0, self.y[i])
        for j in range(self.p):
            self.G[j] = G[j]
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
        cdef int64_t k
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
                v, k = self.rows[e].value, self.rows[e].col
                c = self.C[k]
                self.G[k] += clip(v * d_new, c) - clip(v * d_old, c)
                self.touch(k)
            self.work += self.row_ptr[i + 1] - self.row_ptr[i]

    cdef double release(self, Py_ssize_t j) noexcept nogil:
        """The noisy coordinate gradient of coordinate j (see ``gradient_release``).

        On the grid, ``G_j`` is summed afresh over column j in CSC order (the
        incrementally kept ``G_j`` has rounding drift): its floating-point
        sensitivity is that of one sum of at most n clipped terms.
        """
        cdef double g
        if self.gradient_release == GRID_NOISE:
            g = self.column_clipped_gradient(j, &self.deriv[0])
            return grid_release(g, self.inv_grid[j], self.grid[j],
                                noise_draw(&self.noise.table, self.rng)
                                + self.noise.table.shift) / self.n
        return self.G[j] / self.n

    cdef double estimated_step(self, Py_ssize_t j) noexcept nogil:
        """gamma / M_j with M_j released privately at j's first selection
        (``step_estimate``)."""
        cdef Py_ssize_t q
        cdef double s = 0.0, v, m
        if self.est_M[j] != self.est_M[j]:  # NaN: not yet released
            for q in range(self.col_ptr[j], self.col_ptr[j + 1]):
                v = self.columns[q].value
                s += min(self.step_beta * v * v, self.step_bound)
            m = grid_release(s, self.step_inv_grid, self.step_grid,
                             noise_draw(&self.step_noise.table, self.rng)
                             + self.step_noise.table.shift) / self.n
            self.est_M[j] = min(max(m, self.step_floor), self.step_bound)
        return self.step_gamma / self.est_M[j]

    @property
    def step_smoothness(self):
        """The privately released M_j of the selected coordinates (NaN elsewhere)."""
        if not self.estimate_steps:
            return np.full(self.p, np.nan)
        return np.asarray(self.est_M).copy()

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
        cdef double g, delta, step
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
                step = self.estimated_step(j) if self.estimate_steps else self.step[j]
                delta = self.prox_move(j, g, step) if step > 0 else 0.0
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

    @property
    def coef(self):
        return np.asarray(self.w).copy()

    @property
    def margins(self):
        return np.asarray(self.margin).copy()
