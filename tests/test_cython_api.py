"""The public Cython API (``cimport sparsedp.random``): the example module
``examples/cython/noisy_sum.pyx``, compiled with its ``setup.py`` against the
installed sparsedp, draws exactly what the library's own samplers draw for the
same seed, and its releases have the law they are calibrated for (the ``example``
fixture, tests/conftest.py, builds it)."""
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

import sparsedp.random
from sparsedp._kernels._sampling import binomial_table
from sparsedp.random import Batches, GaussianWalk, IntegerNoise, NoisyMax


def test_public_pxd_and_everything_it_cimports_is_installed():
    """get_include() holds sparsedp/random.pxd and every sparsedp .pxd that it
    cimports, transitively (a .pxd missing from meson.build's install lines
    breaks ``cimport`` against a wheel)."""
    root = Path(sparsedp.random.get_include())
    seen, todo = set(), ["sparsedp/random.pxd"]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        pxd = root / rel
        assert pxd.is_file(), f"{pxd} is not installed"
        package = Path(rel).parent
        for dots, name in re.findall(r"^\s*from\s+(\.*)([\w.]*)\s+cimport", pxd.read_text(), re.M):
            if dots:
                target = package.joinpath(*[".."] * (len(dots) - 1), *name.split("."))
            elif name.startswith("sparsedp."):
                target = Path(*name.split("."))
            else:
                continue
            todo.append(os.path.normpath(target) + ".pxd")
    assert {"sparsedp/_kernels/_noise.pxd", "sparsedp/_kernels/_noisy_max.pxd",
            "sparsedp/_kernels/_walk.pxd", "sparsedp/_kernels/_sampling.pxd",
            "sparsedp/_kernels/_random.pxd"} <= seen


def test_private_sum_is_reproducible_with_a_seed(example):
    """Seed 3: 50 releases twice give the same floats; seed 4 gives others."""
    ps = example.PrivateSum(1.0, 2.0, 100)
    x = np.linspace(-1.5, 1.5, 100)

    def run(seed):
        rng = np.random.default_rng(seed)
        return np.array([ps.release(x, rng) for _ in range(50)])

    first = run(3)
    assert np.array_equal(first, run(3))
    assert not np.array_equal(first, run(4))


@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_private_sum_draws_equal_the_librarys_release(example, law):
    """Seed 11, 2000 releases: bit for bit IntegerNoise.release of the clipped sum,
    and the integer noise is IntegerNoise.draw's for the same seed."""
    ps = example.PrivateSum(0.5, 1.5, 1000, law)
    x = np.random.default_rng(0).normal(size=1000)
    total = np.clip(x, -0.5, 0.5).sum()
    rng = np.random.default_rng(11)
    ours = np.array([ps.release(x, rng) for _ in range(2000)])
    library = IntegerNoise(law, ps.noise.scale)
    assert np.array_equal(
        ours, library.release(np.full(2000, total), ps.inv_grid, ps.grid,
                              np.random.default_rng(11)))
    shift = 0.5 if law == "laplace" else 0.0
    noise = ours / ps.grid - np.rint(total * ps.inv_grid) - shift
    assert np.array_equal(np.rint(noise), library.draw(np.random.default_rng(11), 2000))


def noise_sd_error(noise, sd):
    """|sample sd / sd - 1| of centred noise, and its 5-standard-error tolerance for a
    Gaussian (relative SE of the sd sqrt(1 / 2N)) or Laplace (sqrt(5 / 4N)) law."""
    n = noise.size
    kurtosis = np.mean(noise ** 4) / np.mean(noise ** 2) ** 2  # 3 Gaussian, 6 Laplace
    return abs(math.sqrt(np.mean(noise ** 2)) / sd - 1.0), 5.0 * math.sqrt((kurtosis - 1) / (4 * n))


@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_private_sum_noise_has_its_calibrated_sd(example, law):
    """Seed 2026, 20000 releases of one sum: the noise in released units (the
    release minus the rounded sum) has mean 0 (5 SE) and sd ``z rho Delta``
    (Gaussian) or ``sqrt(2) b_0 rho Delta`` (Laplace), Delta = 2 clip, to 5 SE
    (2.5% / 4.0%); the same check rejects draws of a 10% larger scale."""
    clip, multiplier, n = 0.25, 3.0, 20000
    ps = example.PrivateSum(clip, multiplier, 64, law)
    x = np.random.default_rng(1).uniform(-1, 1, size=64)
    rng = np.random.default_rng(2026)
    ours = np.array([ps.release(x, rng) for _ in range(n)])
    noise = ours - ps.grid * np.rint(np.clip(x, -clip, clip).sum() * ps.inv_grid)
    sd = multiplier * ps.rho * 2 * clip * (math.sqrt(2) if law == "laplace" else 1.0)
    assert abs(noise.mean()) <= 5 * sd / math.sqrt(n)
    error, tolerance = noise_sd_error(noise, sd)
    assert error <= tolerance, (error, tolerance)
    # planted bug: a table of a 10% larger scale
    wrong = (IntegerNoise(law, 1.1 * ps.noise.scale).draw(np.random.default_rng(2026), n)
             + (0.5 if law == "laplace" else 0.0)) * ps.grid
    error, tolerance = noise_sd_error(wrong, sd)
    assert error > tolerance


@pytest.mark.parametrize("selection", ["exponential", "laplace", "argmax"])
def test_noisy_argmax_draws_equal_the_librarys_noisy_max(example, selection):
    """Seed 5, 500 draws over 300 scores: the indices of NoisyMax.draw."""
    scores = np.random.default_rng(0).normal(scale=3.0, size=300)
    ours = example.noisy_argmax(scores, 0.7, selection, np.random.default_rng(5), 500)
    theirs = NoisyMax(scores, 0.7, selection, np.random.default_rng(5)).draw(500)
    assert np.array_equal(ours, theirs)


def softmax_deviation(indices, scores, scale):
    """Largest |frequency - P(j)| / SE(j) against P(j) ∝ exp(s_j / scale)."""
    p = np.exp((scores - scores.max()) / scale)
    p /= p.sum()
    freq = np.bincount(indices, minlength=scores.size) / indices.size
    return np.max(np.abs(freq - p) / np.sqrt(p * (1 - p) / indices.size))


def test_noisy_argmax_exponential_follows_the_exponential_mechanism(example):
    """Seed 8, 20000 draws over 4 scores at scale 1: every frequency within 5 SE of
    exp(s_j) / sum; draws at scale 1.2 (a miscalibrated mechanism) are not."""
    scores = np.array([0.0, 1.0, 2.0, 2.5])
    ours = example.noisy_argmax(scores, 1.0, "exponential", np.random.default_rng(8), 20000)
    assert softmax_deviation(ours, scores, 1.0) <= 5.0
    wrong = example.noisy_argmax(scores, 1.2, "exponential", np.random.default_rng(8), 20000)
    assert softmax_deviation(wrong, scores, 1.0) > 5.0


def test_lazy_gaussian_sums_equal_the_librarys_walk(example):
    """Seed 9: the sums of 0 .. 4000 steps (every 13th) are GaussianWalk.sums'."""
    walk = GaussianWalk(2.0 ** 20, 4000)
    steps = np.arange(0, 4001, 13)
    ours = example.lazy_gaussian_sums(walk, steps, np.random.default_rng(9))
    assert np.array_equal(ours, walk.sums(np.random.default_rng(9), steps))


def replay_batch(batches, rng):
    """One batch as the sampler documents it, in numpy: Poisson sizes by inverting the
    128-bit CDF of the binomial table on two raw words, then Floyd's algorithm with
    exact bounded integers (``Generator.integers(0, j + 1)``)."""
    n = batches.n
    if batches.fixed:
        m = batches.fixed
    else:
        first, units, _, _ = binomial_table(n, batches.rate)
        u = int(rng.bit_generator.random_raw()) << 64 | int(rng.bit_generator.random_raw())
        k, below = 0, units[0]
        while k < len(units) - 1 and u >= below:
            k += 1
            below += units[k]
        m = first + k
    if m == n:
        return np.arange(n)
    rows = []
    for i in range(m):
        j = n - m + i
        r = int(rng.integers(0, j + 1))
        rows.append(j if r in rows else r)
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("rate, fixed", [(0.02, 0), (0.5, 0), (0.0, 40), (1.0, 0)])
def test_poisson_batch_is_the_documented_sampler(example, rate, fixed):
    """Seed 10, 30 batches of 500 rows: the rows of the documented construction,
    replayed in numpy from the same generator (sizes and rows, in drawing order)."""
    batches = Batches(500, rate, fixed)
    rng = np.random.default_rng(10)
    ours = [example.poisson_batch(batches, rng) for _ in range(30)]
    replay = np.random.default_rng(10)
    theirs = [replay_batch(batches, replay) for _ in range(30)]
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))
    assert len({len(b) for b in ours}) > (1 if rate < 1 and not fixed else 0)


def test_example_rejects_bad_input(example):
    """A legacy RandomState, a None walk or batch sampler, a bad clip: TypeError or
    ValueError naming the problem (the public accessors check their argument)."""
    ps = example.PrivateSum(1.0, 1.0, 10)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        ps.release(np.zeros(3), np.random.RandomState(0))
    with pytest.raises(TypeError, match="GaussianWalk"):
        example.lazy_gaussian_sums(None, [], np.random.default_rng(0))
    with pytest.raises(TypeError, match="Batches"):
        example.poisson_batch(None, np.random.default_rng(0))
    with pytest.raises(ValueError, match="clip"):
        example.PrivateSum(0.0, 1.0, 10)
    with pytest.raises(ValueError, match="n_max"):
        ps.release(np.zeros(11), np.random.default_rng(0))
