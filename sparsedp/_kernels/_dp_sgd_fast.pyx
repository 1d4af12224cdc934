"""DP-SGD kernels: per-sample clipped gradients on CSR rows, noise on a public grid.

One step: sample a batch (:class:`sparsedp._kernels._sampling.Batches`:
Poisson or fixed size, O(batch size)), compute each sampled row's margin ``z_i = x_i . w`` and its
gradient ``loss'(z_i, y_i) x_i`` clipped to L2 norm ``clip``, sum them into
``G`` (a scratch vector, only the batch's nonzeros touched), release ``k =
rint(G / g)`` plus integer Gaussian noise, and step.

Two kernels:

* :func:`sgd_eager`: a float iterate, every coordinate released and proximally
  updated every step (``w_j <- prox(w_j - c g (k_j + J_j))``, any elastic-net
  penalty).  O(p) a step.
* :func:`sgd_lazy`: no penalty or L2.  The iterate is ``w = s(t) U`` with
  ``U`` an exact int64 vector and ``s(t)`` a public scale (the L2 shrinkage);
  a step subtracts ``M_t k + J`` from ``U`` (``M_t`` a public integer, ``J`` a walk
  step of scale ``tau_r >= z Delta_int M_t``).  A coordinate no batch row touches
  receives only walk steps, which :func:`sparsedp._kernels._walk.walk_sum_buffered` draws
  together when the coordinate is next touched (or at the end); a touched
  coordinate's own walk step is drawn with its next catch-up too (integers
  commute); the public
  halvings ``U <- round(U / 2)`` that keep ``U`` in range are applied in the same
  order.  With ``lazy=False`` every coordinate is caught up every step: the same
  integers in law (the eager reference of the tests).  O(nnz of the batch) a step.
"""
from libc.math cimport INFINITY, fabs, pow, rint, sqrt
from libc.stdint cimport int32_t, int64_t, uint64_t, uintptr_t
from numpy.random cimport bitgen_t

import numpy as np

from ._core cimport (check_loss, check_signals, loss_derivative, prefetch, prox_elastic_net,
                     rint_fast, SIGNAL_CHECK_WORK)
from ._noise cimport IntegerNoise, noise_draw
from ._random cimport generator_bitgen
from ._random import held
from ._sampling cimport Batches, sample_batch
from ._walk cimport GaussianWalk, WalkBuffers, WalkDraws, walk_sum_buffered


cdef struct Rows:
    const int64_t* indptr
    const int32_t* indices
    const double* data
    const double* y
    const double* norms     # ||x_i||_2
    int64_t n
    int loss
    double clip


cdef inline double clipped_coefficient(const Rows* X, int64_t i, double margin) noexcept nogil:
    """loss'(z_i, y_i) scaled so that |coefficient| ||x_i|| <= clip."""
    cdef double d = loss_derivative(X.loss, margin, X.y[i])
    cdef double norm = fabs(d) * X.norms[i]
    if norm > X.clip:
        d *= X.clip / norm
    return d


cdef Rows make_rows(const int64_t[::1] indptr, const int32_t[::1] indices,
                    const double[::1] data, const double[::1] y, const double[::1] norms,
                    int loss, double clip) except *:
    cdef Py_ssize_t n = y.shape[0]
    if not (indptr.shape[0] == n + 1 and norms.shape[0] == n and n > 0
            and indices.shape[0] == data.shape[0] and indptr[0] == 0
            and indptr[n] <= data.shape[0]):
        raise ValueError("inconsistent array shapes: CSR (data, indices, indptr) of n rows, "
                         "and one label and one norm per row")
    cdef Rows X
    X.indptr = &indptr[0]
    X.indices = &indices[0] if indices.shape[0] else NULL
    X.data = &data[0] if data.shape[0] else NULL
    X.y = &y[0]
    X.norms = &norms[0]
    X.n = y.shape[0]
    X.loss, X.clip = loss, clip
    return X


def sgd_eager(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
              const double[::1] y, const double[::1] norms, int loss, double clip,
              double[::1] w, int64_t steps, double step, double prox_step, double l1, double l2,
              Batches batches, IntegerNoise noise, double grid, double inv_grid,
              generator, double[:, ::1] trace=None, int64_t trace_every=0):
    """``steps`` DP-SGD steps on the float iterate ``w`` (in place).

    The release of coordinate j is ``grid (rint(G_j inv_grid) + J)``, J from
    ``noise``; with ``noise=None`` (``epsilon = inf``) it is ``G_j``.
    ``step`` is c (on the batch's sum), ``prox_step`` the penalty's (c times the
    expected batch size).
    ``trace`` (optional, rows of p) receives ``w`` every ``trace_every`` steps.
    """
    check_loss(loss)
    cdef Rows X = make_rows(indptr, indices, data, y, norms, loss, clip)
    cdef int64_t n = X.n, p = w.shape[0]
    if batches.n != n:
        raise ValueError("the batch sampler does not match the number of rows")
    cdef double[::1] G = np.zeros(p)
    cdef int64_t[::1] rows = np.empty(max(n, 1), dtype=np.int64)
    cdef int64_t size
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef int64_t t, a, i, k, j, work = 0, traced = 0
    cdef double z, coef, x
    cdef bint noisy = noise is not None
    with generator.bit_generator.lock, nogil:
        for t in range(steps):
            size = sample_batch(&batches.sampler, rng, &rows[0])
            for a in range(size):
                i = rows[a]
                z = 0.0
                for k in range(X.indptr[i], X.indptr[i + 1]):
                    z += X.data[k] * w[X.indices[k]]
                coef = clipped_coefficient(&X, i, z)
                for k in range(X.indptr[i], X.indptr[i + 1]):
                    G[X.indices[k]] += coef * X.data[k]
                work += X.indptr[i + 1] - X.indptr[i]
            for j in range(p):
                if noisy:
                    x = grid * (rint(G[j] * inv_grid) + <double> noise_draw(&noise.table, rng))
                else:
                    x = G[j]
                w[j] = prox_elastic_net(w[j] - step * x, prox_step, l1, l2)
                G[j] = 0.0
            work += p + n
            if trace_every and (t + 1) % trace_every == 0 and traced < trace.shape[0]:
                for j in range(p):
                    trace[traced, j] = w[j]
                traced += 1
            if work >= SIGNAL_CHECK_WORK:
                work = 0
                check_signals()


cdef class Schedule:
    """The public frame of :func:`sgd_lazy`: per step its scale, multiplier and walk.

    ``scale[t]``: s(t), ``w = s(t) U`` at the start of step t (length steps + 1);
    ``multiplier[t]``: M_t; segments ``[start[r], start[r + 1])`` of constant
    walk ``walk_index[r]``, ``halve[r]``: U is halved at the segment's start.
    """
    cdef readonly object scale, multiplier, start, walk_index, halve, walks

    def __init__(self, scale, multiplier, start, walk_index, halve, walks):
        self.scale = np.ascontiguousarray(scale, dtype=np.float64)
        self.multiplier = np.ascontiguousarray(multiplier, dtype=np.int64)
        self.start = np.ascontiguousarray(start, dtype=np.int64)
        self.walk_index = np.ascontiguousarray(walk_index, dtype=np.int64)
        self.halve = np.ascontiguousarray(halve, dtype=np.uint8)
        self.walks = list(walks)
        steps = self.multiplier.shape[0]
        if (self.scale.shape[0] != steps + 1 or self.start.shape[0] < 2
                or self.start[0] != 0 or self.start[self.start.shape[0] - 1] <= steps
                or np.any(np.diff(self.start) <= 0)
                or self.walk_index.shape[0] != self.start.shape[0] - 1
                or self.halve.shape[0] != self.walk_index.shape[0]
                or self.walk_index.min() < 0 or self.walk_index.max() >= len(self.walks)):
            raise ValueError("inconsistent DP-SGD schedule")


cdef inline int64_t halve_even(int64_t u) noexcept nogil:
    """round(u / 2), ties to even (exact)."""
    cdef int64_t h = u >> 1  # floor(u / 2)
    if (u & 1) and (h & 1):
        h += 1
    return h


ctypedef struct Schedule_t:         # the kernel's view of a Schedule
    const int64_t* start
    const int64_t* walk_index
    const unsigned char* halve
    WalkDraws* walks                # one per walk of the schedule: its draws, buffered


cdef inline int64_t catch_up(int64_t u, int64_t since, int64_t until, const int64_t* start,
                             const int64_t* walk_index, const unsigned char* halve,
                             WalkDraws* walks, bitgen_t* rng,
                             int32_t* segment) noexcept nogil:
    """U_j from the start of step ``since`` to the start of step ``until``.

    ``segment`` holds the index of the segment of step ``since`` (whose
    halving, if any, U already had) and is updated; a coordinate already at
    ``until`` only gets the halvings it missed.  Walk steps are subtracted (the
    eager step subtracts ``M k + J``).
    """
    cdef int64_t s = segment[0], nxt
    while True:
        nxt = start[s + 1]
        if nxt > until:
            u -= walk_sum_buffered(&walks[walk_index[s]], rng, until - since)
            break
        u -= walk_sum_buffered(&walks[walk_index[s]], rng, nxt - since)
        since = nxt
        s += 1
        if halve[s]:
            u = halve_even(u)
    segment[0] = <int32_t> s
    return u


ctypedef struct LazyCoordinate:    # a coordinate's state: 32 bytes, one cache line
    int64_t U                       # the integer frame
    int64_t last                    # U holds the steps before this one
    double G                        # the batch's clipped gradient sum (0 between steps)
    int32_t segment                 # the schedule segment of step ``last``
    int32_t touched                 # in this step's touched list


cdef enum:
    PREFETCH_AHEAD = 16             # nonzeros ahead at which a row's states are prefetched


cdef void catch_up_across(LazyCoordinate* c, int64_t until, const Schedule_t* sch,
                          bitgen_t* rng) noexcept nogil:
    """:func:`catch_up_to` when a segment starts in between (out of line: rare)."""
    c.U = catch_up(c.U, c.last, until, sch.start, sch.walk_index, sch.halve,
                   sch.walks, rng, &c.segment)
    c.last = until


cdef inline void catch_up_to(LazyCoordinate* c, int64_t until, const Schedule_t* sch,
                             bitgen_t* rng) noexcept nogil:
    """Bring ``c`` to the start of step ``until`` (nothing to do if it is there).

    Inline, the common case: ``until`` in the segment of step ``last`` (one walk sum,
    no halving), the same draws as :func:`catch_up` makes for it."""
    if c.last == until:
        return
    if sch.start[c.segment + 1] > until:
        c.U -= walk_sum_buffered(&sch.walks[sch.walk_index[c.segment]], rng, until - c.last)
        c.last = until
    else:
        catch_up_across(c, until, sch, rng)


cdef inline double row_margin(const Rows* X, int64_t i, LazyCoordinate* st, int64_t t,
                              const Schedule_t* sch, bitgen_t* rng, bint track,
                              int64_t* touched, int64_t* n_touched) noexcept nogil:
    """x_i . U at step t, row i's coordinates caught up to t first.  ``track``: each
    coordinate is caught up once a step (a batch of several rows) and listed in
    ``touched``; a one-row batch needs neither (catch_up_to is a no-op at t)."""
    cdef int64_t k, lo = X.indptr[i], hi = X.indptr[i + 1]
    cdef LazyCoordinate* c
    cdef double z = 0.0
    for k in range(lo, hi):
        if k + PREFETCH_AHEAD < hi:
            prefetch(&st[X.indices[k + PREFETCH_AHEAD]])
        c = &st[X.indices[k]]
        if not track:
            catch_up_to(c, t, sch, rng)
        elif not c.touched:
            c.touched = 1
            touched[n_touched[0]] = X.indices[k]
            n_touched[0] += 1
            catch_up_to(c, t, sch, rng)
        z += X.data[k] * <double> c.U
    return z


def sgd_lazy(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
             const double[::1] y, const double[::1] norms, int loss, double clip,
             int64_t[::1] U, int64_t steps, Batches batches, Schedule schedule, double inv_grid, bint lazy, generator,
             double[:, ::1] trace=None, int64_t trace_every=0, init=None, double shrink=1.0,
             bint single_row_path=True, noise_generator=None):
    """``steps`` DP-SGD steps on the integer frame ``U`` (in place), caught up at the end.

    ``w = schedule.scale[steps] * U`` afterwards.  ``trace`` (optional) receives
    ``s(t) U`` every ``trace_every`` steps (all coordinates caught up first:
    the same law, other draws).  ``init`` (a public starting point w0, optional):
    the iterate is then ``s(t) U + shrink**t w0`` (the L2 prox scales both parts
    alike, the steps go to U), and the result ``s(T) U + shrink**T w0``.

    A coordinate's state (U_j, its last step, its segment, its gradient sum)
    is one 32-byte record, so a touch reads one cache line, prefetched a few
    nonzeros ahead along the row.

    A step whose batch is one row (``single_row_path``, batch size 1) releases
    its coordinates in a second walk along the row instead of summing the
    gradient into the records and walking the touched list: a coordinate
    occurs once in a row, so each gradient sum is one term, and the integers
    are those of the general path bit for bit (``single_row_path=False``, the
    tests' reference).

    Batches come from ``generator``, the noise from ``noise_generator`` (None: the
    same generator).
    """
    check_loss(loss)
    cdef Rows X = make_rows(indptr, indices, data, y, norms, loss, clip)
    cdef int64_t n = X.n, p = U.shape[0]
    if batches.n != n:
        raise ValueError("the batch sampler does not match the number of rows")
    if schedule.multiplier.shape[0] != steps:
        raise ValueError("the schedule does not match the number of steps")
    if steps >= 2 ** 31 - 1 or schedule.walk_index.shape[0] >= 2 ** 31 - 1:
        raise ValueError("at most 2**31 - 2 steps")
    cdef const double[::1] scale = schedule.scale
    cdef const int64_t[::1] mult = schedule.multiplier
    cdef const int64_t[::1] start = schedule.start
    cdef const int64_t[::1] walk_index = schedule.walk_index
    cdef const unsigned char[::1] halve = schedule.halve
    cdef WalkBuffers buffers = WalkBuffers(schedule.walks)  # the walks' draws, in bulk
    cdef Schedule_t sch
    sch.start, sch.walk_index, sch.halve = &start[0], &walk_index[0], &halve[0]
    sch.walks = buffers.draws
    # the states, 64-byte aligned (a record never straddles two cache lines)
    states = np.zeros(p * sizeof(LazyCoordinate) + 64, dtype=np.uint8)
    cdef unsigned char[::1] state_bytes = states
    cdef LazyCoordinate* st = <LazyCoordinate*> ((<uintptr_t> &state_bytes[0] + 63) & ~(<uintptr_t> 63))
    cdef LazyCoordinate* c
    cdef int64_t[::1] touched = np.empty(p, dtype=np.int64)
    cdef int64_t[::1] rows = np.empty(max(n, 1), dtype=np.int64)
    cdef double[::1] margins = np.empty(max(n, 1))
    cdef int64_t size
    if noise_generator is None:
        noise_generator = generator
    cdef bitgen_t* srng = generator_bitgen(generator)
    cdef bitgen_t* rng = generator_bitgen(noise_generator)
    cdef int64_t t, a, i, k, j, m, lo, hi, n_touched, work = 0, traced = 0
    cdef double z, coef, s_t
    cdef bint has_init = init is not None
    cdef double[::1] w0 = np.zeros(p) if init is None else np.ascontiguousarray(init, dtype=np.float64)
    cdef double[::1] init_margins = np.zeros(max(n, 1))  # x_i . w0
    if has_init:
        if w0.shape[0] != p:
            raise ValueError("init must have one entry per feature")
        for i in range(n):
            z = 0.0
            for k in range(X.indptr[i], X.indptr[i + 1]):
                z += X.data[k] * w0[X.indices[k]]
            init_margins[i] = z
    for j in range(p):
        st[j].U = U[j]
    with held(generator, noise_generator), nogil:
        for t in range(steps):
            size = sample_batch(&batches.sampler, srng, &rows[0])
            s_t = scale[t]
            n_touched = 0
            if size == 1 and single_row_path:
                i = rows[0]
                lo, hi = X.indptr[i], X.indptr[i + 1]
                z = row_margin(&X, i, st, t, &sch, rng, False, NULL, &n_touched) * s_t
                if has_init:
                    z += pow(shrink, <double> t) * init_margins[i]
                coef = clipped_coefficient(&X, i, z)
                m = mult[t]
                for k in range(lo, hi):  # G_j = 0.0 + coef x_ij: released as the general
                    c = &st[X.indices[k]]  # path releases it (its walk step with the next
                    c.U -= m * <int64_t> rint_fast(coef * X.data[k] * inv_grid)  # catch-up)
                work += 2 * (hi - lo)
            else:
                for a in range(size):  # the margins at w(t), catching coordinates up to
                    i = rows[a]        # step t (the gradient sums go in after every margin)
                    margins[a] = row_margin(&X, i, st, t, &sch, rng, True, &touched[0],
                                            &n_touched) * s_t
                    if has_init:
                        margins[a] += pow(shrink, <double> t) * init_margins[i]
                for a in range(size):
                    i = rows[a]
                    coef = clipped_coefficient(&X, i, margins[a])
                    for k in range(X.indptr[i], X.indptr[i + 1]):
                        st[X.indices[k]].G += coef * X.data[k]
                    work += 2 * (X.indptr[i + 1] - X.indptr[i])
                m = mult[t]
                for a in range(n_touched):  # release and step the touched coordinates:
                    c = &st[touched[a]]     # the data part now, the step's walk step with
                    c.U -= m * <int64_t> rint_fast(c.G * inv_grid)  # the next catch-up
                    c.G = 0.0                                       # (last = t)
                    c.touched = 0
            if not lazy:
                for j in range(p):
                    catch_up_to(&st[j], t + 1, &sch, rng)
                work += p
            work += n
            if trace_every and (t + 1) % trace_every == 0 and traced < trace.shape[0]:
                for j in range(p):
                    catch_up_to(&st[j], t + 1, &sch, rng)
                    trace[traced, j] = scale[t + 1] * <double> st[j].U
                    if has_init:
                        trace[traced, j] += pow(shrink, <double> (t + 1)) * w0[j]
                traced += 1
            if work >= SIGNAL_CHECK_WORK:
                work = 0
                check_signals()
        for j in range(p):
            catch_up_to(&st[j], steps, &sch, rng)
            U[j] = st[j].U
