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
    static inline uint64_t sparsedp_bits(double x) { uint64_t b; memcpy(&b, &x, 8); return b; }
    static inline double sparsedp_double(uint64_t b) { double x; memcpy(&x, &b, 8); return x; }
    /* out[q] = 1 / (1 + exp(t[q])), the logistic sigmoid at -t[q].  One loop the
       compiler vectorises (with -fno-trapping-math): e = exp(-|t|) (taken as 0
       from |t| = 700 on, and for NaN, as loss_derivative does), by Cody-Waite reduction
       -|t| = k ln2 + r, |r| <= ln2 / 2, the degree-13 Taylor polynomial in r
       (truncation below 1e-17; evaluated as 1 + (r + r^2 P(r)), Estrin's scheme
       for P) and 2^k written into the exponent bits; then
       e / (1 + e) for t > 0, 1 / (1 + e) otherwise, as loss_derivative. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    /* an AVX2 copy chosen at load time where the CPU has it (4 lanes instead of 2);
       no FMA contraction under -std=c11, so both copies round alike and return
       the same bits */
    __attribute__((target_clones("avx2", "default"), unused))
    #endif
    static void sparsedp_sigmoid_neg_fill(const double* t, double* out, int64_t m) {
        const double log2e = 1.4426950408889634, shifter = 6755399441055744.0; /* 1.5 * 2^52 */
        const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
        for (int64_t q = 0; q < m; q++) {
            double tq = t[q];
            double abs_t = __builtin_fabs(tq);
            double a = abs_t < 700.0 ? abs_t : 700.0;  /* no overflow below */
            double ks = -a * log2e + shifter;   /* k = round(-a / ln2) in the low bits */
            double kd = ks - shifter;
            double r = (-a - kd * ln2_hi) - kd * ln2_lo;
            /* exp(r) = 1 + (r + r^2 P(r)), P of degree 11 by Estrin's scheme: a
               dependency chain of 10 operations instead of Horner's 26, so that the
               short columns of a coordinate step (a few nonzeros) do not wait on it */
            double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
            double a0 = 1.0 / 2.0 + r * (1.0 / 6.0);
            double a1 = 1.0 / 24.0 + r * (1.0 / 120.0);
            double a2 = 1.0 / 720.0 + r * (1.0 / 5040.0);
            double a3 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
            double a4 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
            double a5 = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
            double b0 = a0 + a1 * r2, b1 = a2 + a3 * r2, b2 = a4 + a5 * r2;
            double poly = (b0 + b1 * r4) + b2 * r8;
            double p = 1.0 + (r + r2 * poly);
            double e = p * sparsedp_double((sparsedp_bits(ks) << 52) + ((uint64_t)1023 << 52));
            e = abs_t < 700.0 ? e : 0.0;
            double inv = 1.0 / (1.0 + e);
            double pos = e * inv;
            out[q] = tq > 0.0 ? pos : inv;
        }
    }
    """
    void sigmoid_neg_fill "sparsedp_sigmoid_neg_fill"(const double* t, double* out,
                                                      int64_t m) noexcept nogil


cdef extern from *:
    """
    #define SPARSEDP_PREFETCH(addr) __builtin_prefetch((const void*)(addr))
    """
    # a hint to load the cache line of addr (no effect on results)
    void prefetch "SPARSEDP_PREFETCH"(const void* addr) noexcept nogil


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
    """prox of step * (l1 |.| + l2/2 .^2) at x."""
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


ctypedef fused nonzero_t:
    NarrowNonzero
    WideNonzero
    ColEntry


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
        g += clip(nz[q].value * deriv[nz[q].row], c)
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
