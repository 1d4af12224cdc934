# Shared nogil primitives of every sparsedp kernel: datafits on the margin,
# separable penalties, and the two CSC column operations (gradient, margin update).
#
# A solver kernel is "datafit + penalty + selection rule": the datafit is an
# integer code dispatched inside these inline functions (the branch is
# loop-invariant, so the compiler hoists it), the penalty is always the
# separable elastic net  l1 * |w_j| + l2_j / 2 * w_j^2, which covers none, L1,
# L2 and elastic net without one kernel per combination.
#
# The column operations take raw pointers (the callers own typed memoryviews):
# no reference counting per call in the hot loops.

from libc.math cimport exp, log1p, fabs, INFINITY
from libc.stdint cimport int32_t, int64_t

ctypedef fused index_t:
    int32_t
    int64_t

cdef enum:
    SQUARED = 0
    LOGISTIC = 1


cdef inline double loss_value(int kind, double z, double y) noexcept nogil:
    """Per-sample loss at margin z."""
    cdef double t
    if kind == SQUARED:
        return (z - y) * (z - y)
    t = -y * z
    if t > 0:
        return t + log1p(exp(-t)) if t < 700.0 else t
    return log1p(exp(t)) if t > -700.0 else 0.0


cdef inline double loss_derivative(int kind, double z, double y) noexcept nogil:
    """Derivative of the per-sample loss in the margin z."""
    cdef double a, e, s, t
    if kind == SQUARED:
        return 2.0 * (z - y)
    # -y * sigmoid(-y z) from e = exp(-|y z|) <= 1 (no overflow), without a
    # branch on the sign of y z (data-dependent: mispredicted half the time).
    # Beyond |y z| = 700 the exponential would underflow (below 1e-304, through
    # libm's slow path): it is taken as 0.
    t = y * z
    a = fabs(t)
    e = exp(-a) if a < 700.0 else 0.0
    s = 1.0 / (1.0 + e)
    return -y * (e * s if t > 0 else s)


cdef inline double clip(double x, double c) noexcept nogil:
    """Clip x to [-c, c] (c = INFINITY: no clipping).

    Written as two selects that compile to minsd/maxsd (branch-free): the sign of a clipped term is data-dependent and
    a branch on it is mispredicted half the time.
    """
    cdef double t = x if x < c else c
    return t if t > -c else -c


cdef inline double soft_threshold(double x, double t) noexcept nogil:
    if x > t:
        return x - t
    if x < -t:
        return x + t
    return 0.0


cdef inline double prox_elastic_net(double x, double step, double l1,
                                    double l2) noexcept nogil:
    """prox of step * (l1 |.| + l2/2 .^2) at x."""
    return soft_threshold(x, step * l1) / (1.0 + step * l2)


cdef inline double penalty_value(double w, double l1, double l2) noexcept nogil:
    return l1 * fabs(w) + 0.5 * l2 * w * w


cdef inline double column_gradient(
    int kind,
    const double* data,
    const index_t* indices,
    Py_ssize_t start,
    Py_ssize_t end,
    const double* margin,
    const double* y,
    double clip_at,
) noexcept nogil:
    """Sum over the column's nonzeros of clip(X_ij * loss'(z_i, y_i), clip_at).

    Not divided by n. With ``clip_at = INFINITY`` it is the plain (unnormalised)
    coordinate gradient; otherwise every per-sample term is clipped, as the
    coordinate-wise clipping of DP-CD / DP-GCD requires.
    """
    cdef Py_ssize_t k
    cdef index_t i
    cdef double g = 0.0
    if clip_at == INFINITY:
        for k in range(start, end):
            i = indices[k]
            g += data[k] * loss_derivative(kind, margin[i], y[i])
    else:
        for k in range(start, end):
            i = indices[k]
            g += clip(data[k] * loss_derivative(kind, margin[i], y[i]), clip_at)
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

