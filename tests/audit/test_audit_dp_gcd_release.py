"""Audit of DP-GCD's coordinate-gradient release (Laplace and Gaussian noise).

Neighbours: row 0's label flipped, its clipped term moving from ``-C_j`` to
``+C_j`` in every column, every other term saturated (``_mechanisms.
dp_gcd_datasets(monotone=True)``): each of a fit's 20 iterations releases the
same value with fresh noise (the fits select with the exponential mechanism).
Claims: epsilon0 ~ 1 (Laplace); (2, 1e-3) per Gaussian release (z ~ 1.44).
CI: 20,000 releases per dataset (``info["released"]``), Laplace and Gaussian;
long run: 200,000, and ``n_iter = 1`` with report-noisy-max (20,000 fits).
Every audit learns its event on the first half of each sample and bounds on the
second with two one-sided Clopper-Pearson bounds at alpha = 5e-4 each (1e-3 per
audit); seeds fixed in ``_suite.AUDITS``.
"""
import pytest

from _checks import (check_fp_after, check_fp_before, check_planted,
                     check_statistical, params)

FAMILY = "gcd_release"


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_statistical(a, long):
    """Threshold events on the released value: eps_lb <= the claim of one release."""
    check_statistical(a, long)


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_floating_point_attack(a, long):
    """Low-order-bit events on the released value (after the fix): eps_lb <= claim."""
    check_fp_after(a, long)


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_floating_point_attack_negative_control(a, long):
    """The same attack on the old raw floating-point sampler: eps_lb > claim."""
    check_fp_before(a, long)


@pytest.mark.parametrize("a, bug, long", params(FAMILY, with_bugs=True))
def test_planted_bug_is_detected(a, bug, long):
    """Each planted bug (noise halved, no clipping, sensitivity halved, raw noise):
    eps_lb > claim."""
    check_planted(a, bug, long)
