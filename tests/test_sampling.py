"""Batch samplers: Poisson batches have the Poisson law (binomial sizes, uniform subsets).

Batches are drawn through the public Cython API (``sample_batch``), by the example
module ``examples/cython/noisy_sum.pyx`` (the ``example`` fixture, tests/conftest.py)."""
import numpy as np
import pytest
from scipy import stats

from sparsedp.random import Batches


def draw(example, batches, seed, count):
    """``count`` batches of ``batches`` from default_rng(seed)."""
    rng = np.random.default_rng(seed)
    return [example.poisson_batch(batches, rng) for _ in range(count)]


@pytest.mark.parametrize("n, rate", [(800, 1 / 800), (45312, 8 / 45312), (60, 0.3)])
def test_poisson_batch_sizes_are_binomial(example, n, rate):
    """Chi-square goodness of fit of 40,000 sizes to Bin(n, q) (fixed seed, p-value > 1e-3)."""
    sizes = np.array([len(b) for b in draw(example, Batches(n, rate), 0, 40000)])
    ks = np.arange(sizes.max() + 1)
    expected = stats.binom.pmf(ks, n, rate) * len(sizes)
    observed = np.bincount(sizes, minlength=len(ks))
    keep = expected >= 5  # pool the tails
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], len(sizes) - expected[keep].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    # a wrong rate is rejected (power)
    wrong = stats.binom.pmf(ks, n, rate * 1.1) * len(sizes)
    exp_w = np.append(wrong[keep], len(sizes) - wrong[keep].sum())
    assert stats.chisquare(obs, exp_w).pvalue < 1e-3


def test_poisson_rows_are_independent_and_uniform(example):
    """Each row's inclusion frequency is q; the batches have distinct rows."""
    n, rate = 50, 0.2
    batches = draw(example, Batches(n, rate), 1, 20000)
    assert all(len(set(b.tolist())) == len(b) for b in batches)
    counts = np.bincount(np.concatenate(batches), minlength=n)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert counts.sum() / (n * len(batches)) == pytest.approx(rate, rel=0.02)
    # pairs of rows are independent: P(0 and 1) = q^2
    both = np.mean([(0 in b) and (1 in b) for b in batches])
    assert both == pytest.approx(rate ** 2, abs=4 * np.sqrt(rate ** 2 / len(batches)))


def test_fixed_batches_and_rate_one(example):
    b = draw(example, Batches(30, 0.5, 7), 2, 3000)
    assert all(len(x) == 7 and len(set(x.tolist())) == 7 for x in b)
    counts = np.bincount(np.concatenate(b), minlength=30)
    assert stats.chisquare(counts).pvalue > 1e-3
    every = draw(example, Batches(12, 1.0), 0, 3)
    assert all(np.array_equal(np.sort(x), np.arange(12)) for x in every)
    assert Batches(12, 1.0).eta == Batches(30, 0.5, 7).eta == 0.0


def test_slack_is_tiny():
    s = Batches(45312, 1 / 45312)
    assert 0 < s.eta < 1e-14
    assert 0 <= s.tv < 1e-20


@pytest.mark.parametrize("args, match", [((0, 0.5), "n must be"), ((10, 0.0), "rate"),
                                         ((10, 1.5), "rate"), ((10, 0.5, 11), "fixed")])
def test_errors(args, match):
    with pytest.raises(ValueError, match=match):
        Batches(*args)


def test_draw_gives_the_kernels_batches(example):
    """``Batches.draw`` makes the draws of the kernels' ``sample_batch``: the same
    batches as the Cython API example from the same seed; bad counts are refused."""
    for batches in (Batches(50, 0.2), Batches(30, 0.5, 7), Batches(12, 1.0)):
        drawn = batches.draw(np.random.default_rng(3), 200)
        seen = draw(example, batches, 3, 200)
        assert all(np.array_equal(a, b) for a, b in zip(drawn, seen))
    assert Batches(5, 0.5).draw(np.random.default_rng(0), 0) == []
    with pytest.raises(ValueError, match="count"):
        Batches(5, 0.5).draw(np.random.default_rng(0), -1)
