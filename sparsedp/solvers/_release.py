"""A noisy release on a public grid: the one place the solvers set up their noise.

Every value a private solver releases is a sum of at most ``n`` clipped terms,
of (L1 or L2) sensitivity ``Delta``, released as ``g (rint(G / g) + J)``: a
public grid ``g = Delta rho / S`` and an integer noise ``J`` of a known law
(:mod:`sparsedp._kernels._noise`, docs/privacy.rst "Floating point").  The planted bugs
of the audit suite that change a release's noise or sensitivity are read here
and nowhere else.
"""
from .._kernels._noise import MIN_SCALE, IntegerNoise, grid_for, grid_scale
from .._planted import active

__all__ = ["GridRelease"]

MAX_GRID_INTEGER = 2.0 ** 50


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
    raw : bool
        True only inside ``planted("raw_float_noise")``: the caller must then
        release raw floating-point noise instead (the broken variant audited).
    """

    def __init__(self, law, multiplier, n_terms, sensitivity):
        self.law, self.multiplier = law, multiplier
        self.rho, self.points, int_scale = grid_scale(
            multiplier / 2.0 if active("noise_halved") else multiplier, n_terms)
        # the integers rint(G / g) + J must be exact doubles: |G / g| <= n_terms S
        # (each term at most the sensitivity), the noise far below 2**50
        if n_terms * self.points > MAX_GRID_INTEGER:
            raise ValueError(
                f"the noise multiplier {multiplier:.3g} is too small for a release of "
                f"{n_terms} terms on an exact integer grid (it must exceed about "
                f"{n_terms * MIN_SCALE / MAX_GRID_INTEGER:.3g}): use a smaller epsilon, "
                "or epsilon=inf "
                "for no noise")
        self.noise = IntegerNoise(law, int_scale)
        self.grid, self.inv_grid = grid_for(
            sensitivity / 2.0 if active("sensitivity_halved") else sensitivity,
            self.rho, self.points)
        self.scales = multiplier * self.rho * sensitivity
        self.raw = active("raw_float_noise")
