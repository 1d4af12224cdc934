# The noisy max, declared for cimport: sparsedp.random re-exports NoisyMax
# (the public path), _noisy_max.pyx defines it and DP-GCD's kernel
# (_dp_gcd_fast.pyx) selects with it.  The methods' laws are stated in
# _noisy_max.pyx and docs/privacy.rst ("Noisy max under floating point").
from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t

# unsigned 128-bit integers (the exact weight sums; GCC and Clang's __int128)
cdef extern from *:
    """
    #include <stdint.h>
    typedef unsigned __int128 sparsedp_u128;
    #include <string.h>
    /* ceil(v) for a double 0 <= v < 2^127, exactly (v >= 2^52 is an integer):
       hardware conversions below 2^63, the mantissa shifted above */
    static inline sparsedp_u128 sparsedp_u128_ceil(double v) {
        if (v < 9223372036854775808.0) {
            uint64_t r = (uint64_t) v;
            return (sparsedp_u128) ((double) r < v ? r + 1 : r);
        }
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        return (sparsedp_u128) ((bits & 0xFFFFFFFFFFFFFull) | 0x10000000000000ull)
               << ((int) ((bits >> 52) & 0x7FF) - 1075);
    }
    static inline double sparsedp_u128_double(sparsedp_u128 r) { return (double) r; }
    static inline int sparsedp_u128_bits(sparsedp_u128 x) {
        uint64_t hi = (uint64_t) (x >> 64), lo = (uint64_t) x;
        return hi ? 128 - __builtin_clzll(hi) : (lo ? 64 - __builtin_clzll(lo) : 0);
    }
    static inline sparsedp_u128 sparsedp_u128_words(uint64_t hi, uint64_t lo) {
        return ((sparsedp_u128) hi << 64) | lo;
    }
    """
    ctypedef unsigned long long u128 "sparsedp_u128"
    u128 u128_ceil "sparsedp_u128_ceil"(double v) noexcept nogil
    double u128_double "sparsedp_u128_double"(u128 r) noexcept nogil
    int u128_bits "sparsedp_u128_bits"(u128 x) noexcept nogil
    u128 u128_words "sparsedp_u128_words"(uint64_t hi, uint64_t lo) noexcept nogil


cdef class NoisyMax:
    cdef readonly Py_ssize_t p, block, n_blocks
    cdef readonly double scale, ref
    cdef readonly int units         # Q: a weight of 1 is 2^Q integer units
    cdef int selection
    cdef object generator
    cdef bitgen_t* rng
    cdef double[::1] score, block_max
    cdef u128* weight               # r_k (integer units), exact
    cdef u128* block_sum            # exact block sums of r_k
    cdef u128* tail_prefix          # laplace: prefix sums of the tail weights
    cdef u128* chunk_sum            # exact sums of CHUNK consecutive r_k (in blocks)
    cdef u128 total
    cdef double x_head, x_floor, x_one, two_q
    cdef bint stale                 # a weight would overflow: rebuild at flush
    cdef unsigned char[::1] dirty
    cdef int64_t[::1] dirty_list, hit
    cdef Py_ssize_t n_dirty
    cdef int64_t round
    cdef double best
    cdef readonly int64_t n_fallbacks, n_rebuilds

    # a ValueError unless __init__ ran (an object made by NoisyMax.__new__ alone)
    cdef int check_ready(self) except -1
    # maintenance: scores change through set_score, take effect at flush
    cdef inline u128 integer_weight(self, double s) noexcept nogil
    cdef void rebuild(self) noexcept nogil
    cdef inline void recompute_block(self, Py_ssize_t bk) noexcept nogil
    cdef void summarise(self) noexcept nogil
    cdef inline void set_score(self, Py_ssize_t k, double s) noexcept nogil
    cdef void flush(self) noexcept nogil
    # sampling: one noisy-argmax index per call (the caller holds the generator's lock)
    cdef Py_ssize_t sample(self) noexcept nogil
    cdef Py_ssize_t argmax(self) noexcept nogil
    cdef inline uint64_t word(self) noexcept nogil
    cdef u128 uniform_below(self, u128 n) noexcept nogil
    cdef inline double std_exponential(self) noexcept nogil
    cdef inline double std_laplace(self) noexcept nogil
    cdef Py_ssize_t scan_block(self, Py_ssize_t bk, u128 u, u128 acc,
                               double t) noexcept nogil
    cdef void acceptance(self, Py_ssize_t k, int64_t* zero_bits,
                         uint64_t* threshold) noexcept nogil
    cdef bint accept(self, Py_ssize_t k) noexcept nogil
    cdef Py_ssize_t sample_exponential(self) noexcept nogil
    cdef Py_ssize_t sample_laplace(self) noexcept nogil
    cdef Py_ssize_t descend_tail(self, u128 u, double t) noexcept nogil
