"""Audit of DP-CD's coordinate-gradient release (Gaussian mechanism).

Neighbours: row 0's label flipped (``+L`` / ``-L``), its clipped term moving from
``-C_j`` to ``+C_j`` in every column (``_mechanisms.dp_cd_datasets``).  CI: 40,000
releases per dataset (64 i.i.d. releases per fit, ``coef = -release``), claim
(2, 1e-3) per release; long run: 400,000, and the single-step configuration
``T K = 1`` (20,000 fits per dataset).  Every audit learns its event on the first half of
each sample and bounds on the second with two one-sided Clopper-Pearson bounds at
alpha = 5e-4 each (1e-3 per audit); seeds fixed in ``_suite.AUDITS``.
"""
import pytest

from _checks import (check_fp_after, check_fp_before, check_planted,
                     check_statistical, params)

FAMILY = "dp_cd"


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_statistical(a, long):
    """Threshold events on ``coef_j``: eps_lb <= the claim of one release."""
    check_statistical(a, long)


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_floating_point_attack(a, long):
    """Low-order-bit events on ``coef_j`` (after the fix): eps_lb <= claim."""
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
