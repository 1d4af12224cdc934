"""Private selection by random stopping: a random number of trials, the best kept.

A trial draws a candidate (hyper-parameters) at random, trains it and scores it,
both privately; the selection runs ``K`` trials, ``K`` drawn independently of
the data, and releases the best trial only (its model, its candidate, its
score).  If one trial is ``(lambda, r(lambda))``-RDP at every order, the
selection is RDP with the curve of :func:`rdp_random_stopping`:

* ``K`` truncated negative binomial ``D(eta, gamma)`` (``shape = eta >= 0``:
  0 the logarithmic law, 1 the geometric): Papernot and Steinke (ICLR 2022,
  "Hyperparameter tuning with Renyi differential privacy", Theorem 2),
  ``r'(lambda) = r(lambda) + (1 + eta) min_l [(1 - 1/l) r(l) + log(1/gamma) / l]
  + log(E K) / (lambda - 1)``, the minimum over the orders ``l`` of the grid;
* ``K`` Poisson of mean ``mu`` (``shape = inf``; ``K = 0`` releases nothing): their
  Theorem 6, ``r'(lambda) = r(lambda) + mu delta^ + log(mu) / (lambda - 1)``, with
  ``delta^`` the trial's delta at ``epsilon^ = log(1 + 1 / (lambda - 1))``;

then made non-decreasing in the order (RDP is monotone: a bound at a higher
order holds at a lower one).  dp-accounting's ``RepeatAndSelectDpEvent`` is the
tests' oracle.  For pure trials, Liu and Talwar (STOC 2019, Theorem 3.4): ``K``
geometric, each trial ``epsilon0``-DP, the selection is ``3 epsilon0``-DP
(:func:`liu_talwar_epsilon`).

A trial's curve is read off its :class:`~sparsedp.privacy.PrivacyLedger`
(:func:`ledger_rdp`): the mechanisms' curves summed, plus the floating-point
samplers' slack; its total-variation slack (:func:`ledger_tv`) is paid in delta
once per expected trial (the trials are drawn independently of ``K``, so the
expected number of trials whose sampler deviates is at most ``E K`` times one
trial's bound).
"""
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln

from ._checks import check_orders
from .mechanisms import Mechanism, total_rdp
from .rdp import DEFAULT_ORDERS, rdp_log_delta

__all__ = ["RandomStopping", "expected_trials", "ledger_rdp", "ledger_tv", "liu_talwar_epsilon",
           "rdp_random_stopping", "sample_trials", "trials_gamma", "trials_pmf"]


def _check_law(mean, shape):
    mean, shape = float(mean), float(shape)
    if not (math.isfinite(mean) and mean > 1.0):
        raise ValueError(f"the mean number of trials must be a finite number > 1, got {mean!r}")
    if not shape >= 0.0:
        raise ValueError(f"the shape of the trials' law must be >= 0 (0 logarithmic, 1 "
                         f"geometric, inf Poisson), got {shape!r}")
    return mean, shape


def expected_trials(gamma, shape):
    """``E K`` of the truncated negative binomial ``D(shape, gamma)``."""
    if shape == 0.0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


def trials_gamma(mean, shape):
    """The parameter ``gamma`` in (0, 1) of the truncated negative binomial of
    mean ``mean`` and shape ``shape`` (``E K`` falls from inf to 1 as gamma
    rises from 0 to 1), rounded down so that ``E K >= mean``: the sampler and
    the accounting use this gamma, and the accounting its ``E K``."""
    mean, shape = _check_law(mean, shape)
    if math.isinf(shape):
        raise ValueError("the Poisson law has no gamma")
    if shape == 1.0:
        return 1.0 / mean
    lo, hi = 1e-300, 1.0 - 1e-15
    while expected_trials(hi, shape) > mean:  # mean very close to 1
        hi = 1.0 - (1.0 - hi) / 2.0
        if hi == 1.0:
            raise ValueError(f"mean {mean!r} too close to 1 for shape {shape!r}")
    gamma = brentq(lambda g: expected_trials(g, shape) - mean, lo, hi, xtol=1e-300,
                   rtol=4 * np.finfo(float).eps)
    while expected_trials(gamma, shape) < mean:  # rounded down: E K at least the mean
        gamma = math.nextafter(gamma, 0.0)
    return gamma


def trials_pmf(k, mean, shape):
    """``P(K = k)`` of the number of trials (array-like ``k``)."""
    mean, shape = _check_law(mean, shape)
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(divide="ignore"):
        if math.isinf(shape):
            return np.exp(k * math.log(mean) - mean - gammaln(k + 1.0))
        gamma = trials_gamma(mean, shape)
        if shape == 0.0:
            p = np.exp(k * math.log1p(-gamma) - np.log(k)) / math.log(1.0 / gamma)
        else:  # the negative binomial, conditioned on K >= 1
            log_p = (gammaln(k + shape) - gammaln(shape) - gammaln(k + 1.0)
                     + shape * math.log(gamma) + k * math.log1p(-gamma))
            p = np.exp(log_p) / -math.expm1(shape * math.log(gamma))
    return np.where(k >= 1, p, 0.0) if not math.isinf(shape) else np.where(k >= 0, p, 0.0)


def sample_trials(generator, mean, shape):
    """Draw the number of trials ``K`` (from ``generator``, independently of the data).

    The truncated negative binomial by rejection of 0 (the logarithmic law
    directly); the Poisson law may give 0.
    """
    mean, shape = _check_law(mean, shape)
    if math.isinf(shape):
        return int(generator.poisson(mean))
    gamma = trials_gamma(mean, shape)
    if shape == 0.0:
        return int(generator.logseries(1.0 - gamma))
    while True:
        k = int(generator.negative_binomial(shape, gamma))
        if k >= 1:
            return k


def rdp_random_stopping(rdp, mean, shape, orders=None):
    """The RDP curve of the best of ``K`` trials (module docstring).

    Parameters
    ----------
    rdp : array-like
        One trial's RDP at each order.
    mean : float
        ``E K`` (> 1).
    shape : float
        0 (logarithmic), 1 (geometric), in (0, inf) (truncated negative
        binomial) or ``inf`` (Poisson).
    orders : array-like, optional
        The orders (> 1; default :data:`~sparsedp.privacy.DEFAULT_ORDERS`).

    Returns
    -------
    ndarray
        The selection's RDP at each order.
    """
    orders = DEFAULT_ORDERS if orders is None else check_orders(orders)
    rdp = np.asarray(rdp, dtype=np.float64)
    if rdp.shape != orders.shape:
        raise ValueError("rdp and orders must have the same shape")
    mean, shape = _check_law(mean, shape)
    if math.isinf(shape):
        log_mean = math.log(mean) / (orders - 1.0)
        eps_hat = np.log1p(1.0 / (orders - 1.0))
        delta_hat = np.array([math.exp(rdp_log_delta(orders, rdp, e)) for e in eps_hat])
        out = rdp + mean * delta_hat + log_mean
    else:
        gamma = trials_gamma(mean, shape)  # E K of the law sampled (at least the mean)
        log_mean = math.log(expected_trials(gamma, shape)) / (orders - 1.0)
        with np.errstate(invalid="ignore"):
            hat = (1.0 - 1.0 / orders) * rdp + math.log(1.0 / gamma) / orders
        out = rdp + log_mean + (1.0 + shape) * float(np.nanmin(np.where(
            np.isnan(hat), np.inf, hat)))
    # monotone in the order: the bound at a higher order holds at a lower one
    return np.minimum.accumulate(out[::-1])[::-1]


def liu_talwar_epsilon(epsilon0):
    """Liu and Talwar's random stopping for pure trials: each trial
    ``epsilon0``-DP, ``K`` geometric: the selection is ``3 epsilon0``-DP."""
    epsilon0 = float(epsilon0)
    if not epsilon0 >= 0.0:
        raise ValueError(f"epsilon0 must be >= 0, got {epsilon0!r}")
    return 3.0 * epsilon0


def ledger_rdp(ledger, orders=None):
    """A ledger's RDP curve: its mechanisms' curves summed, plus the
    floating-point samplers' slack ``H``: a law within ``exp(+-H)`` of the
    ideal one adds ``(2 lambda - 1) H / (lambda - 1)`` at order lambda
    (``inf`` everywhere with a leak)."""
    orders = DEFAULT_ORDERS if orders is None else check_orders(orders)
    if not ledger.private:
        return np.full(orders.shape, np.inf)
    h = ledger._sampler_slack()
    return total_rdp(ledger.entries, orders) + (2.0 * orders - 1.0) * h / (orders - 1.0)


def ledger_tv(ledger):
    """The total-variation slack of a ledger's samplers (``sum tau * count``)."""
    return math.fsum(tau * count for _, tau, count in ledger.sampler_tvs)


@dataclass(frozen=True)
class RandomStopping(Mechanism):
    """The best of a random number of trials (module docstring), one record.

    ``trial_rdp`` is one trial's RDP curve at :data:`~sparsedp.privacy.DEFAULT_ORDERS`
    (every mechanism of a trial; a held-out score beside a fit on the other
    rows is their maximum, parallel composition); the record's curve is
    :func:`rdp_random_stopping` of it.  At an order off the grid the curve at
    the next order up (RDP is non-decreasing in the order).
    """

    kind: ClassVar[str] = "random stopping"

    trial_rdp: tuple = ()
    mean_trials: float = 10.0
    shape: float = 1.0
    trial_epsilon: float = None

    def rdp(self, orders=DEFAULT_ORDERS):
        curve = self.count * rdp_random_stopping(np.asarray(self.trial_rdp), self.mean_trials,
                                                 self.shape)
        orders = np.asarray(orders, dtype=np.float64)
        idx = np.searchsorted(DEFAULT_ORDERS, orders, side="left")
        out = np.full(orders.shape, np.inf)
        inside = idx < DEFAULT_ORDERS.size
        out[inside] = curve[idx[inside]]
        return out

    def _noise(self):
        law = {0.0: "logarithmic", 1.0: "geometric", math.inf: "Poisson"}.get(
            self.shape, f"truncated negative binomial, shape {self.shape:g}")
        parts = [f"trials {law}, mean {self.mean_trials:g}"]
        if self.trial_epsilon is not None:
            parts.append(f"one trial eps={self.trial_epsilon:.4g}")
        return parts

    def as_dict(self):
        out = super().as_dict()
        out["trial_rdp"] = list(out["trial_rdp"])
        return out
