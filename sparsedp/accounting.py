"""Privacy accounting: calibrate noise from (epsilon, delta) and report what a fit spent.

This module is pure Python + NumPy/SciPy. It provides

* **exact** accounting for adaptive compositions of Gaussian mechanisms through Gaussian
  differential privacy (GDP): ``k`` releases with noise multiplier ``z`` are exactly
  ``mu``-GDP with ``mu = sqrt(k) / z`` (Dong, Roth and Su 2022), whose (epsilon, delta)
  curve is known in closed form (Balle and Wang 2018)
  -- :func:`gaussian_epsilon`, :func:`gaussian_delta`, :func:`calibrate_gaussian`;
* Rényi differential privacy (RDP) building blocks: Gaussian, Laplace, pure epsilon-DP,
  bounded-range (exponential mechanism), the Poisson-subsampled Gaussian (add/remove
  neighbours) and the fixed-size subsampled-without-replacement Gaussian (replace-one
  neighbours), with the improved RDP to (epsilon, delta) conversion -- :func:`rdp_to_dp`,
  :func:`sampled_gaussian_epsilon`, :func:`calibrate_sampled_gaussian`;
* composition of pure epsilon0-DP mechanisms: advanced composition, the optimal
  homogeneous composition theorem of Kairouz, Oh and Viswanathan, and zCDP
  -- :func:`pure_composition_epsilon`, :func:`calibrate_pure_composition`;
* a :class:`PrivacyLedger` recording the mechanisms a fit used and reporting the total
  (epsilon, delta) by the tightest valid method, and :func:`split_budget`.

Conventions
-----------
*Noise multiplier.* For the Gaussian mechanism, ``noise_multiplier`` is
``z = sigma / Delta_2`` where ``Delta_2`` is the L2 sensitivity of the released quantity
with respect to the neighbouring relation in use. For the Laplace mechanism it is
``b = scale / Delta_1`` (L1 sensitivity).

*Neighbouring relation.* The library default is **replace-one** ("the datasets differ on
at most one element", as in the DP-CD and DP-GCD papers). Gaussian, Laplace and pure
mechanisms are valid for whichever relation their sensitivity was computed under. The
Poisson-subsampled Gaussian is analysed under **add/remove-one** neighbours (Mironov,
Talwar and Zhang 2019); the fixed-size subsampled-without-replacement Gaussian under
**replace-one** (Wang, Balle and Kasiviswanathan 2019).

*Safety.* Every function returns a valid (conservative) value: epsilons are rounded up,
calibrated noise multipliers up, calibrated per-mechanism epsilons down.

*No privacy.* ``epsilon=inf`` means "no privacy": calibration functions return a noise
multiplier of ``0.0`` (no noise) or a per-mechanism epsilon of ``inf``. A noise multiplier
of ``0`` gives ``epsilon=inf``.
"""

import math
from functools import lru_cache

import numpy as np
from scipy import optimize, special

__all__ = [
    "DEFAULT_ORDERS",
    "PrivacyLedger",
    "calibrate_gaussian",
    "calibrate_gaussian_rdp",
    "calibrate_pure_composition",
    "calibrate_sampled_gaussian",
    "gaussian_delta",
    "gaussian_epsilon",
    "gdp_delta",
    "gdp_epsilon",
    "pure_composition_delta",
    "pure_composition_epsilon",
    "rdp_bounded_range",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_pure",
    "rdp_sampled_gaussian",
    "rdp_sampled_gaussian_wor",
    "rdp_to_dp",
    "sampled_gaussian_epsilon",
    "split_budget",
    "zcdp_to_dp",
]

_LOG_HALF = math.log(0.5)
_LN2 = math.log(2.0)
_SQRT2 = math.sqrt(2.0)

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


# --------------------------------------------------------------------------------------
# Argument validation
# --------------------------------------------------------------------------------------
def _as_float(value, name):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def _check_epsilon(epsilon, name="epsilon"):
    epsilon = _as_float(epsilon, name)
    if epsilon <= 0:
        raise ValueError(f"{name} must be > 0 (inf for no privacy), got {epsilon}")
    return epsilon


def _check_delta(delta, name="delta"):
    delta = _as_float(delta, name)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"{name} must be in the open interval (0, 1), got {delta}")
    return delta


def _check_steps(steps, name="steps"):
    if isinstance(steps, (bool, np.bool_)):
        raise ValueError(f"{name} must be a positive integer, got {steps!r}")
    value = _as_float(steps, name)
    if not math.isfinite(value) or value != math.floor(value):
        raise ValueError(f"{name} must be a positive integer, got {steps!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {steps!r}")
    return int(value)


def _check_noise(noise_multiplier, name="noise_multiplier"):
    z = _as_float(noise_multiplier, name)
    if z < 0:
        raise ValueError(f"{name} must be >= 0 (0 means no noise), got {z}")
    return z


def _check_positive_noise(noise_multiplier, name="noise_multiplier"):
    z = _as_float(noise_multiplier, name)
    if not z > 0:
        raise ValueError(f"{name} must be > 0, got {z}")
    return z


def _check_sampling_rate(sampling_rate, name="sampling_rate"):
    q = _as_float(sampling_rate, name)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"{name} must be in the interval (0, 1], got {q}")
    return q


def _check_orders(orders):
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    if orders.ndim != 1 or orders.size == 0:
        raise ValueError("orders must be a non-empty 1-D array")
    if np.any(np.isnan(orders)) or np.any(orders <= 1):
        raise ValueError("orders must all be > 1")
    return orders


def _log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurately (Mächler 2012)."""
    if x > -_LN2:
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))



def _log1mexp_arr(x):
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = x > -_LN2
    with np.errstate(divide="ignore"):
        out[small] = np.log(-np.expm1(x[small]))
        out[~small] = np.log1p(-np.exp(x[~small]))
    return out


def _root_increasing(fun, lo, hi, *, want="below", rtol=4 * np.finfo(float).eps):
    """Root of an increasing function with a guaranteed side.

    ``fun(lo) <= 0 <= fun(hi)`` is assumed. Returns a point within about ``rtol`` of the
    root with ``fun(x) <= 0`` if ``want == "below"``, or ``fun(x) >= 0`` if
    ``want == "above"`` (Brent's method, then polished to the requested side).
    """
    flo, fhi = fun(lo), fun(hi)
    if flo > 0 or fhi < 0:  # pragma: no cover - internal misuse
        raise RuntimeError("root not bracketed")
    try:
        x = optimize.brentq(fun, lo, hi, xtol=1e-300, rtol=rtol, maxiter=200)
    except ValueError:  # flat / infinite values: fall back to bisection
        x = 0.5 * (lo + hi)
    # Polish by bisection until the guaranteed side is reached.
    fx = fun(x)
    if want == "below":
        if fx <= 0:
            return x
        a, b = lo, x
        step = max(abs(x) * 1e-14, 1e-300)
        for _ in range(60):
            cand = x - step
            if cand <= a:
                break
            if fun(cand) <= 0:
                return cand
            step *= 4
        for _ in range(200):  # plain bisection on [a, b], f(a) <= 0 < f(b)
            m = 0.5 * (a + b)
            if m in (a, b):
                break
            if fun(m) <= 0:
                a = m
            else:
                b = m
        return a
    else:
        if fx >= 0:
            return x
        a, b = x, hi
        step = max(abs(x) * 1e-14, 1e-300)
        for _ in range(60):
            cand = x + step
            if cand >= b:
                break
            if fun(cand) >= 0:
                return cand
            step *= 4
        for _ in range(200):
            m = 0.5 * (a + b)
            if m in (a, b):
                break
            if fun(m) >= 0:
                b = m
            else:
                a = m
        return b


# --------------------------------------------------------------------------------------
# Gaussian differential privacy (exact composition of Gaussian mechanisms)
# --------------------------------------------------------------------------------------
def _gdp_log_delta(epsilon, mu):
    """log delta(epsilon) of the mu-GDP trade-off curve (scalar, stable in log space).

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). With
    a = eps/mu - mu/2 and b = eps/mu + mu/2 one has b^2 - a^2 = 2 eps, hence for a > 0
    delta = exp(-a^2/2) / 2 * (erfcx(a/sqrt2) - erfcx(b/sqrt2)), free of cancellation
    between exponentially small numbers.
    """
    if mu == 0.0:
        return -math.inf
    if math.isinf(mu):
        return 0.0
    if math.isinf(epsilon):
        return -math.inf
    a = epsilon / mu - 0.5 * mu
    b = epsilon / mu + 0.5 * mu
    if a > 0.0:
        diff = float(special.erfcx(a / _SQRT2)) - float(special.erfcx(b / _SQRT2))
        if diff <= 0.0:
            return -math.inf
        return -0.5 * a * a + _LOG_HALF + math.log(diff)
    # delta >= 1/2 * something moderate: direct evaluation is accurate.
    first = float(special.log_ndtr(-a))
    second = epsilon + float(special.log_ndtr(-b))
    if second >= first:
        return -math.inf
    return first + _log1mexp(second - first)


def gdp_delta(mu, epsilon):
    """delta(epsilon) of a mu-GDP mechanism (Dong, Roth and Su 2022, Cor. 2.13).

    Parameters
    ----------
    mu : float
        GDP parameter, ``mu >= 0``.
    epsilon : float
        Privacy loss ``epsilon >= 0``.

    Returns
    -------
    delta : float
        ``Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2)``, the smallest
        delta such that a mu-GDP mechanism is (epsilon, delta)-DP.
    """
    mu = _as_float(mu, "mu")
    epsilon = _as_float(epsilon, "epsilon")
    if mu < 0:
        raise ValueError(f"mu must be >= 0, got {mu}")
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    return math.exp(_gdp_log_delta(epsilon, mu))


def _gdp_epsilon(mu, delta):
    """Smallest epsilon (rounded up) with delta_mu(epsilon) <= delta (validated input)."""
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    log_target = math.log(delta)
    if _gdp_log_delta(0.0, mu) <= log_target:
        return 0.0
    # delta(eps) < Phi(-eps/mu + mu/2), which equals delta at eps_hi:
    hi = mu * (0.5 * mu - float(special.ndtri(delta)))
    hi = hi * (1 + 1e-6) + 1e-12

    def fun(eps):  # increasing in eps
        return log_target - _gdp_log_delta(eps, mu)

    while fun(hi) < 0:  # pragma: no cover - safety net
        hi *= 2
    return _root_increasing(fun, 0.0, hi, want="above")


def gdp_epsilon(mu, delta):
    """epsilon of a mu-GDP mechanism at a given delta.

    Parameters
    ----------
    mu : float
        GDP parameter, ``mu >= 0`` (``inf`` gives ``epsilon=inf``).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
        The smallest epsilon (rounded up) such that the mechanism is (epsilon, delta)-DP.
    """
    mu = _as_float(mu, "mu")
    if mu < 0:
        raise ValueError(f"mu must be >= 0, got {mu}")
    delta = _check_delta(delta)
    return _gdp_epsilon(mu, delta)


def gaussian_epsilon(noise_multiplier, steps, delta):
    """Exact epsilon of ``steps`` adaptive Gaussian mechanisms.

    Each release adds N(0, sigma^2) noise to a quantity of L2 sensitivity ``Delta`` with
    ``noise_multiplier = sigma / Delta``. The adaptive composition of ``steps`` such
    releases is exactly mu-GDP with ``mu = sqrt(steps) / noise_multiplier`` (Dong, Roth and
    Su 2022), and a mu-GDP mechanism is (epsilon, delta)-DP iff
    ``delta >= Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2)``
    (Balle and Wang 2018). This is tight: no accountant can give a smaller epsilon.

    The neighbouring relation is the one under which ``Delta`` was computed (library
    default: replace-one).

    Parameters
    ----------
    noise_multiplier : float
        ``sigma / Delta >= 0``. ``0`` (no noise) gives ``inf``.
    steps : int
        Number of adaptive releases, ``>= 1``.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
        The smallest epsilon (rounded up) such that the composition is (epsilon, delta)-DP.

    Raises
    ------
    ValueError
        If an argument is out of range or NaN.
    """
    z = _check_noise(noise_multiplier)
    steps = _check_steps(steps)
    delta = _check_delta(delta)
    if z == 0.0:
        return math.inf
    return _gdp_epsilon(math.sqrt(steps) / z, delta)


def gaussian_delta(noise_multiplier, steps, epsilon):
    """Exact delta of ``steps`` adaptive Gaussian mechanisms at a given epsilon.

    See :func:`gaussian_epsilon` for the model.

    Parameters
    ----------
    noise_multiplier : float
        ``sigma / Delta >= 0``.
    steps : int
        Number of adaptive releases, ``>= 1``.
    epsilon : float
        Privacy loss ``>= 0``.

    Returns
    -------
    delta : float
        The smallest delta such that the composition is (epsilon, delta)-DP.
    """
    z = _check_noise(noise_multiplier)
    steps = _check_steps(steps)
    epsilon = _as_float(epsilon, "epsilon")
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    if z == 0.0:
        return 0.0 if math.isinf(epsilon) else 1.0
    return math.exp(_gdp_log_delta(epsilon, math.sqrt(steps) / z))


@lru_cache(maxsize=4096)
def _gdp_calibrate_mu(epsilon, delta):
    """Largest mu (rounded down) such that mu-GDP is (epsilon, delta)-DP."""
    log_target = math.log(delta)

    def fun(mu):  # increasing in mu
        return _gdp_log_delta(epsilon, mu) - log_target

    # Asymptotics eps ~ mu * sqrt(2 log(1/delta)) + mu^2 / 2 give a starting point.
    s = math.sqrt(2.0 * math.log(1.0 / delta))
    mu0 = -s + math.sqrt(s * s + 2.0 * epsilon)
    lo, hi = 0.5 * mu0, 2.0 * mu0
    while fun(lo) > 0:
        lo *= 0.5
    while fun(hi) <= 0:
        hi *= 2.0
    return _root_increasing(fun, lo, hi, want="below")


def calibrate_gaussian(epsilon, delta, steps):
    """Smallest noise multiplier for ``steps`` adaptive Gaussian releases.

    Exact, via Gaussian DP (see :func:`gaussian_epsilon`): the returned ``z`` is the
    smallest (up to ~1e-12 relative, always on the safe side) such that ``steps``
    adaptive releases with ``sigma = z * Delta`` are (epsilon, delta)-DP. It is never larger
    than what an RDP accountant would give (RDP over-noises by a few percent).

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``> 0``; ``inf`` returns ``0.0`` (no noise).
    delta : float
        Target delta in (0, 1).
    steps : int
        Number of adaptive releases, ``>= 1``.

    Returns
    -------
    noise_multiplier : float
        ``z = sigma / Delta``. Plugged back into :func:`gaussian_epsilon` it gives an
        epsilon ``<= epsilon``.

    Raises
    ------
    ValueError
        If an argument is out of range or NaN.
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    steps = _check_steps(steps)
    if math.isinf(epsilon):
        return 0.0
    mu = _gdp_calibrate_mu(epsilon, delta)
    z = math.sqrt(steps) / mu * (1.0 + 1e-12)
    log_target = math.log(delta)
    while _gdp_log_delta(epsilon, math.sqrt(steps) / z) > log_target:  # pragma: no cover
        z *= 1.0 + 1e-12
    return z


# --------------------------------------------------------------------------------------
# Rényi DP building blocks
# --------------------------------------------------------------------------------------
def rdp_gaussian(noise_multiplier, orders=None):
    """RDP of the Gaussian mechanism: ``alpha / (2 z^2)`` (Mironov 2017, Prop. 7).

    Valid for the neighbouring relation under which the L2 sensitivity was computed.

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / Delta_2 >= 0`` (``0`` gives ``inf``).
    orders : array-like of float, optional
        Rényi orders (> 1). Defaults to :data:`DEFAULT_ORDERS`.

    Returns
    -------
    rdp : ndarray
        RDP epsilon at each order.
    """
    z = _check_noise(noise_multiplier)
    orders = DEFAULT_ORDERS if orders is None else _check_orders(orders)
    if z == 0.0:
        return np.full(orders.shape, np.inf)
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
    orders : array-like of float, optional
        Rényi orders (> 1). Defaults to :data:`DEFAULT_ORDERS`.

    Returns
    -------
    rdp : ndarray
        RDP epsilon at each order.
    """
    b = _check_noise(noise_multiplier)
    orders = DEFAULT_ORDERS if orders is None else _check_orders(orders)
    if b == 0.0:
        return np.full(orders.shape, np.inf)
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
    orders : array-like of float, optional
        Rényi orders (> 1). Defaults to :data:`DEFAULT_ORDERS`.

    Returns
    -------
    rdp : ndarray
        RDP epsilon at each order.
    """
    eps0 = _as_float(epsilon0, "epsilon0")
    if eps0 < 0:
        raise ValueError(f"epsilon0 must be >= 0, got {eps0}")
    orders = DEFAULT_ORDERS if orders is None else _check_orders(orders)
    if math.isinf(eps0):
        return np.full(orders.shape, np.inf)
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
    orders : array-like of float, optional
        Rényi orders (> 1). Defaults to :data:`DEFAULT_ORDERS`.

    Returns
    -------
    rdp : ndarray
        RDP epsilon at each order.
    """
    pure = rdp_pure(epsilon0, orders)
    orders = DEFAULT_ORDERS if orders is None else _check_orders(orders)
    eps0 = float(epsilon0)
    return np.minimum(pure, orders * eps0 * eps0 / 8.0)


# ---- Poisson-subsampled Gaussian (Mironov, Talwar and Zhang 2019) --------------------
class _SampledGaussianRDP:
    """Vectorised RDP of the Poisson-subsampled Gaussian for fixed q and orders.

    Integer orders use the exact finite binomial expansion (MTZ 2019, Sec. 3.3, eq. for
    integer alpha): A_alpha = sum_k C(alpha, k) (1-q)^{alpha-k} q^k exp((k^2-k)/(2 z^2)).
    Fractional orders use the two-sided series of MTZ 2019, Sec. 3.3 (split at
    z0 = z^2 log(1/q - 1) + 1/2), summing absolute values of the terms (an upper bound
    on A_alpha); orders whose series has not converged are reported as ``inf``.
    Everything q-dependent is precomputed once so that evaluating at a new z costs a few
    vectorised operations (used by the calibration bisection).
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
        self._frac_cache = {}

    def _frac_tables(self, n_terms):
        if n_terms not in self._frac_cache:
            a = self.orders[self.frac_idx][:, None]
            i = np.arange(n_terms, dtype=float)[None, :]
            j = a - i
            logc = special.gammaln(a + 1) - special.gammaln(i + 1) - special.gammaln(j + 1)
            t0 = logc + i * self.logq + j * self.log1mq
            t1 = logc + j * self.logq + i * self.log1mq
            self._frac_cache[n_terms] = (i, j, t0, t1, i * i - i, j * j - j)
        return self._frac_cache[n_terms]

    def log_a(self, z):
        out = np.empty(self.orders.shape)
        inv = 1.0 / (2.0 * z * z)
        if self.int_idx.size:
            vals = self.int_base + self.int_kk * inv
            m = np.maximum.reduceat(vals, self.starts)
            s = np.add.reduceat(np.exp(vals - m[self.int_rep]), self.starts)
            out[self.int_idx] = m + np.log(s)
        if self.frac_idx.size:
            z0 = z * z * (math.log(1.0 / self.q - 1.0) if self.q < 1 else -math.inf) + 0.5
            res = None
            for n_terms in self._N_FRAC_TERMS:
                i, j, t0, t1, ii, jj = self._frac_tables(n_terms)
                with np.errstate(over="ignore", invalid="ignore"):
                    s0 = t0 + ii * inv + special.log_ndtr((z0 - i) / z)
                    s1 = t1 + jj * inv + special.log_ndtr((j - z0) / z)
                    terms = np.logaddexp(s0, s1)
                    m = terms.max(axis=1)
                    m_safe = np.where(np.isfinite(m), m, 0.0)
                    total = m_safe + np.log(np.exp(terms - m_safe[:, None]).sum(axis=1))
                    total = np.where(np.isfinite(m), total, m)
                    tail = terms[:, -3:]
                    converged = (
                        np.all(np.diff(s0[:, -3:], axis=1) < 0, axis=1)
                        & np.all(np.diff(s1[:, -3:], axis=1) < 0, axis=1)
                        & (tail.max(axis=1) < total - 30)
                    ) | (total == -np.inf)
                res = np.where(converged, total, np.inf)
                if np.all(converged):
                    break
            out[self.frac_idx] = res
        return out

    def rdp(self, z):
        if z == 0.0:
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
    "Rényi Differential Privacy of the Sampled Gaussian Mechanism": exactly at integer
    orders (binomial expansion in log space) and by the convergent two-sided series at
    fractional orders (absolute values summed: an upper bound). The result is capped by
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
    orders : array-like of float, optional
        Rényi orders (> 1). Defaults to :data:`DEFAULT_ORDERS`.

    Returns
    -------
    rdp : ndarray
        RDP epsilon at each order (``inf`` where a fractional series did not converge).
    """
    z = _check_noise(noise_multiplier)
    q = _check_sampling_rate(sampling_rate)
    key = _DEFAULT_KEY if orders is None else _orders_key(_check_orders(orders))
    return _sampled_gaussian_table(q, key).rdp(z)


def rdp_sampled_gaussian_wor(noise_multiplier, sampling_rate, orders=None):
    """RDP of the Gaussian mechanism on a fixed-size subsample without replacement.

    A batch of ``m = q n`` records is drawn uniformly without replacement (``n`` public)
    and the neighbouring relation is **replace-one**; ``z = sigma / Delta`` where
    ``Delta`` is the replace-one L2 sensitivity of the non-subsampled function.

    This implements the *general* upper bound of Wang, Balle and Kasiviswanathan (2019),
    Theorem 9, specialised to the Gaussian base mechanism (``eps(alpha) = alpha/(2z^2)``,
    ``eps(inf) = inf``), at integer orders::

        A <= 1 + q^2 C(alpha,2) min(4 (e^{eps(2)} - 1), 2 e^{eps(2)})
               + sum_{j=3}^{alpha} 2 q^j C(alpha,j) e^{(j-1) eps(j)},

    and at fractional orders by linear interpolation of ``log A`` between neighbouring
    integers (valid since ``log A_alpha`` is convex in alpha; WBK19 Cor. 10). This is a
    **valid but looser** bound than WBK19 Theorem 27 (the Gaussian-specific bound with
    forward differences, used by dp-accounting for alpha <= 256); it is capped by the
    non-subsampled value ``alpha / (2 z^2)``.

    Parameters
    ----------
    noise_multiplier : float
        ``z >= 0``.
    sampling_rate : float
        ``q = m / n`` in (0, 1].
    orders : array-like of float, optional
        Rényi orders (> 1). Defaults to :data:`DEFAULT_ORDERS`.

    Returns
    -------
    rdp : ndarray
        RDP epsilon at each order.
    """
    z = _check_noise(noise_multiplier)
    q = _check_sampling_rate(sampling_rate)
    orders = DEFAULT_ORDERS if orders is None else _check_orders(orders)
    if z == 0.0:
        return np.full(orders.shape, np.inf)
    base = orders / (2.0 * z * z)
    if q == 1.0:
        return base
    inv = 1.0 / (2.0 * z * z)
    lo = np.floor(orders).astype(np.int64)
    hi = np.ceil(orders).astype(np.int64)
    needed = np.unique(np.concatenate([lo, hi]))
    log_a = {1: 0.0}
    logq = math.log(q)
    e2 = 2.0 * inv
    two_term = min(math.log(4.0) + math.log(math.expm1(e2)) if e2 > 0 else -math.inf,
                   math.log(2.0) + e2)
    for alpha in needed:
        alpha = int(alpha)
        if alpha < 2:
            continue
        j = np.arange(3, alpha + 1, dtype=float)
        logc = special.gammaln(alpha + 1) - special.gammaln(j + 1) - special.gammaln(
            alpha - j + 1)
        terms = math.log(2.0) + j * logq + logc + (j - 1) * j * inv
        c2 = special.gammaln(alpha + 1) - special.gammaln(3) - special.gammaln(alpha - 1)
        all_terms = np.concatenate([[0.0, 2 * logq + c2 + two_term], terms])
        log_a[alpha] = float(special.logsumexp(all_terms))
    la_lo = np.array([log_a[int(a)] for a in lo])
    la_hi = np.array([log_a[int(a)] for a in hi])
    t = orders - lo
    out = ((1 - t) * la_lo + t * la_hi) / (orders - 1.0)
    return np.clip(np.minimum(out, base), 0.0, None)


# --------------------------------------------------------------------------------------
# RDP -> (epsilon, delta)
# --------------------------------------------------------------------------------------
def _conversion_terms(orders, log_delta):
    # eps = rdp + log((a-1)/a) - (log delta + log a)/(a-1)
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
    orders = _check_orders(orders)
    rdp = np.asarray(rdp, dtype=float)
    if rdp.shape != orders.shape:
        raise ValueError("orders and rdp must have the same shape")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("rdp values must be >= 0 and not NaN")
    delta = _check_delta(delta)
    eps = _rdp_to_dp_array(orders, rdp, math.log(delta), delta)
    idx = int(np.argmin(eps))
    val = max(float(eps[idx]), 0.0)
    return (val, float(orders[idx])) if return_order else val


def _rdp_to_dp_array(orders, rdp, log_delta, delta):
    with np.errstate(invalid="ignore", over="ignore"):
        eps = rdp + _conversion_terms(orders, log_delta)
        eps = np.where(np.isnan(eps), np.inf, eps)
        tv_ok = delta * delta + np.expm1(-rdp) >= 0
    return np.where(tv_ok, 0.0, eps)


def zcdp_to_dp(rho, delta):
    """Convert rho-zCDP to (epsilon, delta)-DP (optimised over a continuum of orders).

    rho-zCDP means (alpha, rho alpha)-RDP for all alpha > 1, so by the improved
    conversion (see :func:`rdp_to_dp`) ``epsilon = min_alpha rho alpha + log((alpha-1)/alpha)
    - (log delta + log alpha)/(alpha-1)``. The minimisation is numerical (a grid plus a
    bounded scalar refinement); every alpha gives a valid bound.

    Parameters
    ----------
    rho : float
        zCDP parameter, ``>= 0``.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
    """
    rho = _as_float(rho, "rho")
    if rho < 0:
        raise ValueError(f"rho must be >= 0, got {rho}")
    delta = _check_delta(delta)
    if rho == 0:
        return 0.0
    if math.isinf(rho):
        return math.inf
    log_delta = math.log(delta)

    def f(a):
        return rho * a + math.log1p(-1.0 / a) - (log_delta + math.log(a)) / (a - 1.0)

    grid = 1.0 + np.geomspace(1e-4, 1e7, 400)
    vals = rho * grid + _conversion_terms(grid, log_delta)
    i = int(np.argmin(vals))
    a_lo, a_hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    best = float(vals[i])
    res = optimize.minimize_scalar(f, bounds=(a_lo, a_hi), method="bounded",
                                   options={"xatol": 1e-10 * a_hi})
    if res.success and res.fun < best:
        best = float(res.fun)
    tv = math.sqrt(-math.expm1(-rho * 1.0)) if rho < 50 else 1.0  # KL <= rho
    if tv <= delta:
        return 0.0
    return max(best, 0.0)


def _zcdp_max_rho(epsilon, delta):
    """Largest rho such that rho-zCDP is (epsilon, delta)-DP (via the improved conversion).

    For fixed alpha the condition is linear in rho, so rho_max = max_alpha of
    (epsilon - log((alpha-1)/alpha) + (log delta + log alpha)/(alpha-1)) / alpha.
    """
    log_delta = math.log(delta)

    def g(a):
        return (epsilon - math.log1p(-1.0 / a) + (log_delta + math.log(a)) / (a - 1.0)) / a

    grid = 1.0 + np.geomspace(1e-4, 1e7, 400)
    vals = (epsilon - _conversion_terms(grid, log_delta)) / grid
    i = int(np.argmax(vals))
    a_lo, a_hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    best = float(vals[i])
    res = optimize.minimize_scalar(lambda a: -g(a), bounds=(a_lo, a_hi), method="bounded",
                                   options={"xatol": 1e-10 * a_hi})
    if res.success and -res.fun > best:
        best = float(-res.fun)
    return max(best, 0.0)


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
    z = _check_noise(noise_multiplier)
    q = _check_sampling_rate(sampling_rate)
    steps = _check_steps(steps)
    delta = _check_delta(delta)
    if z == 0.0:
        return math.inf
    key = _DEFAULT_KEY if orders is None else _orders_key(_check_orders(orders))
    table = _sampled_gaussian_table(q, key)
    log_delta = math.log(delta)
    conv = _conversion_terms(table.orders, log_delta)
    return _sg_eps(table, z, steps, log_delta, delta, conv)


def calibrate_sampled_gaussian(epsilon, delta, sampling_rate, steps, *, orders=None,
                               rtol=1e-9):
    """Smallest noise multiplier for ``steps`` Poisson-subsampled Gaussian releases.

    Bisection (Brent's method, then polished to the safe side) on the RDP epsilon of
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
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    q = _check_sampling_rate(sampling_rate)
    steps = _check_steps(steps)
    if math.isinf(epsilon):
        return 0.0
    key = _DEFAULT_KEY if orders is None else _orders_key(_check_orders(orders))
    table = _sampled_gaussian_table(q, key)
    log_delta = math.log(delta)
    conv = _conversion_terms(table.orders, log_delta)

    def eps_of(z):
        return _sg_eps(table, z, steps, log_delta, delta, conv)

    def fun(z):  # increasing in z; >= 0 means (epsilon, delta)-DP
        return epsilon - eps_of(z)

    # Starting point: the moments-accountant scaling z ~ q sqrt(2 T log(1/delta)) / eps.
    z0 = max(q * math.sqrt(2.0 * steps * math.log(1.0 / delta)) / epsilon, 0.5)
    lo, hi = 0.5 * z0, z0
    while fun(hi) < 0:
        lo, hi = hi, 2.0 * hi
        if hi > 1e150:  # pragma: no cover
            raise RuntimeError("calibration failed")
    while fun(lo) >= 0:
        lo, hi = 0.5 * lo, lo
        if lo < 1e-150:  # pragma: no cover - target reachable without noise
            return hi
    z = _root_increasing(fun, lo, hi, want="above", rtol=rtol)
    while _sg_eps(table, z, steps, log_delta, delta, conv) > epsilon:
        z *= 1.0 + rtol
    return z


def calibrate_gaussian_rdp(epsilon, delta, steps, orders=None):
    """Noise multiplier for ``steps`` Gaussian releases by the RDP accountant (reference).

    Provided for comparison: :func:`calibrate_gaussian` (exact, GDP) is always smaller.
    For a fixed order alpha, RDP ``steps alpha / (2 z^2)`` plus the improved conversion is
    <= epsilon iff ``z^2 >= steps alpha / (2 (epsilon - c(alpha)))``; the minimum over
    orders is returned (rounded up).

    Parameters
    ----------
    epsilon : float
        Target epsilon ``> 0``.
    delta : float
        Target delta in (0, 1).
    steps : int
        Number of releases.
    orders : array-like of float, optional
        Rényi orders. Defaults to :data:`DEFAULT_ORDERS`.

    Returns
    -------
    noise_multiplier : float
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    steps = _check_steps(steps)
    if math.isinf(epsilon):
        return 0.0
    orders = DEFAULT_ORDERS if orders is None else _check_orders(orders)
    slack = epsilon - _conversion_terms(orders, math.log(delta))
    with np.errstate(divide="ignore", invalid="ignore"):
        z2 = np.where(slack > 0, steps * orders / (2.0 * slack), np.inf)
    return math.sqrt(float(z2.min())) * (1.0 + 1e-12)


# --------------------------------------------------------------------------------------
# Composition of pure epsilon0-DP mechanisms
# --------------------------------------------------------------------------------------
def _kov_log_delta(epsilon, eps0, k):
    """log delta of the optimal k-fold composition of eps0-DP mechanisms at epsilon.

    Kairouz, Oh and Viswanathan (2015/2017), Thm. 3.3 (homogeneous case):
    delta = sum_i C(k,i) max(0, e^{eps0 (k-i)} - e^{epsilon + eps0 i}) / (1 + e^{eps0})^k.
    """
    if eps0 <= 0:
        return -math.inf
    if math.isinf(eps0):
        return 0.0
    # terms positive iff eps0 (k - 2i) > epsilon
    i_max = math.ceil((k * eps0 - epsilon) / (2.0 * eps0)) - 1
    i_max = min(i_max, k)
    if i_max < 0:
        return -math.inf
    i = np.arange(i_max + 1, dtype=float)
    d = epsilon + eps0 * (2.0 * i - k)
    keep = d < 0
    if not np.any(keep):
        return -math.inf
    i, d = i[keep], d[keep]
    logc = special.gammaln(k + 1.0) - special.gammaln(i + 1.0) - special.gammaln(k - i + 1.0)
    terms = logc + eps0 * (k - i) + _log1mexp_arr(d)
    return float(special.logsumexp(terms)) - k * float(np.logaddexp(0.0, eps0))


def pure_composition_delta(epsilon0, mechanisms, epsilon):
    """Optimal delta of ``mechanisms`` adaptive epsilon0-DP mechanisms at ``epsilon``.

    Kairouz, Oh and Viswanathan (2017), Theorem 3.3 (exact, homogeneous case), computed
    in log space.

    Parameters
    ----------
    epsilon0 : float
        Per-mechanism pure DP parameter, ``>= 0``.
    mechanisms : int
        Number of mechanisms ``k >= 1``.
    epsilon : float
        Total epsilon ``>= 0``.

    Returns
    -------
    delta : float
    """
    eps0 = _as_float(epsilon0, "epsilon0")
    if eps0 < 0:
        raise ValueError(f"epsilon0 must be >= 0, got {eps0}")
    k = _check_steps(mechanisms, "mechanisms")
    epsilon = _as_float(epsilon, "epsilon")
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    return math.exp(_kov_log_delta(epsilon, eps0, k))


def _advanced_epsilon(eps0, k, delta):
    return math.sqrt(2.0 * k * math.log(1.0 / delta)) * eps0 + k * eps0 * math.expm1(eps0)


_PURE_METHODS = ("optimal", "advanced", "zcdp", "basic", "best")


def _check_method(method, allowed=_PURE_METHODS):
    if method not in allowed:
        raise ValueError(f"method must be one of {allowed}, got {method!r}")
    return method


def _pure_eps_forward(eps0, k, delta, method, bounded_range):
    if eps0 == 0:
        return 0.0
    if math.isinf(eps0):
        return math.inf
    basic = k * eps0
    if method == "basic":
        return basic
    if method == "advanced":
        return min(basic, _advanced_epsilon(eps0, k, delta))
    if method == "zcdp":
        rho = k * eps0 * eps0 / (8.0 if bounded_range else 2.0)
        return min(basic, zcdp_to_dp(rho, delta))
    if method == "optimal":
        log_target = math.log(delta)
        if _kov_log_delta(0.0, eps0, k) <= log_target:
            return 0.0

        def fun(eps):  # increasing
            return log_target - _kov_log_delta(eps, eps0, k)

        return _root_increasing(fun, 0.0, basic, want="above")
    # best
    return min(_pure_eps_forward(eps0, k, delta, m, bounded_range)
               for m in ("optimal", "advanced", "zcdp"))


def pure_composition_epsilon(epsilon0, mechanisms, delta, method="best", *,
                             bounded_range=False):
    """Epsilon of ``mechanisms`` adaptive epsilon0-DP mechanisms at a given delta.

    Parameters
    ----------
    epsilon0 : float
        Per-mechanism pure DP parameter, ``>= 0``.
    mechanisms : int
        Number of mechanisms ``k >= 1``.
    delta : float
        Target delta in (0, 1).
    method : {"best", "optimal", "advanced", "zcdp", "basic"}, default="best"
        * ``"basic"``: ``k epsilon0``.
        * ``"advanced"``: Dwork, Rothblum and Vadhan (2010), as stated in Dwork and Roth
          (2014, Thm. 3.20) with the ``k eps0 (e^eps0 - 1)`` term:
          ``sqrt(2 k log(1/delta)) eps0 + k eps0 (e^eps0 - 1)`` (min with basic).
        * ``"optimal"``: the exact optimal homogeneous composition of Kairouz, Oh and
          Viswanathan (2017) (tight for general pure-DP mechanisms).
        * ``"zcdp"``: eps0-DP implies ``eps0^2/2``-zCDP (``eps0^2/8`` for bounded-range
          mechanisms), composed additively and converted by :func:`zcdp_to_dp`.
        * ``"best"``: the minimum of the above (all are valid).
    bounded_range : bool, default=False
        Whether each mechanism is epsilon0-bounded-range (e.g. the exponential
        mechanism); only changes ``"zcdp"`` (and hence ``"best"``).

    Returns
    -------
    epsilon : float
    """
    eps0 = _as_float(epsilon0, "epsilon0")
    if eps0 < 0:
        raise ValueError(f"epsilon0 must be >= 0, got {eps0}")
    k = _check_steps(mechanisms, "mechanisms")
    delta = _check_delta(delta)
    _check_method(method)
    return _pure_eps_forward(eps0, k, delta, method, bool(bounded_range))


def _calibrate_pure(epsilon, delta, k, method, bounded_range):
    basic = epsilon / k
    if method == "basic":
        return basic
    if method == "advanced":
        def fun(e0):
            return _advanced_epsilon(e0, k, delta) - epsilon
        hi = basic
        while fun(hi) <= 0:  # the advanced bound exceeds basic composition for large eps0
            hi *= 2.0
        adv = _root_increasing(fun, 0.0, hi, want="below")
        return max(adv, basic)
    if method == "zcdp":
        rho = _zcdp_max_rho(epsilon, delta)
        e0 = math.sqrt((8.0 if bounded_range else 2.0) * rho / k) * (1.0 - 1e-12)
        return max(e0, basic)
    if method == "optimal":
        # aim a hair (1e-10 relative) below delta so that any evaluation of the formula,
        # even a naive floating-point one, confirms the guarantee
        log_target = math.log(delta) + math.log1p(-1e-10)

        def fun(e0):  # increasing in e0; clamp -inf for Brent
            return max(_kov_log_delta(epsilon, e0, k), -1e4) - log_target

        lo, hi = basic, 2.0 * basic
        while fun(hi) <= 0:
            lo, hi = hi, 2.0 * hi
        return max(_root_increasing(fun, lo, hi, want="below"), basic)
    return max(_calibrate_pure(epsilon, delta, k, m, bounded_range)
               for m in ("optimal", "advanced", "zcdp"))


def calibrate_pure_composition(epsilon, delta, mechanisms, method="optimal", *,
                               bounded_range=False):
    """Largest per-mechanism epsilon0 such that ``mechanisms`` eps0-DP mechanisms are (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Total epsilon ``> 0``; ``inf`` returns ``inf``.
    delta : float
        Total delta in (0, 1).
    mechanisms : int
        Number ``k >= 1`` of adaptively composed epsilon0-DP mechanisms (e.g. ``2 T``
        for ``T`` iterations of DP-GCD: a report-noisy-max and a Laplace release each).
    method : {"optimal", "advanced", "zcdp", "basic", "best"}, default="optimal"
        See :func:`pure_composition_epsilon`. ``"advanced"`` solves the advanced
        composition bound numerically for epsilon0 and returns the maximum with the basic
        composition ``epsilon / k`` (also valid). ``"optimal"`` inverts the exact
        Kairouz-Oh-Viswanathan formula by bisection. ``"zcdp"`` maximises rho over orders
        in closed form for each order. ``"best"`` returns the largest of the three.
    bounded_range : bool, default=False
        Whether each mechanism is epsilon0-bounded-range (exponential mechanism); used
        by ``"zcdp"``.

    Returns
    -------
    epsilon0 : float
        Rounded down: plugged back into :func:`pure_composition_epsilon` with the same
        method it gives an epsilon ``<= epsilon``.

    Raises
    ------
    ValueError
        If an argument is out of range or NaN, or the method is unknown.
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    k = _check_steps(mechanisms, "mechanisms")
    _check_method(method)
    if math.isinf(epsilon):
        return math.inf
    bounded_range = bool(bounded_range)
    if method == "best":
        # each candidate below is safe for its own method, hence for the minimum
        return max(calibrate_pure_composition(epsilon, delta, k, m,
                                              bounded_range=bounded_range)
                   for m in ("optimal", "advanced", "zcdp"))
    e0 = _calibrate_pure(epsilon, delta, k, method, bounded_range)
    # safe by rounding: plugged back into the forward computation, epsilon is not exceeded
    while _pure_eps_forward(e0, k, delta, method, bounded_range) > epsilon:
        e0 *= 1.0 - 1e-12
    return e0


# --------------------------------------------------------------------------------------
# Budget split
# --------------------------------------------------------------------------------------
def split_budget(epsilon, delta, fractions, delta_fractions=None):
    """Split an (epsilon, delta) budget between the parts of a multi-part algorithm.

    Semantics: **basic composition** of the parts. If part ``i`` is run with
    ``(epsilon_i, delta_i) = (f_i epsilon, g_i delta)`` and each part is
    (epsilon_i, delta_i)-DP (given the outputs of the previous parts), the whole algorithm
    is (sum epsilon_i, sum delta_i)-DP, i.e. (epsilon, delta)-DP when the fractions sum to
    at most one. Example (DP-CD with private smoothness constants estimated with the
    Laplace mechanism, a pure-DP part)::

        (eps_m, _), (eps_opt, delta_opt) = split_budget(eps, delta, [0.1, 0.9], [0.0, 1.0])

    Parameters
    ----------
    epsilon : float
        Total epsilon ``> 0`` (``inf`` gives ``inf`` for every part).
    delta : float
        Total delta in [0, 1).
    fractions : sequence of float
        Epsilon fractions, each in (0, 1], summing to at most 1 (up to 1e-9).
    delta_fractions : sequence of float, optional
        Delta fractions, each in [0, 1], summing to at most 1. Defaults to
        ``fractions``. A part given ``delta_i = 0`` must be pure DP.

    Returns
    -------
    budgets : list of (float, float)
        ``(epsilon_i, delta_i)`` for each part; their sums never exceed the total.
    """
    epsilon = _check_epsilon(epsilon)
    delta = _as_float(delta, "delta")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    fr = np.asarray(fractions, dtype=float)
    if fr.ndim != 1 or fr.size == 0 or np.any(np.isnan(fr)) or np.any(fr <= 0) or np.any(fr > 1):
        raise ValueError("fractions must be a non-empty sequence of numbers in (0, 1]")
    if fr.sum() > 1.0 + 1e-9:
        raise ValueError(f"fractions must sum to at most 1, got {fr.sum()}")
    if delta_fractions is None:
        dfr = fr
    else:
        dfr = np.asarray(delta_fractions, dtype=float)
        if dfr.shape != fr.shape:
            raise ValueError("delta_fractions must have the same length as fractions")
        if np.any(np.isnan(dfr)) or np.any(dfr < 0) or np.any(dfr > 1):
            raise ValueError("delta_fractions must be numbers in [0, 1]")
        if dfr.sum() > 1.0 + 1e-9:
            raise ValueError(f"delta_fractions must sum to at most 1, got {dfr.sum()}")
    # rescale tiny round-off so that the parts never sum above the total
    efr = fr / fr.sum() if fr.sum() > 1.0 else fr
    dfr = dfr / dfr.sum() if dfr.sum() > 1.0 else dfr
    out = []
    for a, b in zip(efr, dfr):
        e = epsilon * float(a) * (1.0 - 1e-12) if math.isfinite(epsilon) else math.inf
        out.append((e, delta * float(b) * (1.0 - 1e-12)))
    return out


# --------------------------------------------------------------------------------------
# Ledger
# --------------------------------------------------------------------------------------
_RELATIONS = ("replace-one", "add-remove")


def _check_relation(relation):
    if relation not in _RELATIONS:
        raise ValueError(f"relation must be one of {_RELATIONS}, got {relation!r}")
    return relation


class _Entry:
    __slots__ = ("name", "kind", "count", "relation", "sensitivity", "noise_multiplier",
                 "epsilon0", "sampling_rate")

    def __init__(self, name, kind, count, relation, sensitivity=None,
                 noise_multiplier=None, epsilon0=None, sampling_rate=None):
        self.name = str(name)
        self.kind = kind
        self.count = count
        self.relation = relation
        self.sensitivity = sensitivity
        self.noise_multiplier = noise_multiplier
        self.epsilon0 = epsilon0
        self.sampling_rate = sampling_rate

    def rdp(self, orders):
        c = self.count
        if self.kind == "gaussian":
            return c * rdp_gaussian(self.noise_multiplier, orders)
        if self.kind == "laplace":
            return c * rdp_laplace(self.noise_multiplier, orders)
        if self.kind == "pure":
            return c * rdp_pure(self.epsilon0, orders)
        if self.kind == "bounded_range":
            return c * rdp_bounded_range(self.epsilon0, orders)
        if self.kind == "sampled_gaussian":
            return c * rdp_sampled_gaussian(self.noise_multiplier, self.sampling_rate, orders)
        if self.kind == "sampled_gaussian_wor":
            return c * rdp_sampled_gaussian_wor(self.noise_multiplier, self.sampling_rate,
                                                orders)
        raise AssertionError(self.kind)  # pragma: no cover

    @property
    def pure_epsilon(self):
        """Pure-DP parameter of one use, or None if not pure."""
        if self.kind in ("pure", "bounded_range"):
            return self.epsilon0
        if self.kind == "laplace":
            b = self.noise_multiplier
            return math.inf if b == 0 else 1.0 / b
        return None

    def as_dict(self):
        return {s: getattr(self, s) for s in self.__slots__}

    def describe(self):
        parts = [f"{self.name}: {self.kind}"]
        if self.kind in ("gaussian", "sampled_gaussian", "sampled_gaussian_wor"):
            parts.append(f"z={self.noise_multiplier:.6g}")
        if self.kind == "laplace":
            parts.append(f"b={self.noise_multiplier:.6g} (eps0={self.pure_epsilon:.6g})")
        if self.kind in ("pure", "bounded_range"):
            parts.append(f"eps0={self.epsilon0:.6g}")
        if self.sampling_rate is not None:
            parts.append(f"q={self.sampling_rate:.6g}")
        if self.sensitivity is not None:
            parts.append(f"sensitivity={self.sensitivity:.6g}")
            if self.noise_multiplier is not None:
                parts.append(f"noise scale={self.noise_multiplier * self.sensitivity:.6g}")
        parts.append(f"x {self.count}")
        parts.append(f"[{self.relation}]")
        return ", ".join(parts[:1]) + " " + ", ".join(parts[1:])


class PrivacyLedger:
    """Record of the private mechanisms a fit used, and its total (epsilon, delta).

    Each ``add_*`` method records a mechanism with its name, neighbouring relation,
    sensitivity (informational), noise and number of uses. :meth:`get_epsilon` computes
    the total epsilon at a delta by the tightest valid method among:

    * only (non-subsampled) Gaussians: **exact** GDP composition,
      ``mu = sqrt(sum count / z^2)`` (:func:`gdp_epsilon`);
    * only pure mechanisms (pure, Laplace, bounded-range) with a common epsilon0: the best
      of optimal (Kairouz-Oh-Viswanathan), advanced and zCDP composition
      (:func:`pure_composition_epsilon`); heterogeneous: heterogeneous advanced
      composition ``sqrt(2 log(1/delta) sum eps_i^2) + sum eps_i (e^eps_i - 1)`` and zCDP;
    * always: RDP composition of all parts (:func:`rdp_to_dp`), and zCDP for the
      mixtures of Gaussians and pure mechanisms;
    * with several groups (Gaussian / pure / subsampled): each group accounted by its best
      method at a share of delta, combined by basic composition, over a grid of delta
      splits.

    The minimum over these valid bounds is reported. All mechanisms of a ledger must use
    the same neighbouring relation (the default is replace-one; Poisson subsampling
    requires ``relation="add-remove"``).

    Two more kinds of record change the total:

    * a **leak** (:meth:`add_leak`, a data-dependent quantity used without budget)
      makes the fit not private: the total epsilon is ``inf`` and ``str()`` names
      the leaks (``get_epsilon(delta, ignore_leaks=True)`` gives what the accounted
      mechanisms alone would spend, a figure that is then void);
    * **floating-point sampler slack** (:meth:`add_sampler_error`: draws whose law is
      within ``exp(+-eta)`` of the ideal one) adds ``2 H`` to epsilon, evaluated at
      ``delta e^-H``, with ``H = sum eta * count``.

    Asking for epsilon (:attr:`epsilon`, :meth:`get_epsilon`, ``str()``) never changes
    the ledger.

    Parameters
    ----------
    delta : float, optional
        Target delta used by the :attr:`epsilon` property and ``str()``.
    relation : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the whole ledger.

    Examples
    --------
    >>> ledger = PrivacyLedger(delta=1e-5)
    >>> ledger.add_gaussian("coordinate gradients", noise_multiplier=20.0, count=1000)
    >>> round(ledger.epsilon, 3) == round(gaussian_epsilon(20.0, 1000, 1e-5), 3)
    True
    """

    def __init__(self, delta=None, relation="replace-one"):
        self._delta = None if delta is None else _check_delta(delta)
        self.relation = _check_relation(relation)
        self.entries = []
        self.leaks = []
        self.sampler_errors = []
        self.sampler_tvs = []

    # ---- recording -----------------------------------------------------------------
    def _add(self, entry):
        if entry.relation != self.relation:
            raise ValueError(
                f"mechanism {entry.name!r} uses the {entry.relation!r} neighbouring relation "
                f"but the ledger uses {self.relation!r}; account them in separate ledgers")
        self.entries.append(entry)
        return self

    @staticmethod
    def _count(count):
        return _check_steps(count, "count")

    @staticmethod
    def _sens(sensitivity):
        if sensitivity is None:
            return None
        s = _as_float(sensitivity, "sensitivity")
        if s < 0:
            raise ValueError(f"sensitivity must be >= 0, got {s}")
        return s

    def add_gaussian(self, name, noise_multiplier, count=1, sensitivity=None,
                     relation="replace-one"):
        """Record ``count`` adaptive Gaussian releases with multiplier ``z = sigma / Delta_2``.

        Parameters
        ----------
        name : str
            Human-readable name (e.g. ``"coordinate gradients"``).
        noise_multiplier : float
            ``z = sigma / Delta_2 >= 0``.
        count : int, default=1
            Number of releases.
        sensitivity : float, optional
            L2 sensitivity ``Delta_2`` under ``relation`` (informational; with it the
            noise scale ``sigma = z Delta_2`` is displayed).
        relation : {"replace-one", "add-remove"}, default="replace-one"
            Neighbouring relation under which the sensitivity holds.
        """
        self._add(_Entry(name, "gaussian", self._count(count), _check_relation(relation),
                         self._sens(sensitivity), noise_multiplier=_check_noise(noise_multiplier)))

    def add_laplace(self, name, noise_multiplier, count=1, sensitivity=None,
                    relation="replace-one"):
        """Record ``count`` Laplace releases with ``b = scale / Delta_1`` (each 1/b-DP).

        Parameters
        ----------
        name : str
        noise_multiplier : float
            ``b = scale / Delta_1 >= 0``.
        count : int, default=1
        sensitivity : float, optional
            L1 sensitivity ``Delta_1`` (informational).
        relation : {"replace-one", "add-remove"}, default="replace-one"
        """
        self._add(_Entry(name, "laplace", self._count(count), _check_relation(relation),
                         self._sens(sensitivity), noise_multiplier=_check_noise(noise_multiplier)))

    def add_pure(self, name, epsilon0, count=1, sensitivity=None, relation="replace-one"):
        """Record ``count`` adaptive epsilon0-DP mechanisms (e.g. Laplace report-noisy-max).

        Parameters
        ----------
        name : str
        epsilon0 : float
            Pure DP parameter of one use, ``>= 0``.
        count : int, default=1
        sensitivity : float, optional
            Informational.
        relation : {"replace-one", "add-remove"}, default="replace-one"
        """
        e = _as_float(epsilon0, "epsilon0")
        if e < 0:
            raise ValueError(f"epsilon0 must be >= 0, got {e}")
        self._add(_Entry(name, "pure", self._count(count), _check_relation(relation),
                         self._sens(sensitivity), epsilon0=e))

    def add_bounded_range(self, name, epsilon0, count=1, sensitivity=None,
                          relation="replace-one"):
        """Record ``count`` epsilon0-bounded-range mechanisms (exponential mechanism).

        Only for mechanisms proven bounded-range (see :func:`rdp_bounded_range`).

        Parameters
        ----------
        name : str
        epsilon0 : float
        count : int, default=1
        sensitivity : float, optional
        relation : {"replace-one", "add-remove"}, default="replace-one"
        """
        e = _as_float(epsilon0, "epsilon0")
        if e < 0:
            raise ValueError(f"epsilon0 must be >= 0, got {e}")
        self._add(_Entry(name, "bounded_range", self._count(count), _check_relation(relation),
                         self._sens(sensitivity), epsilon0=e))

    add_exponential = add_bounded_range

    def add_sampled_gaussian(self, name, noise_multiplier, sampling_rate, count=1,
                             sensitivity=None, relation="add-remove"):
        """Record ``count`` Poisson-subsampled Gaussian releases (add/remove neighbours).

        Parameters
        ----------
        name : str
        noise_multiplier : float
        sampling_rate : float
            Poisson sampling probability in (0, 1].
        count : int, default=1
        sensitivity : float, optional
        relation : {"add-remove"}, default="add-remove"
            Only add/remove is supported by this analysis.
        """
        if relation != "add-remove":
            raise ValueError("the Poisson-subsampled Gaussian is analysed under the "
                             "'add-remove' relation only")
        self._add(_Entry(name, "sampled_gaussian", self._count(count), relation,
                         self._sens(sensitivity), noise_multiplier=_check_noise(noise_multiplier),
                         sampling_rate=_check_sampling_rate(sampling_rate)))

    def add_sampled_gaussian_wor(self, name, noise_multiplier, sampling_rate, count=1,
                                 sensitivity=None, relation="replace-one"):
        """Record ``count`` fixed-size subsampled (without replacement) Gaussian releases.

        Parameters
        ----------
        name : str
        noise_multiplier : float
        sampling_rate : float
            Batch fraction ``m / n`` in (0, 1].
        count : int, default=1
        sensitivity : float, optional
        relation : {"replace-one"}, default="replace-one"
        """
        if relation != "replace-one":
            raise ValueError("subsampling without replacement is analysed under the "
                             "'replace-one' relation only")
        self._add(_Entry(name, "sampled_gaussian_wor", self._count(count), relation,
                         self._sens(sensitivity), noise_multiplier=_check_noise(noise_multiplier),
                         sampling_rate=_check_sampling_rate(sampling_rate)))

    def add_leak(self, name, description):
        """Record a quantity computed from the data without spending budget.

        The fit is then **not** differentially private: :attr:`private` turns
        False, :attr:`epsilon` and :meth:`get_epsilon` return ``inf`` (unless
        ``ignore_leaks=True``) and ``str()`` names what leaked.  Solvers record a
        leak when, for instance, smoothness constants are computed from the data
        (and emit a :class:`~sparsedp.exceptions.PrivacyLeakWarning`).
        """
        self.leaks.append((str(name), str(description)))

    def add_sampler_error(self, name, eta, count=1):
        """Record the floating-point slack of ``count`` noise draws.

        Each of the ``count`` draws has a law within a factor ``exp(+-eta)`` of
        the ideal law its mechanism is accounted with: for every output ``x``,
        ``exp(-eta) P(x) <= P~(x) <= exp(eta) P(x)``.  With
        ``H = sum eta * count`` over all such entries, a run that is
        ``(eps, delta)``-DP with ideal draws is ``(eps + 2 H, e^H delta)``-DP with
        the real ones, so :meth:`get_epsilon` at ``delta`` returns the ideal
        epsilon at ``delta e^-H``, plus ``2 H``.

        Proof: the real law of the whole run is within ``exp(+-H)`` of the ideal
        one (the draws' factors multiply), so for any event S,
        ``P~_D(S) <= e^H P_D(S) <= e^H (e^eps P_D'(S) + delta)
        <= e^(eps + 2H) P~_D'(S) + e^H delta``.

        Parameters
        ----------
        name : str
            Which draws (e.g. ``"Laplace noise of the gradient"``).
        eta : float
            Log-ratio bound of one draw, finite and ``>= 0``.
        count : int, default=1
            Number of such draws.
        """
        eta = _as_float(eta, "eta")
        if not (math.isfinite(eta) and eta >= 0):
            raise ValueError(f"eta must be finite and >= 0, got {eta}")
        self.sampler_errors.append((str(name), eta, self._count(count)))

    def add_sampler_tv(self, name, tau, count=1):
        """Record ``count`` draws whose law is within total variation ``tau`` of the ideal law.

        With ``T = sum tau * count`` over all such entries, the law of the whole
        run is within total variation T of the ideal run's, so an ideal
        ``(eps, delta)``-DP run is ``(eps, delta + (1 + e^eps) T)``-DP: for any
        event S, ``P~_D(S) <= P_D(S) + T <= e^eps P_D'(S) + delta + T <= e^eps
        P~_D'(S) + delta + (1 + e^eps) T``.  :meth:`get_epsilon` at ``delta``
        accounts the ideal run at ``delta - (1 + e^eps_a) T``, with ``eps_a`` the
        ideal epsilon at ``delta / 2`` (an upper bound of the answer).

        Parameters
        ----------
        name : str
        tau : float
            Total-variation bound of one draw, finite and ``>= 0``.
        count : int, default=1
        """
        tau = _as_float(tau, "tau")
        if not (math.isfinite(tau) and tau >= 0):
            raise ValueError(f"tau must be finite and >= 0, got {tau}")
        self.sampler_tvs.append((str(name), tau, self._count(count)))

    def _tv_delta(self, delta):
        """The delta left for the ideal run once the samplers' total variation is paid."""
        total = math.fsum(tau * count for _, tau, count in self.sampler_tvs) * (1 + 1e-12)
        if total == 0.0:
            return delta
        eps_a = self._ideal_epsilon(delta / 2.0)[0]
        left = delta - (1.0 + math.exp(min(eps_a, 700.0))) * total
        return left if left >= delta / 2.0 else 0.0

    @property
    def private(self):
        """False if any data-dependent quantity was computed without budget."""
        return not self.leaks

    def _sampler_slack(self):
        """H = sum of eta * count over the floating-point sampler entries (rounded up)."""
        if not self.sampler_errors:
            return 0.0
        h = math.fsum(eta * count for _, eta, count in self.sampler_errors)
        return math.nextafter(h, math.inf) if h > 0 else 0.0

    # ---- accounting ------------------------------------------------------------------
    @property
    def delta(self):
        """Target delta (None until set)."""
        return self._delta

    @delta.setter
    def delta(self, value):
        self._delta = None if value is None else _check_delta(value)

    @property
    def epsilon(self):
        """Total epsilon at :attr:`delta` (requires a delta to be set).

        ``inf`` if a leak was recorded (:meth:`add_leak`): the fit is not private.
        """
        if self._delta is None:
            raise ValueError("set ledger.delta (or pass delta=) before asking for epsilon")
        return self.get_epsilon(self._delta)

    def __len__(self):
        return len(self.entries)

    def _group_candidates(self, entries, delta):
        """[(epsilon, method)] valid bounds for a set of entries at delta."""
        if not entries:
            return [(0.0, "empty")]
        cands = []
        orders = DEFAULT_ORDERS
        rdp = sum(e.rdp(orders) for e in entries)
        cands.append((rdp_to_dp(orders, rdp, delta), "rdp"))
        kinds = {e.kind for e in entries}
        if kinds <= {"gaussian"}:
            zs = [e.noise_multiplier for e in entries]
            if any(z == 0 for z in zs):
                return [(math.inf, "gdp")]
            mu = math.sqrt(sum(e.count / e.noise_multiplier ** 2 for e in entries))
            cands.append((_gdp_epsilon(mu, delta), "gdp"))
        if kinds <= {"pure", "laplace", "bounded_range"}:
            eps0s = [e.pure_epsilon for e in entries]
            k = sum(e.count for e in entries)
            if len(set(eps0s)) == 1:
                e0 = eps0s[0]
                for m in ("optimal", "advanced"):
                    cands.append((_pure_eps_forward(e0, k, delta, m, False), m))
            else:
                s2 = sum(e.count * e.pure_epsilon ** 2 for e in entries)
                s1 = sum(e.count * e.pure_epsilon * math.expm1(e.pure_epsilon)
                         for e in entries)
                cands.append((math.sqrt(2 * math.log(1 / delta) * s2) + s1, "advanced"))
            cands.append((sum(e.count * e.pure_epsilon for e in entries), "basic"))
        if kinds <= {"pure", "laplace", "bounded_range", "gaussian"}:
            rho = 0.0
            for e in entries:
                if e.kind == "gaussian":
                    z = e.noise_multiplier
                    rho += math.inf if z == 0 else e.count / (2.0 * z * z)
                else:
                    e0 = e.pure_epsilon
                    rho += e.count * e0 * e0 / (8.0 if e.kind == "bounded_range" else 2.0)
            cands.append((zcdp_to_dp(rho, delta), "zcdp"))
        return cands

    def _groupings(self):
        """Partitions of the entries to compose separately (basic composition across).

        By kind (Gaussian / pure), and by per-mechanism epsilon (pure entries of
        equal epsilon together, e.g. a smoothness estimate at epsilon' apart from
        the iterations at epsilon0), when that is a different partition.
        """
        by_kind, by_eps = {}, {}
        for e in self.entries:
            g = {"gaussian": "gaussian", "laplace": "pure", "pure": "pure",
                 "bounded_range": "pure"}.get(e.kind, e.kind)
            by_kind.setdefault(g, []).append(e)
            key = g if e.pure_epsilon is None else ("pure", float(f"{e.pure_epsilon:.12g}"))
            by_eps.setdefault(key, []).append(e)
        out = []
        for groups in (by_kind, by_eps):
            glist = list(groups.values())
            parts = sorted(tuple(sorted(map(id, g))) for g in glist)
            if len(glist) >= 2 and all(parts != p for p, _ in out):
                out.append((parts, glist))
        return [glist for _, glist in out]

    def _split_candidates(self, glist, delta):
        """Basic composition of separately composed groups, delta split between them."""
        cands = []
        shares_grid = [np.full(len(glist), 1.0 / len(glist))]
        if len(glist) == 2:
            shares_grid = [np.array([s, 1 - s]) for s in
                           (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)]
        for shares in shares_grid:
            total = 0.0
            for g, s in zip(glist, shares):
                total += min(c[0] for c in self._group_candidates(g, delta * s))
            cands.append((total, "split"))
        # a purely pure-DP group may take no delta at all (basic composition)
        for i, g in enumerate(glist):
            if all(e.pure_epsilon is not None for e in g):
                total = sum(e.count * e.pure_epsilon for e in g)
                for h in glist[:i] + glist[i + 1:]:
                    total += min(c[0] for c in self._group_candidates(
                        h, delta / (len(glist) - 1)))
                cands.append((total, "split"))
        return cands

    def get_epsilon(self, delta=None, *, return_method=False, ignore_leaks=False):
        """Total epsilon at ``delta`` by the tightest valid method.

        Asking never changes the ledger.

        With a leak recorded (:meth:`add_leak`) the fit is not private and the
        answer is ``inf`` (method ``"leak"``), unless ``ignore_leaks=True``.

        With floating-point sampler slack (:meth:`add_sampler_error`,
        ``H = sum eta * count``) the answer is the accounted mechanisms' epsilon
        at ``delta * exp(-H)``, plus ``2 H``: the real run is
        ``(eps + 2 H, e^H delta e^-H) = (eps + 2 H, delta)``-DP (rounded on the
        safe side; ``H = 0`` changes nothing).

        Parameters
        ----------
        delta : float, optional
            Target delta in (0, 1); defaults to :attr:`delta`.
        return_method : bool, default=False
            Also return the name of the method achieving the minimum.
        ignore_leaks : bool, default=False
            Report what the accounted mechanisms alone would spend, even if
            something leaked (for experiments; that figure is void as a
            guarantee).

        Returns
        -------
        epsilon : float
        method : str
            Only if ``return_method``.
        """
        if delta is None:
            delta = self._delta
            if delta is None:
                raise ValueError("delta must be given (or set on the ledger)")
        delta = _check_delta(delta)
        if self.leaks and not ignore_leaks:
            return (math.inf, "leak") if return_method else math.inf
        delta = self._tv_delta(delta)
        if delta <= 0.0:
            return (math.inf, "sampler slack") if return_method else math.inf
        eps, method = self._ideal_epsilon(delta)
        return (eps, method) if return_method else eps

    def _ideal_epsilon(self, delta):
        """(epsilon, method) at delta with the multiplicative sampler slack H."""
        slack = self._sampler_slack()
        if slack > 0:
            # delta e^-H, rounded down (exp and the product are each within an ulp)
            delta = math.nextafter(math.nextafter(delta * math.exp(-slack), 0.0), 0.0)
            if delta <= 0.0:
                return math.inf, "sampler slack"
        cands = self._group_candidates(self.entries, delta)
        for glist in self._groupings():
            cands.extend(self._split_candidates(glist, delta))
        eps, method = min(cands, key=lambda c: c[0])
        if slack > 0:
            eps = math.nextafter(eps + 2.0 * slack, math.inf)
        return eps, method

    def to_list(self):
        """List of dicts describing each recorded mechanism."""
        return [e.as_dict() for e in self.entries]

    def __repr__(self):
        return f"PrivacyLedger(delta={self._delta!r}, relation={self.relation!r}, " \
               f"{len(self.entries)} mechanisms)"

    def __str__(self):
        lines = [f"PrivacyLedger ({self.relation} neighbours)"]
        if not self.entries:
            lines.append("  (no mechanism recorded)")
        for e in self.entries:
            lines.append("  - " + e.describe())
        for name, eta, count in self.sampler_errors:
            lines.append(f"  ~ {name}: floating-point sampler: {count} draws within "
                         f"exp(+-{eta:.6g}) of the ideal law")
        for name, tau, count in self.sampler_tvs:
            lines.append(f"  ~ {name}: floating-point sampler: {count} draws within "
                         f"total variation {tau:.3g} of the ideal law")
        for name, description in self.leaks:
            lines.append(f"  ! NOT PRIVATE: {name}: {description}")
        if self._delta is None:
            lines.append("Total: set a delta to compute epsilon")
        elif self.leaks:
            eps, method = self.get_epsilon(self._delta, return_method=True,
                                           ignore_leaks=True)
            names = ", ".join(name for name, _ in self.leaks)
            lines.append(f"Total: (inf, {self._delta:.3g})-DP: NOT PRIVATE, leaks: {names} "
                         f"(void: the accounted mechanisms alone would spend "
                         f"({eps:.6g}, {self._delta:.3g}) [{method}])")
        else:
            eps, method = self.get_epsilon(self._delta, return_method=True)
            slack = (" incl. floating-point sampler slack"
                     if self.sampler_errors or self.sampler_tvs else "")
            lines.append(f"Total: ({eps:.6g}, {self._delta:.3g})-DP [{method}{slack}]")
        return "\n".join(lines)
