# The maths every sparsedp kernel shares, written once: datafits on the margin,
# the separable penalty (prox, value, subdifferential distance), the clipped
# coordinate gradient, the CSC column operations, and the check for Ctrl-C.
#
# A solver kernel is "datafit + penalty + selection rule": the datafit is its
# declared kernel id (KernelId below, sparsedp._kernels.kernel_id in Python),
# checked at the kernel's entry and branched on inside these inline functions
# (the branch is loop-invariant, so the compiler hoists it); the penalty is the
# separable elastic net  l1 * |w_j| + l2 / 2 * w_j^2 (KernelId.ELASTIC_NET),
# which covers none, L1, L2 and elastic net without one kernel per combination.
#
# The column operations take raw pointers (the callers own typed memoryviews):
# no reference counting per call in the hot loops.

from libc.math cimport copysign, exp, fabs, rint
from cpython.exc cimport PyErr_CheckSignals
from libc.stdint cimport int32_t, int64_t, uint16_t

ctypedef fused index_t:
    int32_t
    int64_t

# The values of sparsedp._kernels.KernelId (Python): what a datafit or a penalty
# declares as its kernel_id.
cdef enum KernelId:
    SQUARED = 0
    LOGISTIC = 1
    ELASTIC_NET = 2
    SQUARED_HINGE = 3
    HINGE = 4


cdef inline int check_loss(int loss) except -1:
    """Raise ValueError unless ``loss`` is the kernel id of a smooth loss (at a
    primal kernel's entry: the nogil functions below trust it)."""
    if loss != SQUARED and loss != LOGISTIC and loss != SQUARED_HINGE:
        raise ValueError(f"unknown loss kernel id {loss}: expected {<int> SQUARED} "
                         f"(squared), {<int> LOGISTIC} (logistic) or {<int> SQUARED_HINGE} "
                         f"(squared hinge)")
    return 0


# Ctrl-C in a nogil loop: a kernel counts its work (nonzeros and coordinates
# visited) and, every SIGNAL_CHECK_WORK units (milliseconds of work), takes the
# GIL to run Python's signal handlers; KeyboardInterrupt then propagates out of
# the kernel, with the generators' locks released by their ``with`` blocks.
cdef enum:
    SIGNAL_CHECK_WORK = 1 << 22


cdef inline int check_signals() except -1 nogil:
    """Raise the exception of a pending signal (KeyboardInterrupt for Ctrl-C)."""
    with gil:
        PyErr_CheckSignals()
    return 0


cdef inline double loss_derivative(int loss, double z, double y) noexcept nogil:
    """Derivative of the per-sample loss in the margin z."""
    cdef double a, e, s, t
    if loss == SQUARED:
        return 2.0 * (z - y)
    if loss == SQUARED_HINGE:  # -2 y max(0, 1 - y z)
        t = 1.0 - y * z
        return -2.0 * y * t if t > 0.0 else 0.0
    # LOGISTIC (checked at the kernel's entry):
    # -y * sigmoid(-y z) from e = exp(-|y z|) <= 1 (no overflow), without a
    # branch on the sign of y z (data-dependent: mispredicted half the time).
    # Beyond |y z| = 700 the exponential would underflow (below 1e-304, through
    # libm's slow path): it is taken as 0.
    t = y * z
    a = fabs(t)
    e = exp(-a) if a < 700.0 else 0.0
    s = 1.0 / (1.0 + e)
    return -y * (e * s if t > 0 else s)


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* out[q] = 1 / (1 + exp(t[q])), the logistic sigmoid at -t[q], for q < m rounded
       up to a multiple of 4: t and out hold that many entries (out may be t).  Four
       lanes at a time in GCC's vector types, every lane the same IEEE operations, with
       no scalar tail and no set-up, so that a short column (a few nonzeros) costs
       one or two passes: e = exp(-|t|) (taken as 0 from |t| = 700 on, and for NaN,
       as loss_derivative does), by Cody-Waite reduction -|t| = k ln2 + r, |r| <= ln2 / 2,
       the degree-13 Taylor polynomial in r (truncation below 1e-17), evaluated as
       1 + (r + r^2 P(r)) with P by Estrin's scheme (a dependency chain of 10
       operations, Horner's has 26), and 2^k written into the exponent bits; then
       e / (1 + e) for t > 0, 1 / (1 + e) otherwise, as loss_derivative. */
    typedef double sparsedp_v4d __attribute__((vector_size(32)));
    typedef int64_t sparsedp_v4i __attribute__((vector_size(32)));
    typedef uint64_t sparsedp_v4u __attribute__((vector_size(32)));
    /* mask ? x : y lane by lane (mask: all ones or all zeros, as comparisons give) */
    #define SPARSEDP_SELECT(mask, x, y) \
        ((sparsedp_v4d) (((mask) & (sparsedp_v4i) (x)) | (~(mask) & (sparsedp_v4i) (y))))
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    /* an AVX2 copy chosen at load time where the CPU has it (one 4-lane register
       instead of two of 2 lanes); no FMA contraction under -std=c11, so both copies
       round alike and return the same bits */
    __attribute__((target_clones("avx2", "default"), unused))
    #endif
    static void sparsedp_sigmoid_neg_fill(const double* t, double* out, int64_t m) {
        const sparsedp_v4i abs_mask = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
        const uint64_t bias = (uint64_t) 1023 << 52;  /* 2^0 */
        const sparsedp_v4u one_exp = {bias, bias, bias, bias};
        const double sh = 6755399441055744.0;  /* 1.5 * 2^52: k = round(-a / ln2) in the low bits */
        const sparsedp_v4d shifter = {sh, sh, sh, sh}, cap = {700.0, 700.0, 700.0, 700.0};
        const sparsedp_v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
        for (int64_t q = 0; q < m; q += 4) {
            sparsedp_v4d tq;
            memcpy(&tq, t + q, sizeof tq);
            sparsedp_v4d abs_t = (sparsedp_v4d) ((sparsedp_v4i) tq & abs_mask);
            sparsedp_v4i inside = abs_t < cap;
            sparsedp_v4d a = SPARSEDP_SELECT(inside, abs_t, cap);  /* no overflow below */
            sparsedp_v4d ks = -a * 1.4426950408889634 + shifter;
            sparsedp_v4d kd = ks - shifter;
            sparsedp_v4d r = (-a - kd * 6.93147180369123816490e-01)  /* ln 2, high and low */
                             - kd * 1.90821492927058770002e-10;
            sparsedp_v4d r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
            sparsedp_v4d a0 = 1.0 / 2.0 + r * (1.0 / 6.0);
            sparsedp_v4d a1 = 1.0 / 24.0 + r * (1.0 / 120.0);
            sparsedp_v4d a2 = 1.0 / 720.0 + r * (1.0 / 5040.0);
            sparsedp_v4d a3 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
            sparsedp_v4d a4 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
            sparsedp_v4d a5 = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
            sparsedp_v4d b0 = a0 + a1 * r2, b1 = a2 + a3 * r2, b2 = a4 + a5 * r2;
            sparsedp_v4d poly = (b0 + b1 * r4) + b2 * r8;
            sparsedp_v4d p = 1.0 + (r + r2 * poly);
            sparsedp_v4d e = p * (sparsedp_v4d) (((sparsedp_v4u) ks << 52) + one_exp);
            e = SPARSEDP_SELECT(inside, e, zero);
            sparsedp_v4d inv = one / (one + e);
            sparsedp_v4d pos = e * inv;
            sparsedp_v4d res = SPARSEDP_SELECT(tq > zero, pos, inv);
            memcpy(out + q, &res, sizeof res);
        }
    }
    """
    void sigmoid_neg_fill "sparsedp_sigmoid_neg_fill"(const double* t, double* out,
                                                      int64_t m) noexcept nogil


cdef extern from *:
    """
    #define SPARSEDP_PREFETCH(addr) __builtin_prefetch((const void*)(addr))
    #define SPARSEDP_PREFETCH_WRITE(addr) __builtin_prefetch((const void*)(addr), 1)
    """
    # a hint to load the cache line of addr (no effect on results)
    void prefetch "SPARSEDP_PREFETCH"(const void* addr) noexcept nogil
    # ... about to be written
    void prefetch_write "SPARSEDP_PREFETCH_WRITE"(const void* addr) noexcept nogil


cdef inline double rint_fast(double a) noexcept nogil:
    """rint(a) (round half to even), as (a + 1.5 * 2**52) - 1.5 * 2**52 for |a| < 2**51:
    two additions instead of a libm call without SSE4.1; the same value."""
    if fabs(a) < 2251799813685248.0:
        return (a + 6755399441055744.0) - 6755399441055744.0
    return rint(a)


cdef inline double clip(double x, double c) noexcept nogil:
    """Clip x to [-c, c] (c = INFINITY: no clipping).

    Two selects that compile to minsd/maxsd (branch-free): the sign of a clipped
    term is data-dependent, and a branch on it would be mispredicted half the time.
    """
    cdef double t = x if x < c else c
    return t if t > -c else -c


cdef inline double soft_threshold(double x, double t) noexcept nogil:
    """x - t if x > t, x + t if x < -t, 0 otherwise (t >= 0), branch-free.

    When noise moves most coordinates the sign of x is random, and a branch on it
    would be mispredicted half the time.  Bit for bit the branchy form: rounding
    is symmetric in sign, so fl(|x| - t) = |fl(x -+ t)|; ``+ 0.0`` turns a zero's
    sign to +.
    """
    cdef double a = fabs(x) - t
    return copysign(a if a > 0.0 else 0.0, x) + 0.0


cdef inline double prox_elastic_net(double x, double step, double l1,
                                    double l2) noexcept nogil:
    """prox of step * (l1 |.| + l2/2 .^2) at x.

    Without an L2 term the division by exactly 1 is skipped (the same value: a
    division's latency sits on every coordinate step's critical path)."""
    if l2 == 0.0:
        return soft_threshold(x, step * l1)
    return soft_threshold(x, step * l1) / (1.0 + step * l2)


cdef inline double penalty_value(double w, double l1, double l2) noexcept nogil:
    """l1 |w| + l2/2 w^2, without 0 * inf when a strength is 0 and |w| is huge."""
    cdef double v = l1 * fabs(w) if l1 != 0.0 else 0.0
    return v + 0.5 * l2 * w * w if l2 != 0.0 else v


cdef inline double subdiff_distance(double w, double grad, double l1,
                                    double l2) noexcept nogil:
    """Distance of ``-grad`` to the subdifferential of l1 |.| + l2/2 .^2 at w.

    Zero exactly where the coordinate is optimal (the KKT violation of the exact
    solver, the GS-s score of DP-GCD).
    """
    cdef double smooth = grad + l2 * w, d
    if w > 0.0:
        return fabs(smooth + l1)
    if w < 0.0:
        return fabs(smooth - l1)
    d = fabs(smooth) - l1
    return d if d > 0.0 else 0.0


# A column's nonzeros as (value, row) records, in CSC order: the kernels' layouts.
cdef packed struct NarrowNonzero:  # DP-CD, at most 65,536 samples
    double value
    uint16_t row


cdef packed struct WideNonzero:    # DP-CD
    double value
    int32_t row


cdef packed struct ColEntry:       # DP-GCD
    double value
    int64_t row


# ... and as rows alone where every value is 1 (binary data; DP-CD)
cdef packed struct NarrowOne:
    uint16_t row


cdef packed struct WideOne:
    int32_t row


ctypedef fused nonzero_t:
    NarrowNonzero
    WideNonzero
    ColEntry
    NarrowOne
    WideOne


cdef inline double nonzero_value(const nonzero_t* nz, int64_t q) noexcept nogil:
    """X_ij of a column's q-th record: its value, or 1 for a record of a row alone."""
    if nonzero_t is NarrowOne:
        return 1.0
    elif nonzero_t is WideOne:
        return 1.0
    else:
        return nz[q].value


cdef inline double clipped_gradient(const nonzero_t* nz, int64_t m, const double* deriv,
                                    double c) noexcept nogil:
    """sum over a column's m nonzeros of clip(X_ij loss'(z_i, y_i), c), the
    derivatives read from the cache ``deriv`` (c = INFINITY: no clipping).

    Not divided by n: the clipped coordinate gradient of DP-CD and DP-GCD, the
    value whose sensitivity (2 c) the releases are calibrated to.
    """
    cdef int64_t q
    cdef double g = 0.0
    for q in range(m):
        g += clip(nonzero_value(nz, q) * deriv[nz[q].row], c)
    return g


cdef inline double column_gradient(
    int loss,
    const double* data,
    const index_t* indices,
    Py_ssize_t start,
    Py_ssize_t end,
    const double* margin,
    const double* y,
) noexcept nogil:
    """sum over the column's nonzeros of X_ij loss'(z_i, y_i) (not divided by n)."""
    cdef Py_ssize_t k
    cdef index_t i
    cdef double g = 0.0
    for k in range(start, end):
        i = indices[k]
        g += data[k] * loss_derivative(loss, margin[i], y[i])
    return g


cdef inline void update_margin(
    const double* data,
    const index_t* indices,
    Py_ssize_t start,
    Py_ssize_t end,
    double* margin,
    double delta,
) noexcept nogil:
    """margin += delta * X[:, j] over the column's nonzeros."""
    cdef Py_ssize_t k
    for k in range(start, end):
        margin[indices[k]] += delta * data[k]
