"""Events that tell two output laws apart, and the learners that choose them.

An audit learns an event ``E`` on one half of its outputs and bounds
``P(E | D)`` and ``P(E | D')`` on the other half (:mod:`sparsedp.audit._audit`).
Outputs are arrays of shape ``(n,)`` (one number a run) or ``(n, d)`` (a vector
a run, e.g. a model's coefficients).  An event is a callable from such an array
to a boolean mask of length ``n``, with a readable ``str``.

A learner ``learner(x1, x2, delta, alpha) -> (event, bound)`` returns the event it
found most likely under ``x1`` relative to ``x2`` and its bound on these same
samples (only used to compare learners).  The learners:

* :func:`learn_threshold` -- ``{x_j > t}`` / ``{x_j < t}`` on one output
  coordinate (the optimal tests for a shift of a log-concave law), over the
  coordinates that differ most between the samples;
* :func:`learn_linear` -- the same on a projection ``w . x``, ``w`` Fisher's
  discriminant direction (the pooled covariance, shrunk, inverted against the
  difference of the means) over those coordinates: events on *joint* releases,
  which see noise shared between coordinates (a difference of two coordinates
  cancels it) where per-coordinate events cannot;
* :func:`learn_values` -- ``{x == j}`` / ``{x != j}`` for discrete outputs (the
  per-index events of report-noisy-max);
* :func:`learn_bits` -- the floating-point attack (Mironov 2012): a set of
  low-order-bit patterns much more frequent under one dataset than the other.
"""
import dataclasses
import math

import numpy as np

from ._bounds import epsilon_lower_bound

__all__ = ["BitPattern", "Linear", "Threshold", "Value", "bit_features", "learn_bits",
           "learn_linear", "learn_threshold", "learn_values", "top_coordinates"]

#: coordinates an audit of vector outputs looks at (those that differ most)
TOP_COORDINATES = 16
#: thresholds tried per event (quantiles of the pooled sample)
N_QUANTILES = 512


def _column(x, index):
    """Coordinate ``index`` of vector outputs (``None``: the outputs are scalars)."""
    x = np.asarray(x)
    return x if index is None else x[:, index]


def _name(index):
    return "x" if index is None else f"x[{index}]"


def _index(x, j):
    """The event's index of coordinate ``j`` of outputs ``x`` (None for scalars)."""
    return None if np.ndim(x) == 1 else int(j)


@dataclasses.dataclass(frozen=True)
class Threshold:
    """``{x > t}`` (``above``) or ``{x < t}`` on coordinate ``index`` (None: scalar outputs)."""
    t: float
    above: bool
    index: int = None

    def __call__(self, x):
        v = _column(x, self.index)
        return v > self.t if self.above else v < self.t

    def __str__(self):
        return f"{_name(self.index)} {'>' if self.above else '<'} {self.t:.6g}"


@dataclasses.dataclass(frozen=True, eq=False)
class Linear:
    """``{w . x[indices] > t}`` (``above``) or ``< t``: an event on a joint release."""
    indices: np.ndarray
    weights: np.ndarray
    t: float
    above: bool

    def project(self, x):
        return np.asarray(x, dtype=np.float64)[:, self.indices] @ self.weights

    def __call__(self, x):
        v = self.project(x)
        return v > self.t if self.above else v < self.t

    def __str__(self):
        terms = " ".join(f"{w:+.3g} x[{i}]" for i, w in zip(self.indices, self.weights)
                         if abs(w) >= 1e-3 * np.max(np.abs(self.weights)))
        return f"{terms} {'>' if self.above else '<'} {self.t:.6g}"


@dataclasses.dataclass(frozen=True)
class Value:
    """``{x == value}`` (``equal``) or ``{x != value}`` on coordinate ``index``."""
    value: float
    equal: bool
    index: int = None

    def __call__(self, x):
        v = _column(x, self.index)
        return (v == self.value) if self.equal else (v != self.value)

    def __str__(self):
        return f"{_name(self.index)} {'==' if self.equal else '!='} {self.value:g}"


@dataclasses.dataclass(frozen=True, eq=False)
class BitPattern:
    """``{feature(x) in keys}``: a set of low-order-bit patterns of coordinate ``index``."""
    feature: object
    keys: np.ndarray
    index: int = None

    def __call__(self, x):
        return np.isin(self.feature(_column(x, self.index)), self.keys)

    def __str__(self):
        name = "" if self.index is None else f" of x[{self.index}]"
        return f"{self.feature.label}{name} in a set of {self.keys.size} patterns"


def top_coordinates(x1, x2, k=TOP_COORDINATES):
    """The ``k`` coordinates whose means differ most, in units of their spread.

    ``|mean1 - mean2| / sqrt((var1 + var2) / 2)`` (coordinates that never vary
    and never differ rank last); all of them when there are at most ``k``.
    """
    x1, x2 = np.asarray(x1, dtype=np.float64), np.asarray(x2, dtype=np.float64)
    if x1.ndim == 1:
        return np.array([0])
    d = x1.shape[1]
    if d <= k:
        return np.arange(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.sqrt(0.5 * (x1.var(axis=0) + x2.var(axis=0)))
        score = np.abs(x1.mean(axis=0) - x2.mean(axis=0)) / spread
    score = np.where(np.isfinite(score), score,
                     np.where(x1.mean(axis=0) != x2.mean(axis=0), np.inf, -1.0))
    return np.sort(np.argsort(-score, kind="stable")[:k])


def _best_threshold(v1, v2, delta, alpha, n_quantiles=N_QUANTILES):
    """The best ``(t, above, bound)`` of threshold events on two 1-d samples."""
    v1, v2 = np.sort(v1), np.sort(v2)
    q = np.linspace(0.0, 1.0, n_quantiles + 1)[1:-1]
    ts = np.unique(np.quantile(np.concatenate([v1, v2]), q))
    n1, n2 = v1.size, v2.size
    best = (None, True, -np.inf)
    for above in (True, False):
        if above:
            k1 = n1 - np.searchsorted(v1, ts, side="right")
            k2 = n2 - np.searchsorted(v2, ts, side="right")
        else:
            k1 = np.searchsorted(v1, ts, side="left")
            k2 = np.searchsorted(v2, ts, side="left")
        lb = epsilon_lower_bound(k1, n1, k2, n2, delta, alpha)
        i = int(np.argmax(lb))
        if lb[i] > best[2]:
            best = (float(ts[i]), above, float(lb[i]))
    return best


def learn_threshold(x1, x2, delta, alpha):
    """Best ``{x_j > t}`` / ``{x_j < t}`` favouring x1, over the top coordinates."""
    x1, x2 = np.asarray(x1, dtype=np.float64), np.asarray(x2, dtype=np.float64)
    best = (None, -np.inf)
    for j in top_coordinates(x1, x2):
        j = _index(x1, j)
        t, above, lb = _best_threshold(_column(x1, j), _column(x2, j), delta, alpha)
        if t is not None and lb > best[1]:
            best = (Threshold(t, above, j), lb)
    return best


#: the pooled covariance is shrunk towards its diagonal's mean by this share
SHRINKAGE = 1e-3


def learn_linear(x1, x2, delta, alpha):
    """Best threshold event on Fisher's projection ``w . x`` favouring x1.

    ``w = (S + s I)^-1 (mean1 - mean2)`` over the top coordinates, with S the
    pooled covariance and ``s`` a small share of its trace (so that a singular S,
    e.g. one noise value shared by every coordinate, still gives a direction:
    the one that cancels the shared part).  Scalar outputs: no event.
    """
    x1, x2 = np.asarray(x1, dtype=np.float64), np.asarray(x2, dtype=np.float64)
    if x1.ndim == 1 or x1.shape[1] < 2:
        return None, -np.inf
    idx = top_coordinates(x1, x2)
    a, b = x1[:, idx], x2[:, idx]
    diff = a.mean(axis=0) - b.mean(axis=0)
    cov = 0.5 * (np.cov(a, rowvar=False) + np.cov(b, rowvar=False))
    scale = np.trace(cov) / idx.size
    if not (np.all(np.isfinite(cov)) and scale > 0):
        return None, -np.inf
    w = np.linalg.solve(cov + SHRINKAGE * scale * np.eye(idx.size), diff)
    if not np.any(w):
        return None, -np.inf
    w = w / np.max(np.abs(w))
    t, above, lb = _best_threshold(a @ w, b @ w, delta, alpha)
    if t is None:
        return None, -np.inf
    return Linear(idx, w, t, above), lb


def learn_values(x1, x2, delta, alpha):
    """Best ``{x_j == v}`` / ``{x_j != v}`` favouring x1 (discrete outputs)."""
    x1, x2 = np.asarray(x1), np.asarray(x2)
    best = (None, -np.inf)
    for j in top_coordinates(x1, x2):
        j = _index(x1, j)
        c1, c2 = _column(x1, j), _column(x2, j)
        values = np.unique(np.concatenate([c1, c2]))
        k1 = (c1[:, None] == values[None, :]).sum(axis=0)
        k2 = (c2[:, None] == values[None, :]).sum(axis=0)
        for equal, a, b in ((True, k1, k2), (False, c1.size - k1, c2.size - k2)):
            lb = epsilon_lower_bound(a, c1.size, b, c2.size, delta, alpha)
            i = int(np.argmax(lb))
            if lb[i] > best[1]:
                best = (Value(values[i].item(), equal, j), float(lb[i]))
    return best


# ---- the floating-point attack ----------------------------------------------------

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


def bit_features(x):
    """The candidate low-order-bit features for outputs like ``x`` (1-d).

    The sign and exponent of x with: ``x mod 2^m`` for m around the ulp of the
    sample's typical magnitude (``2^(e - 52 + j)``, ``e`` the binade of the median
    ``|x|``, ``-8 <= j <= 8``), or its last 1 to 8 mantissa bits.
    """
    x = np.ravel(np.asarray(x, dtype=np.float64))
    x = x[np.isfinite(x) & (x != 0)]
    med = float(np.median(np.abs(x))) if x.size else 1.0
    e = math.frexp(med)[1] - 1
    return ([_residue_keys(e - 52 + j) for j in range(-8, 9)]
            + [_mantissa_keys(k) for k in range(1, 9)])


def _counts(keys, table):
    """Occurrences in ``keys`` of each entry of ``table``."""
    values, counts = np.unique(keys, return_counts=True)
    if values.size == 0:
        return np.zeros(table.size, dtype=np.int64)
    pos = np.clip(np.searchsorted(values, table), 0, values.size - 1)
    return np.where(values[pos] == table, counts[pos], 0)


def learn_bits(x1, x2, delta, alpha, features=None):
    """Best low-order-bit event favouring x1 (on the most different coordinate).

    Each sample is split in two.  For each feature, the patterns seen in the
    first parts are ranked by their likelihood ratio there (Neyman-Pearson:
    ``(count in x1 + 1/2) / (count in x2 + 1/2)``); the event is the set of the
    top patterns, its size chosen on the second parts (so that sets of patterns
    seen once by chance are not favoured).  Returns the best over features, with
    its bound on the second parts.
    """
    x1, x2 = np.asarray(x1, dtype=np.float64), np.asarray(x2, dtype=np.float64)
    j = _index(x1, top_coordinates(x1, x2, 1)[0])
    x1, x2 = _column(x1, j), _column(x2, j)
    if features is None:
        features = bit_features(np.concatenate([x1, x2]))
    h1, h2 = x1.size // 2, x2.size // 2
    a1, b1, a2, b2 = x1[:h1], x1[h1:2 * h1], x2[:h2], x2[h2:2 * h2]
    best = (None, -np.inf)
    for feature in features:
        ka1, ka2 = feature(a1), feature(a2)
        table = np.unique(ka1)
        c1, c2 = _counts(ka1, table), _counts(ka2, table)
        order = np.argsort(-(c1 + 0.5) / (c2 + 0.5), kind="stable")
        table = table[order]
        d1 = np.cumsum(_counts(feature(b1), table))
        d2 = np.cumsum(_counts(feature(b2), table))
        lb = epsilon_lower_bound(d1, b1.size, d2, b2.size, delta, alpha)
        i = int(np.argmax(lb))
        if lb[i] > best[1]:
            best = (BitPattern(feature, np.sort(table[:i + 1]), j), float(lb[i]))
    return best
