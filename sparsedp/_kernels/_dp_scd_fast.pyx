"""DP-SCD: mini-batch stochastic dual coordinate ascent with noise on the shared vector.

Algorithm 1 of Damaskinos, Mendler-Dünner, Guerraoui, Papandreou, Parnell,
"Differentially Private Stochastic Coordinate Descent" (AAAI 2021), on the
rows of a CSR matrix.  For ``F(w) = (1/n) sum_i loss(x_i . w, y_i) + (lambda/2)
||w||^2`` the dual variables are ``alpha_i`` and the shared vector is ``v =
sum_i alpha_i x_i`` (so that ``w = v / (lambda n)``).  A step draws a batch
``B`` (Poisson or fixed size), computes for every ``j`` in ``B`` an update
``zeta_j`` of the subproblem

    ``G_j(zeta) = loss*_j(-(alpha_j + zeta)) + (x_j . w) zeta
    + L ||x_j||^2 zeta^2 / (2 lambda n)``

against the same ``v`` (independent updates: ``L`` the public batch size, the
safe aggregation parameter), scales it to ``|zeta_j| max(1, ||x_j||) <= C`` and
adds ``Delta v = sum_j zeta_j x_j`` to ``v`` on the public grid ``g`` (an int64
accumulator ``A``, ``v = g A``) with integer Gaussian noise (docs/dp_scd.rst).

Noise: eager (every coordinate of ``A`` gets its step's draw at every step,
O(p) a step) or lazy (a coordinate is brought up to date, with the sum of the
draws of the steps it missed, only when a sampled row reads it, and once at the
end: O(nnz of the batch) a step); the two give ``A`` the same law.
"""
from libc.math cimport exp, fabs, log, rint, sqrt
from libc.stdint cimport int32_t, int64_t, uint64_t
from numpy.random cimport bitgen_t

import numpy as np

from ._core cimport (HINGE, LOGISTIC, SQUARED, check_signals, prefetch, rint_fast,
                     SIGNAL_CHECK_WORK)
from ._noise cimport NoiseTable, noise_draw, noise_fill
from ._random cimport generator_bitgen
from ._sampling cimport Batches, sample_batch
from ._walk cimport GaussianWalk, Walk, WalkBuffers, WalkDraws, walk_sum_buffered

cdef enum:
    NOISE_NONE = 0
    NOISE_EAGER = 1
    NOISE_LAZY = 2

# The logistic dual lives on 0 < y alpha < 1; a value outside (the start alpha =
# 0, or a noisy alpha with noise_alpha) is moved inside before the Newton step
# (the paper's "constraints enforced before computing zeta", Appendix E).
cdef double LOGISTIC_EDGE = 1e-8


cdef inline double dual_step(int loss, double alpha, double y, double margin,
                             double kappa) noexcept nogil:
    """The unscaled update zeta of G_j (closed form, or one Newton step).

    ``margin`` is ``x_j . w`` and ``kappa = L ||x_j||^2 / (lambda n)``.
    """
    cdef double b, bn, target
    if loss == SQUARED:
        # loss*(-a) = -a y + a^2 / 4: G'(zeta) = -y + (alpha + zeta)/2 + margin + kappa zeta
        return (y - margin - 0.5 * alpha) / (0.5 + kappa)
    if loss == HINGE:
        # loss*(-a) = -a y on 0 <= y a <= 1: the unconstrained minimiser, projected
        b = y * alpha
        if kappa > 0.0:
            target = b + (1.0 - y * margin) / kappa
        else:
            target = 1.0 if y * margin < 1.0 else 0.0
        if target < 0.0:
            target = 0.0
        elif target > 1.0:
            target = 1.0
        return y * (target - b)
    # LOGISTIC: loss*(-a) = b log b + (1 - b) log(1 - b), b = y a in (0, 1)
    b = y * alpha
    if b <= 0.0 or b >= 1.0 or b != b:
        b = LOGISTIC_EDGE if not b >= 1.0 else 1.0 - LOGISTIC_EDGE
    # one Newton step from b on G (in the variable b' = b + y zeta)
    bn = b - (log(b / (1.0 - b)) + y * margin) / (1.0 / (b * (1.0 - b)) + kappa)
    if bn <= 0.0:  # outside the domain: halfway to its edge (a safeguarded step)
        bn = 0.5 * b
    elif bn >= 1.0:
        bn = 0.5 * (1.0 + b)
    return y * (bn - y * alpha)


ctypedef struct Coordinate:       # a coordinate's state: 32 bytes, one cache line
    int64_t acc                     # v_k = grid * acc (noisy runs)
    int64_t last                    # lazy noise: steps before this one are added
    double v                        # v_k (grid * acc, or the float v without noise)
    int64_t unused                  # (padding to 32 bytes)

#: numpy's view of :c:type:`Coordinate`
COORDINATE_DTYPE = np.dtype([("acc", np.int64), ("last", np.int64), ("v", np.float64),
                             ("unused", np.int64)])

cdef enum:
    PREFETCH_AHEAD = 16             # nonzeros ahead at which a row's states are prefetched


def coordinate_states(Py_ssize_t p):
    """``p`` zeroed :data:`COORDINATE_DTYPE` records, 64-byte aligned (a record
    never straddles two cache lines)."""
    size = COORDINATE_DTYPE.itemsize
    buf = np.zeros(p * size + 64, dtype=np.uint8)
    offset = -buf.ctypes.data % 64
    return buf[offset:offset + p * size].view(COORDINATE_DTYPE)


cdef inline void catch_up(WalkDraws* walk, bitgen_t* rng, Coordinate* c, double grid,
                          int64_t t) noexcept nogil:
    """Lazy noise: add to acc the sum of the walk's steps last .. t - 1 it missed
    (its draws buffered: :func:`~sparsedp._kernels._walk.walk_sum_buffered`).

    Branch-free: a coordinate already at t (a third of the touches at L = 100, in
    no predictable order) adds the exact 0 that a sum of no steps reads, drawing
    nothing, instead of a mispredicted return."""
    cdef int64_t missed = t - c.last
    missed &= ~(missed >> 63)  # a t before last (never in a run) catches up nothing
    c.acc += walk_sum_buffered(walk, rng, missed)
    c.v = grid * <double> c.acc
    c.last += missed


def dp_scd_steps(int loss, const double[::1] data, const int32_t[::1] indices,
                 const int64_t[::1] indptr, const double[::1] y,
                 const double[::1] row_norms, double[::1] alpha, Coordinate[::1] state,
                 double[::1] zetas, int64_t[::1] batch, Batches batches,
                 int64_t t_start, int64_t n_steps, Py_ssize_t batch_size, double lambda_n,
                 double clip, int noise_mode, GaussianWalk walk, double grid,
                 double inv_grid, bint noise_alpha, sampler, noise_generator,
                 WalkBuffers draws=None):
    """Run the steps ``t_start .. t_start + n_steps - 1`` of DP-SCD in place.

    Parameters
    ----------
    loss : int
        The datafit's kernel id (``_core.pxd``'s ``KernelId``): SQUARED, LOGISTIC
        or HINGE (the losses with a dual step); any other value raises ValueError.
    data, indices, indptr : CSR rows of X (int32 indices, int64 row pointers).
    y : labels; row_norms : ``||x_j||``.
    alpha : the dual variables (hidden state, updated).
    state : per coordinate of v (:data:`COORDINATE_DTYPE`): the grid accumulator,
        the lazy noise's last step, v itself (updated).
    zetas, batch : work arrays of length n.
    batches : the batch sampler (:class:`sparsedp._kernels._sampling.Batches`:
        Poisson or fixed size, O(batch size) a step).
    batch_size : L, the public batch size of the subproblem.
    lambda_n : ``lambda n`` (n public).
    clip : C; every update is scaled to ``|zeta_j| max(1, ||x_j||) <= C`` (``inf``:
        none, for ``epsilon = inf``).
    noise_mode : 0 none (v in floating point), 1 eager, 2 lazy.
    walk, grid, inv_grid : the integer walk of v's noise (a step: one draw of
        its first table) and the grid.  Each term ``zeta_j x_jk`` is rounded to
        the grid on its own (``rint(zeta_j x_jk / g)``): the integer sums are
        exact, and one row moves the integer vector by at most ``S + sqrt(dim)
        / 2`` in L2 (docs/dp_scd.rst).
    draws : the run's buffered draws of ``walk`` (:class:`~sparsedp._kernels._walk.WalkBuffers`,
        for the lazy catch-ups), kept across the calls of a run; None: this call's own.
    noise_alpha : also release the updated alphas on the grid with one step of
        the walk each (the paper's variant).
    sampler, noise_generator : numpy Generators (batches; noise).

    Returns
    -------
    rows : int
        The number of sampled rows (non-private counter).
    """
    cdef Py_ssize_t n = y.shape[0], p = state.shape[0]
    cdef bitgen_t* srng = generator_bitgen(sampler)
    cdef bitgen_t* nrng = generator_bitgen(noise_generator)
    cdef const Walk* wk = NULL
    cdef const NoiseTable* table = NULL
    if noise_mode != NOISE_NONE or noise_alpha:
        if walk is None:
            raise ValueError("a noisy run needs its integer walk")
        wk = &walk.walk
        table = wk.tables[0]
    cdef WalkDraws* wd = NULL
    if noise_mode == NOISE_LAZY:
        draws = lazy_draws(draws, walk)
        wd = draws.draws
    if not (zetas.shape[0] == n and batch.shape[0] == n and batches.n == n
            and alpha.shape[0] == n and row_norms.shape[0] == n
            and indptr.shape[0] == n + 1):
        raise ValueError("inconsistent array shapes")
    if not 1 <= batch_size <= n:
        raise ValueError("batch_size must be in [1, n_samples]")
    if loss != SQUARED and loss != LOGISTIC and loss != HINGE:
        raise ValueError(f"kernel id {loss} has no dual step (SQUARED, LOGISTIC or HINGE)")
    eager = np.empty(p if noise_mode == NOISE_EAGER else 1)
    cdef double[::1] eager_view = eager
    cdef double* eager_buf = &eager_view[0]
    cdef Coordinate* st = &state[0]
    cdef Coordinate* c
    cdef int64_t t, step, k, kk, hi, lo
    cdef Py_ssize_t i, j, m, ii
    cdef double margin, zeta, scale, kappa, nrm
    cdef int64_t rows = 0, work = 0
    cdef double big_l = <double> batch_size
    with sampler.bit_generator.lock, noise_generator.bit_generator.lock, nogil:
        for step in range(n_steps):
            t = t_start + step
            m = sample_batch(&batches.sampler, srng, &batch[0])
            rows += m
            # the updates, each against the same v
            for ii in range(m):
                j = batch[ii]
                margin = 0.0
                hi = indptr[j + 1]
                work += 1 + 2 * (hi - indptr[j])  # the row, read and then added to v
                for kk in range(indptr[j], hi):
                    if kk + PREFETCH_AHEAD < hi:
                        prefetch(&st[indices[kk + PREFETCH_AHEAD]])
                    c = &st[indices[kk]]
                    if noise_mode == NOISE_LAZY:
                        catch_up(wd, nrng, c, grid, t)
                    margin += data[kk] * c.v
                margin /= lambda_n
                nrm = row_norms[j]
                kappa = big_l * nrm * nrm / lambda_n
                zeta = dual_step(loss, alpha[j], y[j], margin, kappa)
                # clip = inf (epsilon = inf): the ratio is 0 (or NaN), never above 1
                scale = fabs(zeta) * (nrm if nrm > 1.0 else 1.0) / clip
                if scale > 1.0:
                    zeta /= scale
                if zeta != zeta:
                    zeta = 0.0
                zetas[ii] = zeta
                if noise_alpha:
                    alpha[j] += grid * (rint_fast(zeta * inv_grid)
                                        + <double> noise_draw(table, nrng))
                else:
                    alpha[j] += zeta
            # v += Delta v, then this step's noise
            if noise_mode == NOISE_NONE:
                for ii in range(m):
                    zeta = zetas[ii]
                    if zeta == 0.0:
                        continue
                    j = batch[ii]
                    for kk in range(indptr[j], indptr[j + 1]):
                        st[indices[kk]].v += zeta * data[kk]
            else:
                # term by term on the grid: integer sums, whose order changes
                # nothing, so the batch is walked backwards (the states the
                # margins' pass read last, still cached, first)
                for ii in range(m - 1, -1, -1):
                    zeta = zetas[ii]
                    if zeta == 0.0:
                        continue
                    j = batch[ii]
                    zeta *= inv_grid
                    lo = indptr[j]
                    for kk in range(indptr[j + 1] - 1, lo - 1, -1):
                        if kk - PREFETCH_AHEAD >= lo:  # as in the margins' pass, backwards
                            prefetch(&st[indices[kk - PREFETCH_AHEAD]])
                        c = &st[indices[kk]]
                        c.acc += <int64_t> rint_fast(zeta * data[kk])
                        c.v = grid * <double> c.acc
            if noise_mode == NOISE_EAGER:
                noise_fill(table, nrng, p, eager_buf)
                for k in range(p):
                    st[k].acc += <int64_t> eager_buf[k]
                    st[k].v = grid * <double> st[k].acc
                work += p
            work += 1
            if work >= SIGNAL_CHECK_WORK:
                work = 0
                check_signals()
    return rows


cdef WalkBuffers lazy_draws(WalkBuffers draws, GaussianWalk walk):
    """``draws`` if it buffers ``walk``'s draws, a new one for None (ValueError otherwise)."""
    if draws is None:
        return WalkBuffers([walk])
    if len(draws.walks) != 1 or draws.walks[0] is not walk:
        raise ValueError("draws must be the WalkBuffers of this walk")
    return draws


def dp_scd_finish(Coordinate[::1] state, int64_t t, GaussianWalk walk, double grid,
                  noise_generator, WalkBuffers draws=None):
    """Lazy noise: bring every coordinate up to step ``t`` (the output's v); ``draws``
    as in :func:`dp_scd_steps`."""
    cdef Py_ssize_t k, p = state.shape[0]
    cdef bitgen_t* nrng = generator_bitgen(noise_generator)
    draws = lazy_draws(draws, walk)
    cdef WalkDraws* wd = draws.draws
    with noise_generator.bit_generator.lock, nogil:
        for k in range(p):
            catch_up(wd, nrng, &state[k], grid, t)
