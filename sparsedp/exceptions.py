"""Warnings and errors of sparsedp."""

__all__ = ["PrivacyLeakWarning"]


class PrivacyLeakWarning(UserWarning):
    """A constant was computed from the private data without spending budget.

    Raised (as a warning) when, for instance, the coordinate-wise smoothness
    constants ``M_j`` are computed from ``X`` itself: the released model is
    then *not* covered by the stated (epsilon, delta) guarantee. Pass public
    constants, or a budget fraction to estimate them privately, to silence it.
    """
