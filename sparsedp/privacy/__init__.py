"""Privacy: mechanisms, accountants, calibration and the ledger.

* :mod:`~sparsedp.privacy.mechanisms`: what ran (Gaussian, Laplace, pure DP,
  bounded range, subsampled Gaussians), each with its neighbouring relation,
  sensitivity and privacy curves;
* :mod:`~sparsedp.privacy.accountants`: composition theorems (GDP, RDP, zCDP,
  optimal / advanced / basic composition of pure DP, splits), each a profile
  ``epsilon -> delta`` for the mechanisms it knows;
* :mod:`~sparsedp.privacy.pld`: privacy loss distributions (connect-the-dots,
  FFT composition), the tight accountant of Poisson-subsampled Gaussians;
* :mod:`~sparsedp.privacy.gdp`, :mod:`~sparsedp.privacy.rdp`,
  :mod:`~sparsedp.privacy.zcdp`, :mod:`~sparsedp.privacy.pure`: the curves and
  their closed-form calibrators;
* :mod:`~sparsedp.privacy.calibration`: one calibration routine for any ledger;
* :mod:`~sparsedp.privacy.ledger`: :class:`PrivacyLedger`, the privacy report (a
  printed table, :meth:`PrivacyLedger.to_dict`, :meth:`PrivacyLedger.compose` for
  several fits on the same data).

Conventions: ``noise_multiplier`` is ``sigma / Delta_2`` (Gaussian) or
``scale / Delta_1`` (Laplace); the neighbouring relation is replace-one unless a
mechanism says otherwise (Poisson subsampling: add/remove); every returned
value is on the safe side (epsilons rounded up, noise rounded up, per-step
budgets rounded down); ``epsilon=inf`` means no privacy (no noise).
"""
from .calibration import calibrate, split_budget
from .gdp import calibrate_gaussian, gaussian_delta, gaussian_epsilon, gdp_delta, gdp_epsilon
from .ledger import PrivacyLedger
from .mechanisms import (BoundedRange, Gaussian, Laplace, Mechanism, PureDP, SampledGaussian,
                         SampledGaussianWOR)
from .pld import calibrate_sampled_gaussian_pld, sampled_gaussian_epsilon_pld
from .pure import calibrate_pure_composition, pure_composition_delta, pure_composition_epsilon
from .rdp import (DEFAULT_ORDERS, calibrate_gaussian_rdp, calibrate_sampled_gaussian,
                  rdp_bounded_range, rdp_gaussian, rdp_laplace, rdp_pure, rdp_sampled_gaussian,
                  rdp_sampled_gaussian_wor, rdp_to_dp, sampled_gaussian_epsilon)
from .zcdp import zcdp_to_dp

__all__ = [
    "DEFAULT_ORDERS", "BoundedRange", "Gaussian", "Laplace", "Mechanism", "PrivacyLedger",
    "PureDP", "SampledGaussian", "SampledGaussianWOR", "calibrate", "calibrate_gaussian",
    "calibrate_gaussian_rdp", "calibrate_pure_composition", "calibrate_sampled_gaussian",
    "calibrate_sampled_gaussian_pld", "gaussian_delta", "gaussian_epsilon", "gdp_delta",
    "gdp_epsilon", "pure_composition_delta", "pure_composition_epsilon", "rdp_bounded_range",
    "rdp_gaussian", "rdp_laplace", "rdp_pure", "rdp_sampled_gaussian",
    "rdp_sampled_gaussian_wor", "rdp_to_dp", "sampled_gaussian_epsilon",
    "sampled_gaussian_epsilon_pld", "split_budget", "zcdp_to_dp",
]
