"""Non-private proximal coordinate descent on CSC (the exact reference solver).

One concern per kernel: :func:`cd_epochs` runs cyclic proximal coordinate
epochs, keeping the margin ``z = X @ w`` up to date over each column's
nonzeros; :func:`kkt_violation` measures optimality.  Datafit and penalty come
from ``_core.pxd``; ``loss`` is the datafit's kernel id
(:func:`sparsedp._kernels.kernel_id`).
"""
from libc.math cimport fabs

from ._core cimport (
    SQUARED, LOGISTIC, ELASTIC_NET, SQUARED_HINGE, HINGE, check_loss, index_t, column_gradient,
    update_margin,
    prox_elastic_net, subdiff_distance, SIGNAL_CHECK_WORK, check_signals,
)


cdef int check_columns(Py_ssize_t nnz, Py_ssize_t n_indices, const index_t[::1] indptr,
                       Py_ssize_t p, Py_ssize_t n_y, Py_ssize_t n_margin) except -1:
    """The kernels' arrays agree: CSC of p columns, one label and one margin per row."""
    if not (indptr.shape[0] == p + 1 and n_indices == nnz and indptr[0] == 0
            and indptr[p] <= nnz and n_y == n_margin):
        raise ValueError("inconsistent array shapes: CSC (data, indices, indptr) of p "
                         "columns, and one label and one margin per row")
    return 0


cdef enum:
    COLUMN_CHUNK = 4096  # columns between two counts of the work done


# The C enum's values, for the test that they are sparsedp._kernels.KernelId's.
KERNEL_IDS = {"SQUARED": SQUARED, "LOGISTIC": LOGISTIC, "ELASTIC_NET": ELASTIC_NET,
              "SQUARED_HINGE": SQUARED_HINGE, "HINGE": HINGE}


def cd_epochs(
    int loss,
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    const double[::1] y,
    double[::1] w,
    double[::1] margin,
    const double[::1] lipschitz,
    double l1,
    double l2,
    Py_ssize_t n_epochs,
):
    """Run ``n_epochs`` cyclic proximal CD epochs in place on ``w`` and ``margin``.

    Coordinate j takes the step ``w_j <- prox_{pen / M_j}(w_j - grad_j / M_j)``
    with ``grad_j = (1/n) sum_i X_ij loss'(z_i, y_i)``; for the squared loss and
    ``M_j = (2/n) ||X_j||^2`` this is exact coordinate minimisation.  Columns
    with ``M_j == 0`` (empty) are skipped.

    Checks for signals every few milliseconds of work: Ctrl-C raises
    KeyboardInterrupt, leaving ``w`` and ``margin`` consistent (at a coordinate
    boundary).

    Returns
    -------
    max_change : float
        The largest ``|w_j^new - w_j^old|`` of the last epoch.
    """
    cdef Py_ssize_t p = w.shape[0]
    cdef double n = margin.shape[0]
    cdef Py_ssize_t epoch, j, start, end, work = 0
    cdef double grad, step, w_old, w_new, max_change = 0.0
    check_loss(loss)
    check_columns(data.shape[0], indices.shape[0], indptr, p, y.shape[0], margin.shape[0])
    if lipschitz.shape[0] != p:
        raise ValueError("inconsistent array shapes: one smoothness constant per column")
    with nogil:
        for epoch in range(n_epochs):
            max_change = 0.0
            start = 0
            while start < p:  # signals checked between chunks of columns
                end = min(start + COLUMN_CHUNK, p)
                for j in range(start, end):
                    if lipschitz[j] == 0.0:
                        continue
                    step = 1.0 / lipschitz[j]
                    w_old = w[j]
                    grad = column_gradient(
                        loss, &data[0], &indices[0], indptr[j], indptr[j + 1],
                        &margin[0], &y[0]) / n
                    w_new = prox_elastic_net(w_old - step * grad, step, l1, l2)
                    if w_new != w_old:
                        update_margin(&data[0], &indices[0], indptr[j],
                                      indptr[j + 1], &margin[0], w_new - w_old)
                        w[j] = w_new
                        if fabs(w_new - w_old) > max_change:
                            max_change = fabs(w_new - w_old)
                work += end - start + indptr[end] - indptr[start]
                if work >= SIGNAL_CHECK_WORK:
                    work = 0
                    check_signals()
                start = end
    return max_change


def kkt_violation(int loss, const double[::1] data, const index_t[::1] indices,
                  const index_t[::1] indptr, const double[::1] y, const double[::1] w,
                  const double[::1] margin, double l1, double l2):
    """Largest distance of ``-grad_j`` to the penalty's subdifferential at ``w_j``.

    Zero exactly at a minimiser of F; one pass over the nonzeros.
    """
    cdef Py_ssize_t p = w.shape[0]
    cdef double n = margin.shape[0]
    cdef Py_ssize_t j
    cdef double grad, violation, worst = 0.0
    check_loss(loss)
    check_columns(data.shape[0], indices.shape[0], indptr, p, y.shape[0], margin.shape[0])
    with nogil:
        for j in range(p):
            grad = 0.0  # an empty column's (and no pointer into an empty X)
            if indptr[j + 1] > indptr[j]:
                grad = column_gradient(
                    loss, &data[0], &indices[0], indptr[j], indptr[j + 1],
                    &margin[0], &y[0]) / n
            violation = subdiff_distance(w[j], grad, l1, l2)
            if violation > worst:
                worst = violation
    return worst
