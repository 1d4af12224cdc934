"""Privacy loss distributions (PLD): the tight accounting of compositions.

The privacy loss of a pair of output laws ``(P, Q)`` is ``L = log(P(x) / Q(x))``
with ``x ~ P``; its hockey-stick curve is ``delta(eps) = E[(1 - e^(eps - L))_+]
+ P(L = inf)``.  A composition adds independent losses, so its PLD is the
convolution of the PLDs (Dwork and Rothblum 2016; Sommer, Meiser and Mohammadi
2019; Koskela, Jälkö and Honkela 2020).  Here:

* each mechanism's PLD is a pmf on the grid ``{i h}`` (``h = grid``, default
  ``1e-4``) plus a mass at ``+inf``, built **pessimistically** by
  connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar and Manurangsi 2022): its
  hockey-stick curve interpolates the exact one linearly in ``e^eps`` between
  the grid points, and so lies above it everywhere (the exact curve is convex
  in ``e^eps``), without the ``h / 2`` per step bias of rounding each loss up;
* the loss beyond the top of the grid (where the exact curve is below
  ``e^-50``) is put at ``+inf``, the loss below the bottom on the bottom point
  (the curve left of it is the chord from ``(0, 1)``, again above the exact
  one);
* compositions are computed by FFT, ``k`` copies by the ``k``-th power in the
  Fourier domain, on a window of the total loss chosen by Chernoff bounds; the
  mass outside the window (bounded by the same Chernoff bounds), the mass the
  circular convolution wraps around (it only adds mass inside the window) and a
  **bound** of the floating-point error of the transforms and powers (derived
  for radix-2 FFTs, with a conservative constant for pocketfft's passes; see
  :func:`_compose_direction`) are all **counted in delta**;
* a pair of neighbouring relations' directions is kept apart: under add/remove
  the "remove" direction (``P`` with the example, ``Q`` without) and the "add"
  direction are composed separately and the larger delta is reported.

Every delta returned is an upper bound, and every epsilon the smallest one
(rounded up) at which it meets the target.
"""
import math
from functools import lru_cache

import numpy as np
from scipy import fft, special

from .._validation import check_real
from ._checks import (check_calibration, check_count, check_delta, check_noise, check_nonneg,
                      check_sampling_rate)
from ._root import bracket_root, epsilon_of_curve, refine_root
from ._spectral_power import CMUL as _CMUL, TINY as _TINY, U as _U, spectral_power
from .gdp import gdp_log_delta_array
from .rdp import calibrate_sampled_gaussian, sampled_gaussian_epsilon

__all__ = ["DEFAULT_GRID", "LossDistribution", "PrivacyLossDistribution",
           "calibrate_sampled_gaussian_pld", "compose", "gaussian_pld", "laplace_pld",
           "pure_pld", "sampled_gaussian_epsilon_pld", "sampled_gaussian_pld"]

#: Default spacing of the privacy-loss grid (a coarser one, such as 1e-2, can be
#: looser than RDP).
DEFAULT_GRID = 1e-4
#: log of the mass of each end of a mechanism's loss left off its grid
_LOG_TAIL = -50.0
#: mass of a composition's loss left out of its FFT window (counted in delta)
_WINDOW_TAIL = 1e-15
#: largest grid of one mechanism and largest FFT window (beyond: coarser, still valid)
_MAX_POINTS = 1 << 22
#: the forward transforms and powers, whose error the k-th power multiplies by k, run in
#: extended precision where numpy has it (x86's 80-bit long double: u = 2^-64)
_WIDE = np.longdouble if np.finfo(np.longdouble).eps < np.finfo(float).eps else np.float64
_U_WIDE = float(np.finfo(_WIDE).eps) / 2.0
#: error of one radix-2 level of an FFT, in units of ``_U`` times the input's l1 norm
#: (derived: 3.9 for the butterfly plus the twiddles' error, see _compose_direction;
#: taken four times larger for pocketfft's radix-4 and real-input passes)
_FFT_LEVEL = 16.0
# Chernoff orders span from 0.5 to 200 per standard deviation of the total loss (light
# tails) and from 0.05 to 500 per unit of loss (heavy tails, where the best order is
# near the best RDP order)
_N_ORDERS = 16


#: the largest privacy loss a grid PLD represents: beyond it ``e^loss`` leaves floating
#: point and the grid its memory and time (z below about 0.2 at rate 1: epsilon in the
#: tens), so the PLD of such a mechanism is the pessimistic one, all its mass at +inf
#: (the RDP bound then applies)
_MAX_LOSS = 100.0


def _top_loss(z, q):
    """The largest privacy loss a Gaussian (q = 1) or Poisson-subsampled Gaussian PLD
    spans (its mass beyond is below e^_LOG_TAIL), in either direction."""
    mu = 1.0 / z
    if q == 1.0:
        return 0.5 * mu * mu + _TAIL_SDS * mu
    u_hi = (2.0 * (1.0 + _TAIL_SDS * z) - 1.0) * 0.5 * mu * mu
    return max(float(np.logaddexp(math.log1p(-q), math.log(q) + u_hi)), -math.log1p(-q))


def _check_grid(grid):
    return check_real(grid, "grid", high=1.0, include_high=True)


class LossDistribution:
    """One direction's privacy loss: a pmf on ``{(offset + i) grid}`` and a mass at ``+inf``.

    Parameters
    ----------
    grid : float
        Spacing ``h`` of the loss values.
    offset : int
        The loss of ``pmf[0]`` is ``offset * h``.
    pmf : ndarray
        Non-negative masses (read-only).
    infinity_mass : float
        Mass of the loss ``+inf`` (outputs impossible under ``Q``).
    upper_tail, lower_tail : float, default=0.0
        Bounds of the mass above the last and below the first grid value that a
        composition left out of its window: the first always counts in delta,
        the second when the first grid value exceeds epsilon.
    roundoff : float, default=0.0
        Bound of the floating-point error of each entry of ``pmf`` (before its
        negative entries were set to 0, which cannot increase the error of a
        non-negative true mass); at ``epsilon`` it adds ``roundoff`` times the
        sum of the weights ``1 - e^(epsilon - loss)`` of the entries above
        ``epsilon`` to delta.
    """

    def __init__(self, grid, offset, pmf, infinity_mass, *, upper_tail=0.0, lower_tail=0.0,
                 roundoff=0.0):
        self.grid, self.offset = float(grid), int(offset)
        self.pmf = np.asarray(pmf, dtype=float)
        self.pmf.flags.writeable = False
        self.infinity_mass = float(infinity_mass)
        self.upper_tail, self.lower_tail, self.roundoff = upper_tail, lower_tail, roundoff

    @property
    def losses(self):
        """The loss value of each entry of :attr:`pmf`."""
        return (self.offset + np.arange(self.pmf.size)) * self.grid

    def log_delta(self, epsilon):
        """``log delta(epsilon)``: the hockey-stick divergence of this loss, with its slack."""
        if math.isinf(epsilon):
            return math.log(self.infinity_mass) if self.infinity_mass > 0 else -math.inf
        h = self.grid
        first = min(max(math.floor(epsilon / h) - self.offset, 0), self.pmf.size)
        losses = (self.offset + np.arange(first, self.pmf.size)) * h
        weights = np.maximum(-np.expm1(epsilon - losses), 0.0)
        # rounding: each weight within 4 u max(|loss|, |epsilon|, 1) of its value at the
        # exact grid point, and a sum of m non-negative terms within a factor 1 + m u
        top = max(abs(float(losses[-1])) if losses.size else 0.0, abs(epsilon), 1.0)
        slack = 4.0 * _U * top * float(self.pmf[first:].sum())
        total = (float((self.pmf[first:] * weights).sum()) + self.roundoff * float(weights.sum())
                 + slack) * (1.0 + (losses.size + 4) * 2.0 * _U) \
            + self.infinity_mass + self.upper_tail
        if self.offset * h > epsilon:
            total += self.lower_tail
        return math.log(min(total, 1.0)) if total > 0.0 else -math.inf

    def _log_mgf(self, orders):
        """``log sum_i pmf_i e^(t loss_i)`` at each order ``t`` (-inf for an empty pmf)."""
        nz = self.pmf > 0
        if not nz.any():
            return np.full(np.shape(orders), -np.inf)
        logp, losses = np.log(self.pmf[nz]), self.losses[nz]
        out = np.empty(np.shape(orders))
        for j, t in enumerate(orders):
            v = logp + t * losses
            top = v.max()
            out[j] = top + math.log(float(np.exp(v - top).sum()))
        return out

    def _moments(self):
        """(mass, mean, variance) of the finite part, in grid units."""
        mass = float(self.pmf.sum())
        if mass <= 0:
            return 0.0, 0.0, 0.0
        idx = np.arange(self.pmf.size, dtype=float)
        mean = float((self.pmf * idx).sum()) / mass
        idx -= mean
        return mass, mean + self.offset, float((self.pmf * idx * idx).sum()) / mass


class PrivacyLossDistribution:
    """The privacy loss of a mechanism (or composition) in both directions.

    Parameters
    ----------
    remove : LossDistribution
        Loss of ``(P, Q)`` = (outputs with the example, outputs without it).
    add : LossDistribution, optional
        Loss of the reverse pair; omitted (the same) for symmetric mechanisms.

    The curve of the mechanism is the larger of the two directions' curves.
    """

    def __init__(self, remove, add=None):
        self.remove = remove
        self.add = remove if add is None else add

    @property
    def symmetric(self):
        """Whether both directions are one distribution."""
        return self.add is self.remove

    @property
    def directions(self):
        """The distinct directions (one if symmetric)."""
        return (self.remove,) if self.symmetric else (self.remove, self.add)

    def log_delta(self, epsilon):
        """``log delta(epsilon)``, the larger over both directions (an upper bound)."""
        return max(d.log_delta(epsilon) for d in self.directions)

    def epsilon(self, delta):
        """The smallest epsilon (rounded up) at which this loss is (epsilon, delta)-DP."""
        log_target = math.log(delta)
        if self.log_delta(0.0) <= log_target:
            return 0.0
        if max(math.log(d.infinity_mass + d.upper_tail) if d.infinity_mass + d.upper_tail > 0
               else -math.inf for d in self.directions) >= log_target:
            return math.inf
        # delta(eps) <= P(L > eps): the grid value where that mass drops below delta
        # is an upper bound of the answer
        guess = 0.0
        for d in self.directions:
            above = np.cumsum(d.pmf[::-1])[::-1] + d.infinity_mass + d.upper_tail
            j = int(np.searchsorted(-above, -delta, side="left"))
            guess = max(guess, (d.offset + j) * d.grid)
        return epsilon_of_curve(self.log_delta, delta, max(guess, 1e-8))

    def compose(self, count):
        """The PLD of ``count`` adaptive uses of a single mechanism (see :func:`compose`)."""
        return compose([(self, count)])


# --------------------------------------------------------------------------------------
# Connect-the-dots (Doroshenko et al. 2022, Algorithm 1, with the left chord to (0, 1))
# --------------------------------------------------------------------------------------
def _connect_dots(log_delta_curve, log_reverse_curve, lo, hi, grid, points=None):
    """The pessimistic grid PLD of an exact hockey-stick curve.

    ``log_delta_curve(eps)`` is ``log delta(eps)`` for ``eps >= 0`` and
    ``log_reverse_curve(eps)`` that of the reverse pair ``(Q, P)``, which gives
    the curve at ``eps < 0``: ``delta(eps) = 1 - e^eps + e^eps delta_rev(-eps)``
    (both distributions have mass 1).  The loss values ``i * grid`` for the grid
    indices ``i`` in ``points`` (sorted, default every ``lo <= i <= hi``; 0 is
    added) get the masses whose hockey-stick curve is the chord of the exact
    one (linear in ``x = e^eps``) between consecutive points, the chord from
    ``(0, 1)`` to the first point left of them and ``delta`` at the last point
    (the mass at ``+inf``) right of them.

    The masses are the second differences in ``x`` of ``g = delta - (1 - x)_+``
    (small numbers, each with its relative precision), plus 1 at ``eps = 0``
    from the kink of ``(1 - x)_+``; masses that round below zero are moved to
    ``+inf``.
    """
    if points is None:
        lo, hi = min(lo, 0), max(hi, 0)
        if hi - lo + 1 > _MAX_POINTS:  # coarse at the top: that mass goes to +inf
            hi = max(lo + _MAX_POINTS - 1, 0)
            lo = min(lo, hi - _MAX_POINTS + 1)
        points = np.arange(lo, hi + 1)
    else:
        points = np.union1d(np.asarray(points, dtype=np.int64), [0])
    eps = points * grid
    neg = int(np.searchsorted(points, 0))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_g = np.concatenate([eps[:neg] + log_reverse_curve(-eps[:neg]),
                                log_delta_curve(eps[neg:])])
        g = np.exp(np.where(np.isnan(log_g), 0.0, log_g))
    x = np.exp(eps)
    slopes = np.empty(eps.size + 1)
    slopes[0] = g[0] / x[0]
    slopes[1:-1] = np.diff(g) / (x[:-1] * np.expm1(np.diff(eps)))
    slopes[-1] = 0.0
    masses = x * np.diff(slopes)
    masses[neg] += 1.0
    negative = float(-masses[masses < 0].sum())
    masses = np.maximum(masses, 0.0)
    infinity = min(float(g[-1]) + negative, 1.0)
    pmf = np.zeros(points[-1] - points[0] + 1)
    pmf[points - points[0]] = masses
    return LossDistribution(grid, points[0], pmf, infinity)


def _span(lo_loss, hi_loss, grid):
    """Grid indices enclosing ``[lo_loss, hi_loss]``."""
    lo = math.floor(lo_loss / grid)
    hi = max(math.ceil(hi_loss / grid), lo + 1)
    return lo, hi


# Number of standard deviations of a Gaussian beyond which the mass is below e^_LOG_TAIL
_TAIL_SDS = float(-special.ndtri(math.exp(_LOG_TAIL)))


def _infinite_pld(grid):
    return PrivacyLossDistribution(LossDistribution(grid, 0, np.zeros(1), 1.0))


@lru_cache(maxsize=64)
def _gaussian(mu, grid):
    if math.isinf(mu) or _top_loss(1.0 / mu, 1.0) > _MAX_LOSS:
        return _infinite_pld(grid)
    mean, sd = 0.5 * mu * mu, mu  # L ~ N(mu^2 / 2, mu^2) in both directions
    lo, hi = _span(mean - _TAIL_SDS * sd, mean + _TAIL_SDS * sd, grid)
    def curve(e):
        return gdp_log_delta_array(e, mu)

    return PrivacyLossDistribution(_connect_dots(curve, curve, lo, hi, grid))


def gaussian_pld(noise_multiplier, grid=DEFAULT_GRID):
    """PLD of one Gaussian release with noise multiplier ``z`` (sensitivity 1, both directions).

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / Delta_2 >= 0`` (``0``: all the loss at ``+inf``).
    grid : float, default=1e-4
        Spacing of the loss values.

    Returns
    -------
    PrivacyLossDistribution
    """
    z, grid = check_noise(noise_multiplier), _check_grid(grid)
    return _gaussian(math.inf if z == 0 else 1.0 / z, grid)


@lru_cache(maxsize=64)
def _symmetric_two_sided(eps0, grid, laplace):
    if math.isinf(eps0):
        return _infinite_pld(grid)
    if laplace:  # delta = 1 - e^((eps - eps0)/2) on [0, eps0]
        def curve(e):
            return np.log(-np.expm1(0.5 * (np.minimum(e, eps0) - eps0)))
    else:  # randomized response: delta = (e^eps0 - e^eps) / (1 + e^eps0) on [0, eps0]
        def curve(e):
            return np.log(-np.expm1(np.minimum(e, eps0) - eps0)) - math.log1p(math.exp(-eps0))
    lo, hi = _span(-eps0, eps0, grid)
    if laplace:
        return PrivacyLossDistribution(_connect_dots(curve, curve, lo, hi, grid))
    # randomized response's curve is linear in e^eps between -eps0, 0 and eps0: the
    # grid points around them suffice (more would only add round-off)
    points = np.unique([lo, math.ceil(-eps0 / grid), math.floor(eps0 / grid), hi])
    return PrivacyLossDistribution(_connect_dots(curve, curve, lo, hi, grid, points))


def laplace_pld(noise_multiplier, grid=DEFAULT_GRID):
    """PLD of one Laplace release with ``b = scale / Delta_1`` (loss in ``[-1/b, 1/b]``).

    The arguments are those of :func:`gaussian_pld` (``b >= 0``).
    """
    b, grid = check_noise(noise_multiplier), _check_grid(grid)
    return _symmetric_two_sided(math.inf if b == 0 else 1.0 / b, grid, True)


def pure_pld(epsilon0, grid=DEFAULT_GRID):
    """PLD of any ``epsilon0``-DP mechanism: randomized response, which dominates them all.

    Every ``epsilon0``-DP mechanism is a post-processing of randomized response
    (Kairouz, Oh and Viswanathan 2017), so its hockey-stick curve is below
    ``(e^eps0 - e^eps)_+ / (1 + e^eps0)`` at every ``eps``.

    Parameters
    ----------
    epsilon0 : float
        ``>= 0`` (``inf``: no privacy).
    grid : float, default=1e-4
    """
    eps0, grid = check_nonneg(epsilon0, "epsilon0"), _check_grid(grid)
    return _symmetric_two_sided(eps0, grid, False)


@lru_cache(maxsize=64)
def _sampled_gaussian(z, q, grid):
    if _top_loss(z, q) > _MAX_LOSS:
        return _infinite_pld(grid)
    mu = 1.0 / z
    log_q, log_1mq = math.log(q), math.log1p(-q)
    x_hi = 1.0 + _TAIL_SDS * z  # the mass of x beyond is below e^_LOG_TAIL under both laws
    u_hi = (2.0 * x_hi - 1.0) * 0.5 * mu * mu  # log N(1, z^2) / N(0, z^2) at x_hi
    log_mix = float(np.logaddexp(log_1mq, log_q + u_hi))  # log((1-q) + q e^u)

    def remove(eps):  # eps >= 0
        # P = (1-q) N(0, z^2) + q N(1, z^2), Q = N(0, z^2): above e^eps = 1 - q,
        # delta(eps) = q delta_mu(log(1 + (e^eps - 1) / q))
        return log_q + gdp_log_delta_array(np.log1p(np.expm1(eps) / q), mu)

    def add(eps):  # eps >= 0
        # P = N(0, z^2), Q = (1-q) N(0, z^2) + q N(1, z^2): with c = 1 - (1-q) e^eps > 0,
        # delta(eps) = c delta_mu(eps + log q - log c); 0 from e^eps >= 1 / (1-q)
        log_c = np.log(-np.expm1(np.minimum(eps + log_1mq, 0.0)))
        out = log_c + gdp_log_delta_array(eps + log_q - log_c, mu)
        return np.where(eps + log_1mq < 0.0, out, -np.inf)

    lo, hi = _span(log_1mq, log_mix, grid)
    rem = _connect_dots(remove, add, lo, hi, grid)
    lo, hi = _span(-log_mix, -log_1mq, grid)
    return PrivacyLossDistribution(rem, _connect_dots(add, remove, lo, hi, grid))


def sampled_gaussian_pld(noise_multiplier, sampling_rate, grid=DEFAULT_GRID):
    """PLD of one Gaussian release on a Poisson subsample (add/remove neighbours, both directions).

    Sensitivity 1 under add/remove: with the example the sum has law ``(1 - q)
    N(0, z^2) + q N(1, z^2)``, without it ``N(0, z^2)`` (the dominating pair of
    Zhu, Dong and Wang 2022); the two orders of the pair are the "remove" and
    "add" directions.

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / Delta_2 >= 0``.
    sampling_rate : float
        Poisson sampling probability ``q`` in (0, 1] (``1``: the Gaussian PLD).
    grid : float, default=1e-4
    """
    z, q = check_noise(noise_multiplier), check_sampling_rate(sampling_rate)
    grid = _check_grid(grid)
    if z == 0.0:
        return _infinite_pld(grid)
    if q == 1.0:
        return _gaussian(1.0 / z, grid)
    return _sampled_gaussian(z, q, grid)


# --------------------------------------------------------------------------------------
# Composition by FFT
# --------------------------------------------------------------------------------------
def _window(parts):
    """(low, high, upper tail, lower tail): grid indices of the total loss kept, and the
    Chernoff bounds of the finite mass above ``high`` and below ``low``."""
    top = sum(k * (d.offset + d.pmf.size - 1) for d, k in parts)
    bottom = sum(k * d.offset for d, k in parts)
    moments = [(d._moments(), k) for d, k in parts]
    mean = sum(k * m[1] for m, k in moments)
    sd = math.sqrt(sum(k * m[2] for m, k in moments)) + 1.0
    h = parts[0][0].grid
    orders = np.geomspace(min(0.5 / (sd * h), 0.05), max(200.0 / (sd * h), 500.0), _N_ORDERS)
    log_tail = math.log(_WINDOW_TAIL / 2.0)
    bounds = []
    for sign in (1.0, -1.0):
        t = sign * orders
        log_m = sum(k * d._log_mgf(t) for d, k in parts)
        # mass at or beyond s (in the direction of sign) <= exp(log_m - t s h)
        with np.errstate(invalid="ignore", divide="ignore"):
            edge = (log_m - log_tail) / (t * h)
        edge = edge[np.isfinite(edge)]
        bounds.append((t, log_m, edge))
    t_up, m_up, e_up = bounds[0]
    t_lo, m_lo, e_lo = bounds[1]
    high = min(top, math.ceil(e_up.min())) if e_up.size else top
    low = max(bottom, math.floor(e_lo.max())) if e_lo.size else bottom
    high, low = max(high, math.ceil(mean)), min(low, math.floor(mean))
    if high - low + 1 > _MAX_POINTS:
        low = high - _MAX_POINTS + 1

    def tail(t, log_m, edge_index, beyond):
        if not beyond:
            return 0.0
        with np.errstate(invalid="ignore", over="ignore"):
            vals = log_m - t * edge_index * h
        vals = vals[~np.isnan(vals)]
        return float(np.exp(vals.min())) * (1.0 + 1e-10) if vals.size else 1.0

    upper = tail(t_up, m_up, high + 1, high < top)
    lower = tail(t_lo, m_lo, low - 1, low > bottom)
    return low, high, min(upper, 1.0), min(lower, 1.0)


def _compose_direction(parts):
    """The loss of the composition of ``parts`` = [(LossDistribution, count)].

    The circular convolution of the folded pmfs on ``n = 2^L`` points is
    ``irfft(prod_p rfft(x_p)^k_p)``; its floating-point error is bounded
    entrywise, and the bound becomes :attr:`LossDistribution.roundoff`:

    * forward transforms: every output of a radix-2 FFT is computed along a
      tree of ``L`` levels of butterflies ``a + w b`` whose nodes are partial
      DFTs of disjoint subsequences of ``x``, each of modulus at most their
      ``l1`` norm; a butterfly adds an error of at most ``(mu + sqrt(2) gamma_2
      + u)(|a| + |b|)`` (twiddle error ``mu <= u``, complex product and sum:
      Higham 2002, *Accuracy and Stability of Numerical Algorithms*, Lemma 3.5
      and the proof of Theorem 24.2), propagated with factors of modulus
      ``1 + mu``; summed over a level, at most ``3.9 u ||x||_1`` per output, so
      ``|fl(F x) - F x| <= 3.9 L u ||x||_1`` to first order (the componentwise
      form of Higham's Theorem 24.2 and of Percival 2003, *Math. Comp.* 72,
      Theorem 5.1).  pocketfft (``scipy.fft``) on ``2^L`` points runs radix-4
      and radix-2 real passes with the same operations per level; the constant
      is taken as ``_FFT_LEVEL = 16``;
    * powers and products
      (:func:`~sparsedp.privacy._spectral_power.spectral_power`): the forward
      error grown by the ``k``-th power, ``(|f| + a)^k - |f|^k``, about ``k a`` at the
      frequencies where ``|f|`` is near 1, plus each product's rounding.  The
      forward transforms and the powers run in long double (``u = 2^-64`` on
      x86-64) so that this ``k`` times amplified error stays far below delta;
      the spectrum is then rounded to double (``u |S_j|`` more);
    * inverse transform: an error ``E_j`` of the spectrum moves each output by
      at most ``sum_j E_j / n``, and the transform's own rounding is at most
      ``_FFT_LEVEL L u ||S||_1 / n`` (``1/n`` is exact for ``n = 2^L``).
    """
    grid = parts[0][0].grid
    infinity = -math.expm1(math.fsum(k * math.log1p(-d.infinity_mass) if d.infinity_mass < 1
                                     else -math.inf for d, k in parts))
    infinity = min(math.nextafter(infinity, math.inf), 1.0) if infinity > 0 else 0.0
    if infinity >= 1.0 or any(not (d.pmf > 0).any() for d, _ in parts):
        return LossDistribution(grid, 0, np.zeros(1), 1.0)
    low, high, upper, lower = _window(parts)
    levels = max(int(high - low).bit_length(), 1)
    n = 1 << levels
    wide_error = _FFT_LEVEL * levels * _U_WIDE * (1.0 + 1e-9)
    spectrum = error = None
    for d, k in parts:
        folded = np.bincount((d.offset + np.arange(d.pmf.size)) % n, weights=d.pmf, minlength=n)
        mass = float(d.pmf.sum()) * (1.0 + 1e-9)
        folds = -(-d.pmf.size // n)  # entries summed (in double) into one by the folding
        f = fft.rfft(folded.astype(_WIDE))
        f_k, m_k, e_k = spectral_power(f, (wide_error + folds * _U) * mass + levels * _TINY, k)
        if spectrum is None:
            spectrum, modulus, error = f_k, m_k, e_k
        else:  # modulus: an upper bound of |spectrum|
            error = (modulus * e_k + m_k * error + error * e_k
                     + _CMUL * _U_WIDE * modulus * m_k) * (1.0 + 1e-9) + _TINY
            spectrum, modulus = spectrum * f_k, modulus * m_k * (1.0 + 4 * _U_WIDE)
    # rounded to double (u |S_j| each, _TINY if subnormal) for the inverse transform
    spectrum = spectrum.astype(complex)
    error += _U * modulus + _TINY
    cyclic = fft.irfft(spectrum, n)
    # the full spectrum is the half one and its conjugate mirror: its l1 norms are at
    # most twice the half's; the (pairwise) sums of non-negative terms to within 1e-12
    fft_error = _FFT_LEVEL * levels * _U
    spectral = 2.0 * (float(error.sum()) + fft_error * float(modulus.sum()) * (1.0 + 2 * _U))
    spectral *= 1.0 + 1e-9
    roundoff = spectral / n * (1.0 + 1e-9) + levels * _TINY
    pmf = np.maximum(cyclic[(low + np.arange(n)) % n], 0.0)
    return LossDistribution(grid, low, pmf, infinity, upper_tail=upper, lower_tail=lower,
                            roundoff=roundoff)


def compose(parts):
    """The PLD of the adaptive composition of ``parts``.

    Parameters
    ----------
    parts : list of (PrivacyLossDistribution, int)
        Each mechanism's PLD (on one grid) and its number of uses.

    Returns
    -------
    PrivacyLossDistribution
        Each direction composed separately (one if all are symmetric); the
        mass outside the FFT window (Chernoff bounds), the wrap-around (mass
        added inside the window) and the bound of the floating-point error of
        the transforms (see :func:`_compose_direction`) are counted in delta by
        :meth:`LossDistribution.log_delta`.
    """
    parts = [(p, check_count(k, "count")) for p, k in parts]
    if not parts:
        raise ValueError("compose needs at least one PLD")
    if any(d.roundoff or d.upper_tail or d.lower_tail for p, _ in parts for d in p.directions):
        # their slack is not carried through another composition
        raise ValueError("compose takes the PLDs of single mechanisms, not compositions: "
                         "compose all the mechanisms in one call")
    grids = {p.remove.grid for p, _ in parts}
    if len(grids) != 1:
        raise ValueError(f"the PLDs of a composition must share one grid, got {sorted(grids)}")
    remove = _compose_direction([(p.remove, k) for p, k in parts])
    if all(p.symmetric for p, _ in parts):
        return PrivacyLossDistribution(remove)
    return PrivacyLossDistribution(remove, _compose_direction([(p.add, k) for p, k in parts]))


# --------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian: epsilon and calibration
# --------------------------------------------------------------------------------------
def sampled_gaussian_epsilon_pld(noise_multiplier, sampling_rate, steps, delta,
                                 grid=DEFAULT_GRID):
    """Epsilon of ``steps`` Poisson-subsampled Gaussian releases by the PLD accountant.

    Add/remove neighbours; each direction composed separately, the larger
    epsilon reported (an upper bound, tighter than the RDP one of
    :func:`~sparsedp.privacy.rdp.sampled_gaussian_epsilon` at small sampling rates).
    A noise so small that one release's privacy loss passes 100 (beyond the grid's
    range: about ``z < 0.2`` at rate 1, epsilon in the tens) gets the RDP bound instead.

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / Delta_2 >= 0`` (``0`` gives ``inf``).
    sampling_rate : float
        Poisson sampling probability in (0, 1].
    steps : int
        Number of adaptive releases, ``>= 1``.
    delta : float
        Target delta in (0, 1).
    grid : float, default=1e-4
        Spacing of the privacy-loss grid.

    Returns
    -------
    epsilon : float
    """
    z, q = check_noise(noise_multiplier), check_sampling_rate(sampling_rate)
    steps, delta, grid = check_count(steps), check_delta(delta), _check_grid(grid)
    if z == 0.0:
        return math.inf
    if _top_loss(z, q) > _MAX_LOSS:  # beyond the grid's range: the RDP bound, closed form
        return sampled_gaussian_epsilon(z, q, steps, delta)
    return compose([(sampled_gaussian_pld(z, q, grid), steps)]).epsilon(delta)


_POWER = 0.6
#: the calibration searches grids this many times coarser first, in this order, to this
#: relative precision of the noise multiplier, those of spacing at most _COARSEST
_COARSE = (64, 8)
_COARSE_RTOL = 1e-4
_COARSEST = 1e-2


def calibrate_sampled_gaussian_pld(epsilon, delta, sampling_rate, steps, grid=DEFAULT_GRID,
                                   *, rtol=1e-6):
    """Smallest noise multiplier for ``steps`` Poisson-subsampled Gaussian releases (PLD).

    The boundary of :func:`sampled_gaussian_epsilon_pld`'s condition on ``grid``,
    searched first on grids 64 and 8 times coarser: on the coarsest by
    :func:`~sparsedp.privacy._root.bracket_root` from the RDP answer
    (:func:`~sparsedp.privacy.rdp.calibrate_sampled_gaussian`, at most a few tens
    of percent above it), on each finer one by
    :func:`~sparsedp.privacy._root.refine_root` from the previous boundary.

    The arguments are those of
    :func:`~sparsedp.privacy.rdp.calibrate_sampled_gaussian`, with ``grid`` (the
    spacing of the privacy-loss grid, default ``1e-4``) instead of the orders and
    ``rtol`` (default ``1e-6``) the relative precision of the noise multiplier.

    Returns
    -------
    noise_multiplier : float
        Plugged back into :func:`sampled_gaussian_epsilon_pld` it gives an
        epsilon ``<= epsilon``.

    Notes
    -----
    An evaluation on a grid 8 times coarser costs about a seventh of one on
    ``grid`` (the pmfs and the transforms are 8 times shorter), and its boundary
    is a little more noise (the coarser grid's rounding is more pessimistic:
    1e-5 to 1e-2 relative on twelve calibrations).  From it and the coarse
    condition's slope, secant steps on ``grid`` close the bracket in 3-5
    evaluations.  DP-SGD's calibration on dorothea's shape (rate 1/800, 4,000
    steps) makes 8, 4 and 3 evaluations on the three grids, 0.19-0.21 s, where a
    search on ``grid`` alone made 9, 0.50 s.  Only the evaluations on ``grid``
    decide: the answer meets the condition on ``grid`` whatever the coarser
    searches found (a coarse grid without a finite boundary is skipped).
    """
    epsilon, delta, steps = check_calibration(epsilon, delta, steps)
    q, grid = check_sampling_rate(sampling_rate), _check_grid(grid)
    if math.isinf(epsilon):
        return 0.0
    z_rdp = calibrate_sampled_gaussian(epsilon, delta, q, steps, rtol=1e-4)
    if _top_loss(z_rdp, q) > _MAX_LOSS:  # a noise beyond the grid's range: RDP's answer
        return calibrate_sampled_gaussian(epsilon, delta, q, steps, rtol=rtol)
    target, log_target = epsilon * (1.0 - 1e-11), math.log(delta)
    # on s = (z_rdp / z)^(1 / 0.6) the root finder's first step (s = 2) is 1.52 times
    # less noise than RDP's, about the largest saving of the PLD
    inv_rdp = 1.0 / z_rdp

    def excess_on(h, seen):  # non-decreasing in s, the inverse noise relative to RDP's, s^0.6
        def excess(s):
            pld = compose([(sampled_gaussian_pld(1.0 / (s ** _POWER * inv_rdp), q, h), steps)])
            seen[s] = pld.log_delta(target) - log_target
            return seen[s]
        return excess

    # the boundary on each grid, each search from the previous grid's boundary and slope
    start = None
    for h in [grid * c for c in _COARSE if grid * c <= _COARSEST] + [grid]:
        seen, rtol_h = {}, (rtol if h == grid else _COARSE_RTOL) / _POWER
        lo, hi = (bracket_root(excess_on(h, seen), 1.0, rtol=rtol_h) if start is None
                  else refine_root(excess_on(h, seen), *start, rtol=rtol_h))
        finite = 0.0 < lo and math.isfinite(hi) and math.isfinite(seen[lo] + seen[hi])
        start = (lo, (seen[hi] - seen[lo]) / math.log(hi / lo)) if finite else None
    s = lo
    if s == 0.0:
        raise ValueError(f"epsilon = {epsilon!r} is too small: no finite noise multiplier "
                         f"reaches it")
    inv_z = s ** _POWER * inv_rdp
    return 1.0 / inv_z
