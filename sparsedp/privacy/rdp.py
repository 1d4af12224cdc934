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
from functools import lru_cache

import numpy as np
from scipy import special

from ._checks import (check_calibration, check_count, check_delta, check_noise, check_nonneg,
                      check_orders, check_sampling_rate)
from ._root import bracket_root

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


# ---- Poisson-subsampled Gaussian (Mironov, Talwar and Zhang 2019) --------------------
class _SampledGaussianRDP:
    """Vectorised RDP of the Poisson-subsampled Gaussian for fixed q and orders.

    Integer orders use the exact finite binomial expansion (MTZ 2019, Sec. 3.3, eq. for
    integer alpha): A_alpha = sum_k C(alpha, k) (1-q)^{alpha-k} q^k exp((k^2-k)/(2 z^2)).
    Fractional orders use the two-sided series of MTZ 2019, Sec. 3.3 (split at
    z0 = z^2 log(1/q - 1) + 1/2), summing absolute values of the terms, plus a proven
    bound of the terms left out and of the float error (an upper bound on A_alpha,
    :meth:`_log_a_fractional`); orders where the bound does not apply are ``inf``.
    Everything q-dependent is precomputed once so that evaluating at a new z costs a few
    vectorised operations (used by the calibration).
    """

    _N_FRAC_TERMS = (200, 1000)

    def __init__(self, q, orders):
        self.q = q
        self.orders = orders
        self._frac_cache = {}
        if q == 1.0:  # plain Gaussian, no tables needed
            self.int_idx = self.frac_idx = np.array([], dtype=np.int64)
            return
        is_int = orders == np.round(orders)
        self.int_idx = np.flatnonzero(is_int)
        self.frac_idx = np.flatnonzero(~is_int)
        logq, log1mq = math.log(q), math.log1p(-q) if q < 1 else -math.inf
        self.logq, self.log1mq = logq, log1mq
        # integer orders: flattened (order, k) table
        ints = orders[self.int_idx].astype(np.int64)
        if ints.size:
            lengths = ints + 1
            self.starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            alpha = np.repeat(ints, lengths).astype(float)
            k = np.arange(lengths.sum()) - np.repeat(self.starts, lengths)
            k = k.astype(float)
            logc = special.gammaln(alpha + 1) - special.gammaln(k + 1) - special.gammaln(
                alpha - k + 1)
            self.int_base = logc + k * logq + (alpha - k) * log1mq
            self.int_kk = k * k - k
            self.int_rep = np.repeat(np.arange(ints.size), lengths)
            # an upper bound of the float error of log A (added: the bound rounds up):
            # each term's pieces to 4 u of their magnitude (gammaln, products, sums),
            # then the log-sum-exp of alpha + 1 terms ((alpha + 4) u)
            size = (special.gammaln(alpha + 1) + special.gammaln(k + 1)
                    + special.gammaln(alpha - k + 1) + np.abs(k * logq)
                    + np.abs((alpha - k) * log1mq))
            self.int_err_base = np.maximum.reduceat(size, self.starts)
            self.int_err_kk = np.maximum.reduceat(self.int_kk, self.starts)
            self.int_err_n = ints + 4.0
        self._frac_cache = {}

    def _frac_tables(self, n_terms):
        if n_terms not in self._frac_cache:
            a = self.orders[self.frac_idx][:, None]
            i = np.arange(n_terms, dtype=float)[None, :]
            j = a - i
            ga, gi, gj = special.gammaln(a + 1), special.gammaln(i + 1), special.gammaln(j + 1)
            logc = ga - gi - gj
            t0 = logc + i * self.logq + j * self.log1mq
            t1 = logc + j * self.logq + i * self.log1mq
            # the magnitudes of each term's pieces but the z-dependent ones (float error)
            size = np.abs(ga) + np.abs(gi) + np.abs(gj) + np.abs(i * self.logq) + np.abs(
                j * self.log1mq) + np.abs(j * self.logq) + np.abs(i * self.log1mq)
            # |C(a, N)| for the bound of the terms i >= N (see _log_a_fractional)
            a1 = a[:, 0]
            log_binom_n = (special.gammaln(a1 + 1) - special.gammaln(n_terms + 1.0)
                           - special.gammaln(a1 - n_terms + 1))
            self._frac_cache[n_terms] = (i, j, t0, t1, i * i - i, j * j - j, size, log_binom_n)
        return self._frac_cache[n_terms]

    def log_a(self, z):
        out = np.empty(self.orders.shape)
        inv = 1.0 / (2.0 * z * z)
        u = 2.0 ** -53
        if self.int_idx.size:
            vals = self.int_base + self.int_kk * inv
            m = np.maximum.reduceat(vals, self.starts)
            s = np.add.reduceat(np.exp(vals - m[self.int_rep]), self.starts)
            err = 4.0 * u * (self.int_err_base + self.int_err_kk * inv) + self.int_err_n * u
            out[self.int_idx] = m + np.log(s) + err
        if self.frac_idx.size:
            out[self.frac_idx] = self._log_a_fractional(z, inv, u)
        return out

    def _log_a_fractional(self, z, inv, u):
        """log A at the fractional orders: the first N terms of both series (absolute
        values), plus a bound of the rest, plus a bound of the float error.

        For i >= N >= max(z0, a - z0) and N > a, Phi(-x) <= exp(-x^2 / 2) / 2 (x >= 0)
        bounds term i of each series by (1 - q)^a exp(-z0^2 / (2 z^2)) |C(a, i)| / 2 (the
        powers of q cancel, by the choice of z0), and |C(a, i)| <= |C(a, N)| ((N + 1) /
        (i + 1))^(a + 1), so the terms from N on sum to at most (1 - q)^a exp(-z0^2 /
        (2 z^2)) |C(a, N)| (1 + (N + 1) / a).  Orders where no N of ``_N_FRAC_TERMS``
        qualifies are ``inf``.
        """
        a = self.orders[self.frac_idx]
        z0 = z * z * (math.log(1.0 / self.q - 1.0) if self.q < 1 else -math.inf) + 0.5
        res = np.full(a.shape, np.inf)
        todo = np.ones(a.shape, dtype=bool)
        for k, n_terms in enumerate(self._N_FRAC_TERMS):
            i, j, t0, t1, ii, jj, size, log_binom_n = self._frac_tables(n_terms)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                n0 = special.log_ndtr((z0 - i) / z)
                n1 = special.log_ndtr((j - z0) / z)
                s0 = t0 + ii * inv + n0
                s1 = t1 + jj * inv + n1
                terms = np.logaddexp(s0, s1)
                m = terms.max(axis=1)
                weights = np.exp(terms - m[:, None])
                total = m + np.log(weights.sum(axis=1))
                log_tail = (a * self.log1mq - z0 * z0 * inv + log_binom_n
                            + np.log1p((n_terms + 1.0) / a))
                bound = np.logaddexp(total, log_tail)
                # each term's log to 4 u of its pieces' magnitudes: the sum's relative
                # error is at most the terms' relative errors weighted by their shares
                term_err = np.expm1(4.0 * u * (size + (ii + jj) * inv + np.abs(n0) + np.abs(n1)))
                err = ((weights * term_err).sum(axis=1) / weights.sum(axis=1)
                       + (2.0 * n_terms + 8.0) * u)
            valid = (n_terms > a) & (n_terms >= z0) & (n_terms >= a - z0) & np.isfinite(bound)
            last = k == len(self._N_FRAC_TERMS) - 1
            take = todo & valid & ((log_tail < total - 30.0) | last)
            res[take] = bound[take] + err[take]
            todo &= ~take
            if not todo.any():
                break
        return res

    def rdp(self, z):
        if z * z == 0.0:
            return np.full(self.orders.shape, np.inf)
        if math.isinf(z):
            return np.zeros(self.orders.shape)
        if self.q == 1.0:
            return self.orders / (2.0 * z * z)
        with np.errstate(invalid="ignore"):
            r = self.log_a(z) / (self.orders - 1.0)
        r = np.where(np.isnan(r), np.inf, r)
        # never report more than the non-subsampled Gaussian
        return np.clip(np.minimum(r, self.orders / (2.0 * z * z)), 0.0, None)


@lru_cache(maxsize=64)
def _sampled_gaussian_table(q, orders_key):
    return _SampledGaussianRDP(q, np.asarray(orders_key, dtype=float))


def _orders_key(orders):
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
    return _sampled_gaussian_table(q, key).rdp(z)


# ---- Fixed-size batches without replacement (Wang, Balle and Kasiviswanathan 2019) ----
# Terms j <= _WOR_EXACT_MAX use the Gaussian-specific bound (WBK19 Thm 27), which needs the
# moments M_k = E[(L - 1)^k] for even k <= _WOR_EXACT_MAX + 1; larger j use Theorem 9.
_WOR_EXACT_MAX = 256
_LOG_2PI = math.log(2.0 * math.pi)


@lru_cache(maxsize=4)
def _log_binomials(kmax):
    """``log C(k, i)`` for ``0 <= i, k <= kmax`` (``-inf`` for ``i > k``)."""
    k = np.arange(kmax + 1, dtype=float)[:, None]
    i = np.arange(kmax + 1, dtype=float)[None, :]
    with np.errstate(invalid="ignore"):
        out = special.gammaln(k + 1) - special.gammaln(i + 1) - special.gammaln(k - i + 1)
    out = np.where(i <= k, out, -np.inf)
    out.setflags(write=False)
    return out


def _log_even_chi_moments_direct(c, ks):
    """``log M_k`` by the finite forward difference, and whether it is accurate.

    ``M_k = sum_i (-1)^(k-i) C(k, i) exp(c i (i - 1))`` (``k`` even), summed after
    scaling by the largest term. Accepted when the rounding error of the sum,
    at most ``(k + 2) u sum_i |term_i|``, is below ``1e-13 M_k``; otherwise the
    alternating sum has cancelled (large ``z``) and the caller integrates instead. (The
    rounding of each exponent ``c i (i - 1)``, about ``u log M_k`` relative, is common to
    both methods.)
    """
    kmax = int(ks[-1])
    i = np.arange(kmax + 1, dtype=float)
    logt = _log_binomials(kmax)[ks] + c * i * (i - 1.0)
    m = logt.max(axis=1)
    t = np.exp(logt - m[:, None])
    sign = np.where(np.arange(kmax + 1) % 2 == 0, 1.0, -1.0)  # (-1)^(k - i), k even
    total = t @ sign
    size = t.sum(axis=1)
    ok = total > (ks + 2.0) * np.finfo(float).eps * size * 1e13
    with np.errstate(divide="ignore", invalid="ignore"):
        return m + np.log(np.where(ok, total, 1.0)), ok


def _log_even_chi_moments_quad(z, ks):
    """``log M_k`` for even ``k`` by the trapezoid rule on a positive integrand.

    ``M_k = E[(L - 1)^k]`` with ``L = exp(X / z - 1 / (2 z^2))``, ``X ~ N(0, 1)``, the
    likelihood ratio of the Gaussian mechanism: expanding ``(L - 1)^k`` and using
    ``E[L^i] = exp(i (i - 1) / (2 z^2))`` gives the forward difference above, so
    ``M_k = int phi(x) |expm1(x / z - 1 / (2 z^2))|^k dx``, an integral of a positive
    function with no cancellation (``expm1`` keeps ``|L - 1|`` accurate near its zero
    ``x0 = 1 / (2 z)``). The log-integrand ``g_k`` is 1-strongly concave on each side of
    ``x0``, so each side is bounded by its peak times ``exp(-(x - x_peak)^2 / 2)``:
    integrating over ``[x_neg - 12, x_pos + 12]`` loses less than ``e^-70`` of ``M_k``.
    The integrand is entire, so the trapezoid rule converges geometrically; the step is a
    fifth of the narrowest peak's width ``1 / sqrt(-g_k'')`` (error of order ``e^-500``
    for a Gaussian peak), checked against 600-digit forward differences in the tests.
    """
    k = ks.astype(float)
    c = 0.5 / (z * z)
    x0 = z * c
    # Peaks by bisection on g_k'(x) = -x + (k / z) / (1 - e^-u), u = x / z - c, decreasing
    # on each side of x0; the positive peak lies in (x0, x0 + k/z + sqrt(k)], the negative
    # one in [-sqrt(k) - 1, x0) (from 1/(1 - e^-u) <= 1 + 1/u and 1/(e^-u - 1) <= 1/|u|).
    lo = np.stack([np.full(k.shape, x0), -np.sqrt(k) - 1.0])
    hi = np.stack([x0 + k / z + np.sqrt(k), np.full(k.shape, x0)])
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(24):
            mid = 0.5 * (lo + hi)
            up = (k / z) / (-np.expm1(c - mid / z)) > mid
            lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    peak = 0.5 * (lo + hi)
    a = np.abs(peak / z - c)  # g_k'' = -1 - (k / z^2) e^-|u| / (1 - e^-|u|)^2
    curvature = 1.0 + (k / (z * z)) * np.exp(-a) / np.expm1(-a) ** 2
    h = min(0.2, 0.2 / math.sqrt(float(np.max(curvature))))
    first, last = peak[1] - 12.5, peak[0] + 12.5
    start = float(np.min(first))
    x = start + h * np.arange(int(math.ceil((float(np.max(last)) - start) / h)) + 1)
    u = x / z - c
    with np.errstate(divide="ignore"):  # log|e^u - 1|, without overflow for large u
        log_abs = np.log(-np.expm1(-np.abs(u))) + np.maximum(u, 0.0)
    logf = k[:, None] * log_abs[None, :] - 0.5 * x * x
    m = logf.max(axis=1)  # points outside a row's window add (negligible) mass: kept
    return math.log(h) - 0.5 * _LOG_2PI + m + np.log(np.exp(logf - m[:, None]).sum(axis=1))


@lru_cache(maxsize=256)
def _wor_log_term_bounds(z, jmax):
    """``log B_j`` for ``j = 2..jmax`` (entries 0 and 1 unused), B_j as in
    :func:`rdp_sampled_gaussian_wor`: ``min(4 sqrt(M_{2 floor(j/2)} M_{2 ceil(j/2)}),
    2 exp((j - 1) eps(j)))`` for ``j <= _WOR_EXACT_MAX`` (WBK19 Thm 27; at ``j = 2`` it is
    Thm 9's ``min(4 (e^{eps(2)} - 1), 2 e^{eps(2)})`` since ``M_2 = e^{eps(2)} - 1``), and
    ``2 exp((j - 1) eps(j))`` above (Thm 9). Depends on ``z`` only: cached.
    """
    c = 0.5 / (z * z)
    j = np.arange(jmax + 1, dtype=float)
    out = math.log(2.0) + c * j * (j - 1.0)
    jx = min(jmax, _WOR_EXACT_MAX)
    if jx >= 2:
        kmax = 2 * ((jx + 1) // 2)
        ks = np.arange(2, kmax + 1, 2)
        log_m, ok = _log_even_chi_moments_direct(c, ks)
        if not np.all(ok):
            log_m[~ok] = _log_even_chi_moments_quad(z, ks[~ok])
        log_m_of = np.full(kmax + 1, np.nan)
        log_m_of[ks] = log_m
        jj = np.arange(2, jx + 1)
        thm27 = math.log(4.0) + 0.5 * (log_m_of[2 * (jj // 2)] + log_m_of[2 * ((jj + 1) // 2)])
        out[2:jx + 1] = np.minimum(out[2:jx + 1], thm27)
    out.setflags(write=False)
    return out


class _WorTable:
    """The q-dependent part of A_alpha at the integer orders needed: a flat (alpha, j) table.

    Only the terms ``j >= 2`` are tabulated; the leading 1 is added by ``log1p`` so that
    ``log A`` keeps its relative accuracy when ``A - 1`` is tiny (small q).
    """

    def __init__(self, q, ints):
        self.ints = ints
        lengths = ints - 1  # j = 2..alpha
        self.starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        alpha = np.repeat(ints, lengths).astype(float)
        self.j = (np.arange(lengths.sum()) - np.repeat(self.starts, lengths) + 2).astype(
            np.int64)
        jf = self.j.astype(float)
        self.base = (special.gammaln(alpha + 1) - special.gammaln(jf + 1)
                     - special.gammaln(alpha - jf + 1) + jf * math.log(q))
        self.rep = np.repeat(np.arange(ints.size), lengths)
        self.jmax = int(ints.max())

    def log_a(self, z):
        vals = self.base + _wor_log_term_bounds(z, self.jmax)[self.j]
        m = np.maximum.reduceat(vals, self.starts)
        rest = m + np.log(np.add.reduceat(np.exp(vals - m[self.rep]), self.starts))
        return np.logaddexp(0.0, rest)


@lru_cache(maxsize=64)
def _wor_table(q, ints_key):
    return _WorTable(q, np.asarray(ints_key, dtype=np.int64))


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
    log_a[ints] = _wor_table(q, tuple(int(a) for a in ints)).log_a(z)
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
    table = _sampled_gaussian_table(q, key)
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
    table = _sampled_gaussian_table(q, _orders_key(all_orders))
    conv = conversion_terms(all_orders, log_delta)
    z = z0
    integer = all_orders[all_orders == np.round(all_orders)]
    if integer.size:  # a first answer on the integer orders (exact, cheap terms)
        int_table = _sampled_gaussian_table(q, _orders_key(integer))
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
        sub_table = _sampled_gaussian_table(q, _orders_key(subset))
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


