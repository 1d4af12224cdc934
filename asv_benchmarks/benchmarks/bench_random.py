"""asv: the integer noise of the releases on a grid (``sparsedp.random.IntegerNoise``),
next to numpy's standard normals.

The kernels draw this noise for every release (a DP-CD pass draws p); a regression
of its sampler (the alias table, the acceptance test) shows as its time rising
against numpy's normals, which draw about as many words.
"""
import numpy as np

from sparsedp.random import IntegerNoise as Noise

SIZE = 100_000  # one DP-CD pass on the dorothea-shaped problem


class Normals:
    """numpy's normals: the reference of the integer noise's time."""

    def setup(self):
        self.rng = np.random.Generator(np.random.SFC64(0))

    def time_numpy(self):
        self.rng.standard_normal(SIZE)


class IntegerNoise:
    """The releases' integer noise (a DP-CD pass draws p), next to numpy's normals."""

    params = (["gaussian", "laplace"], [8192.0, 2.0 ** 22])
    param_names = ["law", "scale"]

    def setup(self, law, scale):
        self.rng = np.random.Generator(np.random.SFC64(0))
        self.noise = Noise(law, scale)

    def time_draw(self, law, scale):
        self.noise.draw(self.rng, SIZE)


class GaussianFloor:
    """One safe Gaussian draw against one numpy float normal (issue: at most half)."""

    def setup(self):
        from sparsedp.random import IntegerNoise as Noise
        self.rng = np.random.default_rng(0)
        self.noise = Noise("gaussian", 2.0 ** 28)
        self.ints, self.floats = np.empty(SIZE, dtype=np.int64), np.empty(SIZE)

    def time_safe_fill(self):
        self.noise.fill(self.rng, self.ints)

    def time_numpy_standard_normal(self):
        self.rng.standard_normal(out=self.floats)

    def track_ratio_to_numpy(self):
        from .common import gaussian_floor
        ours, numpy = gaussian_floor(SIZE, rounds=9)
        return ours / numpy
    track_ratio_to_numpy.unit = "ratio"
