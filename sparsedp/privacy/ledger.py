"""The privacy ledger: what a fit spent, mechanism by mechanism, and the total.

:class:`PrivacyLedger` records mechanisms (:mod:`sparsedp.privacy.mechanisms`),
leaks (data-dependent quantities used without budget) and the floating-point
slack of the samplers; its total epsilon is the minimum over every valid bound
the accountants give (:mod:`sparsedp.privacy.accountants`).
"""
import math

from ._checks import check_count, check_delta, check_nonneg, check_relation
from .accountants import candidate, candidates
from .mechanisms import (BoundedRange, Gaussian, Laplace, Mechanism, PureDP, SampledGaussian,
                         SampledGaussianWOR)

__all__ = ["PrivacyLedger"]


def _best_epsilon(cands, delta):
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


class PrivacyLedger:
    """Record of the private mechanisms a fit used, and its total (epsilon, delta).

    Each ``add_*`` method records a mechanism with its name, neighbouring relation,
    sensitivity (informational), noise and number of uses. :meth:`get_epsilon` computes
    the total epsilon at a delta by the tightest valid method among:

    * only (non-subsampled) Gaussians: **exact** GDP composition,
      ``mu = sqrt(sum count / z^2)`` (:func:`gdp_epsilon`);
    * only pure mechanisms (pure, Laplace, bounded-range) with a common epsilon0: the best
      of optimal (Kairouz-Oh-Viswanathan), advanced and zCDP composition
      (:func:`pure_composition_epsilon`); heterogeneous: heterogeneous advanced
      composition ``sqrt(2 log(1/delta) sum eps_i^2) + sum eps_i (e^eps_i - 1)`` and zCDP;
    * always: RDP composition of all parts (:func:`rdp_to_dp`), and zCDP for the
      mixtures of Gaussians and pure mechanisms;
    * with several groups (Gaussian / pure / subsampled): each group accounted by its best
      method at a share of delta, combined by basic composition, over a grid of delta
      splits.

    The minimum over these valid bounds is reported. All mechanisms of a ledger must use
    the same neighbouring relation (the default is replace-one; Poisson subsampling
    requires ``relation="add-remove"``).

    Two more kinds of record change the total:

    * a **leak** (:meth:`add_leak`, a data-dependent quantity used without budget)
      makes the fit not private: the total epsilon is ``inf`` and ``str()`` names
      the leaks (``get_epsilon(delta, ignore_leaks=True)`` gives what the accounted
      mechanisms alone would spend, a figure that is then void);
    * **floating-point sampler slack** (:meth:`add_sampler_error`: draws whose law is
      within ``exp(+-eta)`` of the ideal one) adds ``2 H`` to epsilon, evaluated at
      ``delta e^-H``, with ``H = sum eta * count``.

    Asking for epsilon (:attr:`epsilon`, :meth:`get_epsilon`, ``str()``) never changes
    the ledger.

    Parameters
    ----------
    delta : float, optional
        Target delta used by the :attr:`epsilon` property and ``str()``.
    relation : {"replace-one", "add-remove"}, default="replace-one"
        Neighbouring relation of the whole ledger.

    Examples
    --------
    >>> ledger = PrivacyLedger(delta=1e-5)
    >>> ledger.add_gaussian("coordinate gradients", noise_multiplier=20.0, count=1000)
    >>> round(ledger.epsilon, 3) == round(gaussian_epsilon(20.0, 1000, 1e-5), 3)
    True
    """

    def __init__(self, delta=None, relation="replace-one"):
        self._delta = None if delta is None else check_delta(delta)
        self.relation = check_relation(relation)
        self.entries = []
        self.leaks = []
        self.sampler_errors = []
        self.sampler_tvs = []

    # ---- recording -----------------------------------------------------------------
    def add(self, mechanism):
        """Record a :class:`~sparsedp.privacy.mechanisms.Mechanism` (any subclass)."""
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a sparsedp.privacy Mechanism, got "
                            f"{type(mechanism).__name__}")
        if mechanism.relation != self.relation:
            raise ValueError(
                f"mechanism {mechanism.name!r} uses the {mechanism.relation!r} neighbouring "
                f"relation but the ledger uses {self.relation!r}; account them in separate "
                f"ledgers")
        self.entries.append(mechanism)
        return self

    def add_gaussian(self, name, noise_multiplier, count=1, sensitivity=None,
                     relation="replace-one"):
        """Record ``count`` adaptive Gaussian releases with multiplier ``z = sigma / Delta_2``.

        Parameters
        ----------
        name : str
            Human-readable name (e.g. ``"coordinate gradients"``).
        noise_multiplier : float
            ``z = sigma / Delta_2 >= 0``.
        count : int, default=1
            Number of releases.
        sensitivity : float, optional
            L2 sensitivity ``Delta_2`` under ``relation`` (informational; with it the
            noise scale ``sigma = z Delta_2`` is displayed).
        relation : {"replace-one", "add-remove"}, default="replace-one"
            Neighbouring relation under which the sensitivity holds.
        """
        self.add(Gaussian(noise_multiplier, name=name, count=count, sensitivity=sensitivity,
                          relation=relation))

    def add_laplace(self, name, noise_multiplier, count=1, sensitivity=None,
                    relation="replace-one"):
        """Record ``count`` Laplace releases with ``b = scale / Delta_1`` (each 1/b-DP).

        Parameters
        ----------
        name : str
        noise_multiplier : float
            ``b = scale / Delta_1 >= 0``.
        count : int, default=1
        sensitivity : float, optional
            L1 sensitivity ``Delta_1`` (informational).
        relation : {"replace-one", "add-remove"}, default="replace-one"
        """
        self.add(Laplace(noise_multiplier, name=name, count=count, sensitivity=sensitivity,
                         relation=relation))

    def add_pure(self, name, epsilon0, count=1, sensitivity=None, relation="replace-one"):
        """Record ``count`` adaptive epsilon0-DP mechanisms (e.g. Laplace report-noisy-max).

        Parameters
        ----------
        name : str
        epsilon0 : float
            Pure DP parameter of one use, ``>= 0``.
        count : int, default=1
        sensitivity : float, optional
            Informational.
        relation : {"replace-one", "add-remove"}, default="replace-one"
        """
        self.add(PureDP(epsilon0, name=name, count=count, sensitivity=sensitivity,
                        relation=relation))

    def add_bounded_range(self, name, epsilon0, count=1, sensitivity=None,
                          relation="replace-one"):
        """Record ``count`` epsilon0-bounded-range mechanisms (exponential mechanism).

        Only for mechanisms proven bounded-range (see :func:`rdp_bounded_range`).

        Parameters
        ----------
        name : str
        epsilon0 : float
        count : int, default=1
        sensitivity : float, optional
        relation : {"replace-one", "add-remove"}, default="replace-one"
        """
        self.add(BoundedRange(epsilon0, name=name, count=count, sensitivity=sensitivity,
                              relation=relation))

    def add_sampled_gaussian(self, name, noise_multiplier, sampling_rate, count=1,
                             sensitivity=None, relation="add-remove"):
        """Record ``count`` Poisson-subsampled Gaussian releases (add/remove neighbours).

        Parameters
        ----------
        name : str
        noise_multiplier : float
        sampling_rate : float
            Poisson sampling probability in (0, 1].
        count : int, default=1
        sensitivity : float, optional
        relation : {"add-remove"}, default="add-remove"
            Only add/remove is supported by this analysis.
        """
        self.add(SampledGaussian(noise_multiplier, sampling_rate, name=name, count=count,
                                 sensitivity=sensitivity, relation=relation))

    def add_sampled_gaussian_wor(self, name, noise_multiplier, sampling_rate, count=1,
                                 sensitivity=None, relation="replace-one"):
        """Record ``count`` Gaussian releases on fixed-size batches drawn without replacement.

        As :meth:`add_sampled_gaussian`, with ``sampling_rate`` the batch fraction
        ``m / n``; the analysis holds under ``relation="replace-one"`` only.
        """
        self.add(SampledGaussianWOR(noise_multiplier, sampling_rate, name=name, count=count,
                                    sensitivity=sensitivity, relation=relation))

    def add_leak(self, name, description):
        """Record a quantity computed from the data without spending budget.

        The fit is then **not** differentially private: :attr:`private` turns
        False, :attr:`epsilon` and :meth:`get_epsilon` return ``inf`` (unless
        ``ignore_leaks=True``) and ``str()`` names what leaked.  Solvers record a
        leak when, for instance, smoothness constants are computed from the data
        (and emit a :class:`~sparsedp.exceptions.PrivacyLeakWarning`).
        """
        self.leaks.append((str(name), str(description)))

    def add_sampler_error(self, name, eta, count=1):
        """Record the floating-point slack of ``count`` noise draws.

        Each of the ``count`` draws has a law within a factor ``exp(+-eta)`` of
        the ideal law its mechanism is accounted with: for every output ``x``,
        ``exp(-eta) P(x) <= P~(x) <= exp(eta) P(x)``.  With
        ``H = sum eta * count`` over all such entries, a run that is
        ``(eps, delta)``-DP with ideal draws is ``(eps + 2 H, e^H delta)``-DP with
        the real ones, so :meth:`get_epsilon` at ``delta`` returns the ideal
        epsilon at ``delta e^-H``, plus ``2 H``.

        Proof: the real law of the whole run is within ``exp(+-H)`` of the ideal
        one (the draws' factors multiply), so for any event S,
        ``P~_D(S) <= e^H P_D(S) <= e^H (e^eps P_D'(S) + delta)
        <= e^(eps + 2H) P~_D'(S) + e^H delta``.

        Parameters
        ----------
        name : str
            Which draws (e.g. ``"Laplace noise of the gradient"``).
        eta : float
            Log-ratio bound of one draw, finite and ``>= 0``.
        count : int, default=1
            Number of such draws.
        """
        eta = check_nonneg(eta, "eta", allow_inf=False)
        self.sampler_errors.append((str(name), eta, check_count(count, "count")))

    def add_sampler_tv(self, name, tau, count=1):
        """Record ``count`` draws whose law is within total variation ``tau`` of the ideal law.

        With ``T = sum tau * count`` over all such entries, the law of the whole
        run is within total variation T of the ideal run's, so an ideal
        ``(eps, delta)``-DP run is ``(eps, delta + (1 + e^eps) T)``-DP: for any
        event S, ``P~_D(S) <= P_D(S) + T <= e^eps P_D'(S) + delta + T <= e^eps
        P~_D'(S) + delta + (1 + e^eps) T``.  :meth:`get_epsilon` at ``delta``
        accounts the ideal run at ``delta - (1 + e^eps_a) T``, with ``eps_a`` an upper
        bound of the answer (the ideal epsilon at ``delta / 2``, refined to the smallest).

        Parameters
        ----------
        name : str
        tau : float
            Total-variation bound of one draw, finite and ``>= 0``.
        count : int, default=1
        """
        tau = check_nonneg(tau, "tau", allow_inf=False)
        self.sampler_tvs.append((str(name), tau, check_count(count, "count")))

    def _tv_delta(self, delta):
        """The delta left for the ideal run once the samplers' total variation is paid.

        The run is ``(eps, delta_ideal(eps) + (1 + e^eps) T)``-DP at every eps.
        Starting from ``eps_0``, the ideal epsilon at ``delta / 2`` (an upper bound
        of the answer), each ``eps_{k+1} = ideal epsilon at delta - (1 + e^eps_k) T``
        that does not exceed ``eps_k`` is valid (``delta_ideal(eps_{k+1}) + (1 +
        e^eps_{k+1}) T <= delta``) and closer to the smallest valid epsilon.
        """
        total = math.fsum(tau * count for _, tau, count in self.sampler_tvs) * (1 + 1e-12)
        if total == 0.0:
            return delta
        eps_k = self._ideal_epsilon(delta / 2.0)[0]
        if eps_k >= 700 or (1.0 + math.exp(eps_k)) * total > delta / 2.0:
            return 0.0
        left = delta / 2.0
        for _ in range(30):
            candidate = delta - (1.0 + math.exp(eps_k)) * total
            eps_next = self._ideal_epsilon(candidate)[0]
            if not eps_next <= eps_k:
                break
            left, eps_k, done = candidate, eps_next, eps_next >= eps_k * (1 - 1e-13)
            if done:
                break
        return left

    @property
    def private(self):
        """False if any data-dependent quantity was computed without budget."""
        return not self.leaks

    def _sampler_slack(self):
        """H = sum of eta * count over the floating-point sampler entries (rounded up)."""
        if not self.sampler_errors:
            return 0.0
        h = math.fsum(eta * count for _, eta, count in self.sampler_errors)
        return math.nextafter(h, math.inf) if h > 0 else 0.0

    # ---- accounting ------------------------------------------------------------------
    @property
    def delta(self):
        """Target delta (None until set)."""
        return self._delta

    @delta.setter
    def delta(self, value):
        self._delta = None if value is None else check_delta(value)

    @property
    def epsilon(self):
        """Total epsilon at :attr:`delta` (requires a delta to be set).

        ``inf`` if a leak was recorded (:meth:`add_leak`): the fit is not private.
        """
        if self._delta is None:
            raise ValueError("set ledger.delta (or pass delta=) before asking for epsilon")
        return self.get_epsilon(self._delta)

    def __len__(self):
        return len(self.entries)

    def candidates(self):
        """``[(name, profile)]``: every valid bound the accountants give for the entries
        (:func:`sparsedp.privacy.accountants.candidates`)."""
        return candidates(self.entries)

    def candidate(self, name):
        """The candidate bound ``name`` alone (None if it does not apply)."""
        return candidate(self.entries, name)

    def get_epsilon(self, delta=None, *, return_method=False, ignore_leaks=False):
        """Total epsilon at ``delta`` by the tightest valid method.

        Asking never changes the ledger.

        With a leak recorded (:meth:`add_leak`) the fit is not private and the
        answer is ``inf`` (method ``"leak"``), unless ``ignore_leaks=True``.

        With floating-point sampler slack (:meth:`add_sampler_error`,
        ``H = sum eta * count``) the answer is the accounted mechanisms' epsilon
        at ``delta * exp(-H)``, plus ``2 H``: the real run is
        ``(eps + 2 H, e^H delta e^-H) = (eps + 2 H, delta)``-DP (rounded on the
        safe side; ``H = 0`` changes nothing).

        Parameters
        ----------
        delta : float, optional
            Target delta in (0, 1); defaults to :attr:`delta`.
        return_method : bool, default=False
            Also return the name of the method achieving the minimum.
        ignore_leaks : bool, default=False
            Report what the accounted mechanisms alone would spend, even if
            something leaked (for experiments; that figure is void as a
            guarantee).

        Returns
        -------
        epsilon : float
        method : str
            Only if ``return_method``.
        """
        if delta is None:
            delta = self._delta
            if delta is None:
                raise ValueError("delta must be given (or set on the ledger)")
        delta = check_delta(delta)
        if self.leaks and not ignore_leaks:
            return (math.inf, "leak") if return_method else math.inf
        delta = self._tv_delta(delta)
        if delta <= 0.0:
            return (math.inf, "sampler slack") if return_method else math.inf
        eps, method = self._ideal_epsilon(delta)
        return (eps, method) if return_method else eps

    def _ideal_epsilon(self, delta):
        """(epsilon, method) at delta with the multiplicative sampler slack H."""
        slack = self._sampler_slack()
        if slack > 0:
            # delta e^-H, rounded down (exp and the product are each within an ulp)
            delta = math.nextafter(math.nextafter(delta * math.exp(-slack), 0.0), 0.0)
            if delta <= 0.0:
                return math.inf, "sampler slack"
        eps, method = _best_epsilon(self.candidates(), delta)
        if slack > 0:
            eps = math.nextafter(eps + 2.0 * slack, math.inf)
        return eps, method

    def to_list(self):
        """List of dicts describing each recorded mechanism."""
        return [e.as_dict() for e in self.entries]

    def __repr__(self):
        return f"PrivacyLedger(delta={self._delta!r}, relation={self.relation!r}, " \
               f"{len(self.entries)} mechanisms)"

    def __str__(self):
        lines = [f"PrivacyLedger ({self.relation} neighbours)"]
        if not self.entries:
            lines.append("  (no mechanism recorded)")
        for e in self.entries:
            lines.append("  - " + e.describe())
        for name, eta, count in self.sampler_errors:
            lines.append(f"  ~ {name}: floating-point sampler: {count} draws within "
                         f"exp(+-{eta:.6g}) of the ideal law")
        for name, tau, count in self.sampler_tvs:
            lines.append(f"  ~ {name}: floating-point sampler: {count} draws within "
                         f"total variation {tau:.3g} of the ideal law")
        for name, description in self.leaks:
            lines.append(f"  ! NOT PRIVATE: {name}: {description}")
        if self._delta is None:
            lines.append("Total: set a delta to compute epsilon")
        elif self.leaks:
            eps, method = self.get_epsilon(self._delta, return_method=True,
                                           ignore_leaks=True)
            names = ", ".join(name for name, _ in self.leaks)
            lines.append(f"Total: (inf, {self._delta:.3g})-DP: NOT PRIVATE, leaks: {names} "
                         f"(void: the accounted mechanisms alone would spend "
                         f"({eps:.6g}, {self._delta:.3g}) [{method}])")
        else:
            eps, method = self.get_epsilon(self._delta, return_method=True)
            slack = (" incl. floating-point sampler slack"
                     if self.sampler_errors or self.sampler_tvs else "")
            lines.append(f"Total: ({eps:.6g}, {self._delta:.3g})-DP [{method}{slack}]")
        return "\n".join(lines)
