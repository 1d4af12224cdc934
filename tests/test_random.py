"""numpy.random's Cython API: the kernels' draws are numpy's own.

The batch fills of ``sparsedp._kernels._random`` (``standard_normal_fill``, numpy's
ziggurat with its common case inlined; ``uniform_index_fill``, Lemire's method
inlined) are public through ``cimport sparsedp.random``; they are checked through
the compiled example (``examples/cython/noisy_sum.pyx``, the ``example`` fixture of
tests/conftest.py), which calls them nogil as any user's Cython code would.
"""
import subprocess
import sys

import numpy as np
import pytest


@pytest.mark.parametrize("seed", [0, 12345])
def test_kernel_normals_equal_generator_normals(example, seed):
    ours = example.standard_normals(np.random.default_rng(seed), 10_000)
    theirs = np.random.default_rng(seed).standard_normal(10_000)
    np.testing.assert_array_equal(ours, theirs)


def test_kernel_indices_equal_generator_integers(example):
    ours = example.uniform_indices(np.random.default_rng(3), 100_000, 5_000)
    theirs = np.random.default_rng(3).integers(0, 100_000, 5_000)
    np.testing.assert_array_equal(ours, theirs)


def test_kernel_advances_the_generator_state(example):
    rng = np.random.default_rng(0)
    example.standard_normals(rng, 10)
    ref = np.random.default_rng(0)
    ref.standard_normal(10)
    assert rng.standard_normal() == ref.standard_normal()


def test_rejects_non_generator(example):
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        example.standard_normals(np.random.RandomState(0), 3)


# The kernels' batch fill inlines the common case of numpy's ziggurat and hands
# every other draw back to numpy: it must give numpy's normals bit for bit,
# including the draws that go through the wedges and the tail (|x| > r, the
# base layer's edge, about 2.6e-4 of the draws).
ZIGGURAT_R = 3.6541528853610088


def test_batch_fill_inlines_numpy_ziggurat_on_this_numpy(tmp_path):
    """On import the fill checks its inlined path against numpy's and warns (falling
    back to numpy's library) if they differ: no warning with this numpy.  From
    another folder: the source tree (no compiled kernels) must not shadow the package."""
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c",
                           "import sparsedp._kernels._random"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "bit_generator", [np.random.SFC64, np.random.PCG64, np.random.MT19937, np.random.Philox])
def test_batch_normals_equal_generator_normals(example, bit_generator):
    size = 1_000_000
    ours = example.standard_normals(np.random.Generator(bit_generator(11)), size)
    theirs = np.random.Generator(bit_generator(11)).standard_normal(size)
    np.testing.assert_array_equal(ours, theirs)
    # the comparison covered numpy's slow paths: tail draws occurred (expected
    # 2 * (1 - Phi(r)) * size = 258; Poisson, so > 150 fails with prob. < 1e-11)
    assert np.count_nonzero(np.abs(theirs) > ZIGGURAT_R) > 150


def test_batch_fill_advances_the_generator_as_numpy_does(example):
    rng = np.random.Generator(np.random.SFC64(5))
    ref = np.random.Generator(np.random.SFC64(5))
    for size in (1, 255, 4096, 0, 17):
        np.testing.assert_array_equal(
            example.standard_normals(rng, size), ref.standard_normal(size))
    np.testing.assert_array_equal(rng.bit_generator.random_raw(4), ref.bit_generator.random_raw(4))


@pytest.mark.parametrize("high", [1, 2, 7, 100_000, 2**31 + 5, 2**32 - 1, 2**32, 2**40 + 3])
@pytest.mark.parametrize("bit_generator", [np.random.SFC64, np.random.PCG64])
def test_batch_indices_equal_generator_integers(example, bit_generator, high):
    # 2 <= high < 2**32 runs the inlined Lemire draw, the others numpy's fill;
    # high = 1 draws nothing (the generator must not advance, as in numpy)
    rng = np.random.Generator(bit_generator(4))
    ref = np.random.Generator(bit_generator(4))
    ours = example.uniform_indices(rng, high, 100_000)
    np.testing.assert_array_equal(ours, ref.integers(0, high, 100_000))
    assert ours.min() >= 0 and ours.max() < high
    # one more 32-bit word leaves half a 64-bit one in the generator (SFC64's state
    # drawn inline: written back with it), which numpy's next 32-bit draw takes
    np.testing.assert_array_equal(example.uniform_indices(rng, 7, 1), ref.integers(0, 7, 1))
    np.testing.assert_array_equal(rng.integers(0, 7, 5), ref.integers(0, 7, 5))
    np.testing.assert_array_equal(rng.bit_generator.random_raw(3), ref.bit_generator.random_raw(3))


def test_batch_indices_up_to_2_63(example):
    np.testing.assert_array_equal(example.uniform_indices(np.random.default_rng(0), 2**63, 5),
                                  np.random.default_rng(0).integers(0, 2**63, 5))
    with pytest.raises(ValueError, match="high must lie in"):
        example.uniform_indices(np.random.default_rng(0), 0, 4)
