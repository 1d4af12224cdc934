"""Batches of rows for the stochastic solvers, with an exactly known law.

Poisson sampling (each of the n rows independently with probability q) is
drawn in O(batch size) rather than O(n): the batch size K has the binomial law
``Bin(n, q)``, and given K the batch is a uniformly random K-subset, so the
batch ``B`` has probability ``P(K = |B|) / C(n, |B|) = q^|B| (1 - q)^(n - |B|)``,
the Poisson law.  K is drawn by inverting its CDF on a 128-bit uniform (two
words of the bit generator): size k has probability ``u_k / 2**128`` with
``u_k`` the integers nearest to ``2**128 P(K = k)``, computed with 60 decimal
digits (``decimal``), for the sizes whose probability is at least ``2**-80``;
the others (total mass ``tv``, in both tails) are never drawn and the rounding's
remainder goes to the most likely size.  Every drawn batch's probability is
then within ``exp(+-eta)`` of the ideal law's (``eta`` computed at build time,
about 1e-15 at worst), and the law is within total variation ``tv`` of the
core: the solvers record ``eta`` and ``tv`` per step on the ledger.  Given K,
Floyd's algorithm draws the subset with exact bounded integers.

Fixed-size batches (``fixed = m``) are the uniformly random m-subsets, exactly.
"""
from decimal import Decimal, localcontext, ROUND_HALF_EVEN

import functools

import numpy as np

from ._random cimport generator_bitgen

__all__ = ["Batches"]

#: sizes of probability below this are never drawn (their mass is the tv)
SMALLEST = Decimal(2) ** -80


@functools.lru_cache(maxsize=64)
def binomial_table(n, rate):
    """``(first, units, eta, tv)``: the 128-bit integer weights of the sizes
    ``first, first + 1, ...`` (those of probability at least ``2**-80``)."""
    with localcontext() as ctx:
        ctx.prec = 60
        q = Decimal(rate)  # the float's exact value
        log_q1 = (q / (1 - q)).ln()
        log_p = n * (1 - q).ln()  # log P(K = 0)
        log_small = SMALLEST.ln()
        probs, first, k = [], None, 0
        mode = int(n * rate)
        while k <= n:
            if log_p >= log_small:
                if first is None:
                    first = k
                probs.append(log_p.exp())
            elif k > mode:
                break
            log_p += ((Decimal(n - k)) / (k + 1)).ln() + log_q1
            k += 1
        scale = Decimal(2) ** 128
        units = [int((p * scale).to_integral_value(ROUND_HALF_EVEN)) for p in probs]
        top = max(range(len(units)), key=units.__getitem__)
        units[top] += 2 ** 128 - sum(units)
        kept = sum(probs)
        tv = float(max(Decimal(0), 1 - kept))
        eta = 0.0
        for u, p in zip(units, probs):
            # against the core law P / kept (the tail's mass is the tv)
            eta = max(eta, abs(float((Decimal(u) / scale * kept / p).ln())))
    return first, tuple(units), eta, tv


cdef class Batches:
    """The batch sampler of one run.

    Parameters
    ----------
    n : int
        Rows.
    rate : float
        Poisson rate q in (0, 1] (ignored when ``fixed``).
    fixed : int, default=0
        If positive, batches of exactly this many rows.

    Attributes
    ----------
    eta, tv : float
        Per batch: its law is within ``exp(+-eta)`` of the ideal Poisson law on
        the sizes drawn, and total variation ``tv`` of it (0 and 0 for fixed
        batches and for rate 1).
    max_size : int
        No batch is larger (the largest size of the table): the bound of the
        solvers' sums.
    """

    def __cinit__(self, int64_t n, double rate, int64_t fixed=0):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if not 0 <= fixed <= n:
            raise ValueError(f"the fixed batch size must be in [0, {n}], got {fixed}")
        if not fixed and not (0.0 < rate <= 1.0):
            raise ValueError(f"the sampling rate must be in (0, 1], got {rate!r}")
        self.n, self.fixed, self.rate = n, fixed, rate
        self.eta = self.tv = 0.0
        self.sampler.first = 0
        chosen = np.zeros(n, dtype=np.uint8)
        if fixed or rate == 1.0:
            cum_hi = np.zeros(1, dtype=np.uint64)
            cum_lo = np.zeros(1, dtype=np.uint64)
            sizes = 1
            if not fixed:
                self.fixed = fixed = n  # every row, every step
            self.max_size = fixed
        else:
            first, units, self.eta, self.tv = binomial_table(n, rate)
            self.sampler.first = first
            cum = np.cumsum(np.array(units, dtype=object))
            cum_hi = np.array([int(c) >> 64 for c in cum], dtype=object)
            cum_lo = np.array([int(c) & (2 ** 64 - 1) for c in cum], dtype=object)
            # the last threshold is 2**128: every draw is below it (the loop stops there)
            cum_hi = np.array([min(int(c), 2 ** 64 - 1) for c in cum_hi], dtype=np.uint64)
            cum_lo = cum_lo.astype(np.uint64)
            sizes = len(units)
            self.max_size = first + sizes - 1
        self._arrays = (cum_hi, cum_lo, chosen)
        cdef uint64_t[::1] hv = cum_hi, lv = cum_lo
        cdef unsigned char[::1] cv = chosen
        self.sampler.n, self.sampler.fixed, self.sampler.n_sizes = n, fixed, sizes
        self.sampler.cum_hi, self.sampler.cum_lo = &hv[0], &lv[0]
        self.sampler.chosen = &cv[0]

    def draw(self, generator, Py_ssize_t count):
        """``count`` batches from ``generator``, as the solvers draw them.

        Returns a list of ``count`` int64 arrays of row indices (in the order
        drawn), the draws ``sample_batch`` makes from the same bit generator (for
        tests of the law, and for anyone who needs the solvers' batches).
        """
        if count < 0:
            raise ValueError(f"count must be >= 0, got {count}")
        rows = np.empty(max(self.max_size, 1), dtype=np.int64)
        cdef int64_t[::1] rv = rows
        cdef bitgen_t* rng = generator_bitgen(generator)
        cdef int64_t size
        out = []
        for _ in range(count):
            with generator.bit_generator.lock, nogil:
                size = sample_batch(&self.sampler, rng, &rv[0])
            out.append(rows[:size].copy())
        return out
