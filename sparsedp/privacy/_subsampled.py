"""The tables of ``A_alpha`` behind the RDP of the subsampled Gaussian mechanisms.

The Rényi divergence of order ``alpha`` of a subsampled Gaussian is
``log(A_alpha) / (alpha - 1)``; ``A_alpha`` is a sum of many terms whose dependence on the
sampling rate ``q`` and the orders is tabulated once (and cached), so that a new noise
multiplier ``z`` costs a few vectorised operations (the calibrators evaluate many).

* :class:`SampledGaussianTable`: Poisson subsampling (Mironov, Talwar and Zhang 2019),
  the RDP curve of :func:`~sparsedp.privacy.rdp.rdp_sampled_gaussian`;
* :class:`WorTable`: fixed-size batches without replacement (Wang, Balle and
  Kasiviswanathan 2019), ``log A`` at the integer orders of
  :func:`~sparsedp.privacy.rdp.rdp_sampled_gaussian_wor`.

Every value is an upper bound, rounded up by a bound of its float error.
"""
import math
from functools import lru_cache

import numpy as np
from scipy import special


# ---- Poisson-subsampled Gaussian (Mironov, Talwar and Zhang 2019) --------------------
class SampledGaussianTable:
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
def sampled_gaussian_table(q, orders_key):
    """The :class:`SampledGaussianTable` of ``q`` at the orders ``orders_key`` (a tuple)."""
    return SampledGaussianTable(q, np.asarray(orders_key, dtype=float))


# ---- Fixed-size batches without replacement (Wang, Balle and Kasiviswanathan 2019) ----
# Terms j <= _WOR_EXACT_MAX use the Gaussian-specific bound (WBK19 Thm 27), which needs the
# moments M_k = E[(L - 1)^k] for even k <= _WOR_EXACT_MAX + 1; larger j use Theorem 9.
_WOR_EXACT_MAX = 256
_LOG_2PI = math.log(2.0 * math.pi)


@lru_cache(maxsize=4)
def log_binomials(kmax):
    """``log C(k, i)`` for ``0 <= i, k <= kmax`` (``-inf`` for ``i > k``)."""
    k = np.arange(kmax + 1, dtype=float)[:, None]
    i = np.arange(kmax + 1, dtype=float)[None, :]
    with np.errstate(invalid="ignore"):
        out = special.gammaln(k + 1) - special.gammaln(i + 1) - special.gammaln(k - i + 1)
    out = np.where(i <= k, out, -np.inf)
    out.setflags(write=False)
    return out


def log_even_chi_moments_direct(c, ks):
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
    logt = log_binomials(kmax)[ks] + c * i * (i - 1.0)
    m = logt.max(axis=1)
    t = np.exp(logt - m[:, None])
    sign = np.where(np.arange(kmax + 1) % 2 == 0, 1.0, -1.0)  # (-1)^(k - i), k even
    total = t @ sign
    size = t.sum(axis=1)
    ok = total > (ks + 2.0) * np.finfo(float).eps * size * 1e13
    with np.errstate(divide="ignore", invalid="ignore"):
        return m + np.log(np.where(ok, total, 1.0)), ok


def log_even_chi_moments_quad(z, ks):
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
def wor_log_term_bounds(z, jmax):
    """``log B_j`` for ``j = 2..jmax`` (entries 0 and 1 unused).

    ``B_j`` as in :func:`~sparsedp.privacy.rdp.rdp_sampled_gaussian_wor`:
    ``min(4 sqrt(M_{2 floor(j/2)} M_{2 ceil(j/2)}), 2 exp((j - 1) eps(j)))`` for
    ``j <= _WOR_EXACT_MAX`` (WBK19 Thm 27; at ``j = 2`` it is Thm 9's
    ``min(4 (e^{eps(2)} - 1), 2 e^{eps(2)})`` since ``M_2 = e^{eps(2)} - 1``), and
    ``2 exp((j - 1) eps(j))`` above (Thm 9). Depends on ``z`` only: cached.
    """
    c = 0.5 / (z * z)
    j = np.arange(jmax + 1, dtype=float)
    out = math.log(2.0) + c * j * (j - 1.0)
    jx = min(jmax, _WOR_EXACT_MAX)
    if jx >= 2:
        kmax = 2 * ((jx + 1) // 2)
        ks = np.arange(2, kmax + 1, 2)
        log_m, ok = log_even_chi_moments_direct(c, ks)
        if not np.all(ok):
            log_m[~ok] = log_even_chi_moments_quad(z, ks[~ok])
        log_m_of = np.full(kmax + 1, np.nan)
        log_m_of[ks] = log_m
        jj = np.arange(2, jx + 1)
        thm27 = math.log(4.0) + 0.5 * (log_m_of[2 * (jj // 2)] + log_m_of[2 * ((jj + 1) // 2)])
        out[2:jx + 1] = np.minimum(out[2:jx + 1], thm27)
    out.setflags(write=False)
    return out


class WorTable:
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
        vals = self.base + wor_log_term_bounds(z, self.jmax)[self.j]
        m = np.maximum.reduceat(vals, self.starts)
        rest = m + np.log(np.add.reduceat(np.exp(vals - m[self.rep]), self.starts))
        return np.logaddexp(0.0, rest)


@lru_cache(maxsize=64)
def wor_table(q, ints_key):
    """The :class:`WorTable` of ``q`` at the integer orders ``ints_key`` (a tuple; cached)."""
    return WorTable(q, np.asarray(ints_key, dtype=np.int64))
