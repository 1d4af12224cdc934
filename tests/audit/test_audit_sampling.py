"""Audit of the batch sampler's law (issue 35): the subsets the solvers draw.

The privacy of DP-SGD's and DP-SCD's steps is accounted for batches of a known law:
under Poisson sampling every subset B of the n rows has probability ``q^|B| (1 -
q)^(n - |B|)``, under fixed-size sampling every m-subset ``1 / C(n, m)``.  A sampler
that favours some rows (an off-by-one in Floyd's algorithm includes row 0 of two rows
in every batch of one) breaks the amplification the accountant counts on, by little
in epsilon (the replace-one accountant of fixed-size batches gains little from
subsampling) but surely in law: on small n every subset is observed, and the counts of
200,000 batches (``Batches.draw``, the draws of the kernels' ``sample_batch``) are
held to their law by a chi-square test at the audit's level 1e-3 (fixed seeds).  A law
off by 10 % in one subset's probability is rejected (the test's power, checked on a
planted law).
"""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from _audit import audit_seed
from sparsedp.random import Batches

pytestmark = pytest.mark.audit

BATCHES = 200_000
LEVEL = 1e-3


def subset_counts(batches, n):
    """Counts of each subset of range(n), indexed by its bit mask."""
    sizes = np.array([b.size for b in batches])
    bits = np.concatenate([np.zeros(1, dtype=np.int64), *batches])
    ends = np.cumsum(sizes)  # the mask of batch i: bits summed over (ends[i-1], ends[i]]
    total = np.cumsum(np.where(np.arange(bits.size) > 0, 1 << bits, 0))
    masks = total[ends] - np.concatenate([[0], total[ends[:-1]]])
    return np.bincount(masks, minlength=1 << n)


def law(n, rate, fixed):
    """Probabilities of each subset (bit mask) of range(n) under the sampler's law."""
    probs = np.zeros(1 << n)
    for mask in range(1 << n):
        k = bin(mask).count("1")
        if fixed:
            probs[mask] = 1.0 / math.comb(n, fixed) if k == fixed else 0.0
        else:
            probs[mask] = rate ** k * (1 - rate) ** (n - k)
    return probs


def chi_square_p(counts, probs):
    keep = probs > 0
    assert counts[~keep].sum() == 0, "a subset of probability 0 was drawn"
    return stats.chisquare(counts[keep], probs[keep] * counts.sum()).pvalue


@pytest.mark.parametrize("n, rate, fixed, seed", [
    (2, 0.5, 1, 1), (5, 0.5, 2, 2), (6, 0.5, 4, 3),   # fixed size: uniform m-subsets
    (2, 0.5, 0, 4), (5, 0.3, 0, 5), (7, 0.6, 0, 6),   # Poisson: q^|B| (1 - q)^(n - |B|)
])
def test_batches_have_their_law(n, rate, fixed, seed):
    batches = Batches(n, rate, fixed).draw(np.random.default_rng(audit_seed(seed)), BATCHES)
    counts = subset_counts(batches, n)
    probs = law(n, rate, fixed)
    assert chi_square_p(counts, probs) > LEVEL, counts
    assert all(len(set(b.tolist())) == len(b) for b in batches[:1000])


def test_the_law_test_has_power():
    """The same counts against a law that moves 10 % of one subset's probability to
    another are rejected: the test would see a sampler that favours a row."""
    n, fixed = 5, 2
    counts = subset_counts(Batches(n, 0.5, fixed).draw(np.random.default_rng(audit_seed(2)), BATCHES), n)
    probs = law(n, 0.5, fixed)
    first, last = 0b00011, 0b11000
    wrong = probs.copy()
    wrong[first] *= 1.1
    wrong[last] -= probs[first] * 0.1
    assert chi_square_p(counts, wrong) < LEVEL
    # and the sampler of Floyd's algorithm off by one (r in [0, j - 1]) would never
    # draw row 1 of two in a batch of one
    assert set(itertools.chain.from_iterable(
        Batches(2, 0.5, 1).draw(np.random.default_rng(7), 100))) == {0, 1}
