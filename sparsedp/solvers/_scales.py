"""Private scales of the data, from noisy histograms on a public log scale.

The constants a private fit needs (a bound on ``|X_ij|``, the typical row norm,
the coordinate-wise smoothness constants ``M_j``, the scale of the targets) are
scales: a factor of two is a small error, a factor of a hundred ruins the fit.
A histogram of ``log2 |value|`` on a public grid (:data:`BINS_PER_OCTAVE` bins an
octave from ``2**LOG2_LOW`` to ``2**LOG2_HIGH``) gives all of them, each at its
own scale, whatever the units of the features: counts are scale-free.

**The mechanism.**  Each histogram counts entries of the data; under replace-one
neighbours one row's entries move, so the count vector changes by at most 1 in
at most ``2 m`` bins, ``m`` the entries a row contributes (1 for a per-row
statistic, its nonzeros, at most p, for the per-feature histograms): L2
sensitivity ``sqrt(2 m)``.  The counts are released on the integer grid with a
discretised Gaussian of standard deviation ``z sqrt(2 m)`` per count
(:class:`~sparsedp.solvers._release.GridRelease`, floating-point safe: the
counts are exact integers), a Gaussian mechanism of multiplier z, recorded on
the ledger.  Everything below is post-processing of the noisy counts.

**Reading a noisy histogram.**  A bin counts only where its noisy count exceeds
:func:`detection_threshold` (about 4 standard deviations: over every bin of a
release, a false detection has probability at most 5 %); the rest is treated as
empty.  A bound is the upper edge of the highest counted bin at or below the
requested quantile; a mean square sums the counted bins at their geometric
centre (within ``2**(1 / BINS_PER_OCTAVE)`` of every value in the bin).
"""
import math

import numpy as np
from scipy.special import ndtri

from ._release import GridRelease

__all__ = ["BINS_PER_OCTAVE", "LOG2_LOW", "LOG2_HIGH", "N_BINS", "log_bins", "bin_upper",
           "bin_centre", "noisy_counts", "detection_threshold", "RowScales",
           "row_statistics", "private_row_scales", "feature_histogram",
           "smoothness_from_histogram", "clip_to_bounds", "ESTIMATE_SHARE",
           "FEATURE_SHARE", "estimate_multiplier"]

BINS_PER_OCTAVE = 2
LOG2_LOW, LOG2_HIGH = -40, 40
#: bin 0 holds 0 and everything up to 2**LOG2_LOW; the last bin everything above
#: 2**LOG2_HIGH one bin down
N_BINS = (LOG2_HIGH - LOG2_LOW) * BINS_PER_OCTAVE + 1
#: probability, over all the bins of one release, of one false detection
FALSE_DETECTION = 0.05
#: the per-feature bounds lie this many bins above the highest detected one
TAIL_BINS = 0
#: the share of the GDP budget ``mu^2`` each private estimate of a default takes
#: (measured: docs/defaults.rst, "Private constants")
ESTIMATE_SHARE = 0.025
#: the share of the GDP budget ``mu^2`` the per-feature histograms take (their
#: sensitivity is ``sqrt(p)`` times the per-row scales'; measured: docs/defaults.rst)
FEATURE_SHARE = 0.1


def log_bins(values):
    """The bin of each ``|value|``: 0 for ``|v| <= 2**LOG2_LOW`` (and 0), else
    ``ceil(BINS_PER_OCTAVE (log2 |v| - LOG2_LOW))``, at most ``N_BINS - 1``: bin k
    holds ``(2**(LOG2_LOW + (k - 1) / BINS_PER_OCTAVE), 2**(LOG2_LOW + k /
    BINS_PER_OCTAVE)]``, closed on the right, so that a power of two (binary
    data, integers) is its bin's upper edge."""
    v = np.abs(np.asarray(values, dtype=np.float64))
    out = np.zeros(v.shape, dtype=np.int64)
    big = v > 2.0 ** LOG2_LOW
    k = np.ceil(BINS_PER_OCTAVE * (np.log2(v[big]) - LOG2_LOW)).astype(np.int64)
    out[big] = np.clip(k, 1, N_BINS - 1)
    return out


def bin_upper(k):
    """The upper edge of bin ``k`` (bin 0: ``2**LOG2_LOW``)."""
    return 2.0 ** (LOG2_LOW + np.asarray(k, dtype=np.float64) / BINS_PER_OCTAVE)


def bin_centre(k):
    """The geometric centre of bin ``k`` (bin 0: 0)."""
    k = np.asarray(k, dtype=np.float64)
    return np.where(k > 0, 2.0 ** (LOG2_LOW + (k - 0.5) / BINS_PER_OCTAVE), 0.0)


def noisy_counts(counts, multiplier, generator):
    """The counts (exact integers) released with a discretised Gaussian of standard
    deviation ``multiplier`` each (:class:`GridRelease`: sensitivity 1 per count).

    Returns the noisy counts and the sampler's relative error ``eta`` (one draw
    per count, for :meth:`~sparsedp.privacy.PrivacyLedger.add_sampler_error`).
    """
    counts = np.asarray(counts, dtype=np.float64)
    # exact integers: no floating-point sum to allow for (one term)
    release = GridRelease("gaussian", multiplier, 1, 1.0)
    noisy = release.noise.release(counts, release.inv_grid, release.grid, generator)
    return noisy, release.noise.eta


def detection_threshold(sd, n_bins):
    """The noisy count above which a bin counts: ``sd`` times the normal quantile of
    ``1 - FALSE_DETECTION / n_bins`` (an empty bin passes with probability at most
    ``FALSE_DETECTION / n_bins``)."""
    return float(sd * ndtri(1.0 - FALSE_DETECTION / max(n_bins, 1)))


class RowScales:
    """Scales of the rows read from noisy per-row histograms (one value per row).

    Attributes
    ----------
    bound : float
        A bound on ``|X_ij|``: the upper edge of the highest detected bin of the
        rows' largest ``|X_ij|`` (with no bin detected, of the bin of the largest
        noisy count).
    mean_sq_norm : float or None
        ``mean_i ||x_i||^2``, from the histogram of ``||x_i||^2`` (None when not
        asked for).
    target_rms : float or None
        ``sqrt(mean_i y_i^2)`` (only with targets).
    target_bound : float or None
        A bound on ``|y_i|`` (only with targets).
    undetected : tuple of str
        The scales no bin of whose histogram stood out of the noise (too few rows
        for the budget): they take the unit-scale prior (a bound of 1, ``p``
        for ``||x_i||^2``, 1 for ``y``), post-processing of the release.
    """

    def __init__(self, bound, mean_sq_norm, target_rms=None, target_bound=None,
                 undetected=()):
        self.bound, self.mean_sq_norm = bound, mean_sq_norm
        self.target_rms, self.target_bound = target_rms, target_bound
        self.undetected = undetected

    def __repr__(self):
        return (f"RowScales(bound={self.bound!r}, mean_sq_norm={self.mean_sq_norm!r}, "
                f"target_rms={self.target_rms!r}, target_bound={self.target_bound!r})")


def row_statistics(X, y=None, norms=True):
    """The per-row statistics of :func:`private_row_scales`: each row's largest
    ``|X_ij|``, ``||x_i||^2`` (with ``norms``) and ``|y_i|`` (with ``y``), one value
    per row each."""
    n = X.shape[0]
    if X.format == "csc":
        # without the CSR copy: a CSC matrix lists each row's entries in column order,
        # as its CSR form does, so the sums below add the same terms in the same order
        rows, values = X.indices, X.data
    else:
        Xr = X.tocsr()
        rows, values = np.repeat(np.arange(n), np.diff(Xr.indptr)), Xr.data
    row_max = np.zeros(n)
    np.maximum.at(row_max, rows, np.abs(values))
    sq_norm = np.bincount(rows, weights=values ** 2, minlength=n)
    stats = [row_max, sq_norm] if norms else [row_max]
    if y is not None:
        stats.append(np.abs(np.asarray(y, dtype=np.float64)))
    return stats


def _read(noisy, threshold):
    """Detected bins (indices) and their noisy counts."""
    kept = np.flatnonzero(noisy > threshold)
    return kept, noisy[kept]


def _seen(kept):
    """A scale was seen: some detected bin above bin 0 (the zeros).  Bin 0 alone (the
    rows' values hidden below the threshold, a false detection of the zeros) says
    nothing of the scale: a mean or a bound of 0 there would be no bound at all."""
    return kept.size > 0 and kept.max() > 0


def _mean_square(noisy, threshold, square_of_value):
    """The mean of the values (or of their squares) over the detected bins (None
    when no bin above the zeros' was detected)."""
    kept, c = _read(noisy, threshold)
    if not _seen(kept):
        return None
    v = bin_centre(kept)
    v = v * v if square_of_value else v
    return float(np.sum(c * v) / np.sum(c))


def _sensitivity(entries, relation):
    """L2 sensitivity of a count vector to which a row adds ``entries`` ones:
    replace-one moves ``2 entries`` counts, add/remove ``entries``."""
    return math.sqrt((2.0 if relation == "replace-one" else 1.0) * entries)


def _release(counts, sd, entries, relation, generator, ledger, what):
    """The counts released with noise ``sd`` (their replace-one sensitivity
    ``sqrt(2 entries)`` times the multiplier), recorded on ``ledger`` as one
    Gaussian mechanism under ``relation`` with its sampler error."""
    noisy, eta = noisy_counts(counts, sd, generator)
    sensitivity = _sensitivity(entries, relation)
    ledger.add_gaussian(f"{what}, {relation}, sigma = z Delta per count)", sd / sensitivity,
                        count=1, sensitivity=sensitivity, relation=relation)
    ledger.add_sampler_error(f"{what.split(' (')[0]}' integer noise", eta, count=counts.size)
    return noisy


def private_row_scales(X, y, multiplier, generator, ledger, name="data scales",
                       relation="replace-one", norms=True):
    """Private :class:`RowScales` of ``X`` (and ``y``): one Gaussian mechanism.

    Up to three histograms of one value per row: the rows' largest ``|X_ij|``,
    ``||x_i||^2`` (with ``norms``) and ``|y_i|`` (with ``y``).  Replace-one changes one count by
    at most 1 in two bins of each: L2 sensitivity ``sqrt(2 k)`` over the ``k``
    histograms, noise ``multiplier sqrt(2 k)`` per count (noise multiplier
    ``multiplier``), recorded on ``ledger`` as one Gaussian mechanism.  Under
    add/remove (``relation``) the same noise has the sensitivity ``sqrt(k)``: it
    is recorded as multiplier ``sqrt(2) multiplier``.
    """
    stats = row_statistics(X, y, norms)
    k = len(stats)
    counts = np.stack([np.bincount(log_bins(s), minlength=N_BINS) for s in stats])
    sd = multiplier * _sensitivity(k, "replace-one")
    noisy = _release(counts, sd, k, relation, generator, ledger,
                     f"{name} (noisy log-scale histograms of {k} per-row values")
    threshold = detection_threshold(sd, counts.size)

    def bound(h):
        kept, _ = _read(h, threshold)
        return float(bin_upper(kept.max())) if _seen(kept) else None

    # nothing detected (too few rows for the budget): the unit-scale prior, flagged
    undetected = []
    B = bound(noisy[0])
    if B is None:
        B = 1.0
        undetected.append("bound on |X_ij|")
    mean_sq = None
    if norms:
        mean_sq = _mean_square(noisy[1], threshold, False)
        if mean_sq is None:
            mean_sq = X.shape[1] * B * B
            undetected.append("row norms")
    scales = RowScales(B, mean_sq)
    if y is not None:
        rms, scales.target_bound = _mean_square(noisy[-1], threshold, True), bound(noisy[-1])
        if rms is None:
            rms, scales.target_bound = 1.0, 1.0
            undetected.append("scale of y")
        scales.target_rms = math.sqrt(rms)
    scales.undetected = tuple(undetected)
    return scales


def feature_histogram(X, row_cap=None):
    """Counts of ``log_bins(|X_ij|)`` per feature (shape (p, N_BINS)) over the
    nonzeros, and ``m``, the most entries a row contributes (``row_cap``, or p)."""
    n, p = X.shape
    cols = np.repeat(np.arange(p), np.diff(X.indptr))
    counts = np.zeros((p, N_BINS))
    np.add.at(counts, (cols, log_bins(X.data)), 1.0)
    return counts, p if row_cap is None else row_cap


def smoothness_from_histogram(X, beta, multiplier, generator, ledger, floor_bound,
                              name="smoothness constants", relation="replace-one"):
    """Private ``M_j = (beta / n) sum_i X_ij^2`` from per-feature noisy histograms.

    One Gaussian mechanism of multiplier ``multiplier`` on the ``p x N_BINS``
    counts (L2 sensitivity ``sqrt(2 p)``: a row has at most one entry per
    feature; ``sqrt(p)`` under add/remove, ``relation``).  ``M_j`` sums the detected bins at their centres; a feature with no
    detected bin gets ``beta t B^2 / n`` (``t`` the detection threshold, ``B =
    floor_bound``): what could hide below the threshold, an overestimate (a
    shorter step) rather than an underestimate (an overshooting one).

    With too few rows for any count to pass the detection threshold (``t >= n``,
    public: p, n and the multiplier), nothing is released (no mechanism on the
    ledger, no ``p x N_BINS`` array): every feature takes ``beta B^2``.

    Returns the estimates (shape (p,)) and per-feature bounds on ``|X_ij|``: the
    upper edge of each feature's highest detected bin (``floor_bound`` for a
    feature with none).  Above it a feature's values are too rare to be seen,
    and their squares, which can dominate ``M_j`` (a heavy tail), are missing
    from the estimate: a fit must clip the data to these bounds
    (:func:`clip_to_bounds`) so that ``M_j`` does not underestimate it.
    """
    n, p = X.shape
    sd = multiplier * _sensitivity(p, "replace-one")
    threshold = detection_threshold(sd, p * N_BINS)
    if threshold >= n:  # no count can stand out (many features, few rows): nothing
        # to release; every feature takes the bound (the cap beta B^2), without budget
        bounds = np.full(p, float(floor_bound))
        return beta * bounds ** 2, bounds
    counts, m = feature_histogram(X)
    noisy = _release(counts, sd, m, relation, generator, ledger,
                     f"{name} (noisy log-scale histogram of each feature's |X_ij|")
    detected = noisy > threshold
    centres = bin_centre(np.arange(N_BINS))
    sums = np.where(detected, noisy, 0.0) @ (centres * centres)
    seen = detected.any(axis=1)
    top = np.where(seen, N_BINS - 1 - np.argmax(detected[:, ::-1], axis=1), 0)
    top = np.minimum(top + TAIL_BINS, N_BINS - 1)
    bounds = np.where(seen, bin_upper(top), floor_bound)
    # what may hide in the undetected bins up to the bound: their noisy counts
    # (positive part), at their centres
    hidden = np.where(~detected & (np.arange(N_BINS) <= top[:, None]),
                      np.maximum(noisy, 0.0), 0.0)
    sums = sums + hidden @ (centres * centres)
    cap = beta * bounds ** 2  # M_j <= beta max |X_ij|^2 once clipped
    floor = np.minimum(beta * threshold * bounds ** 2 / n, cap)
    M = np.minimum(np.where(seen, beta * sums / n, floor), cap)
    return M, bounds


def clip_to_bounds(X, bounds):
    """A copy of the CSC matrix ``X`` with each column's entries clipped to
    ``[-bounds_j, bounds_j]`` (post-processing of public or private bounds)."""
    out = X.copy()
    b = np.repeat(np.asarray(bounds, dtype=np.float64), np.diff(X.indptr))
    np.clip(out.data, -b, b, out=out.data)
    return out


def estimate_multiplier(epsilon, delta, share=ESTIMATE_SHARE):
    """The noise multiplier z of one private estimate of a default: ``share`` (default
    ``ESTIMATE_SHARE``) of the GDP budget ``mu^2`` of (epsilon, delta), ``1 / z =
    sqrt(share) mu``.  The solver composes it with its own mechanisms (the ledger)."""
    from ..privacy import calibrate_gaussian
    mu = 1.0 / calibrate_gaussian(epsilon, delta, 1)
    return 1.0 / (math.sqrt(share) * mu)
