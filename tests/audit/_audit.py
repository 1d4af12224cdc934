"""Shared machinery of the statistical privacy audit (issue 17).

An audit draws many outputs of one mechanism on two neighbouring datasets D and
D', splits each sample in two halves, *learns* a distinguishing event E on the
first halves (the event with the largest lower bound there), and bounds on the
second halves, with one-sided Clopper-Pearson intervals at level ``1 - alpha``
each,

    eps_lb = log((P(E | D)_low - delta) / P(E | D')_high).

The event is fixed before the second halves are looked at, so ``eps_lb`` is a
valid lower bound on the epsilon of the mechanism at ``delta`` with probability
at least ``1 - 2 alpha`` (two one-sided bounds).  Both orientations (E favours D
or D') are learned and the better one on the first halves is kept.  A correct
mechanism claiming ``(eps, delta)`` thus fails the audit (``eps_lb > eps``) with
probability at most ``2 alpha``; every test uses a fixed seed, so a given
build gives the same verdict every time.

Learners (each returns the best event favouring its first argument, with its
bound on the training halves):

* :func:`learn_threshold` -- ``{x > t}`` or ``{x < t}`` for t among quantiles of
  the pooled training sample (the optimal tests for a shift of a log-concave law);
* :func:`learn_values` -- ``{x == j}`` or ``{x != j}`` for each observed value
  (per-index events of report-noisy-max, StatDP style);
* :func:`learn_bits` -- the floating-point attack: a set of low-order-bit
  patterns (the exponent of x with ``x mod 2^m`` for several m, or with its
  last k mantissa bits) much more frequent under one dataset than under the
  other (ranked on one part of the training halves, the set's size chosen on
  the other part).
"""
import dataclasses
import math

import numpy as np
from scipy.stats import beta as _beta

__all__ = ["ALPHA", "AuditResult", "audit", "cp_lower", "cp_upper", "eps_lower_bound",
           "learn_bits", "learn_threshold", "learn_values", "halves", "per_value_bounds"]

#: level of each one-sided Clopper-Pearson bound (an audit uses two: 1e-3 per audit)
ALPHA = 5e-4


def cp_lower(k, n, alpha=ALPHA):
    """One-sided Clopper-Pearson lower bound on p from k successes in n trials."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        out = _beta.ppf(alpha, np.maximum(k, 1), np.maximum(n - k + 1, 1))
    return np.where(k > 0, out, 0.0)


def cp_upper(k, n, alpha=ALPHA):
    """One-sided Clopper-Pearson upper bound on p from k successes in n trials."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        out = _beta.ppf(1.0 - alpha, k + 1, np.maximum(n - k, 1))
    return np.where(k < n, out, 1.0)


def eps_lower_bound(k1, n1, k2, n2, delta, alpha=ALPHA):
    """``log((p1_low - delta) / p2_high)`` (``-inf`` when ``p1_low <= delta``).

    ``k1`` of ``n1`` outputs on D and ``k2`` of ``n2`` on D' fell in the event.
    Vectorised over ``k1`` and ``k2``.
    """
    p1 = cp_lower(k1, n1, alpha)
    p2 = cp_upper(k2, n2, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.maximum(p1 - delta, 0.0) / p2)
    return np.where(p1 > delta, out, -np.inf)


def halves(x):
    """First and second halves of a sample (outputs are i.i.d., order is arbitrary)."""
    x = np.asarray(x)
    h = x.shape[0] // 2
    return x[:h], x[h:2 * h]


# ---- events --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Threshold:
    t: float
    above: bool

    def __call__(self, x):
        return x > self.t if self.above else x < self.t

    def __str__(self):
        return f"x {'>' if self.above else '<'} {self.t:.6g}"


@dataclasses.dataclass(frozen=True)
class Value:
    value: float
    equal: bool

    def __call__(self, x):
        return (x == self.value) if self.equal else (x != self.value)

    def __str__(self):
        return f"x {'==' if self.equal else '!='} {self.value:g}"


def _sign_exponent(x):
    return np.asarray(x, dtype=np.float64).view(np.int64) >> 52


_MIX = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as int64 (a hash multiplier)


def _residue_keys(m):
    """Feature: the sign and exponent of x with the bits of ``x mod 2^m`` (exact)."""
    modulus = math.ldexp(1.0, m)

    def keys(x):
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(over="ignore"):
            return np.fmod(x, modulus).view(np.int64) ^ (_sign_exponent(x) * _MIX)
    keys.label = f"(exponent, x mod 2^{m})"
    return keys


def _mantissa_keys(k):
    """Feature: the sign and exponent of x with its last ``k`` mantissa bits."""
    mask = np.int64((1 << k) - 1)

    def keys(x):
        bits = np.asarray(x, dtype=np.float64).view(np.int64)
        return ((bits >> 52) << k) | (bits & mask)
    keys.label = f"(exponent, last {k} mantissa bits)"
    return keys


@dataclasses.dataclass(frozen=True)
class KeySet:
    """``{x : feature(x) in keys}``, a set of low-order-bit patterns."""
    feature: object
    keys: np.ndarray

    def __call__(self, x):
        return np.isin(self.feature(x), self.keys)

    def __str__(self):
        return f"{self.feature.label} in a set of {self.keys.size} patterns"


# ---- learners -------------------------------------------------------------------------

def learn_threshold(x1, x2, delta, alpha=ALPHA, n_quantiles=512):
    """Best ``{x > t}`` / ``{x < t}`` favouring x1 on these samples: (event, bound)."""
    x1, x2 = np.sort(np.ravel(x1)), np.sort(np.ravel(x2))
    pooled = np.concatenate([x1, x2])
    q = np.linspace(0.0, 1.0, n_quantiles + 1)[1:-1]
    ts = np.unique(np.quantile(pooled, q))
    n1, n2 = x1.size, x2.size
    best = (None, -np.inf)
    for above in (True, False):
        if above:
            k1 = n1 - np.searchsorted(x1, ts, side="right")
            k2 = n2 - np.searchsorted(x2, ts, side="right")
        else:
            k1 = np.searchsorted(x1, ts, side="left")
            k2 = np.searchsorted(x2, ts, side="left")
        lb = eps_lower_bound(k1, n1, k2, n2, delta, alpha)
        i = int(np.argmax(lb))
        if lb[i] > best[1]:
            best = (Threshold(float(ts[i]), above), float(lb[i]))
    return best


def learn_values(x1, x2, delta, alpha=ALPHA):
    """Best ``{x == j}`` / ``{x != j}`` favouring x1 (discrete outputs): (event, bound)."""
    x1, x2 = np.ravel(x1), np.ravel(x2)
    values = np.unique(np.concatenate([x1, x2]))
    k1 = (x1[:, None] == values[None, :]).sum(axis=0)
    k2 = (x2[:, None] == values[None, :]).sum(axis=0)
    best = (None, -np.inf)
    for equal, a, b in ((True, k1, k2), (False, x1.size - k1, x2.size - k2)):
        lb = eps_lower_bound(a, x1.size, b, x2.size, delta, alpha)
        i = int(np.argmax(lb))
        if lb[i] > best[1]:
            best = (Value(values[i].item(), equal), float(lb[i]))
    return best


def bit_features(x):
    """The candidate low-order-bit features for outputs like ``x``.

    The sign and exponent of x with: ``x mod 2^m`` for m around the ulp of the
    sample's typical magnitude (``2^(e - 52 + j)``, ``e`` the binade of the median
    ``|x|``, ``-8 <= j <= 8``), or its last 1 to 8 mantissa bits.
    """
    x = np.ravel(np.asarray(x, dtype=np.float64))
    x = x[np.isfinite(x) & (x != 0)]
    med = float(np.median(np.abs(x))) if x.size else 1.0
    e = math.frexp(med)[1] - 1
    feats = [_residue_keys(e - 52 + j) for j in range(-8, 9)]
    feats += [_mantissa_keys(k) for k in range(1, 9)]
    return feats


def _counts(keys, table):
    """Occurrences in ``keys`` of each entry of ``table``."""
    values, counts = np.unique(keys, return_counts=True)
    if values.size == 0:
        return np.zeros(table.size, dtype=np.int64)
    pos = np.clip(np.searchsorted(values, table), 0, values.size - 1)
    return np.where(values[pos] == table, counts[pos], 0)


def learn_bits(x1, x2, delta, alpha=ALPHA, features=None):
    """Best low-order-bit event favouring x1: (event, bound).

    Each sample is split in two.  For each feature, the patterns seen in the
    first parts are ranked by their likelihood ratio there (Neyman-Pearson:
    ``(count in x1 + 1/2) / (count in x2 + 1/2)``); the event is the set of the
    top patterns, its size chosen on the second parts (so sets of patterns seen
    once by chance are not favoured).  Returns the best over features, with its
    bound on the second parts.
    """
    x1 = np.ravel(np.asarray(x1, dtype=np.float64))
    x2 = np.ravel(np.asarray(x2, dtype=np.float64))
    if features is None:
        features = bit_features(np.concatenate([x1, x2]))
    a1, b1 = halves(x1)
    a2, b2 = halves(x2)
    best = (None, -np.inf)
    for feature in features:
        ka1, ka2 = feature(a1), feature(a2)
        table = np.unique(ka1)
        c1, c2 = _counts(ka1, table), _counts(ka2, table)
        order = np.argsort(-(c1 + 0.5) / (c2 + 0.5), kind="stable")
        table = table[order]
        d1 = np.cumsum(_counts(feature(b1), table))
        d2 = np.cumsum(_counts(feature(b2), table))
        lb = eps_lower_bound(d1, b1.size, d2, b2.size, delta, alpha)
        i = int(np.argmax(lb))
        if lb[i] > best[1]:
            best = (KeySet(feature, np.sort(table[:i + 1])), float(lb[i]))
    return best


# ---- the audit ------------------------------------------------------------------------

@dataclasses.dataclass
class AuditResult:
    """The audited lower bound and how it was obtained."""
    eps_lb: float
    event: str
    favours: str       # "D" or "D'": the dataset under which E is more likely
    k1: int            # outputs in E, second half, favoured dataset
    n1: int
    k2: int            # outputs in E, second half, other dataset
    n2: int
    p1_low: float
    p2_high: float
    delta: float
    alpha: float

    def __str__(self):
        return (f"eps_lb = {self.eps_lb:.3f} (E = {self.event}, favours {self.favours}: "
                f"P(E|1) = {self.k1}/{self.n1} >= {self.p1_low:.4g}, "
                f"P(E|2) = {self.k2}/{self.n2} <= {self.p2_high:.4g}, "
                f"delta = {self.delta:g}, alpha = {self.alpha:g} per bound)")


def audit(samples_d, samples_d2, learners, delta, alpha=ALPHA):
    """Learn an event on the first halves, bound epsilon on the second halves.

    Parameters
    ----------
    samples_d, samples_d2 : arrays of i.i.d. outputs on D and on D'
    learners : callable or list of callables ``(x1, x2, delta, alpha) -> (event, bound)``
    delta : float
    alpha : float
        Level of each of the two one-sided Clopper-Pearson bounds.

    Returns
    -------
    AuditResult
    """
    if callable(learners):
        learners = [learners]
    a1, a2 = halves(samples_d)
    b1, b2 = halves(samples_d2)
    best = None
    for learner in learners:
        for favours, x1, x2 in (("D", a1, b1), ("D'", b1, a1)):
            event, lb = learner(x1, x2, delta, alpha)
            if event is not None and (best is None or lb > best[0]):
                best = (lb, event, favours)
    if best is None:
        return AuditResult(-np.inf, "none", "D", 0, a2.size, 0, b2.size, 0.0, 1.0,
                           delta, alpha)
    _, event, favours = best
    y1, y2 = (a2, b2) if favours == "D" else (b2, a2)
    k1, k2 = int(np.count_nonzero(event(y1))), int(np.count_nonzero(event(y2)))
    return AuditResult(
        float(eps_lower_bound(k1, y1.size, k2, y2.size, delta, alpha)), str(event),
        favours, k1, y1.size, k2, y2.size, float(cp_lower(k1, y1.size, alpha)),
        float(cp_upper(k2, y2.size, alpha)), delta, alpha)


def per_value_bounds(samples_d, samples_d2, values, delta=0.0, alpha=2 * ALPHA):
    """StatDP-style: ``eps_lb`` of ``{x == j}`` for each j of ``values``, both ways.

    The events are fixed in advance, so the whole samples are used; the ``2 *
    len(values)`` bounds share ``alpha`` (Bonferroni): each pair of
    Clopper-Pearson bounds is at ``alpha / (4 len(values))``, and all the
    returned bounds hold together with probability at least ``1 - alpha``.

    Returns an array of shape ``(len(values), 2)``: column 0 the events favouring
    D, column 1 those favouring D'.
    """
    d, d2 = np.ravel(samples_d), np.ravel(samples_d2)
    values = np.asarray(values)
    a = alpha / (4 * values.size)
    k = (d[:, None] == values[None, :]).sum(axis=0)
    k2 = (d2[:, None] == values[None, :]).sum(axis=0)
    return np.stack([eps_lower_bound(k, d.size, k2, d2.size, delta, a),
                     eps_lower_bound(k2, d2.size, k, d.size, delta, a)], axis=1)
