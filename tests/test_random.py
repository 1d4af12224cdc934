"""numpy.random's Cython API: the kernels' draws are numpy's own."""
import numpy as np
import pytest

from sparsedp._kernels import _random


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


# The kernels' batch fill inlines the common case of numpy's ziggurat and hands
# every other draw back to numpy: it must give numpy's normals bit for bit,
# including the draws that go through the wedges and the tail (|x| > r, the
# base layer's edge, about 2.6e-4 of the draws).
ZIGGURAT_R = 3.6541528853610088


def test_batch_fill_inlines_numpy_ziggurat_on_this_numpy():
    assert _random.ziggurat_is_inlined()


@pytest.mark.parametrize(
    "bit_generator", [np.random.SFC64, np.random.PCG64, np.random.MT19937, np.random.Philox])
def test_batch_normals_equal_generator_normals(bit_generator):
    size = 1_000_000
    ours = _random.standard_normal_batch(np.random.Generator(bit_generator(11)), size)
    theirs = np.random.Generator(bit_generator(11)).standard_normal(size)
    np.testing.assert_array_equal(ours, theirs)
    # the comparison covered numpy's slow paths: tail draws occurred (expected
    # 2 * (1 - Phi(r)) * size = 258; Poisson, so > 150 fails with prob. < 1e-11)
    assert np.count_nonzero(np.abs(theirs) > ZIGGURAT_R) > 150


def test_batch_fill_advances_the_generator_as_numpy_does():
    rng = np.random.Generator(np.random.SFC64(5))
    ref = np.random.Generator(np.random.SFC64(5))
    for size in (1, 255, 4096, 0, 17):
        np.testing.assert_array_equal(
            _random.standard_normal_batch(rng, size), ref.standard_normal(size))
    np.testing.assert_array_equal(rng.bit_generator.random_raw(4), ref.bit_generator.random_raw(4))


@pytest.mark.parametrize("high", [1, 2, 7, 100_000, 2**31 + 5, 2**32 - 1, 2**32, 2**40 + 3])
@pytest.mark.parametrize("bit_generator", [np.random.SFC64, np.random.PCG64])
def test_batch_indices_equal_generator_integers(bit_generator, high):
    # 2 <= high < 2**32 runs the inlined Lemire draw, the others numpy's fill;
    # high = 1 draws nothing (the generator must not advance, as in numpy)
    rng = np.random.Generator(bit_generator(4))
    ref = np.random.Generator(bit_generator(4))
    ours = _random.uniform_index_batch(rng, high, 100_000)
    np.testing.assert_array_equal(ours, ref.integers(0, high, 100_000))
    assert ours.min() >= 0 and ours.max() < high
    np.testing.assert_array_equal(rng.bit_generator.random_raw(3), ref.bit_generator.random_raw(3))


def test_batch_fill_without_the_inlined_path_is_numpys_fill():
    """The fallback (numpy's library for every draw, taken if numpy's sampler ever
    reads its words otherwise) gives the same numbers and state."""
    _random._inline_ziggurat(False)
    try:
        assert not _random.ziggurat_is_inlined()
        rng = np.random.Generator(np.random.PCG64(8))
        ref = np.random.Generator(np.random.PCG64(8))
        np.testing.assert_array_equal(_random.standard_normal_batch(rng, 50_001),
                                      ref.standard_normal(50_001))
        assert rng.standard_normal() == ref.standard_normal()
    finally:
        _random._inline_ziggurat(True)
    assert _random.ziggurat_is_inlined()


def test_batch_index_helper_refuses_ranges_numpy_refuses():
    with pytest.raises(ValueError, match="high must lie in"):
        _random.uniform_index_batch(np.random.default_rng(0), 2**64 - 1, 4)
    with pytest.raises(ValueError, match="high must lie in"):
        _random.uniform_index_batch(np.random.default_rng(0), 0, 4)
    np.testing.assert_array_equal(_random.uniform_index_batch(np.random.default_rng(0), 2**63, 5),
                                  np.random.default_rng(0).integers(0, 2**63, 5))
