"""Audit of DP-GCD's coordinate selection: every noisy max with every GS rule.

Neighbours (``_mechanisms.dp_gcd_datasets(monotone=False)``): row 0's label
flipped, its nonzeros ``+1`` on coordinate 0 and ``-1`` elsewhere, every term
saturated: the scores are ``(0, Delta, ..., Delta)`` on D and ``(Delta, 0, ...,
0)`` on D' (coordinate 0 gains the sensitivity, every other loses it: the
non-monotone worst case) for all of a fit's 20 iterations.  Without a penalty
the three rules give the same scores; each rule's code path is audited.  Events
``{selected == j}`` and ``{selected != j}``; claim epsilon0 ~ 1.  CI: 20,000
selections per dataset for each (noisy max, rule), the planted bugs under GS-r
(the hooks do not depend on the rule); long run: 100,000, every bug under every
rule, and ``n_iter = 1`` (20,000 fits).  Clopper-Pearson at
alpha = 5e-4 per bound (1e-3 per audit), halves as in every audit.
"""
import pytest

from _checks import check_planted, check_statistical, params

FAMILY = "gcd_selection"


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_statistical(a, long):
    """Per-index events on the selected coordinate: eps_lb <= epsilon0."""
    check_statistical(a, long)


@pytest.mark.parametrize("a, bug, long", params(FAMILY, with_bugs=True))
def test_planted_bug_is_detected(a, bug, long):
    """Noise halved, no clipping, sensitivity halved, the monotone-scores scale
    ``Delta / eps0`` on these non-monotone scores: eps_lb > epsilon0."""
    check_planted(a, bug, long)
