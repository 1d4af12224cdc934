"""Mechanisms: what ran, with its neighbouring relation, sensitivity and noise law.

A mechanism is an immutable record of ``count`` adaptive uses of one noisy
release, able to state its own privacy curves: Rényi DP (:meth:`Mechanism.rdp`,
every mechanism), and, where they hold, exact Gaussian DP
(:meth:`Mechanism.gdp_mu`), pure DP (:attr:`Mechanism.pure_epsilon`), zCDP
(:meth:`Mechanism.zcdp_rho`), bounded range and the privacy loss distribution
of one use (:meth:`Mechanism.pld`).  The accountants
(:mod:`sparsedp.privacy.accountants`) compose the curves; adding a mechanism
is adding a class here.
"""
import math
from dataclasses import asdict, dataclass, field
from typing import ClassVar, Optional

import numpy as np

from ._checks import check_count, check_noise, check_nonneg, check_relation, check_sampling_rate
from ._report import mechanism_cells, relation_text
from .pld import DEFAULT_GRID, gaussian_pld, laplace_pld, pure_pld, sampled_gaussian_pld
from .rdp import (DEFAULT_ORDERS, rdp_bounded_range, rdp_gaussian, rdp_laplace, rdp_pure,
                  rdp_sampled_gaussian, rdp_sampled_gaussian_wor)

__all__ = ["BoundedRange", "Gaussian", "Laplace", "Mechanism", "NoisyRelease", "PureDP",
           "SampledGaussian", "SampledGaussianWOR"]


@dataclass(frozen=True)
class Mechanism:
    """Base class: ``count`` adaptive uses of one mechanism.

    Parameters
    ----------
    name : str
        What is released (e.g. ``"coordinate gradients"``).
    count : int
        Number of adaptive uses, ``>= 1``.
    sensitivity : float or None
        Sensitivity of the released quantity under ``relation`` (informational:
        with it the report shows the noise scale).
    relation : {"replace-one", "add-remove"}
        Neighbouring relation under which the mechanism's guarantee holds.
    """

    name: str = field(default="", kw_only=True)
    count: int = field(default=1, kw_only=True)
    sensitivity: Optional[float] = field(default=None, kw_only=True)
    relation: str = field(default="replace-one", kw_only=True)

    #: short label of the noise law, for the report
    kind: ClassVar[str] = "mechanism"
    #: whether each use is epsilon0-bounded-range (Durfee and Rogers 2019)
    bounded_range: ClassVar[bool] = False
    #: relations the analysis holds under
    relations: ClassVar[tuple] = ("replace-one", "add-remove")

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "name", str(self.name))
        set_(self, "count", check_count(self.count, "count"))
        check_relation(self.relation)
        if self.relation not in self.relations:
            raise ValueError(f"the {self.kind} mechanism is analysed under the "
                             f"{' or '.join(map(repr, self.relations))} relation only, "
                             f"got {self.relation!r}")
        if self.sensitivity is not None:
            set_(self, "sensitivity", check_nonneg(self.sensitivity, "sensitivity",
                                                   allow_inf=False))

    def rdp(self, orders=DEFAULT_ORDERS):
        """RDP curve of the ``count`` uses at ``orders``."""
        raise NotImplementedError

    def gdp_mu(self):
        """mu of the ``count`` uses if they are exactly mu-GDP, else None."""
        return None

    @property
    def pure_epsilon(self):
        """epsilon0 of one use if it is pure epsilon0-DP, else None."""
        return None

    def zcdp_rho(self):
        """rho of the ``count`` uses if they are rho-zCDP, else None."""
        eps0 = self.pure_epsilon
        if eps0 is None:
            return None
        return self.count * eps0 * eps0 / (8.0 if self.bounded_range else 2.0)

    def pld(self, grid=DEFAULT_GRID):
        """Privacy loss distribution of one use on a grid of spacing ``grid``, or None.

        A :class:`~sparsedp.privacy.pld.PrivacyLossDistribution` whose
        hockey-stick curve bounds the mechanism's from above (both directions).
        """
        return None

    def _noise(self):
        """Further parts of :meth:`describe` (a subclass's own parameters)."""
        return []

    def describe(self):
        """One line: what ran, its noise in the released value's units, and the relation.

        The same figures as the mechanism's row of the privacy report
        (``str(ledger)``): the kind, the number of uses, the sensitivity, the
        noise's scale (``sigma = z x sensitivity`` for a Gaussian, the Laplace
        scale for a Laplace mechanism, the scale of the noise added to each
        score for a noisy max), the pure epsilon0 of one use and the sampling
        rate, where they apply.

        Examples
        --------
        >>> gaussian = Gaussian(20.0, name="gradients", count=100, sensitivity=0.02)
        >>> gaussian.describe().split("; ")[0]
        'gradients: gaussian x 100 under replace-one neighbours'
        >>> gaussian.describe().split("; ")[2]
        'noise sigma=0.4 = 20 x sensitivity'
        """
        parts = [f"{label} {value}" for label, value in mechanism_cells(self.as_dict())
                 if value != "-"]
        return (f"{self.name}: {self.kind} x {self.count} under "
                f"{relation_text(self.relation)}; " + "; ".join(parts + self._noise()))

    def as_dict(self):
        """The record as a dict of plain Python values (JSON-serialisable).

        Every mechanism gives the same keys, ``None`` where one does not apply:

        * ``name``, ``kind`` (:attr:`kind`), ``count``, ``sensitivity``, ``relation``;
        * ``noise_multiplier``: noise scale / sensitivity (``z`` of a Gaussian, ``b``
          of a Laplace mechanism; for a noisy max that records it, the scale of
          the noise on each score over the score's sensitivity);
        * ``noise_scale``: ``noise_multiplier * sensitivity``, the scale of the
          noise in the released value's units (the Gaussian's ``sigma``, the
          Laplace scale, a noisy max's noise on each score), when the
          sensitivity is known;
        * ``epsilon0``: the pure-DP parameter of one use (:attr:`pure_epsilon`;
          ``1 / b`` for a Laplace mechanism, ``inf`` without noise);
        * ``sampling_rate``: the subsampling rate ``q``;

        followed by any further field of a subclass.  The ledger's report
        (:meth:`~sparsedp.privacy.PrivacyLedger.to_dict`, ``str()``) is built from it.
        """
        out = {"name": self.name, "kind": self.kind, "count": self.count,
               "sensitivity": self.sensitivity, "relation": self.relation,
               "noise_multiplier": None, "noise_scale": None,
               "epsilon0": self.pure_epsilon, "sampling_rate": None}
        out.update(asdict(self))
        z, sensitivity = out["noise_multiplier"], out["sensitivity"]
        if z is not None and sensitivity is not None:
            out["noise_scale"] = math.inf if math.isinf(z) else z * sensitivity
        return out


@dataclass(frozen=True)
class NoisyRelease(Mechanism):
    """Base of the mechanisms defined by a noise multiplier (noise scale / sensitivity)."""

    noise_multiplier: float

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "noise_multiplier", check_noise(self.noise_multiplier))


@dataclass(frozen=True)
class Gaussian(NoisyRelease):
    """Gaussian mechanism: N(0, (z Delta_2)^2) noise on a quantity of L2 sensitivity Delta_2.

    Exactly ``sqrt(count) / z``-GDP (Dong, Roth and Su 2022), RDP ``alpha / (2 z^2)``
    per use (Mironov 2017), ``1 / (2 z^2)``-zCDP per use.
    """

    kind: ClassVar[str] = "gaussian"

    def rdp(self, orders=DEFAULT_ORDERS):
        return self.count * rdp_gaussian(self.noise_multiplier, orders)

    def gdp_mu(self):
        z = self.noise_multiplier
        return math.inf if z == 0 else math.sqrt(self.count) / z

    def zcdp_rho(self):
        z2 = self.noise_multiplier * self.noise_multiplier
        return math.inf if z2 == 0 else self.count / (2.0 * z2)

    def pld(self, grid=DEFAULT_GRID):
        return gaussian_pld(self.noise_multiplier, grid)


@dataclass(frozen=True)
class Laplace(NoisyRelease):
    """Laplace mechanism: Lap(b Delta_1) noise on a quantity of L1 sensitivity Delta_1.

    ``1/b``-DP per use; its exact RDP curve (Mironov 2017, Prop. 6) is tighter
    than the pure-DP one.
    """

    kind: ClassVar[str] = "laplace"

    def rdp(self, orders=DEFAULT_ORDERS):
        return self.count * rdp_laplace(self.noise_multiplier, orders)

    @property
    def pure_epsilon(self):
        b = self.noise_multiplier
        return math.inf if b == 0 else 1.0 / b

    def pld(self, grid=DEFAULT_GRID):
        return laplace_pld(self.noise_multiplier, grid)


#: laws of the noise a pure mechanism may record adding to each score (:class:`PureDP`)
NOISE_LAWS = ("laplace", "gumbel")


@dataclass(frozen=True)
class PureDP(Mechanism):
    """Any epsilon0-DP mechanism (e.g. report-noisy-max with Laplace noise).

    RDP by the randomized-response bound (:func:`~sparsedp.privacy.rdp.rdp_pure`),
    ``epsilon0^2 / 2``-zCDP per use.

    Parameters
    ----------
    epsilon0 : float
        Pure DP parameter of one use, ``>= 0``: the guarantee.
    noise_multiplier : float, optional
        Informational, for a noisy max: the scale of the noise added to each
        candidate's score over the score's ``sensitivity`` (report-noisy-max
        with ``Lap(2 Delta / eps0)``: ``2 / eps0``).  With the sensitivity, the
        report shows the scale in the scores' units.
    noise_law : {"laplace", "gumbel"}, optional
        The law of that noise; required with ``noise_multiplier``.
    """

    epsilon0: float
    noise_multiplier: Optional[float] = field(default=None, kw_only=True)
    noise_law: Optional[str] = field(default=None, kw_only=True)
    kind: ClassVar[str] = "pure"

    def __post_init__(self):
        super().__post_init__()
        set_ = object.__setattr__
        set_(self, "epsilon0", check_nonneg(self.epsilon0, "epsilon0"))
        if (self.noise_multiplier is None) != (self.noise_law is None):
            raise ValueError("noise_multiplier and noise_law go together: the scale of the "
                             "noise on each score and its law")
        if self.noise_multiplier is not None:
            set_(self, "noise_multiplier", check_noise(self.noise_multiplier))
            if self.noise_law not in NOISE_LAWS:
                raise ValueError(f"noise_law must be one of {NOISE_LAWS}, "
                                 f"got {self.noise_law!r}")

    def rdp(self, orders=DEFAULT_ORDERS):
        return self.count * rdp_pure(self.epsilon0, orders)

    def pld(self, grid=DEFAULT_GRID):
        """Randomized response's PLD, which dominates every ``epsilon0``-DP mechanism."""
        return pure_pld(self.epsilon0, grid)

    @property
    def pure_epsilon(self):
        return self.epsilon0


@dataclass(frozen=True)
class BoundedRange(PureDP):
    """An epsilon0-bounded-range mechanism (the exponential mechanism).

    epsilon0-DP and ``epsilon0^2 / 8``-zCDP per use (Cesar and Rogers 2021).
    Only for mechanisms proven bounded-range.  The exponential mechanism
    ``P(j) ∝ exp(eps0 s_j / (2 Delta))`` is Gumbel-max: it may record
    ``noise_multiplier=2 / eps0`` and ``noise_law="gumbel"`` (:class:`PureDP`).
    """

    kind: ClassVar[str] = "bounded_range"
    bounded_range: ClassVar[bool] = True

    def rdp(self, orders=DEFAULT_ORDERS):
        return self.count * rdp_bounded_range(self.epsilon0, orders)


@dataclass(frozen=True)
class SampledGaussian(NoisyRelease):
    """Gaussian mechanism on a Poisson subsample (rate q): add/remove neighbours only.

    RDP of Mironov, Talwar and Zhang (2019).
    """

    sampling_rate: float
    relation: str = field(default="add-remove", kw_only=True)
    kind: ClassVar[str] = "sampled_gaussian"
    relations: ClassVar[tuple] = ("add-remove",)

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "sampling_rate", check_sampling_rate(self.sampling_rate))

    def rdp(self, orders=DEFAULT_ORDERS):
        return self.count * rdp_sampled_gaussian(self.noise_multiplier, self.sampling_rate,
                                                 orders)

    def pld(self, grid=DEFAULT_GRID):
        return sampled_gaussian_pld(self.noise_multiplier, self.sampling_rate, grid)


@dataclass(frozen=True)
class SampledGaussianWOR(SampledGaussian):
    """Gaussian mechanism on a fixed-size subsample without replacement: replace-one only.

    RDP of Wang, Balle and Kasiviswanathan (2019): their Gaussian bound
    (Theorem 27), each term capped by the general one (Theorem 9)
    (:func:`sparsedp.privacy.rdp.rdp_sampled_gaussian_wor`).
    """

    relation: str = field(default="replace-one", kw_only=True)
    kind: ClassVar[str] = "sampled_gaussian_wor"
    relations: ClassVar[tuple] = ("replace-one",)

    def rdp(self, orders=DEFAULT_ORDERS):
        return self.count * rdp_sampled_gaussian_wor(self.noise_multiplier,
                                                     self.sampling_rate, orders)

    def pld(self, grid=DEFAULT_GRID):
        """None: no PLD is known for sampling without replacement."""
        return None


def total_rdp(mechanisms, orders=DEFAULT_ORDERS):
    """Sum of the RDP curves of ``mechanisms`` (composition)."""
    out = np.zeros(np.shape(orders))
    for m in mechanisms:
        out = out + m.rdp(orders)
    return out
