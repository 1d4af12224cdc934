"""Audits of the value releases: DP-CD's coordinate gradient (Gaussian), DP-GCD's
coordinate gradient (Laplace and Gaussian) and the private smoothness constants
(Laplace).  One set of checks, run for each family (``_suite.AUDITS``):

* the real mechanism: threshold events, ``eps_lb <= claim``;
* the floating-point attack (low-order-bit events) on the real mechanism:
  ``eps_lb <= claim``; on the old raw floating-point sampler (the negative
  control): ``eps_lb > claim``;
* every planted bug: ``eps_lb > claim``.

DP-CD.  Neighbours: row 0's label flipped (``+L`` / ``-L``), its clipped term moving from
``-C_j`` to ``+C_j`` in every column (``_mechanisms.dp_cd_datasets``).  CI: 40,000
releases per dataset (64 i.i.d. releases per fit, ``coef = -release``), claim
(2, 1e-3) per release; long run: 400,000, and the single-step configuration
``T K = 1`` (20,000 fits per dataset).  Every audit learns its event on the first half of
each sample and bounds on the second with two one-sided Clopper-Pearson bounds at
alpha = 5e-4 each (1e-3 per audit); seeds fixed in ``_suite.AUDITS``.

DP-GCD.  Neighbours: row 0's label flipped, its clipped term moving from ``-C_j`` to
``+C_j`` in every column, every other term saturated (``_mechanisms.
dp_gcd_datasets(monotone=True)``): each of a fit's 20 iterations releases the
same value with fresh noise (the fits select with the exponential mechanism).
Claims: epsilon0 ~ 1 (Laplace); (2, 1e-3) per Gaussian release (z ~ 1.44).
CI: 20,000 releases per dataset (``info["released"]``), Laplace and Gaussian;
long run: 200,000, and ``n_iter = 1`` with report-noisy-max (20,000 fits).
Every audit learns its event on the first half of each sample and bounds on the
second with two one-sided Clopper-Pearson bounds at alpha = 5e-4 each (1e-3 per
audit); seeds fixed in ``_suite.AUDITS``.

Smoothness.  One feature, n = 64; neighbours: row 0 is 0 on D and twice the public bound on
D' (clipped: the clipped sum moves by its sensitivity b = 1.62, from 4 b to 5 b;
``_mechanisms.smoothness_datasets``).  Claim epsilon' = 1.  CI: 8,000 calls of
``private_smoothness`` per dataset; long run: 40,000, and 20,000 fits of
``dp_cd(..., smoothness=0.5, feature_bounds=0.9)`` at epsilon = 2 (its
``info["smoothness"]``).  Clopper-Pearson at alpha = 5e-4 per bound (1e-3 per
audit), events learned on the first halves.
"""
import pytest

from _checks import (check_fp_after, check_fp_before, check_planted,
                     check_statistical, params)

FAMILIES = ("dp_cd", "gcd_release", "smoothness", "feature_bound")  # dp_cd_outer, smoothness_features too


def family_params(**kwargs):
    return [p for family in FAMILIES for p in params(family, **kwargs)]


@pytest.mark.parametrize("a, long", family_params())
def test_statistical(a, long):
    """Threshold events on the released value: eps_lb <= the claim of one release."""
    check_statistical(a, long)


@pytest.mark.parametrize("a, long", family_params())
def test_floating_point_attack(a, long):
    """Low-order-bit events on the released value (after the fix): eps_lb <= claim."""
    check_fp_after(a, long)


@pytest.mark.parametrize("a, bug, long", family_params(with_bugs=True, bug="raw_float_noise"))
def test_floating_point_attack_negative_control(a, bug, long):
    """The same attack on the old raw floating-point sampler: eps_lb > claim."""
    check_fp_before(a, long)


@pytest.mark.parametrize("a, bug, long", family_params(with_bugs=True))
def test_planted_bug_is_detected(a, bug, long):
    """Each planted bug (noise halved, no clipping, sensitivity halved, raw noise):
    eps_lb > claim."""
    check_planted(a, bug, long)
