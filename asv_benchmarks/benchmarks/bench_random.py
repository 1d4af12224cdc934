"""asv: the kernels' fills of numpy's draws (``sparsedp._kernels._random``) against numpy's own,
and the integer noise of the releases on a grid (``sparsedp._kernels._noise``).

Both sides draw the same numbers; a regression of the inlined paths (for instance a
numpy whose ziggurat no longer matches, which makes the fills fall back to numpy's
library) shows as the fills' time rising to numpy's.
"""
import numpy as np

from sparsedp._kernels import _noise, _random

SIZE = 100_000  # one DP-CD pass on the dorothea-shaped problem


class Normals:
    def setup(self):
        self.rng = np.random.Generator(np.random.SFC64(0))

    def time_kernel_fill(self):
        _random.standard_normal_batch(self.rng, SIZE)

    def time_numpy(self):
        self.rng.standard_normal(SIZE)


class Indices:
    def setup(self):
        self.rng = np.random.Generator(np.random.SFC64(0))

    def time_kernel_fill(self):
        _random.uniform_index_batch(self.rng, SIZE, SIZE)

    def time_numpy(self):
        self.rng.integers(0, SIZE, SIZE)


class IntegerNoise:
    """The releases' integer noise (a DP-CD pass draws p), next to numpy's normals."""

    params = (["gaussian", "laplace"], [8192.0, 2.0 ** 22])
    param_names = ["law", "scale"]

    def setup(self, law, scale):
        self.rng = np.random.Generator(np.random.SFC64(0))
        self.noise = _noise.IntegerNoise(law, scale)

    def time_draw(self, law, scale):
        self.noise.draw(self.rng, SIZE)
