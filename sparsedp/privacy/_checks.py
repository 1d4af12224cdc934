"""Argument checks shared by the privacy package (built on sparsedp._validation)."""
import math

import numpy as np

from .._validation import check_integer, check_option, check_real

__all__ = ["check_calibration", "check_count", "check_delta", "check_epsilon", "check_noise", "check_nonneg",
           "check_orders", "check_relation", "check_sampling_rate", "RELATIONS"]

RELATIONS = ("replace-one", "add-remove")


def check_epsilon(epsilon, name="epsilon"):
    """A target epsilon: ``> 0``, ``inf`` meaning no privacy."""
    return check_real(epsilon, name, allow_inf=True)


def check_delta(delta, name="delta"):
    """A target delta in the open interval (0, 1)."""
    return check_real(delta, name, high=1.0)


def check_nonneg(value, name, *, allow_inf=True):
    """A real ``>= 0`` (``inf`` allowed unless said otherwise)."""
    return check_real(value, name, include_low=True, allow_inf=allow_inf)


def check_noise(noise_multiplier, name="noise_multiplier"):
    """A noise multiplier ``>= 0`` (0: no noise, infinite privacy loss)."""
    return check_nonneg(noise_multiplier, name)


def check_count(count, name="steps"):
    """A number of releases, an integer ``>= 1``."""
    return check_integer(count, name, low=1)


def check_sampling_rate(sampling_rate, name="sampling_rate"):
    """A sampling probability in (0, 1]."""
    return check_real(sampling_rate, name, high=1.0, include_high=True)


def check_calibration(epsilon, delta, steps, steps_name="steps"):
    """The (epsilon, delta, count) of a calibrator, checked."""
    return check_epsilon(epsilon), check_delta(delta), check_count(steps, steps_name)


def check_relation(relation):
    """One of :data:`RELATIONS`."""
    return check_option(relation, "relation", RELATIONS)


def check_orders(orders):
    """A non-empty 1-D array of Rényi orders, all ``> 1``."""
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    if orders.ndim != 1 or orders.size == 0:
        raise ValueError("orders must be a non-empty 1-D array")
    if np.any(np.isnan(orders)) or np.any(orders <= 1):
        raise ValueError("orders must all be > 1")
    return orders


def log1mexp(x):
    """``log(1 - exp(x))`` for ``x <= 0``, accurately (Mächler 2012)."""
    if x > -math.log(2.0):
        return math.log(-math.expm1(x)) if x < 0 else -math.inf
    return math.log1p(-math.exp(x))


def log1mexp_array(x):
    """Vectorised :func:`log1mexp`."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = x > -math.log(2.0)
    with np.errstate(divide="ignore"):
        out[small] = np.log(-np.expm1(x[small]))
        out[~small] = np.log1p(-np.exp(x[~small]))
    return out
