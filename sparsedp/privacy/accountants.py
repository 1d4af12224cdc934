"""Accountants: composition theorems, each answering for the mechanisms it knows.

An accountant looks at a list of mechanisms (:mod:`sparsedp.privacy.mechanisms`)
and, if its theorem applies to all of them, returns a :class:`Profile`: an
upper bound of the composition's privacy profile, ``epsilon -> delta`` (as
``log delta``), with its inverse ``delta -> epsilon``.  Every profile returned
is valid, so the tightest answer is the minimum over them (:func:`candidates`),
including the *splits*: groups of mechanisms accounted separately and added by
basic composition, the epsilon split between them optimised.
"""
import math

import numpy as np

from ._root import epsilon_of_curve
from .gdp import gdp_epsilon_of, gdp_log_delta
from .mechanisms import total_rdp
from .pld import compose
from .pure import advanced_log_delta, optimal_log_delta
from .rdp import DEFAULT_ORDERS, _rdp_to_dp_array, rdp_log_delta
from .zcdp import zcdp_log_delta, zcdp_to_dp

__all__ = ["ACCOUNTANTS", "Profile", "best_epsilon", "candidate", "candidates"]


class Profile:
    """An upper bound of a composition's privacy profile.

    Parameters
    ----------
    name : str
        The accountant's name, reported as the method.
    log_delta : callable
        ``epsilon -> log delta`` such that the composition is (epsilon, delta)-DP.
    epsilon : callable, optional
        ``delta -> epsilon``, its inverse in closed form; by default
        :meth:`epsilon` inverts ``log_delta`` with the package's root finder.
    guess : float, default=1.0
        A starting epsilon for that inversion.
    """

    #: whether :meth:`log_delta` is implemented (calibration prefers it)
    has_log_delta = True

    def __init__(self, name, log_delta, epsilon=None, guess=1.0):
        self.name, self._log_delta, self._epsilon, self._guess = name, log_delta, epsilon, guess

    def log_delta(self, epsilon):
        """``log delta`` such that the composition is ``(epsilon, delta)``-DP."""
        return self._log_delta(epsilon)

    def epsilon(self, delta):
        """Smallest epsilon (rounded up) such that the composition is (epsilon, delta)-DP."""
        if self._epsilon is not None:
            return self._epsilon(delta)
        return epsilon_of_curve(self.log_delta, delta, self._guess)


def _gdp(mechanisms):
    mus = [m.gdp_mu() for m in mechanisms]
    if any(mu is None for mu in mus):
        return None
    mu = math.sqrt(math.fsum(mu * mu for mu in mus))  # exact (Dong, Roth and Su 2022)
    return Profile("gdp", lambda eps: gdp_log_delta(eps, mu),
                   epsilon=lambda delta: gdp_epsilon_of(mu, delta))


def _pure_epsilons(mechanisms):
    eps0s = [m.pure_epsilon for m in mechanisms]
    return None if any(e is None for e in eps0s) else eps0s


def _optimal(mechanisms):
    eps0s = _pure_epsilons(mechanisms)
    if not eps0s:
        return None
    # Kairouz, Oh and Viswanathan (2017): every mechanism is max(eps0)-DP, so the
    # optimal composition is exact when they share it, valid otherwise
    eps0, k = max(eps0s), sum(m.count for m in mechanisms)
    return Profile("optimal", lambda eps: optimal_log_delta(eps, eps0, k),
                   guess=min(k * eps0, 1e300))


def _advanced(mechanisms):
    if _pure_epsilons(mechanisms) is None:
        return None
    sq = math.fsum(m.count * m.pure_epsilon * m.pure_epsilon for m in mechanisms)
    lin = math.fsum(m.count * m.pure_epsilon * math.expm1(m.pure_epsilon)
                    if m.pure_epsilon < 700 else math.inf for m in mechanisms)
    sq, lin = math.nextafter(sq, math.inf), math.nextafter(lin, math.inf)
    # heterogeneous advanced composition (Dwork and Roth 2014, Thm. 3.20)
    return Profile("advanced", lambda eps: advanced_log_delta(eps, sq, lin),
                   epsilon=lambda delta: math.nextafter(
                       math.sqrt(2.0 * math.log(1.0 / delta) * sq) + lin, math.inf))


def _basic(mechanisms):
    if _pure_epsilons(mechanisms) is None:
        return None
    total = math.nextafter(math.fsum(m.count * m.pure_epsilon for m in mechanisms), math.inf)
    profile = Profile("basic", lambda eps: -math.inf if eps >= total else 0.0,
                      epsilon=lambda delta: total)
    profile.total = total
    return profile


def _zcdp(mechanisms):
    rhos = [m.zcdp_rho() for m in mechanisms]
    if any(r is None for r in rhos):
        return None
    rho = math.nextafter(math.fsum(rhos), math.inf)  # rho adds up (Bun and Steinke 2016)
    return Profile("zcdp", lambda eps: zcdp_log_delta(rho, eps),
                   epsilon=lambda delta: zcdp_to_dp(rho, delta) if rho < math.inf else math.inf)


def _rdp(mechanisms):
    rdp = total_rdp(mechanisms)  # improved conversion (Canonne, Kamath and Steinke 2020)

    def epsilon(delta):
        eps = _rdp_to_dp_array(DEFAULT_ORDERS, rdp, math.log(delta), delta)
        return max(float(eps.min()), 0.0)

    return Profile("rdp", lambda eps: rdp_log_delta(DEFAULT_ORDERS, rdp, eps), epsilon=epsilon)


def _pld(mechanisms):
    """Privacy loss distributions composed by FFT (:mod:`sparsedp.privacy.pld`, grid 1e-4).

    The tightest bound for Poisson-subsampled Gaussians (far below RDP at small
    sampling rates).  It applies when every mechanism has a PLD
    (:meth:`~sparsedp.privacy.mechanisms.Mechanism.pld`) **and one of them is a**
    :class:`~sparsedp.privacy.mechanisms.SampledGaussian`: the other ledgers
    (Gaussian, Laplace, pure) are already accounted exactly or nearly so by GDP
    and the compositions of pure DP, and one FFT composition (about 0.1 s) per
    question would slow them down for little.  The composition is computed at
    the first question and kept by the profile.
    """
    if not any(m.kind == "sampled_gaussian" for m in mechanisms):
        return None
    plds = [m.pld() for m in mechanisms]
    if any(p is None for p in plds):
        return None
    parts, composed = [(p, m.count) for p, m in zip(plds, mechanisms)], []

    def pld():
        if not composed:
            composed.append(compose(parts))
        return composed[0]

    return Profile("pld", lambda eps: pld().log_delta(eps),
                   epsilon=lambda delta: pld().epsilon(delta))


#: The composition theorems by name, cheapest first: each maps mechanisms to a
#: Profile, or None if it does not apply to all of them.
ACCOUNTANTS = {"gdp": _gdp, "basic": _basic, "advanced": _advanced, "zcdp": _zcdp,
               "rdp": _rdp, "optimal": _optimal, "pld": _pld}


class BestProfile(Profile):
    """The minimum of several valid profiles of the same mechanisms."""

    def __init__(self, profiles):
        self.name, self.profiles = "best", profiles

    def log_delta(self, epsilon):
        return min(p.log_delta(epsilon) for p in self.profiles)

    def epsilon(self, delta):
        return min(p.epsilon(delta) for p in self.profiles)


class SplitProfile(Profile):
    """Groups accounted separately, added by basic composition.

    ``(eps_1, delta_1)`` and ``(eps_2, delta_2)`` give ``(eps_1 + eps_2, delta_1 +
    delta_2)``.  For two groups, :meth:`log_delta` optimises the split of epsilon
    (a grid with the groups' no-delta points, refined by golden section: any
    split is valid); for more, :meth:`epsilon` shares delta equally between the
    groups, a pure group taking none when that is better.
    """

    def __init__(self, groups):
        self.name, self._epsilon, self._guess = "split", None, 1.0
        self.groups = [best_profile(g) for g in groups]
        self.pure_totals = [_basic(g) for g in groups]

    def _pair(self, epsilon, t):
        a, b = self.groups
        return float(np.logaddexp(a.log_delta(t), b.log_delta(max(epsilon - t, 0.0))))

    def log_delta(self, epsilon):
        if len(self.groups) != 2:
            raise NotImplementedError("a split of more than two groups has no log_delta")
        if epsilon == 0.0 or math.isinf(epsilon):
            return self._pair(epsilon, 0.0 if epsilon == 0.0 else epsilon)
        ts = list(np.linspace(0.0, epsilon, 9))
        first, second = self.pure_totals
        if first is not None and first.total < epsilon:
            ts.append(first.total)
        if second is not None and second.total < epsilon:
            ts.append(epsilon - second.total)
        ts.sort()
        vals = [self._pair(epsilon, t) for t in ts]
        j = int(np.argmin(vals))
        best = vals[j]
        lo, hi = ts[max(j - 1, 0)], ts[min(j + 1, len(ts) - 1)]
        golden = (math.sqrt(5.0) - 1.0) / 2.0
        c, d = hi - golden * (hi - lo), lo + golden * (hi - lo)
        fc, fd = self._pair(epsilon, c), self._pair(epsilon, d)
        for _ in range(12):
            if fc <= fd:
                hi, d, fd = d, c, fc
                c = hi - golden * (hi - lo)
                fc = self._pair(epsilon, c)
            else:
                lo, c, fc = c, d, fd
                d = lo + golden * (hi - lo)
                fd = self._pair(epsilon, d)
        return min(best, fc, fd)

    def epsilon(self, delta):
        if len(self.groups) == 2:
            return super().epsilon(delta)
        m = len(self.groups)
        best = math.fsum(g.epsilon(delta / m) for g in self.groups)
        for i, total in enumerate(self.pure_totals):
            if total is None:
                continue
            rest = [g.epsilon(delta / (m - 1)) for j, g in enumerate(self.groups) if j != i]
            best = min(best, math.nextafter(math.fsum(rest) + total.total, math.inf))
        return best

    @property
    def has_log_delta(self):
        return len(self.groups) == 2


def best_profile(mechanisms):
    """The minimum of every accountant's profile for ``mechanisms``."""
    profiles = [p for p in (acc(mechanisms) for acc in ACCOUNTANTS.values()) if p is not None]
    return profiles[0] if len(profiles) == 1 else BestProfile(profiles)


def _groupings(mechanisms):
    """Partitions of the mechanisms worth accounting separately.

    By curve family (Gaussian / pure / other), and by per-use epsilon (pure
    mechanisms of one epsilon0 together, e.g. a smoothness estimate apart from
    the iterations), when that is a different partition.
    """
    def family(m):
        if m.gdp_mu() is not None:
            return "gdp"
        if m.pure_epsilon is not None:
            return "pure"
        return m.kind

    by_family, by_epsilon = {}, {}
    for i, m in enumerate(mechanisms):
        f = family(m)
        by_family.setdefault(f, []).append(i)
        key = (f, float(f"{m.pure_epsilon:.12g}")) if f == "pure" else f
        by_epsilon.setdefault(key, []).append(i)
    seen, out = set(), []
    for groups in (by_family, by_epsilon):
        parts = tuple(sorted(tuple(g) for g in groups.values()))
        if len(parts) >= 2 and parts not in seen:
            seen.add(parts)
            out.append([[mechanisms[i] for i in g] for g in parts])
    return out


def candidates(mechanisms):
    """``[(name, profile)]``: every valid bound for the composition of ``mechanisms``.

    One per accountant that applies to all of them, then one per grouping
    (``"split"``, ``"split 2"``).  Names are stable for a given structure of
    mechanisms, whatever their parameters (see :func:`candidate`).
    """
    out = [(name, p) for name, p in ((name, acc(mechanisms))
                                     for name, acc in ACCOUNTANTS.items()) if p is not None]
    for i, groups in enumerate(_groupings(mechanisms)):
        out.append((_split_name(i), SplitProfile(groups)))
    return out


def _split_name(i):
    return "split" if i == 0 else f"split {i + 1}"


def candidate(mechanisms, name):
    """The profile named ``name`` in :func:`candidates`, built alone (None if absent)."""
    if name in ACCOUNTANTS:
        return ACCOUNTANTS[name](mechanisms)
    for i, groups in enumerate(_groupings(mechanisms)):
        if _split_name(i) == name:
            return SplitProfile(groups)
    return None


def best_epsilon(cands, delta):
    """(epsilon, name) of the smallest bound among ``cands`` at ``delta``.

    A candidate is solved only if its ``log delta`` just below the best epsilon
    so far beats the target: the others cannot improve on it.
    """
    if not cands:
        return 0.0, "empty"
    log_target = math.log(delta)
    best, method = math.inf, cands[0][0]
    for name, profile in cands:
        if 0.0 < best < math.inf and profile.has_log_delta \
                and profile.log_delta(best * (1.0 - 1e-12)) > log_target:
            continue
        eps = profile.epsilon(delta)
        if eps < best:
            best, method = eps, name
    return best, method
