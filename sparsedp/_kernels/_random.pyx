"""numpy.random's Cython API for the kernels.

Every kernel draws its noise from the ``bitgen_t`` behind a
:class:`numpy.random.Generator`, through numpy's own C distributions
(``random_standard_normal`` is the ziggurat of ``Generator.standard_normal``)
or through the batch fills below, which inline numpy's common cases and return
the same numbers, so that a seeded ``random_state`` reproduces a fit exactly and
the draws are the very ones numpy would make.  The caller must hold
``generator.bit_generator.lock`` around the nogil section that draws.
"""
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer
from libc.stdint cimport uint32_t, uint64_t
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport random_standard_normal, random_standard_normal_fill

cdef extern from "numpy/random/distributions.h":
    # Generator.integers(0, rng + 1, cnt) fills with exactly this call
    void random_bounded_uint64_fill(bitgen_t* state, uint64_t off, uint64_t rng,
                                    Py_ssize_t cnt, bint use_masked,
                                    uint64_t* out) noexcept nogil

import contextlib
import warnings

import numpy as np

cdef const char* CAPSULE_NAME = "BitGenerator"


def held(*generators):
    """A context manager holding the bit-generator locks of ``generators``, each
    distinct bit generator's once (a kernel drawing from two generators, or from
    one passed twice)."""
    stack = contextlib.ExitStack()
    seen = []
    for generator in generators:
        bit_generator = generator.bit_generator
        if not any(bit_generator is other for other in seen):
            seen.append(bit_generator)
            stack.enter_context(bit_generator.lock)
    return stack


cdef bitgen_t* generator_bitgen(object generator) except NULL:
    """The ``bitgen_t`` of a numpy Generator (raises TypeError otherwise)."""
    if not isinstance(generator, np.random.Generator):
        raise TypeError(
            f"expected a numpy.random.Generator, got {type(generator).__name__}")
    capsule = generator.bit_generator.capsule
    if not PyCapsule_IsValid(capsule, CAPSULE_NAME):
        raise TypeError("invalid BitGenerator capsule")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, CAPSULE_NAME)


# ---------------------------------------------------------------------------
# numpy's ziggurat with its common case inlined.
#
# ``random_standard_normal`` (numpy's ziggurat) draws a 64-bit word r and reads
# it as layer = r & 0xff, sign = bit 8, a = the next 52 bits; if a < K[layer]
# (about 99% of draws) it returns +-a * W[layer], otherwise it rejects into the
# wedge and tail tests, which draw more.  Called through numpy's library, that
# common case costs a function call and a mispredicted branch on the sign, both
# avoided inline with the sign folded into a signed table.  So :func:`standard_normal_fill` does the common case itself and hands
# every other word to numpy's own ``random_standard_normal`` through a bit
# generator that replays the word first (numpy then takes exactly the path it
# would have taken, drawing from the same stream): the draws are numpy's, bit
# for bit.  K and W are numpy's own tables, read out of its sampler at import
# by feeding it chosen words (W[l]: the word with a = 1; K[l]: the first a that
# is rejected, by bisection); a check against ``random_standard_normal_fill``
# then decides whether the inlined path is used at all: if numpy's sampler ever
# reads its words differently, every fill falls back to numpy's (with a
# warning), never to a different law.

cdef uint64_t LAYER_BITS = 0xff
cdef uint64_t SIGNED_LAYER_BITS = 0x1ff
cdef uint64_t ABS_BITS = (<uint64_t> 1 << 52) - 1
cdef uint64_t ZIGGURAT_K[256]   # common case iff a < ZIGGURAT_K[layer]
cdef double ZIGGURAT_W[512]     # [sign * 256 + layer]: +-W[layer]
cdef bint ziggurat_inlined = False


ctypedef struct ProbeState:
    uint64_t word      # returned by the first next_uint64
    int n_uint64       # calls so far
    int n_double


cdef uint64_t probe_uint64(void* st) noexcept nogil:
    cdef ProbeState* s = <ProbeState*> st
    s.n_uint64 += 1
    # later words (after a rejection): a = 1 in layer 1, 2, ...: accepted soon
    return s.word if s.n_uint64 == 1 else (<uint64_t> 1 << 9) | (s.n_uint64 & 0xff)


cdef uint32_t probe_uint32(void* st) noexcept nogil:
    return 0


cdef double probe_double(void* st) noexcept nogil:
    (<ProbeState*> st).n_double += 1
    return 0.5


cdef double probe(uint64_t word, ProbeState* s) noexcept nogil:
    """numpy's ``random_standard_normal`` fed ``word`` (then harmless ones)."""
    cdef bitgen_t g
    s.word = word
    s.n_uint64 = 0
    s.n_double = 0
    g.state = s
    g.next_uint64 = probe_uint64
    g.next_uint32 = probe_uint32
    g.next_double = probe_double
    g.next_raw = probe_uint64
    return random_standard_normal(&g)


cdef void read_ziggurat_tables() noexcept nogil:
    cdef ProbeState s
    cdef uint64_t layer, lo, hi, mid
    for layer in range(256):
        lo = 0
        hi = ABS_BITS + 1
        while lo < hi:  # the first a that numpy does not accept at once
            mid = lo + (hi - lo) // 2
            probe((mid << 9) | layer, &s)
            if s.n_uint64 == 1 and s.n_double == 0:
                lo = mid + 1
            else:
                hi = mid
        ZIGGURAT_K[layer] = lo
        # W from a = 1 (exact: 1 * W), when numpy accepts it; a layer accepting
        # only a = 0 (K = 1) or nothing (K = 0) returns +-0 * W: any W > 0 does
        ZIGGURAT_W[layer] = probe((<uint64_t> 1 << 9) | layer, &s) if lo > 1 else 1.0
        ZIGGURAT_W[256 + layer] = -ZIGGURAT_W[layer]


ctypedef struct ReplayState:
    bitgen_t* source
    uint64_t word
    bint pending


cdef uint64_t replay_uint64(void* st) noexcept nogil:
    cdef ReplayState* s = <ReplayState*> st
    if s.pending:
        s.pending = False
        return s.word
    return s.source.next_uint64(s.source.state)


cdef uint32_t replay_uint32(void* st) noexcept nogil:
    cdef ReplayState* s = <ReplayState*> st
    return s.source.next_uint32(s.source.state)


cdef double replay_double(void* st) noexcept nogil:
    cdef ReplayState* s = <ReplayState*> st
    return s.source.next_double(s.source.state)


cdef double numpy_normal_from(bitgen_t* rng, uint64_t word) noexcept nogil:
    """numpy's ``random_standard_normal`` whose first word is ``word``, then ``rng``'s."""
    cdef ReplayState s
    cdef bitgen_t g
    s.source = rng
    s.word = word
    s.pending = True
    g.state = &s
    g.next_uint64 = replay_uint64
    g.next_uint32 = replay_uint32
    g.next_double = replay_double
    g.next_raw = replay_uint64
    return random_standard_normal(&g)


cdef void standard_normal_fill(bitgen_t* rng, Py_ssize_t count, double* out) noexcept nogil:
    """``count`` standard normals into ``out``: numpy's, draw for draw."""
    if ziggurat_inlined:
        inlined_normal_fill(rng, count, out)
    else:
        random_standard_normal_fill(rng, count, out)


cdef void inlined_normal_fill(bitgen_t* rng, Py_ssize_t count, double* out) noexcept nogil:
    """The inlined common case (tables read), every other word through numpy."""
    cdef Py_ssize_t k
    cdef uint64_t r, a
    for k in range(count):
        r = rng.next_uint64(rng.state)
        a = (r >> 9) & ABS_BITS
        if a < ZIGGURAT_K[r & LAYER_BITS]:
            out[k] = <double> a * ZIGGURAT_W[r & SIGNED_LAYER_BITS]
        else:
            out[k] = numpy_normal_from(rng, r)


# ---------------------------------------------------------------------------
# numpy's SFC64 inlined.
#
# A call through ``bitgen_t.next_uint64`` costs about 1.9 ns a word here, SFC64's
# step itself under 1 ns: a fill that draws many words runs the steps inline on a
# local copy of the generator's state (``sfc64_next``, ``sfc64_next32``), the very
# words numpy's SFC64 would give, in the same order.  At import the step is checked
# against numpy's on 1,000 words and the state it leaves: should a future numpy
# lay its state out otherwise, ``sfc64_words`` is NULL and every word goes
# through numpy's library (with a warning), never a different stream.  Other bit
# generators always go through their library.

cdef uint64_t (*SFC64_NEXT)(void* st) noexcept nogil
SFC64_NEXT = NULL


cdef Sfc64State* sfc64_state(bitgen_t* rng) noexcept nogil:
    if SFC64_NEXT != NULL and rng.next_uint64 == SFC64_NEXT:
        return <Sfc64State*> rng.state
    return NULL


def _setup_sfc64():
    """Use the inline steps with numpy's SFC64 if they reproduce numpy's words."""
    global SFC64_NEXT
    generator = np.random.Generator(np.random.SFC64(20261207))
    cdef bitgen_t* rng = generator_bitgen(generator)
    cdef Sfc64State* state = <Sfc64State*> rng.state
    cdef Sfc64State copy = state[0]
    cdef int i
    cdef bint same = True
    for i in range(1000):  # 64-bit words, then 32-bit ones (with their buffered halves)
        same &= sfc64_next(&copy) == rng.next_uint64(rng.state)
    for i in range(1001):
        same &= sfc64_next32(&copy) == rng.next_uint32(rng.state)
    for i in range(4):
        same &= copy.s[i] == state.s[i]
    same &= copy.has_uint32 == state.has_uint32 and copy.uinteger == state.uinteger
    if same:
        SFC64_NEXT = rng.next_uint64
        return
    from sparsedp._warnings import find_stack_level  # at import: the user's line
    warnings.warn("numpy's SFC64 does not hold its state as sparsedp expects; drawing "
                  "its words through numpy's library (slower, the same words)",
                  RuntimeWarning, stacklevel=find_stack_level())


_setup_sfc64()


cdef uint64_t UINT32_RANGE = <uint64_t> 1 << 32


cdef void uniform_index_fill(bitgen_t* rng, uint64_t high, Py_ssize_t count,
                             uint64_t* out) noexcept nogil:
    """``count`` integers uniform in [0, high): ``Generator.integers(0, high, count)``.

    For ``2 <= high < 2**32`` numpy draws each as Lemire's method on one 32-bit
    word x (``m = x * high``; accept unless ``m mod 2**32 < 2**32 mod high``;
    return ``m >> 32``), through a library call per draw; inlined here, the same
    words give the same integers, without the call (numpy's SFC64's words drawn
    inline too).  Other ``high`` go through numpy's own fill.
    """
    if high < 2 or high >= UINT32_RANGE:
        random_bounded_uint64_fill(rng, 0, high - 1, count, False, out)
        return
    cdef Sfc64State* shared = sfc64_state(rng)
    if shared != NULL:  # one loop, compiled for each source of words
        lemire_fill(rng, shared, high, count, out)
    else:
        lemire_fill(rng, NULL, high, count, out)


cdef inline void lemire_fill(bitgen_t* rng, Sfc64State* shared, uint64_t high,
                             Py_ssize_t count, uint64_t* out) noexcept nogil:
    """uniform_index_fill's draws: words from ``shared``'s local copy, or (NULL)
    through ``rng``'s library."""
    cdef uint32_t threshold = (UINT32_RANGE - high) % high
    cdef Sfc64State local
    cdef Py_ssize_t k
    cdef uint64_t m
    if shared != NULL:
        local = shared[0]
    for k in range(count):
        m = <uint64_t> (sfc64_next32(&local) if shared != NULL
                        else rng.next_uint32(rng.state)) * high
        while <uint32_t> m < threshold:
            m = <uint64_t> (sfc64_next32(&local) if shared != NULL
                            else rng.next_uint32(rng.state)) * high
        out[k] = m >> 32
    if shared != NULL:
        shared[0] = local


cdef bint ziggurat_tables_read = False


def _setup_ziggurat():
    """Read numpy's tables (once) and inline the common case if it reproduces numpy."""
    global ziggurat_inlined, ziggurat_tables_read
    if not ziggurat_tables_read:
        read_ziggurat_tables()
        ziggurat_tables_read = True
    cdef double[::1] view
    for bit_generator in (np.random.SFC64, np.random.PCG64):
        generator = np.random.Generator(bit_generator(20261123))
        ours = np.empty(100_000)
        view = ours
        inlined_normal_fill(generator_bitgen(generator), 100_000, &view[0])
        theirs = np.random.Generator(bit_generator(20261123)).standard_normal(100_000)
        if not np.array_equal(ours, theirs):
            ziggurat_inlined = False
            from sparsedp._warnings import find_stack_level  # at import: the user's line
            warnings.warn(
                "numpy's standard_normal does not read its words as sparsedp "
                "expects; drawing normals through numpy's library (slower, same law)",
                RuntimeWarning, stacklevel=find_stack_level())
            return
    ziggurat_inlined = True


_setup_ziggurat()
