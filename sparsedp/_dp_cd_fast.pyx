"""DP-CD kernel: noisy proximal randomized coordinate steps on CSC, lazy averaging.

One step (Algorithm 1 of Mangold et al., ICML 2022, lines 4-7): draw j
uniformly, compute the clipped coordinate gradient
``g_j = (1/n) sum_i clip(X_ij loss'(z_i, y_i), C_j)`` over column j's nonzeros,
add ``N(0, sigma_j^2)`` and take ``theta_j <- prox_{gamma_j psi_j}(theta_j -
gamma_j (g_j + eta_j))``.  The margin ``z = X theta`` and the derivative cache
``d_i = loss'(z_i, y_i)`` are refreshed over the same nonzeros, so a step costs
O(nnz of column j) and at most nnz(X_j) exponentials (none if theta_j stays).

Periodic averaging (line 9) is lazy: ``wsum[j]`` holds the sum of theta_j over
the iterates already accounted and ``stamp[j]`` the first iterate index at which
the current theta_j holds, so a step is O(1) in p; the average of iterates
1..k is ``(wsum + theta * (k + 1 - stamp)) / k``.
"""
from libc.stdint cimport int64_t
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_standard_normal, random_bounded_uint64,
)

from ._core cimport (
    index_t, column_gradient_cached, update_margin_cached, prox_elastic_net,
)
from ._random cimport generator_bitgen


def dp_cd_steps(
    int kind,
    const double[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    const double[::1] y,
    double[::1] theta,
    double[::1] margin,
    double[::1] deriv,
    double[::1] wsum,
    int64_t[::1] stamp,
    bint average,
    Py_ssize_t k_start,
    Py_ssize_t n_steps,
    const double[::1] step_sizes,
    const double[::1] clip_thresholds,
    const double[::1] noise_scales,
    double l1,
    double l2,
    object generator,
):
    """Run steps ``k_start .. k_start + n_steps - 1`` of one DP-CD inner loop in place.

    Parameters
    ----------
    kind : int
        Datafit code (0 squared, 1 logistic).
    data, indices, indptr : CSC arrays of X (canonical).
    y : labels.
    theta, margin, deriv : the inner iterate, ``X @ theta`` and ``loss'(margin, y)``.
    wsum, stamp : lazy-average state (see the module docstring); untouched if not
        ``average``.
    average : bool
        Maintain the running sum of the iterates.
    k_start, n_steps : step range within the inner loop (0-based).
    step_sizes : gamma_j = gamma / M_j (0 skips coordinate j: empty or M_j = 0).
    clip_thresholds : per-sample clipping C_j (``inf``: no clipping).
    noise_scales : sigma_j, standard deviation of the noise added to the
        (1/n-normalised) coordinate gradient (0: no noise, nothing drawn).
    l1, l2 : elastic-net penalty strengths.
    generator : numpy.random.Generator
        Source of the coordinate indices and of the noise.

    Returns
    -------
    n_moves : int
        Number of steps that changed theta.
    """
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef Py_ssize_t p = theta.shape[0]
    cdef double n = margin.shape[0]
    cdef Py_ssize_t k, j, n_moves = 0
    cdef double grad, old, new
    if p == 0 or n_steps <= 0:
        return 0
    with generator.bit_generator.lock, nogil:
        for k in range(k_start, k_start + n_steps):
            j = <Py_ssize_t> random_bounded_uint64(rng, 0, p - 1, 0, 0)
            grad = column_gradient_cached(
                &data[0], &indices[0], indptr[j], indptr[j + 1], &deriv[0],
                clip_thresholds[j]) / n
            if noise_scales[j] > 0.0:
                grad += noise_scales[j] * random_standard_normal(rng)
            if step_sizes[j] == 0.0:
                continue
            old = theta[j]
            new = prox_elastic_net(old - step_sizes[j] * grad, step_sizes[j], l1, l2)
            if new == old:
                continue
            update_margin_cached(kind, &data[0], &indices[0], indptr[j],
                                 indptr[j + 1], &margin[0], &deriv[0], &y[0],
                                 new - old)
            if average:
                # old held for the iterates stamp[j] .. k; new from k + 1 on
                wsum[j] += old * (k + 1 - stamp[j])
                stamp[j] = k + 1
            theta[j] = new
            n_moves += 1
    return n_moves
