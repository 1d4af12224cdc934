# DP-CD's coordinate blocks (CoordinateBlocks, _dp_cd_fast.pyx): a block's header,
# the records of its column's nonzeros, and the loops over them, one per concern,
# for each layout of the records.
from libc.stdint cimport int32_t, int64_t

from ._core cimport (
    LOGISTIC, NarrowNonzero, NarrowOne, WideNonzero, WideOne, nonzero_t, nonzero_value,
    clipped_gradient, loss_derivative, sigmoid_neg_fill,
)

cdef enum:
    CHUNK = 128     # logistic derivatives refreshed at a time (a stack buffer)


cdef packed struct Header:
    double step      # gamma_j = gamma / M_j (0: skip the coordinate)
    double clip      # per-sample clipping threshold C_j (inf: none)
    double theta     # the inner iterate theta_j
    double wsum      # lazy average: sum of theta_j over the iterates before stamp
    int64_t stamp    # lazy average: first iterate index at which theta_j holds
    int64_t nnz      # number of nonzeros following the header


cdef inline void move_margin(int loss, const nonzero_t* nz, int64_t m, double delta,
                             double* margin, double* deriv, const double* y) noexcept nogil:
    """margin += delta X_j and the derivative cache after it, over the column's nonzeros.

    Logistic: ``CHUNK`` nonzeros at a time, the new ``y_i z_i`` gathered into a
    contiguous buffer (padded with zeros to a multiple of four), their sigmoids
    four lanes at a time (``sigmoid_neg_fill``), then scattered as ``-y_i
    sigmoid(-y_i z_i)``.
    """
    cdef int64_t q, start, count
    cdef Py_ssize_t row
    cdef double buf[CHUNK]
    if loss != LOGISTIC:
        for q in range(m):
            row = nz[q].row
            margin[row] += delta * nonzero_value(nz, q)
            deriv[row] = loss_derivative(loss, margin[row], y[row])
        return
    start = 0
    while start < m:
        count = min(m - start, <int64_t> CHUNK)
        for q in range(count):
            row = nz[start + q].row
            margin[row] += delta * nonzero_value(nz, start + q)
            buf[q] = y[row] * margin[row]
        for q in range(count, (count + 3) & ~3):  # the last lanes of four
            buf[q] = 0.0
        sigmoid_neg_fill(buf, buf, count)
        for q in range(count):
            row = nz[start + q].row
            deriv[row] = -y[row] * buf[q]
        start += count


cdef inline void add_column(const nonzero_t* nz, int64_t m, double w,
                            double* z) noexcept nogil:
    """z += w X_j over the column's nonzeros, each as ``z_i += x_ij * w`` (scipy's
    CSC product's operation)."""
    cdef int64_t q
    for q in range(m):
        z[nz[q].row] += nonzero_value(nz, q) * w


cdef inline void pack_column(nonzero_t* out, const double* values, const int32_t* rows,
                             int64_t m) noexcept nogil:
    """A column's m nonzeros as (value, row) pairs (rows narrowed to the record's type;
    rows alone in a layout of ones)."""
    cdef int64_t q
    for q in range(m):
        if nonzero_t is not NarrowOne and nonzero_t is not WideOne:
            out[q].value = values[q]
        out[q].row = rows[q]


cdef inline void pack_constant(nonzero_t* out, double value, int64_t m) noexcept nogil:
    """The column ``value * 1`` of m rows as (value, row) pairs (rows alone in a
    layout of ones, where value is 1)."""
    cdef int64_t q
    for q in range(m):
        if nonzero_t is not NarrowOne and nonzero_t is not WideOne:
            out[q].value = value
        out[q].row = q


cdef enum:  # the records of a block's nonzeros
    NARROW_VALUES = 0  # NarrowNonzero: (value, uint16 row)
    WIDE_VALUES = 1    # WideNonzero: (value, int32 row)
    NARROW_ONES = 2    # NarrowOne: uint16 row, the value 1
    WIDE_ONES = 3      # WideOne: int32 row, the value 1


cdef inline double block_gradient(int layout, const Header* h,
                                  const double* deriv) noexcept nogil:
    """clipped_gradient over block h's nonzeros."""
    if layout == NARROW_ONES:
        return clipped_gradient(<const NarrowOne*> (h + 1), h.nnz, deriv, h.clip)
    if layout == NARROW_VALUES:
        return clipped_gradient(<const NarrowNonzero*> (h + 1), h.nnz, deriv, h.clip)
    if layout == WIDE_ONES:
        return clipped_gradient(<const WideOne*> (h + 1), h.nnz, deriv, h.clip)
    return clipped_gradient(<const WideNonzero*> (h + 1), h.nnz, deriv, h.clip)


cdef inline void block_move(int layout, int loss, const Header* h, double delta,
                            double* margin, double* deriv, const double* y) noexcept nogil:
    """move_margin over block h's nonzeros."""
    if layout == NARROW_ONES:
        move_margin(loss, <const NarrowOne*> (h + 1), h.nnz, delta, margin, deriv, y)
    elif layout == NARROW_VALUES:
        move_margin(loss, <const NarrowNonzero*> (h + 1), h.nnz, delta, margin, deriv, y)
    elif layout == WIDE_ONES:
        move_margin(loss, <const WideOne*> (h + 1), h.nnz, delta, margin, deriv, y)
    else:
        move_margin(loss, <const WideNonzero*> (h + 1), h.nnz, delta, margin, deriv, y)


cdef inline void block_add(int layout, const Header* h, double w, double* z) noexcept nogil:
    """add_column over block h's nonzeros."""
    if layout == NARROW_ONES:
        add_column(<const NarrowOne*> (h + 1), h.nnz, w, z)
    elif layout == NARROW_VALUES:
        add_column(<const NarrowNonzero*> (h + 1), h.nnz, w, z)
    elif layout == WIDE_ONES:
        add_column(<const WideOne*> (h + 1), h.nnz, w, z)
    else:
        add_column(<const WideNonzero*> (h + 1), h.nnz, w, z)


cdef inline void block_pack(int layout, Header* h, const double* values,
                            const int32_t* rows) noexcept nogil:
    """pack_column: block h's h.nnz nonzeros from a CSC column's values and rows."""
    if layout == NARROW_ONES:
        pack_column(<NarrowOne*> (h + 1), values, rows, h.nnz)
    elif layout == NARROW_VALUES:
        pack_column(<NarrowNonzero*> (h + 1), values, rows, h.nnz)
    elif layout == WIDE_ONES:
        pack_column(<WideOne*> (h + 1), values, rows, h.nnz)
    else:
        pack_column(<WideNonzero*> (h + 1), values, rows, h.nnz)


cdef inline void block_pack_constant(int layout, Header* h, double value) noexcept nogil:
    """pack_constant: block h's h.nnz rows 0, 1, ... of the value ``value``."""
    if layout == NARROW_ONES:
        pack_constant(<NarrowOne*> (h + 1), value, h.nnz)
    elif layout == NARROW_VALUES:
        pack_constant(<NarrowNonzero*> (h + 1), value, h.nnz)
    elif layout == WIDE_ONES:
        pack_constant(<WideOne*> (h + 1), value, h.nnz)
    else:
        pack_constant(<WideNonzero*> (h + 1), value, h.nnz)


cdef inline int64_t record_size(int layout) noexcept nogil:
    if layout == NARROW_ONES:
        return sizeof(NarrowOne)
    if layout == NARROW_VALUES:
        return sizeof(NarrowNonzero)
    if layout == WIDE_ONES:
        return sizeof(WideOne)
    return sizeof(WideNonzero)
