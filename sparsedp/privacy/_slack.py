"""The floating-point samplers' slack in (epsilon, delta): its two conversions.

A sampler whose law is within a factor ``exp(+-eta)`` of the ideal one costs
multiplicative slack; one within total variation ``tv`` costs additive delta
(:meth:`~sparsedp.privacy.PrivacyLedger.add_sampler_error`,
:meth:`~sparsedp.privacy.PrivacyLedger.add_sampler_tv`, ``docs/privacy.rst``).
"""
import math

__all__ = ["TV_MARGIN", "slack_delta", "tv_charge"]

#: the samplers' total variation is charged with this relative margin (rounding of its sum)
TV_MARGIN = 1e-12


def tv_charge(epsilon, tv):
    """The delta that total variation ``tv`` costs a run at ``epsilon``: ``(1 + e^eps) tv``
    (:meth:`PrivacyLedger.add_sampler_tv`); ``inf`` where it overflows."""
    if tv == 0.0:
        return 0.0
    if epsilon >= 709.0:
        return math.inf
    return (1.0 + math.exp(epsilon)) * tv * (1.0 + TV_MARGIN)


def slack_delta(delta, h):
    """The delta left to the ideal mechanisms under multiplicative sampler slack ``h``:
    ``delta e^-h``, rounded down (exp and the product are each within an ulp); 0 when
    nothing is left."""
    if h <= 0:
        return delta
    return max(math.nextafter(math.nextafter(delta * math.exp(-h), 0.0), 0.0), 0.0)
