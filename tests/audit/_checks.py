"""The assertions of the audit tests, and their parametrisation (CI and long runs)."""
import pytest

from _suite import all_audits, ci_audits


def params(family, *, continuous_only=False, with_bugs=False, bug=None):
    """pytest params: each CI audit (marker ``audit``) and every audit at the long
    run's sample sizes (marker ``audit_long``, deselected by default)."""
    out = []
    for long, audits, mark in ((False, ci_audits(family), pytest.mark.audit),
                               (True, all_audits(family), pytest.mark.audit_long)):
        for a in audits:
            if continuous_only and a.discrete:
                continue
            suffix = "-long" if long else ""
            if with_bugs:
                for b in a.bugs_for(long):
                    if bug is None or b == bug:
                        out.append(pytest.param(a, b, long, id=f"{a.key}-{b}{suffix}",
                                                marks=mark))
            else:
                out.append(pytest.param(a, long, id=f"{a.key}{suffix}", marks=mark))
    return out


def check_statistical(a, long):
    """The real mechanism: the audited lower bound stays at or below the claim."""
    s, r = a.statistical(long)
    assert r.epsilon_lower_bound <= s.claim, f"{s.what}: claim {s.claim:.4g}, audited {r}"
    return s, r


def check_fp_after(a, long):
    """The floating-point attack against the real mechanism: at or below the claim."""
    s, r = a.fp_attack(None, long)
    assert r.epsilon_lower_bound <= s.claim, (
        f"{s.what}: the floating-point attack beats the claim {s.claim:.4g}: {r}")
    return s, r


def check_fp_before(a, long):
    """Negative control: the same attack against the old raw floating-point sampler
    (planted ``raw_float_noise``) must exceed the claim."""
    s, r = a.fp_attack("raw_float_noise", long)
    assert r.epsilon_lower_bound > s.claim, (
        f"{s.what}: the floating-point attack does not detect raw floating-point "
        f"noise (claim {s.claim:.4g}): {r}")
    return s, r


def check_planted(a, bug, long):
    """A planted bug must make the audit fail: audited lower bound above the claim."""
    s, r = a.planted(bug, long)
    assert r.epsilon_lower_bound > s.claim, (
        f"{s.what}: the audit does not detect the planted bug {bug!r} "
        f"(claim {s.claim:.4g}): {r}")
    return s, r
