"""The k-th power of a Fourier spectrum known to within an error, with a bound of the
error of the result: the powering step of the PLD's composition by FFT
(:func:`sparsedp.privacy.pld._compose_direction`)."""
import math

import numpy as np

#: unit roundoff of double precision
U = 2.0 ** -53
#: relative error of a complex product, in units of u: sqrt(2) gamma_2 (Higham 2002,
#: Lemma 3.5); 2u with an FMA (Jeannerod, Kornerup, Louvet and Muller 2017)
CMUL = 3.0
#: absolute error of an operation whose result is subnormal, with margin
TINY = 2.0 ** -1070
#: a k-th power of a transform entry below this is not computed (0, counted in the error)
DROP = 1e-40


def spectral_power(f, a, k):
    """``f ** k`` by binary powering, a bound of ``|f ** k|`` and of its distance to ``F ** k``.

    ``|f - F| <= a`` entrywise.  ``|F^k - f^k| <= (|f| + a)^k - |f|^k`` (expand
    ``(f + e)^k``); the products of an addition chain for ``k`` round
    ``f^k`` to within a factor ``(1 + c)^(k - 1)``, ``c = CMUL u`` in the
    precision of ``f`` (induction on ``x^(i+j) = x^i x^j``), plus ``TINY`` per
    product for underflow.  The bound is evaluated in double from ``|f|``
    rounded to double, hence the factor ``e^(4 k u)``.  Where ``(|f| + a)^k <
    DROP`` the power is not computed: 0, with error ``(|f| + a)^k``.
    """
    mod = np.abs(f).astype(float)
    margin = (1.0 + 1e-9) * math.exp(4 * k * U)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        log_grown = k * np.log(mod + a)  # log (|f| + a)^k
    keep = log_grown >= math.log(DROP)
    out = np.zeros_like(f)
    modulus = np.zeros(f.shape)
    err = np.exp(log_grown) * margin + 2 * k.bit_length() * TINY
    base, e, power = f[keep], k, None
    while True:
        if e & 1:
            power = base if power is None else power * base
        e >>= 1
        if not e:
            break
        base = base * base
    out[keep] = power
    cmul = CMUL * float(np.finfo(f.real.dtype).eps) / 2.0
    m = mod[keep]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        log_m = np.log(m)
        spread = np.exp(log_grown[keep]) * -np.expm1(-k * np.log1p(a / m))
        rounding = math.expm1((k - 1) * math.log1p(cmul)) * np.exp(k * log_m)
    err[keep] = (spread + rounding) * margin + 2 * k.bit_length() * TINY
    modulus[keep] = np.exp(k * log_m) * margin
    return out, modulus, err
