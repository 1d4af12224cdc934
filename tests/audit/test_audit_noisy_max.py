"""StatDP-style audit of the noisy max (``sparsedp.random.NoisyMax``).

Score vectors ``s = (0, Delta, ..., Delta)`` (16 coordinates) and ``s' = s +
Delta`` on coordinate 0, ``- Delta`` on the others (opposite directions: the
non-monotone case), ``Delta = 1``, ``eps0 = 1``.  For each output index j the
events ``{out == j}`` and ``{out != j}``; the best on the first halves is bounded
on the second halves (Clopper-Pearson, alpha = 5e-4 per bound).  CI: 400,000
draws per score vector; long run: 4,000,000.

* report-noisy-max at the library's scale ``2 Delta / eps0``: eps_lb <= eps0;
  at the monotone-scores scale ``Delta / eps0`` (the planted bug
  "monotone_selection", passed as the scale): eps_lb > eps0;
* the exponential mechanism, ``P(j) ∝ exp(eps0 s_j / (2 Delta))`` (kernel scale
  ``b = 2 Delta / eps0``: ``P(j) ∝ exp(s_j / b)``): eps_lb <= eps0; at scale
  ``Delta / eps0``: eps_lb > eps0.

``test_per_index`` is the StatDP form proper: every index's event, fixed in
advance, bounded on the whole samples, all 32 bounds at a joint level 1 - 1e-3
(Bonferroni).
"""
import pytest

import numpy as np

from _audit import per_value_bounds
from _checks import check_planted, check_statistical, params
from _mechanisms import NM_P

FAMILY = "noisy_max"


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_statistical(a, long):
    """Per-index events at the library's scale: eps_lb <= eps0."""
    check_statistical(a, long)


@pytest.mark.parametrize("a, bug, long", params(FAMILY, with_bugs=True))
def test_monotone_scale_is_detected(a, bug, long):
    """The same events at scale ``Delta / eps0``: eps_lb > eps0."""
    check_planted(a, bug, long)


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_per_index(a, long):
    """For every output index j, ``{out == j}`` both ways: every eps_lb <= eps0 at
    the library's scale; at ``Delta / eps0`` some index's eps_lb > eps0."""
    s = a.samples(None, long)
    lbs = per_value_bounds(s.d, s.d2, np.arange(NM_P))
    assert lbs.max() <= s.claim, f"{s.what}: per-index bounds {lbs.max(axis=1)}"
    bad = a.samples("monotone_selection", long)
    lbs = per_value_bounds(bad.d, bad.d2, np.arange(NM_P))
    assert lbs.max() > bad.claim, f"{bad.what}: per-index bounds {lbs.max(axis=1)}"
