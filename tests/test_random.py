"""numpy.random's Cython API: the kernels' draws are numpy's own."""
import numpy as np
import pytest

from sparsedp import _random


@pytest.mark.parametrize("seed", [0, 12345])
def test_kernel_normals_equal_generator_normals(seed):
    ours = _random.standard_normal(np.random.default_rng(seed), 10_000)
    theirs = np.random.default_rng(seed).standard_normal(10_000)
    np.testing.assert_array_equal(ours, theirs)


def test_kernel_laplace_equals_generator_laplace():
    ours = _random.laplace(np.random.default_rng(7), 2.5, 5_000)
    theirs = np.random.default_rng(7).laplace(0.0, 2.5, 5_000)
    np.testing.assert_array_equal(ours, theirs)


def test_kernel_indices_equal_generator_integers():
    ours = _random.uniform_index(np.random.default_rng(3), 100_000, 5_000)
    theirs = np.random.default_rng(3).integers(0, 100_000, 5_000)
    np.testing.assert_array_equal(ours, theirs)


def test_kernel_advances_the_generator_state():
    rng = np.random.default_rng(0)
    _random.standard_normal(rng, 10)
    ref = np.random.default_rng(0)
    ref.standard_normal(10)
    assert rng.standard_normal() == ref.standard_normal()


def test_rejects_non_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        _random.standard_normal(np.random.RandomState(0), 3)
