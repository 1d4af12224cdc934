"""Rényi differential privacy: curves of the mechanisms, composition and conversion.

A mechanism's RDP curve is its Rényi divergence bound at each order of a grid
(:data:`DEFAULT_ORDERS`); curves add under composition and convert to
(epsilon, delta) by the improved conversion (:func:`rdp_to_dp`), or its delta
form :func:`rdp_log_delta`.

Every ``rdp_*`` curve takes ``orders`` (array-like of Rényi orders, all > 1;
default :data:`DEFAULT_ORDERS`) and returns an ndarray: the RDP epsilon at
each order, ``inf`` everywhere for a noise multiplier of 0.
"""
import math

import numpy as np

from ._checks import (check_calibration, check_count, check_delta, check_noise, check_nonneg,
                      check_orders, check_sampling_rate)
from ._root import bracket_root
from ._subsampled import sampled_gaussian_table, wor_table

__all__ = ["DEFAULT_ORDERS", "calibrate_gaussian_rdp", "calibrate_sampled_gaussian",
           "rdp_bounded_range", "rdp_gaussian", "rdp_laplace", "rdp_log_delta", "rdp_pure",
           "rdp_sampled_gaussian", "rdp_sampled_gaussian_wor", "rdp_to_dp",
           "sampled_gaussian_epsilon"]

# Fractional orders between 1 and 11 (0.1 apart, plus a few close to 1), every integer
# order up to 64, then a geometric-ish tail up to 2048. A superset of the default grid of
# Google's dp-accounting, hence never looser than it on the same RDP curve.
_FRAC_ORDERS = np.array(
    [1.02, 1.05] + [1 + x / 10.0 for x in range(1, 100) if x % 10 != 0], dtype=float
)
_INT_ORDERS = np.array(
    list(range(2, 65))
    + [72, 80, 88, 96, 112, 128, 144, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768,
       1024, 1536, 2048],
    dtype=float,
)
#: Default grid of Rényi orders (all > 1) used by the RDP functions.
DEFAULT_ORDERS = np.sort(np.concatenate([_FRAC_ORDERS, _INT_ORDERS]))
DEFAULT_ORDERS.setflags(write=False)


def _orders(orders):
    """The orders of a curve: :data:`DEFAULT_ORDERS` or checked user orders."""
    return DEFAULT_ORDERS if orders is None else check_orders(orders)


def _infinite(orders):
    """The curve of a mechanism without noise."""
    return np.full(orders.shape, np.inf)



def rdp_gaussian(noise_multiplier, orders=None):
    """RDP of the Gaussian mechanism: ``alpha / (2 z^2)`` (Mironov 2017, Prop. 7).

    Valid for the neighbouring relation under which the L2 sensitivity was computed.

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / Delta_2 >= 0`` (``0`` gives ``inf``).
    """
    z = check_noise(noise_multiplier)
    orders = _orders(orders)
    if z * z == 0.0:
        return _infinite(orders)
    return orders / (2.0 * z * z)


def rdp_laplace(noise_multiplier, orders=None):
    """RDP of the Laplace mechanism (Mironov 2017, Prop. 6; exact).

    With ``b = scale / Delta_1`` (L1 sensitivity)::

        eps(alpha) = 1/(alpha-1) log( alpha/(2alpha-1) e^{(alpha-1)/b}
                                      + (alpha-1)/(2alpha-1) e^{-alpha/b} ),

    evaluated as ``1/b + log1p((alpha-1)/(2alpha-1) expm1(-(2alpha-1)/b)) / (alpha-1)``.
    It is at most the pure-DP value ``1/b``.

    Parameters
    ----------
    noise_multiplier : float
        ``b = scale / Delta_1 >= 0``.
    """
    b = check_noise(noise_multiplier)
    orders = _orders(orders)
    if b == 0.0:
        return _infinite(orders)
    eps = 1.0 / b
    am1 = orders - 1.0
    c = np.expm1(-(2.0 * orders - 1.0) * eps) / (2.0 * orders - 1.0)
    x = am1 * c  # in (-1/2, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(x == 0.0, 1.0, np.log1p(x) / np.where(x == 0.0, 1.0, x))
    out = eps + c * ratio
    return np.clip(out, 0.0, eps)


def _rdp_pure_rr(eps0, orders):
    # Randomized response: 1/(a-1) [logaddexp(a e, (1-a) e) - log(1 + e^e)].
    a = orders
    num = np.logaddexp(a * eps0, (1.0 - a) * eps0) - np.logaddexp(0.0, eps0)
    return num / (a - 1.0)


def rdp_pure(epsilon0, orders=None):
    """RDP of an arbitrary epsilon0-DP mechanism (tight).

    Every epsilon0-DP pair of output distributions is a post-processing of binary
    randomized response with parameter epsilon0 (Kairouz, Oh and Viswanathan 2015), so by
    the data-processing inequality::

        eps(alpha) <= 1/(alpha-1) log( (e^{alpha eps0} + e^{(1-alpha) eps0}) / (1 + e^{eps0}) ),

    which is never larger than ``min(eps0, alpha eps0^2 / 2)`` (Mironov 2017; Bun and
    Steinke 2016); the minimum of the three is returned.

    Parameters
    ----------
    epsilon0 : float
        Pure DP parameter, ``>= 0``.
    """
    eps0 = check_nonneg(epsilon0, "epsilon0")
    orders = _orders(orders)
    if math.isinf(eps0):
        return _infinite(orders)
    rr = _rdp_pure_rr(eps0, orders)
    return np.maximum(np.minimum(np.minimum(rr, eps0), 0.5 * orders * eps0 * eps0), 0.0)


def rdp_bounded_range(epsilon0, orders=None):
    """RDP of an epsilon0-bounded-range mechanism (e.g. the exponential mechanism).

    An epsilon0-bounded-range mechanism (the exponential mechanism with privacy parameter
    epsilon0, i.e. utility sensitivity Delta and temperature ``2 Delta / epsilon0``,
    or report-noisy-max with Gumbel noise) is ``epsilon0^2 / 8``-zCDP (Cesar and Rogers
    2021), hence has RDP ``alpha epsilon0^2 / 8``; it is also epsilon0-DP, so the
    :func:`rdp_pure` bound applies too and the minimum is returned. **Only** use this for
    mechanisms proven bounded-range (report-noisy-max with Laplace noise is not known to
    be; account it with :func:`rdp_pure`).

    Parameters
    ----------
    epsilon0 : float
        Bounded-range (and pure DP) parameter, ``>= 0``.
    """
    pure = rdp_pure(epsilon0, orders)
    orders = _orders(orders)
    eps0 = float(epsilon0)
    return np.minimum(pure, orders * eps0 * eps0 / 8.0)


# --------------------------------------------------------------------------------------
# Subsampled Gaussians (their tables of A_alpha: _subsampled.py)
# --------------------------------------------------------------------------------------
def _orders_key(orders):
    """The orders as a tuple: the key of the cached tables."""
    return tuple(float(a) for a in orders)


_DEFAULT_KEY = _orders_key(DEFAULT_ORDERS)


def rdp_sampled_gaussian(noise_multiplier, sampling_rate, orders=None):
    """RDP of the Poisson-subsampled Gaussian mechanism (add/remove-one neighbours).

    Each record is included independently with probability ``q = sampling_rate`` and the
    sum over the sample (of a quantity with L2 norm at most ``Delta``) is released with
    N(0, (z Delta)^2) noise. Rényi DP is computed as in Mironov, Talwar and Zhang (2019),
    "Rényi Differential Privacy of the Sampled Gaussian Mechanism": at integer orders by
    the finite binomial expansion in log space, at fractional orders by the two-sided
    series (absolute values summed, plus a proven bound of the terms left out), each
    rounded up by a bound of its float error: an upper bound. The result is capped by
    the non-subsampled value ``alpha / (2 z^2)``.

    The neighbouring relation is **add/remove-one**. (A replace-one neighbour is an
    add followed by a remove; use :func:`rdp_sampled_gaussian_wor` for fixed-size
    batches under replace-one.)

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / Delta >= 0``.
    sampling_rate : float
        Poisson sampling probability ``q`` in (0, 1].

    ``inf`` at the fractional orders whose series did not converge.
    """
    z = check_noise(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    key = _DEFAULT_KEY if orders is None else _orders_key(check_orders(orders))
    return sampled_gaussian_table(q, key).rdp(z)


def rdp_sampled_gaussian_wor(noise_multiplier, sampling_rate, orders=None):
    """RDP of the Gaussian mechanism on a fixed-size subsample without replacement.

    A batch of ``m = q n`` records is drawn uniformly without replacement (``n`` public)
    and the neighbouring relation is **replace-one**; ``z = sigma / Delta`` where
    ``Delta`` is the replace-one L2 sensitivity of the non-subsampled function (the
    convention of dp-accounting's ``SampledWithoutReplacementDpEvent``).

    Wang, Balle and Kasiviswanathan (2019) bound ``A_alpha = exp((alpha - 1) eps'(alpha))``
    at integer orders term by term::

        A <= 1 + sum_{j=2}^{alpha} q^j C(alpha, j) B_j,
        B_j = min(4 sqrt(M_{2 floor(j/2)} M_{2 ceil(j/2)}), 2 e^{(j-1) eps(j)}),

    with ``eps(j) = j / (2 z^2)`` and ``M_k = sum_i (-1)^(k-i) C(k,i) e^{(i-1) eps(i)}``
    the k-th forward difference, i.e. ``E[(L - 1)^k]`` for the Gaussian likelihood ratio
    ``L`` (their Theorem 27; ``B_2 = min(4 (e^{eps(2)} - 1), 2 e^{eps(2)})``). For
    ``j > 256`` only the second argument (their Theorem 9) is used (dp-accounting uses
    Theorem 9 for every term at orders above 256: this bound is tighter there). Only even
    ``M_k`` are needed; they are computed in log space by the forward difference when its
    rounding error is provably below ``1e-13`` relative, and otherwise (large ``z``, where
    the alternating sum cancels) as the integral of the positive function
    ``phi(x) |expm1(x/z - 1/(2z^2))|^k`` by the trapezoid rule.

    Fractional orders interpolate ``log A`` linearly between neighbouring integers (valid
    since ``log A_alpha`` is convex in alpha; WBK19 Cor. 10). The result is capped by the
    non-subsampled value ``alpha / (2 z^2)``, then by the bound at every larger order of
    ``orders`` (a Rényi divergence is non-decreasing in the order).

    dp-accounting's ``_compute_rdp_sample_wor_gaussian`` evaluates the same bound at
    orders up to 256, but by repeated differences that cancel at large ``z`` (at
    ``z = 28.6`` its ``log M_20`` is 21 too large and its ``log M_10`` 0.008 too small);
    where its differences are accurate the two agree to 1e-9 (tests/test_wor.py).

    Parameters
    ----------
    noise_multiplier : float
        ``z >= 0``.
    sampling_rate : float
        ``q = m / n`` in (0, 1].
    """
    z = check_noise(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    orders = _orders(orders)
    if z * z == 0.0:
        return _infinite(orders)
    if math.isinf(z * z):  # alpha / (2 z^2) is 0 in floating point
        return np.zeros(orders.shape)
    base = orders / (2.0 * z * z)
    if q == 1.0:
        return base
    lo = np.floor(orders).astype(np.int64)
    hi = np.ceil(orders).astype(np.int64)
    ints = np.unique(np.concatenate([lo, hi]))
    ints = ints[ints >= 2]
    log_a = np.zeros(int(ints.max()) + 1)
    log_a[ints] = wor_table(q, tuple(int(a) for a in ints)).log_a(z)
    t = orders - lo
    out = ((1.0 - t) * log_a[lo] + t * log_a[hi]) / (orders - 1.0)
    out = np.minimum(out, base)
    order = np.argsort(orders)
    out[order] = np.minimum.accumulate(out[order][::-1])[::-1]
    return np.clip(out, 0.0, None)


# --------------------------------------------------------------------------------------
# RDP -> (epsilon, delta)
# --------------------------------------------------------------------------------------
def conversion_terms(orders, log_delta):
    """``log((a-1)/a) - (log delta + log a)/(a-1)``: epsilon of (a, r)-RDP at delta is
    ``r`` plus this (the improved conversion of :func:`rdp_to_dp`)."""
    return np.log1p(-1.0 / orders) - (log_delta + np.log(orders)) / (orders - 1.0)


def rdp_to_dp(orders, rdp, delta, *, return_order=False):
    """Convert an RDP curve to (epsilon, delta)-DP with the improved conversion.

    A mechanism that is (alpha, r)-RDP is (epsilon, delta)-DP with
    ``epsilon = r + log((alpha-1)/alpha) - (log delta + log alpha) / (alpha-1)``
    (Canonne, Kamath and Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21), which is
    always at least as good as Mironov's ``r + log(1/delta)/(alpha-1)``. The minimum over
    orders is returned. If ``r`` is so small that ``sqrt(1 - exp(-r)) <= delta`` (a bound
    on the total variation distance via KL <= r), epsilon is 0.

    Parameters
    ----------
    orders : array-like of float
        Rényi orders (> 1).
    rdp : array-like of float
        RDP epsilon at each order (``inf`` allowed).
    delta : float
        Target delta in (0, 1).
    return_order : bool, default=False
        Also return the optimal order.

    Returns
    -------
    epsilon : float
        Smallest epsilon over the orders (>= 0).
    order : float
        Only if ``return_order``: the optimal order.
    """
    orders = check_orders(orders)
    rdp = np.asarray(rdp, dtype=float)
    if rdp.shape != orders.shape:
        raise ValueError("orders and rdp must have the same shape")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("rdp values must be >= 0 and not NaN")
    delta = check_delta(delta)
    eps = _rdp_to_dp_array(orders, rdp, math.log(delta), delta)
    idx = int(np.argmin(eps))
    val = max(float(eps[idx]), 0.0)
    return (val, float(orders[idx])) if return_order else val


def _rdp_to_dp_array(orders, rdp, log_delta, delta):
    with np.errstate(invalid="ignore", over="ignore"):
        eps = rdp + conversion_terms(orders, log_delta)
        eps = np.where(np.isnan(eps), np.inf, eps)
        tv_ok = delta * delta + np.expm1(-rdp) >= 0
    return np.where(tv_ok, 0.0, eps)


def rdp_log_delta(orders, rdp, epsilon):
    """``log delta`` at ``epsilon`` of an RDP curve: the delta form of :func:`rdp_to_dp`.

    Solving the improved conversion for delta at each order,
    ``log delta = (alpha - 1) (r - epsilon + log((alpha-1)/alpha)) - log alpha``;
    and ``delta <= sqrt(1 - exp(-r))`` at any epsilon (total variation, by
    Bretagnolle-Huber, with KL ``<= r``).  The minimum over the orders is a
    valid delta (orders and curve are trusted: no checks).
    """
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        am1 = orders - 1.0
        conv = am1 * (rdp - epsilon + np.log1p(-1.0 / orders)) - np.log(orders)
        tv = 0.5 * np.log(-np.expm1(-rdp))
        best = np.fmin(conv, tv)
    best = np.where(np.isnan(best), 0.0, best)
    return min(float(best.min()), 0.0)


# --------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian: epsilon and calibration
# --------------------------------------------------------------------------------------
def _sg_eps(table, z, steps, log_delta, delta, conv):
    rdp = steps * table.rdp(z)
    with np.errstate(invalid="ignore", over="ignore"):
        eps = rdp + conv
        eps = np.where(np.isnan(eps), np.inf, eps)
        tv_ok = delta * delta + np.expm1(-rdp) >= 0
    eps = np.where(tv_ok, 0.0, eps)
    return max(float(eps.min()), 0.0)


def sampled_gaussian_epsilon(noise_multiplier, sampling_rate, steps, delta, *, orders=None):
    """Epsilon of ``steps`` Poisson-subsampled Gaussian mechanisms (RDP accountant).

    Composes :func:`rdp_sampled_gaussian` over ``steps`` and converts with
    :func:`rdp_to_dp`. The neighbouring relation is **add/remove-one**.

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / Delta >= 0`` (``0`` gives ``inf``).
    sampling_rate : float
        Poisson sampling probability in (0, 1]. ``1`` is the plain Gaussian mechanism (for
        which :func:`gaussian_epsilon` is tighter).
    steps : int
        Number of adaptive releases, ``>= 1``.
    delta : float
        Target delta in (0, 1).
    orders : array-like of float, optional
        Rényi orders. Defaults to :data:`DEFAULT_ORDERS`.

    Returns
    -------
    epsilon : float

    Raises
    ------
    ValueError
        If an argument is out of range or NaN.
    """
    z = check_noise(noise_multiplier)
    q = check_sampling_rate(sampling_rate)
    steps = check_count(steps)
    delta = check_delta(delta)
    if z == 0.0:
        return math.inf
    key = _DEFAULT_KEY if orders is None else _orders_key(check_orders(orders))
    table = sampled_gaussian_table(q, key)
    log_delta = math.log(delta)
    conv = conversion_terms(table.orders, log_delta)
    return _sg_eps(table, z, steps, log_delta, delta, conv)


def calibrate_sampled_gaussian(epsilon, delta, sampling_rate, steps, *, orders=None,
                               rtol=1e-9):
    """Smallest noise multiplier for ``steps`` Poisson-subsampled Gaussian releases.

    The boundary (:func:`~sparsedp.privacy._root.bracket_root`, safe side) of the RDP epsilon of
    :func:`sampled_gaussian_epsilon`, whose q-dependent tables are precomputed and cached.
    Neighbouring relation: **add/remove-one**.

    Parameters
    ----------
    epsilon : float
        Target epsilon ``> 0``; ``inf`` returns ``0.0`` (no noise).
    delta : float
        Target delta in (0, 1).
    sampling_rate : float
        Poisson sampling probability in (0, 1].
    steps : int
        Number of adaptive releases, ``>= 1``.
    orders : array-like of float, optional
        Rényi orders. Defaults to :data:`DEFAULT_ORDERS`.
    rtol : float, default=1e-9
        Relative tolerance on the noise multiplier (the result is always safe).

    Returns
    -------
    noise_multiplier : float
        Plugged back into :func:`sampled_gaussian_epsilon` it gives an epsilon
        ``<= epsilon``.
    """
    epsilon, delta, steps = check_calibration(epsilon, delta, steps)
    q = check_sampling_rate(sampling_rate)
    if math.isinf(epsilon):
        return 0.0
    all_orders = _orders(orders)
    log_delta = math.log(delta)
    # Moments-accountant scaling z ~ q sqrt(2 T log(1/delta)) / eps as a guess.
    z0 = max(q * math.sqrt(2.0 * steps * math.log(1.0 / delta)) / epsilon, 0.5)
    # Solve on the orders near the best one at the guess (any orders give a valid
    # bound); if a little less noise also misses epsilon over all the orders, the
    # answer is the tightest; else solve again on all of them.
    table = sampled_gaussian_table(q, _orders_key(all_orders))
    conv = conversion_terms(all_orders, log_delta)
    z = z0
    integer = all_orders[all_orders == np.round(all_orders)]
    if integer.size:  # a first answer on the integer orders (exact, cheap terms)
        int_table = sampled_gaussian_table(q, _orders_key(integer))
        int_conv = conversion_terms(integer, log_delta)
        inv_z, _ = bracket_root(lambda inv: _sg_eps(int_table, 1.0 / inv, steps, log_delta,
                                                    delta, int_conv) - epsilon,
                                1.0 / z0, rtol=1e-3)
        z = 1.0 / inv_z if inv_z > 0 else z0
    for attempt in range(4):
        if attempt < 3:  # the orders near the best one at the latest answer
            if attempt == 0 and integer.size:
                best = integer[int(np.argmin(steps * int_table.rdp(z) + int_conv))]
            else:
                best = all_orders[int(np.argmin(steps * table.rdp(z) + conv))]
            subset = all_orders[(all_orders >= best / 2.0) & (all_orders <= best * 2.0)]
        else:
            subset = all_orders
        sub_table = sampled_gaussian_table(q, _orders_key(subset))
        sub_conv = conversion_terms(subset, log_delta)

        def excess(inv_z):  # non-decreasing in 1 / z
            return _sg_eps(sub_table, 1.0 / inv_z, steps, log_delta, delta, sub_conv) - epsilon

        inv_z, _ = bracket_root(excess, 1.0 / z, rtol=rtol)
        if inv_z == 0.0:
            raise ValueError(f"epsilon = {epsilon!r} is too small: no finite noise "
                             f"multiplier reaches it")
        z = 1.0 / inv_z
        if _sg_eps(table, z * (1.0 - 2.0 * rtol), steps, log_delta, delta, conv) > epsilon:
            break
    while _sg_eps(table, z, steps, log_delta, delta, conv) > epsilon:  # pragma: no cover
        z *= 1.0 + rtol
    return z


def calibrate_gaussian_rdp(epsilon, delta, steps, orders=None):
    """Noise multiplier for ``steps`` Gaussian releases by the RDP accountant (reference).

    Provided for comparison: :func:`calibrate_gaussian` (exact, GDP) is always smaller.
    For a fixed order alpha, RDP ``steps alpha / (2 z^2)`` plus the improved conversion is
    <= epsilon iff ``z^2 >= steps alpha / (2 (epsilon - c(alpha)))``; the minimum over
    orders is returned (rounded up).

    The arguments are those of :func:`calibrate_sampled_gaussian` without the
    sampling rate (no subsampling).
    """
    epsilon, delta, steps = check_calibration(epsilon, delta, steps)
    if math.isinf(epsilon):
        return 0.0
    orders = _orders(orders)
    slack = epsilon - conversion_terms(orders, math.log(delta))
    with np.errstate(divide="ignore", invalid="ignore"):
        z2 = np.where(slack > 0, steps * orders / (2.0 * slack), np.inf)
    return math.sqrt(float(z2.min())) * (1.0 + 1e-12)


