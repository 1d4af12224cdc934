"""Audits of DP-SCD's release of the shared vector v (Gaussian noise on a grid).

Neighbours (add/remove, ``_mechanisms.dp_scd_datasets``, DP-SGD's pair): p = n =
1024 rows, row j a single 1 in column j with the label ``L = 1e6``, present on D
and empty on D'; ridge (``Squared``) with ``L2(1 / n)``, so ``lambda n = 1`` and
``coef = v`` exactly.  ``batch_size = n`` (Poisson rate 1: every row) and
``passes = 1``: one step from v = 0.  The dual step of row j, ``(L - x_j . w) /
(1/2 + n)`` ~ 976, is scaled to exactly ``C = 0.7``: coordinate j of v is one
release of the Gaussian mechanism on the pair "row j present / absent" (moved by C
or by 0), and a fit gives 1024 independent ones.  Claim: the epsilon of the
Gaussian of the run's multiplier z (~1.445) at delta = 1e-3 (~2.0).

Paths: lazy walk noise (``lazy=True``: on D' no coordinate is ever read, its noise
one catch-up at the end) and eager (``lazy=False``: the walk's one-step table for
every coordinate every step); the paper's ``noise_alpha=True`` (noise ``sqrt(2) z
C`` on v, claimed at that multiplier: ~1.32); v after 7 steps at rate 1 (lazy and
eager; sum of the releases, claimed at ``mu = sqrt(7) / z``, z ~ 3.82); Poisson
rate 1/4 (``batch_size = n / 4``, one step, claimed by the PLD accountant's epsilon
of one subsampled Gaussian, fit at epsilon 0.75); fixed-size batches of n
(``sampling="fixed"``, replace-one: labels ``-L`` on D', updates ``-C`` against
``+C``, sensitivity 2C), claimed at the exact Gaussian's epsilon of the run's z
(~1.76); rows ``3 e_j`` (the update scaled to ``|zeta_j| max(1, ||x_j||) = C``:
without the row's norm it would move v by 3C).

CI: 40,000 releases per dataset (60,000 at rate 1/4); long run (``-m
audit_long``): 400,000.  Planted bugs ``noise_halved``, ``no_clipping``,
``sensitivity_halved`` on every path (CI: all three on the 1-step lazy and eager
paths, one on each other); ``raw_float_noise`` does not apply (v is released on its
grid only): n/a.

The eager path's per-step noise comes from ``_noise.noise_fill`` at the walk's
scale (~4e11, cells wider than 2**32).  These audits found that ``noise_fill``
then returned the cells' starts (a lattice of ~2,000 values whose low-order bits
exposed the data: floating-point attack 5.73 against a claim of 2); fixed in
``_noise.pyx``, ``test_noise_fill_matches_noise_draw_at_the_walk_scale`` keeps it.
"""
import math

import numpy as np
import pytest

import _mechanisms as mech
from _checks import check_fp_after, check_planted, check_statistical, params
from sparsedp.datafits import Squared
from sparsedp.solvers import dp_scd

FAMILY = "dp_scd"


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_statistical(a, long):
    """Threshold events on the released value: eps_lb <= the claim of one release."""
    check_statistical(a, long)


@pytest.mark.parametrize("a, long", params(FAMILY))
def test_floating_point_attack(a, long):
    """Low-order-bit events on the released value: eps_lb <= claim."""
    check_fp_after(a, long)


@pytest.mark.parametrize("a, bug, long", params(FAMILY, with_bugs=True))
def test_planted_bug_is_detected(a, bug, long):
    """Each planted bug (noise halved, no clipping, sensitivity halved): eps_lb > claim."""
    check_planted(a, bug, long)


@pytest.mark.audit
@pytest.mark.parametrize("steps, sampling, row_norm",
                         [(1, "poisson", 1.0), (7, "poisson", 1.0), (1, "fixed", 1.0),
                          (1, "poisson", 3.0)])
def test_dp_scd_pair_moves_every_coordinate_by_the_clip(steps, sampling, row_norm):
    """Without noise v is ``steps C`` in every coordinate on D (rows of norm 1 or 3),
    and 0 on D' (empty rows) or ``-C`` (labels flipped, fixed-size batches)."""
    X, X_removed, y, penalty = mech.dp_scd_datasets(row_norm=row_norm)
    n = X.shape[0]
    second, expected = ((X_removed, y), 0.0) if sampling == "poisson" else ((X, -y), -mech.C_J)
    vs = []
    for Xd, yd in ((X, y), second):
        res = dp_scd(Xd, yd, Squared(), penalty, epsilon=math.inf, delta=mech.DELTA,
                     passes=steps, clip=mech.C_J, batch_size=n, sampling=sampling)
        assert res.n_iter == steps
        vs.append(res.coef * (penalty.alpha * n))
    np.testing.assert_allclose(vs[0], steps * mech.C_J, rtol=1e-14)
    np.testing.assert_array_equal(vs[1], expected)


@pytest.mark.audit
def test_noise_fill_matches_noise_draw_at_the_walk_scale(example):
    """The eager path draws with ``noise_fill`` from the walk's first table; its
    docstring promises the draws of ``noise_draw``.  At the run's walk scale the two
    must agree bit for bit (they do below cells of 2**32)."""
    from sparsedp.random import IntegerNoise
    X, _, y, penalty = mech.dp_scd_datasets()
    res = dp_scd(X, y, Squared(), penalty, epsilon=mech.SCD_EPSILON, delta=mech.DELTA,
                 passes=1, clip=mech.C_J, batch_size=X.shape[0], lazy=False, random_state=0)
    scale = res.info["noise_multiplier"] * (res.info["grid_points"]
                                           + math.ceil(math.sqrt(X.shape[1])))
    table = IntegerNoise("gaussian", scale)
    drawn = table.draw(np.random.default_rng(0), 4096)
    filled = example.integer_noise(table, np.random.default_rng(0), 4096)  # noise_fill
    np.testing.assert_array_equal(filled, drawn.astype(np.float64))
