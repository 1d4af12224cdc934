"""Audit of the private smoothness constants (DP-CD-P, Laplace mechanism).

One feature, n = 64; neighbours: row 0 is 0 on D and twice the public bound on
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

FAMILY = "smoothness"


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_statistical(a, long):
    """Threshold events on the released constant: eps_lb <= epsilon'."""
    check_statistical(a, long)


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_floating_point_attack(a, long):
    """Low-order-bit events on the released constant (after the fix): <= epsilon'."""
    check_fp_after(a, long)


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_floating_point_attack_negative_control(a, long):
    """The same attack on the old raw floating-point sampler: eps_lb > epsilon'."""
    check_fp_before(a, long)


@pytest.mark.parametrize("a, bug, long", params(FAMILY, with_bugs=True))
def test_planted_bug_is_detected(a, bug, long):
    """Noise halved, sensitivity halved, raw noise: eps_lb > epsilon'."""
    check_planted(a, bug, long)
