"""Lazy Gaussian noise: many rounded-Gaussian draws summed in one go.

A solver that adds independent noise ``J_1, J_2, ...`` (each ``round(t N)``,
the integer law of :mod:`sparsedp._kernels._noise`) to a coordinate it does not
otherwise touch only needs their sum when it touches the coordinate again.
:class:`GaussianWalk` draws the sum of ``k`` steps of this integer random walk
at once: one draw per nonzero base-16 digit ``d`` of ``k`` at position ``i``, of
the same integer law at scale ``t sqrt(d 16**i)`` (:func:`walk_sum`; at most 2
draws for a sum of up to 255 steps, 3.6 on average in base 2 at 100 steps).  The state stays an exact integer, so a
coordinate's value is the same function of its integer state whether it was
updated every step or caught up lazily, and the catch-up carries no data.

The kernels draw the same sums from draws made ahead (:func:`walk_sum_buffered`,
:class:`WalkBuffers`): a table's draws come in bulk (16, then twice as many each
time, up to 1,024: the table is read while it is in cache, once for many draws),
and a catch-up takes the next unused draw of each table it needs, a sum of 16 to
255 steps always two (a zero digit's is an exact 0 that uses up nothing), so that
no branch depends on its digits.  Each draw is a fresh draw of its table's law and
is used once; which catch-up takes it depends on the gaps (the batches and X's
nonzeros), never on a draw's value: the sums have :func:`walk_sum`'s law, and the
draws left over at the end are dropped.  On the dorothea-shaped DP-SGD epoch
(728,000 catch-ups of about 110 steps, some 30 tables) the epoch went from 12.9
to 11.9 ms (table lines missed once per bulk fill instead of once a draw, fewer
mispredicted branches on the digits); the catch-ups alone, in bulk, from 11.8 to
11.1 ns each.

How close the law is to the eager one.  Let R_s be the ideal law of ``round(s
N)`` and D_s the discrete Gaussian (``P(m) ∝ exp(-m^2 / 2 s^2)``).  For ``|m|
<= 38 s`` (the sampler never returns more),

    ``exp(-1 / (8 s^2)) <= R_s(m) / D_s(m) <= exp(38^2 / (24 s^2)) (1 + 3 e^(-2 pi^2 s^2))``

(``R_s(m) / phi_s(m) = int_{-1/2}^{1/2} exp(-(2 m u + u^2) / (2 s^2)) du``, at most
``sinh(a/2) / (a/2) <= exp(a^2 / 24)`` with ``a = m / s^2``, at least ``exp(-1 /
(8 s^2))``; the discrete Gaussian's normaliser is ``s sqrt(2 pi)`` to within
``1 + 3 e^(-2 pi^2 s^2)``, Poisson summation).  The sum of two discrete
Gaussians of scales at least s is a discrete Gaussian of the summed variance to
within a factor ``1 +- 4 e^(-pi^2 s^2)`` (Canonne, Kamath and Steinke 2020,
the theta function of the convolution), nothing in double precision for
``s >= 2**13``.  Chaining: a catch-up of k steps (r table draws, r <= k the number of nonzero
digits) has a law within ``exp(+-(r (eta_tab + eta_lat) + k eta_lat))`` of
the sum of k ideal draws ``R_t``, with ``eta_lat = 60.2 / t^2`` (:attr:`lattice_eta`)
and ``eta_tab`` the tables' own error; the probability mass beyond ``38 s`` (below
1e-300 a draw) is a total-variation term.  Since ``r <= k``, a run
whose eager version makes ``N`` draws is within ``exp(+-N (eta_tab + 2 eta_lat))``
of its ideal law: :meth:`GaussianWalk.step_eta` is that per-step factor.  With
``t >= 2**28`` it is below ``1e-12``.
"""
import math

from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport free, malloc

from ._noise cimport IntegerNoise
from ._random cimport generator_bitgen

import numpy as np

__all__ = ["GaussianWalk", "WalkBuffers", "LATTICE_CONSTANT", "MAX_TABLE_SCALE", "top_spread", "walk_digits"]

#: ``eta_lat = LATTICE_CONSTANT / t^2``: 38^2 / 24 (the sampler's cut-off at 38 t),
#: rounded up
LATTICE_CONSTANT = 60.2
#: the integer sampler's largest scale (``IntegerNoise``)
MAX_TABLE_SCALE = 2.0 ** 40
#: total-variation bound of one draw: mass beyond the cut-off 38 t
TAIL_TV = 1e-300


def walk_digits(max_steps):
    """Base-16 digits of the largest sum (at least 1)."""
    return max(1, (int(max_steps).bit_length() + 3) // 4)


def top_spread(max_steps):
    """The largest table's variance over the step's: ``15 * 16**(digits - 1)``."""
    return 15.0 * 16.0 ** (walk_digits(max_steps) - 1)


cdef class GaussianWalk:
    """The integer random walk with steps ``round(scale N)``, drawable lazily.

    Parameters
    ----------
    scale : float
        t, the steps' scale in grid units (at least ``MIN_SCALE``).
    max_steps : int
        The largest number of steps summed at once; ``scale * sqrt(top_spread(max_steps))``
        must stay below ``2**40``.

    Attributes
    ----------
    table_eta, lattice_eta : float
        The tables' largest relative error and ``60.2 / scale**2``.
    """

    def __cinit__(self, double scale, int64_t max_steps):
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        cdef int digits = walk_digits(max_steps)
        if digits > WALK_DIGITS:
            raise ValueError(f"max_steps = {max_steps} is too large (at most 16**{WALK_DIGITS} - 1)")
        top = scale * math.sqrt(top_spread(max_steps))
        if not top < MAX_TABLE_SCALE:
            raise ValueError(
                f"a walk of scale {scale:.6g} over {max_steps} steps needs a table of scale "
                f"{top:.3g}, above the sampler's 2**40")
        self.scale, self.max_steps = scale, max_steps
        self._noises = [IntegerNoise("gaussian", scale * math.sqrt(d * 16.0 ** i))
                        for i in range(digits) for d in range(1, 16)]
        self.walk.digits = digits
        cdef IntegerNoise noise
        for b in range(len(self._noises)):
            noise = self._noises[b]
            self.walk.tables[b] = &noise.table
        self.table_eta = max(n.eta for n in self._noises)
        self.lattice_eta = LATTICE_CONSTANT / (scale * scale)

    @property
    def step_eta(self):
        """Per eager draw replaced: the law is within ``exp(+-step_eta)`` of the ideal."""
        return self.table_eta + 2.0 * self.lattice_eta

    def sums(self, generator, steps, buffered=False):
        """The sums of ``steps[i]`` walk steps, one per entry (int64 array).

        ``buffered``: drawn as the solvers' kernels draw them
        (:func:`walk_sum_buffered`: each table's draws in bulk, taken in order),
        else one table draw at a time (:func:`walk_sum`).  The same law.
        """
        k = np.ascontiguousarray(steps, dtype=np.int64)
        if k.size and (k.min() < 0 or k.max() > self.max_steps):
            raise ValueError(f"steps must be in [0, {self.max_steps}]")
        out = np.empty(k.shape[0], dtype=np.int64)
        cdef const int64_t[::1] kv = k
        cdef int64_t[::1] ov = out
        cdef bitgen_t* rng = generator_bitgen(generator)
        cdef Py_ssize_t i
        cdef WalkBuffers buffers = WalkBuffers([self]) if buffered else None
        cdef WalkDraws* wd = buffers.draws if buffered else NULL
        cdef bint buffer = wd != NULL
        with generator.bit_generator.lock, nogil:
            if buffer:
                for i in range(kv.shape[0]):
                    ov[i] = walk_sum_buffered(wd, rng, kv[i])
            else:
                for i in range(kv.shape[0]):
                    ov[i] = walk_sum(&self.walk, rng, kv[i])
        return out


cdef class WalkBuffers:
    """The buffered draws of a run's walks (:func:`walk_sum_buffered`), one
    :c:type:`WalkDraws` per walk, kept across the kernel calls of the run (a
    solver's result does not depend on how its steps are split into calls).

    Parameters
    ----------
    walks : list of GaussianWalk
    """

    def __cinit__(self, walks):
        self.walks = list(walks)
        cdef Py_ssize_t r, n = len(self.walks)
        # 1.2 MB a walk, uninitialised, from malloc: only the pages of the tables a
        # run draws from are touched (numpy would ask for huge pages above 4 MB,
        # and a touch would then commit 2 MB); 64-byte aligned
        self._memory = malloc(max(n, 1) * sizeof(WalkDraws) + 64)
        if self._memory == NULL:
            raise MemoryError()
        self.draws = <WalkDraws*> ((<uintptr_t> self._memory + 63) & ~(<uintptr_t> 63))
        cdef GaussianWalk walk
        for r in range(n):
            walk = self.walks[r]
            walk_draws_init(&self.draws[r], &walk.walk)

    def __dealloc__(self):
        free(self._memory)
