"""A noisy release on a public grid: the one place the solvers set up their noise.

Every value a private solver releases is a sum of at most ``n`` clipped terms,
of (L1 or L2) sensitivity ``Delta``, released as ``g (rint(G / g) + J)``: a
public grid ``g = Delta rho / S`` and an integer noise ``J`` of a known law
(:mod:`sparsedp._kernels._noise`, docs/privacy.rst "Floating point").
"""
import functools
import math

import numpy as np

from .._kernels._immutable import kept_derived
from .._kernels._noise import MIN_SCALE, IntegerNoise, grid_for, grid_scale

__all__ = ["GridRelease", "WalkRelease", "RESERVED_STEP_ETA", "batch_noise_multiplier",
           "calibrate_batches", "record_walk_slack", "walk_slack"]

MAX_GRID_INTEGER = 2.0 ** 50
#: the int64 states of the walk releases stay below this
STATE_LIMIT = 2.0 ** 62
#: the walks' smallest scale (RESERVED_STEP_ETA's lattice term assumes it)
MIN_WALK_SCALE = 2.0 ** 25
#: a walk of scale at most this draws the sums of up to 255 steps (two base-16
#: digits) from narrow tables only (cells of at most 2**29 integers: one word a
#: draw, where a wide table takes two); the grid is chosen to keep walks below it
NARROW_WALK_SCALE = 2.0 ** 30
#: ... unless that makes the grid coarse: S stays at least FINE_GRID ceil(sqrt(dim)),
#: so that the rounding's share of the integer sensitivity, ceil(sqrt(dim)) / S, is
#: at most 2**-10
FINE_GRID = 2 ** 10


class GridRelease:
    """Noise of multiplier ``multiplier`` on a sum of sensitivity ``sensitivity``.

    Parameters
    ----------
    law : {"gaussian", "laplace"}
        The noise's law: a Gaussian (``multiplier`` is the noise multiplier z,
        standard deviation ``z Delta``) or a Laplace (scale ``multiplier Delta``).
    multiplier : float
        Noise in units of the sensitivity.
    n_terms : int
        The number of terms summed (the floating-point sum's error bound).
    sensitivity : float or ndarray
        ``Delta`` of the computed sum, per released value.

    Attributes
    ----------
    noise : IntegerNoise
        The integer sampler (its relative error ``noise.eta`` goes on the ledger).
    grid, inv_grid : float or ndarray
        The public grid ``g`` and ``1 / g`` (rounded down).
    rho : float
        The floating-point sum's sensitivity factor.
    points : int
        Grid points per sensitivity, S.
    scales : float or ndarray
        The noise's scale (sd or Laplace scale) per released value, on the sum
        with its float factor: ``multiplier rho Delta``.
    """

    def __init__(self, law, multiplier, n_terms, sensitivity):
        self.law, self.multiplier = law, multiplier
        self.rho, self.points, int_scale = grid_scale(multiplier, n_terms)
        # the integers rint(G / g) + J must be exact doubles: |G / g| <= n_terms S
        # (each term at most the sensitivity), the noise far below 2**50
        if n_terms * self.points > MAX_GRID_INTEGER:
            raise ValueError(
                f"the noise multiplier {multiplier:.3g} is too small for a release of "
                f"{n_terms} terms on an exact integer grid (it must exceed about "
                f"{n_terms * MIN_SCALE / MAX_GRID_INTEGER:.3g}): use a smaller epsilon, "
                "or epsilon=inf "
                "for no noise")
        self.noise = _integer_noise(IntegerNoise, law, int_scale)
        # per-coordinate grids and scales of a read-only sensitivity array (a sweep's
        # thresholds): computed once per process (public constants, kept_derived)
        rho, points = self.rho, self.points
        self.grid, self.inv_grid = kept_derived(
            sensitivity, ("grid", rho, points), lambda: grid_for(sensitivity, rho, points))
        self.scales = kept_derived(sensitivity, ("scales", multiplier * rho),
                                   lambda: multiplier * rho * sensitivity)


@functools.lru_cache(maxsize=64)
def _integer_noise(cls, law, scale):
    """``cls(law, scale)``, an IntegerNoise (cached per process: a table takes about
    0.06 ms to build, and is only read once built; the class is part of the key)."""
    return cls(law, scale)


@functools.lru_cache(maxsize=48)
def _walk(scale, max_steps):
    """A GaussianWalk (cached: its tables take about 0.06 ms each to build, 15 per
    base-16 digit; about 2 MB a walk over 10**5 steps)."""
    from .._kernels._walk import GaussianWalk
    return GaussianWalk(scale, max_steps)


class WalkRelease:
    """Gaussian noise on a vector sum, kept as exact integers and drawable lazily.

    A vector ``G`` (a sum of at most ``n_terms`` terms of L2 norm at most the
    sensitivity, one of which changes between neighbours) is released as the
    integer vector ``M (rint(G / g) + ...)``: ``k = rint(G / g)`` on the public grid
    ``g = Delta rho / S`` has L2 sensitivity at most ``Delta_int = S + ceil(sqrt(dim))``
    (the float sum moves by at most ``Delta rho`` (:func:`float_sum_factor`, with the
    clipping's own rounding), and rounding adds at most 1 per coordinate that
    changes), and the solver adds to ``M k`` a step of the walk ``round(tau N)``
    with ``tau = z Delta_int M``: a post-processing of the Gaussian mechanism with
    multiplier z (``M k + round(tau N) = round(M k + tau N)``).  The integer
    multiplier M (1 without shrinkage) lets a solver keep an L2-shrunk iterate in
    a rescaled integer frame (:mod:`sparsedp.solvers._dp_sgd`).  Coordinates
    not touched by a step get their walk steps lazily
    (:class:`sparsedp._kernels._walk.GaussianWalk`).

    S is a power of two: at most what keeps the walks' tables below ``2**40`` and
    the integers exact, and within that the largest that keeps every walk's scale
    at most :data:`NARROW_WALK_SCALE` (a sum of up to 255 steps then takes one
    random word a draw), unless that makes ``ceil(sqrt(dim)) / S`` exceed
    ``2**-10`` (:data:`FINE_GRID`).  S sets only the grid's fineness: the noise is
    ``z Delta_int`` grid units, ``z Delta (1 + ceil(sqrt(dim)) / S) rho`` in the
    sum's units, whatever S.

    Parameters
    ----------
    multiplier : float
        z, the noise multiplier.
    n_terms : int
        Bound on the number of terms summed (the batch size bound).
    dim : int
        Dimension of the released vector.
    sensitivity : float
        Delta, the L2 sensitivity of the exact sum.
    max_steps : int
        The number of steps of the run (the longest lazy catch-up).
    data_multipliers : sequence of int, default=(1,)
        The integer multipliers M of the run; one walk each.  All of them size the
        grid (S), whichever the run uses.
    used : sequence of int, optional
        The indices of the multipliers the run steps with (a public schedule's):
        only their walks are built (a walk's 60 tables take about 4 ms over
        ``10**4`` steps); the others' entries of ``walks`` are None.  Default: all.

    Attributes
    ----------
    grid, inv_grid : float
        g and ``1 / g`` rounded down.
    points : int
        S.
    walks : list of GaussianWalk or None
        One per multiplier, scale ``z Delta_int M`` (None for one not ``used``).
    scales : ndarray
        The walks' scales.
    rho : float
        The float factor.
    noise_sd : float
        Standard deviation of the noise on G in its own units: ``z Delta_int g``.
    """

    def __init__(self, multiplier, n_terms, dim, sensitivity, max_steps, data_multipliers=(1,),
                 used=None):
        from .._kernels._walk import MAX_TABLE_SCALE, top_spread
        from .._kernels._noise import GRID_POINTS, float_sum_factor
        z = self.multiplier = multiplier
        multipliers = [int(m) for m in data_multipliers]
        spread = max(multipliers) * math.sqrt(top_spread(max_steps))
        extra = math.ceil(math.sqrt(dim))
        # the largest power of two S with z (S + extra) M_max sqrt(top_spread) below 2**40
        budget = MAX_TABLE_SCALE * (1.0 - 2.0 ** -20) / (z * spread) - extra
        if not budget >= GRID_POINTS:
            raise ValueError(
                f"the noise multiplier {multiplier:.3g} is too large for an exact integer "
                f"walk over {max_steps} steps (at most about "
                f"{MAX_TABLE_SCALE / (GRID_POINTS * spread):.3g})")
        u = 2.0 ** -53
        self.rho = float_sum_factor(n_terms) * (1.0 + 2.0 * (dim + 4) * u)
        # and M k = M rint(G / g) exact: |M k| <= M n_terms S rho <= 2**50; and an int64
        # state summing max_steps such steps and walk steps below 2**62 (check_range)
        per_step = n_terms * self.rho * max(multipliers)
        budget = min(budget, MAX_GRID_INTEGER / per_step,
                     STATE_LIMIT / (2.0 * max_steps * per_step))
        if not budget >= GRID_POINTS:
            raise ValueError(
                f"a sum of up to {n_terms} terms does not fit an exact integer grid of "
                f"{GRID_POINTS} points per sensitivity: use fewer rows per batch bound "
                "(fixed-size batches bound it by the batch size)")
        # S: the largest power of two within budget; then, for speed, the largest
        # that keeps the walks narrow (NARROW_WALK_SCALE), but never below the fine grid
        fine = math.ceil(math.log2(max(GRID_POINTS, FINE_GRID * extra)))
        narrow = NARROW_WALK_SCALE / (z * max(multipliers)) - extra
        exponent = math.floor(math.log2(budget))
        if narrow >= 1.0:
            exponent = min(exponent, max(fine, math.floor(math.log2(narrow))))
        self.points = points = 2 ** exponent
        self.sensitivity_int = points + extra
        self.scales = np.array([z * self.sensitivity_int * m for m in multipliers])
        if self.scales.min() < MIN_WALK_SCALE:
            raise ValueError(
                f"the noise multiplier {multiplier:.3g} is too small for an exact integer walk "
                f"over {max_steps} steps of sums of up to {n_terms} rows: use fewer passes, "
                "smaller batches or a smaller epsilon (or epsilon=inf for no noise)")
        used = range(len(multipliers)) if used is None else {int(r) for r in used}
        self.walks = [_walk(float(s), int(max_steps)) if r in used else None
                      for r, s in enumerate(self.scales)]
        self.grid, self.inv_grid = (float(v) for v in grid_for(sensitivity, self.rho, points))
        self.noise_sd = multiplier * self.sensitivity_int * self.grid

    @property
    def step_eta(self):
        """Per eager draw: the walks' law is within ``exp(+-step_eta)`` of the ideal."""
        return max(w.step_eta for w in self.walks if w is not None)

    def walks_for(self, walk_index):
        """``(index, walks)``: the built walks, in order, and ``walk_index`` (a schedule's
        multiplier of each segment) renumbered into them; RuntimeError if a segment's
        walk was not built."""
        built = np.flatnonzero([w is not None for w in self.walks])
        index = np.searchsorted(built, walk_index)
        if not np.array_equal(built[np.minimum(index, built.size - 1)], walk_index):
            raise RuntimeError("the schedule steps with a walk that was not built")
        return index, [self.walks[r] for r in built]

    def check_range(self, steps, n_terms, multiplier=1):
        """Raise unless ``steps`` steps keep an int64 state below 2**62 (each adds at
        most ``M (n_terms S rho + 1)`` and a walk step, below ``38`` scales)."""
        bound = steps * (multiplier * (n_terms * self.points * self.rho + 1)
                         + 76.0 * float(self.scales.max()))
        if bound >= STATE_LIMIT:
            raise ValueError(f"{steps} steps of sums of up to {n_terms} rows overflow the "
                             "exact integer state: use fewer passes or a smaller batch")


#: the eta reserved per eager walk draw: the tables' (at most 2**-41 in practice)
#: plus twice the lattice term at walk scales >= MIN_WALK_SCALE (checked once built)
RESERVED_STEP_ETA = 2.0 ** -41 + 2.0 * 60.2 / MIN_WALK_SCALE ** 2


def record_no_noise(ledger):
    """epsilon = inf runs the algorithm without noise: the report must say so (epsilon inf)."""
    ledger.add_leak("no noise", "epsilon=inf: the algorithm ran without noise, nothing "
                    "it releases is private")


#: what a batch solver's samplers' slack comes from, and what avoids it (its errors' hint)
WALK_SLACK_SOURCES = ("the integer Gaussian walk's tail beyond 38 t and the Poisson batch "
                      "sizes' table, charged as (1 + e^epsilon) tv: a smaller epsilon, a "
                      "larger delta or fewer steps avoids it")


def walk_slack(draws, batches, steps):
    """``(eta, tv)`` of a run: ``draws`` eager walk draws and ``steps`` batches."""
    from .._kernels._walk import TAIL_TV
    return (RESERVED_STEP_ETA * draws + batches.eta * steps,
            TAIL_TV * draws + batches.tv * steps)


def record_walk_slack(ledger, what, draws, batches, steps):
    """Put :func:`walk_slack`'s terms on the ledger, each named."""
    from .._kernels._walk import TAIL_TV
    ledger.add_sampler_error(
        f"integer Gaussian noise of {what} (each eager draw within exp(+-eta) of round(t N), "
        "lazily summed draws included)", RESERVED_STEP_ETA, count=draws)
    ledger.add_sampler_tv("integer Gaussian noise beyond 38 t", TAIL_TV, count=draws)
    if batches.eta or batches.tv:
        ledger.add_sampler_error("Poisson batch sizes (a 128-bit binomial table)",
                                 batches.eta, count=steps)
        ledger.add_sampler_tv("Poisson batch sizes of probability below 2**-80",
                              batches.tv, count=steps)


def calibrate_batches(ledger, what, budget, rate, steps, sampling, sensitivity):
    """The noise multiplier of ``steps`` Gaussian releases on batches; records them.

    Poisson at rate 1 (every row at every step) is the Gaussian mechanism (exact
    GDP accountant); Poisson at a rate below 1 the Poisson-subsampled Gaussian
    (PLD or RDP, the tighter); fixed-size batches the Gaussian on batches sampled without
    replacement (RDP, replace-one).  ``budget`` not private (epsilon = inf):
    no noise, recorded as such (z = 0).
    """
    from ..privacy import calibrate_gaussian
    if not budget.private:
        record_no_noise(ledger)
        return 0.0
    if sampling == "poisson" and rate == 1.0:
        z = calibrate_gaussian(budget.epsilon, budget.delta, steps)
        ledger.add_gaussian(what + "; every row at every step (Poisson rate 1), add/remove "
                            "neighbours, Gaussian accountant", z, count=steps,
                            sensitivity=sensitivity, relation="add-remove")
        return z
    z = batch_noise_multiplier(sampling, budget.epsilon, budget.delta, rate, steps)
    if sampling == "poisson":
        ledger.add_sampled_gaussian(
            what + f"; Poisson batches of rate {rate:.6g}, add/remove neighbours, PLD or RDP "
            "accountant (the tighter)", z, rate, count=steps, sensitivity=sensitivity)
    else:
        ledger.add_sampled_gaussian_wor(
            what + f"; fixed-size batches (rate {rate:.6g}) without replacement, replace-one "
            "neighbours, RDP of sampling without replacement (Wang, Balle and "
            "Kasiviswanathan 2019)", z, rate, count=steps, sensitivity=sensitivity)
    return z


@functools.lru_cache(maxsize=128)
def batch_noise_multiplier(sampling, epsilon, delta, rate, steps):
    """The smallest z for ``steps`` Gaussian releases on batches of ``sampling`` at ``rate``.

    Poisson: the smaller of the PLD and the RDP calibrations (add/remove
    neighbours; the PLD is tighter except over millions of steps at tiny rates,
    e.g. 0.9597 against 0.9568 at rate 1/45,312 over 2.27 million steps); fixed:
    the RDP of sampling without replacement (replace-one), through the ledger's
    calibration.  Deterministic, hence cached (tuning grids refit one setting).
    """
    from ..privacy import PrivacyLedger, calibrate
    from ..privacy.pld import calibrate_sampled_gaussian_pld
    from ..privacy.rdp import calibrate_sampled_gaussian
    if sampling == "poisson":  # both bounds are valid: the smaller noise that meets the budget
        return min(calibrate_sampled_gaussian_pld(epsilon, delta, rate, steps),
                   calibrate_sampled_gaussian(epsilon, delta, rate, steps))

    def ledger_of(z):
        led = PrivacyLedger(relation="replace-one")
        led.add_sampled_gaussian_wor("batch", z, rate, count=steps)
        return led
    guess = calibrate_sampled_gaussian(epsilon, delta, rate, steps, rtol=1e-4)
    return calibrate(ledger_of, epsilon, delta, guess)
