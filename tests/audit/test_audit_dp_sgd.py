"""Audits of one DP-SGD step's release: the clipped batch sum with Gaussian noise.

Neighbours (add/remove, ``_mechanisms.dp_sgd_datasets``): p = n = 1024 rows, row j
a single 1 in column j with the label ``L = 1e6`` (its gradient clipped to exactly
``C = 0.7``), present on D and empty on D'.  ``batch_size = n`` (Poisson rate 1, no
subsampling) and ``passes = 1``: one step from 0, whose coordinate j is one release
of the Gaussian mechanism on the pair "row j present / absent", and a fit gives
1024 independent ones (``-coef_j / c``, c = 1 / n).  Claim: the epsilon of the
Gaussian of the run's multiplier z (~1.445) at delta = 1e-3 (~2.0).  Paths: the
lazy integer frame without penalty and with L2 (``lazy="auto"``), the eager float
kernel with an L1 penalty of 1e-300 (``lazy=False``, its prox the identity here);
and the lazy frame at Poisson rate 1/4 (``batch_size = n / 4``, ``passes = 1/4``:
one step, each row sampled on its own), claimed by the PLD accountant's epsilon
of one subsampled Gaussian (fit at epsilon 0.75: z ~ 1.424).  After 7 steps at
rate 1 (lazy; no penalty, and L2 with a shrinkage of 2**-0.25 a step): on D every
coordinate is touched every step, on D' never (its noise one lazy catch-up of 7
walk steps), claimed by the 7-fold composition (``mu = sqrt(7) / z``, z ~ 3.82).
Fixed-size batches (``sampling="fixed"``, batch n): replace-one neighbours, the
labels flipped on D' (clipped terms ``+C`` against ``-C``, sensitivity 2C),
claimed at the exact Gaussian's epsilon of the run's z (~1.608, calibrated by
RDP): ~1.76.

CI: 40,000 releases per dataset (60,000 at rate 1/4); long run (``-m
audit_long``): 400,000.  Every audit learns its event on the first half of each
sample and bounds on the second with two one-sided Clopper-Pearson bounds at
alpha = 5e-4 each (1e-3 per audit); seeds fixed in ``_suite.AUDITS``.  Planted
bugs: ``noise_halved``, ``no_clipping``, ``sensitivity_halved`` on every path (CI:
one of them for L2, rate 1/4, 7 steps and fixed size, all in the long run);
``raw_float_noise`` on the eager kernel only (the lazy frame releases integers).
"""
import math

import numpy as np
import pytest

import _mechanisms as mech
from _checks import (check_fp_after, check_fp_before, check_planted,
                     check_statistical, params)
from sparsedp.datafits import Squared
from sparsedp.solvers import dp_sgd

FAMILY = "dp_sgd"


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_statistical(a, long):
    """Threshold events on the released value: eps_lb <= the claim of one release."""
    check_statistical(a, long)


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_floating_point_attack(a, long):
    """Low-order-bit events on the released value: eps_lb <= claim."""
    check_fp_after(a, long)


@pytest.mark.parametrize("a, bug, long", params(FAMILY, with_bugs=True, bug="raw_float_noise"))
def test_floating_point_attack_negative_control(a, bug, long):
    """The same attack on raw floating-point noise (the eager kernel): eps_lb > claim."""
    check_fp_before(a, long)


@pytest.mark.parametrize("a, bug, long", params(FAMILY, with_bugs=True))
def test_planted_bug_is_detected(a, bug, long):
    """Each planted bug (noise halved, no clipping, sensitivity halved, raw noise):
    eps_lb > claim."""
    check_planted(a, bug, long)


@pytest.mark.audit
def test_dp_sgd_pair_moves_every_coordinate_by_the_clip():
    """Without noise the step's sum is -C in every coordinate on D and 0 on D'."""
    X, X_removed, y = mech.dp_sgd_datasets()
    n = X.shape[0]
    sums = []
    for Xd in (X, X_removed):
        res = dp_sgd(Xd, y, Squared(), epsilon=math.inf, delta=mech.DELTA, passes=1,
                     clip=mech.C_J, batch_size=n, global_smoothness=1.0)
        assert res.n_iter == 1
        sums.append(-res.coef * n)
    np.testing.assert_allclose(sums[0], -mech.C_J, rtol=1e-15)
    np.testing.assert_array_equal(sums[1], 0.0)


@pytest.mark.audit
def test_dp_sgd_setup_cache_is_transparent():
    """The audit memoises dp_sgd's calibration, walks and tables: same fits bit for bit."""
    X, _, y = mech.dp_sgd_datasets()
    n = X.shape[0]

    def fits():
        out = []
        # the L2 frame (a walk per rung, a halving) and the eager kernel (a table)
        for seed, path in enumerate(("lazy_l2_halving", "eager_l1")):
            penalty, lazy = mech.SGD_PATHS[path]
            out.append(dp_sgd(X, y, Squared(), mech._sgd_penalty(penalty), epsilon=2.0,
                              delta=mech.DELTA, clip=mech.C_J, batch_size=n,
                              passes=7, global_smoothness=1.0, lazy=lazy, random_state=seed).coef)
        return np.concatenate(out)

    plain = fits()
    with mech.cached_dp_sgd_setup():
        first = fits()
        again = fits()  # from the cache
    np.testing.assert_array_equal(plain.view(np.int64), first.view(np.int64))
    np.testing.assert_array_equal(plain.view(np.int64), again.view(np.int64))
