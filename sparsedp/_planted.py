"""Planted privacy bugs, for the audit suite only (``tests/audit``).

A privacy test that cannot fail proves nothing: every audit runs once against
the real mechanism (it must pass) and once against a deliberately broken
variant (it must fail).  The solvers read :func:`active` at the few places
where a bug can be planted; outside :func:`planted` nothing changes and the
ledger always states what the *correct* mechanism would spend, so a planted
bug is an under-noised mechanism that claims the correct budget.

Bugs
----
``"noise_halved"``
    Every noise scale (Gaussian and Laplace releases, selection noise) halved.
``"no_clipping"``
    Per-sample gradient terms are not clipped (the kernel runs with C_j = inf),
    while the noise is still calibrated for the clipped sensitivity.
``"sensitivity_halved"``
    The release's sensitivity taken as half its value (the grid and the noise
    are computed from Delta / 2).
``"monotone_selection"``
    Report-noisy-max at scale ``Delta / eps0`` (the monotone-scores scale of
    Dwork and Roth's Claim 3.9) on scores that are not monotone.
``"raw_float_noise"``
    The releases add raw floating-point noise to the raw value (the sampler
    this library used before the floating-point fix): Mironov's attack applies.
"""
import contextlib

__all__ = ["BUGS", "active", "planted"]

BUGS = ("noise_halved", "no_clipping", "sensitivity_halved", "monotone_selection",
        "raw_float_noise")

_active = None


def active(bug):
    """True inside ``planted(bug)``."""
    return _active == bug


@contextlib.contextmanager
def planted(bug):
    """Run the body with ``bug`` planted (tests only; not thread-safe)."""
    global _active
    if bug not in BUGS:
        raise ValueError(f"unknown planted bug {bug!r}; one of {BUGS}")
    previous, _active = _active, bug
    try:
        yield
    finally:
        _active = previous
