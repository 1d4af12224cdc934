"""The privacy ledger: what a fit spent, mechanism by mechanism, and the total.

:class:`PrivacyLedger` records mechanisms (:mod:`sparsedp.privacy.mechanisms`),
leaks (data-dependent quantities used without budget) and the floating-point
slack of the samplers; its total epsilon is the minimum over every valid bound
the accountants give (:mod:`sparsedp.privacy.accountants`).  It is the privacy
report of a fit: ``str(ledger)`` is a table of the mechanisms and the total,
:meth:`PrivacyLedger.to_dict` the same in plain values, and
:meth:`PrivacyLedger.compose` one ledger for several fits on the same data.
"""
import contextlib
import dataclasses
import json
import math

from .._validation import check_instances
from ._checks import check_count, check_delta, check_nonneg, check_relation
from ._report import report
from ._slack import TV_MARGIN, slack_delta, tv_charge  # noqa: F401 (public here too)
from .accountants import best_epsilon, candidate, candidates
from .mechanisms import (BoundedRange, Gaussian, Laplace, Mechanism, PureDP, SampledGaussian,
                         SampledGaussianWOR)

__all__ = ["PrivacyLedger", "cached_epsilons"]

#: identical ledgers' (epsilon, method) per delta, consulted only inside
#: :func:`cached_epsilons` (bounded: the oldest entries go first)
_CACHE = {}
_CACHE_SIZE = 4096
_CACHING = [0]


@contextlib.contextmanager
def cached_epsilons():
    """Inside the block, a ledger's epsilon is computed once per content and delta.

    Sweeps and searches refit one setting many times, and every run of it
    records the same mechanisms: the accountants' answer (0.1 s and more for a
    PLD) is a function of the records alone (kinds, counts, noise, rates,
    relation, sampler slack; the names too, to stay conservative), so the later
    runs read it back.  Outside the block nothing is cached.
    """
    _CACHING[0] += 1
    try:
        yield
    finally:
        _CACHING[0] -= 1


def _plain(value):
    if hasattr(value, "tolist"):  # numpy scalars and arrays, in full
        return value.tolist()
    raise TypeError(f"not a plain value: {type(value).__name__}")


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

    Asking for epsilon (:attr:`epsilon`, :meth:`get_epsilon`, ``str()``,
    :meth:`to_dict`) never changes the ledger.

    The ledger is the fit's privacy report: ``str(ledger)`` prints it as a table
    (relation and total; one row per mechanism with its kind, count, sensitivity,
    the scale of its noise in the released value's units and per-use epsilon0;
    one line summing up the sampler slack, every entry with
    ``ledger.report(verbose=True)`` or ``format(ledger, "v")``; the leaks, marked
    NOT PRIVATE; the ``Total:`` line with the neighbouring relation and the
    accountant that gave it), :meth:`to_dict`
    converts it to a JSON-serialisable dict, and :meth:`compose` merges the
    ledgers of several fits on the same data into one, accounted together.

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

    def add_pure(self, name, epsilon0, count=1, sensitivity=None, relation="replace-one",
                 noise_multiplier=None, noise_law=None):
        """Record ``count`` adaptive epsilon0-DP mechanisms (e.g. Laplace report-noisy-max).

        Parameters
        ----------
        name : str
        epsilon0 : float
            Pure DP parameter of one use, ``>= 0``.
        count : int, default=1
        sensitivity : float, optional
            Informational: for a noisy max, the sensitivity of each score.
        relation : {"replace-one", "add-remove"}, default="replace-one"
        noise_multiplier : float, optional
            Informational, for a noisy max: the scale of the noise added to each
            score over ``sensitivity`` (``2 / epsilon0`` for report-noisy-max with
            ``Lap(2 Delta / eps0)``); the report shows the scale in the scores' units.
        noise_law : {"laplace", "gumbel"}, optional
            The law of that noise (required with ``noise_multiplier``).
        """
        self.add(PureDP(epsilon0, name=name, count=count, sensitivity=sensitivity,
                        relation=relation, noise_multiplier=noise_multiplier,
                        noise_law=noise_law))

    def add_bounded_range(self, name, epsilon0, count=1, sensitivity=None,
                          relation="replace-one", noise_multiplier=None):
        """Record ``count`` epsilon0-bounded-range mechanisms (exponential mechanism).

        Only for mechanisms proven bounded-range (see :func:`rdp_bounded_range`).

        Parameters
        ----------
        name : str
        epsilon0 : float
        count : int, default=1
        sensitivity : float, optional
            Informational: the sensitivity of each score.
        relation : {"replace-one", "add-remove"}, default="replace-one"
        noise_multiplier : float, optional
            Informational: the scale of the Gumbel noise of the exponential
            mechanism as Gumbel-max over ``sensitivity`` (``2 / epsilon0`` for
            ``P(j) ∝ exp(eps0 s_j / (2 Delta))``); the report shows the scale in
            the scores' units.
        """
        self.add(BoundedRange(epsilon0, name=name, count=count, sensitivity=sensitivity,
                              relation=relation, noise_multiplier=noise_multiplier,
                              noise_law=None if noise_multiplier is None else "gumbel"))

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

        The run is ``(eps, delta_ideal(eps) + (1 + e^eps) T)``-DP at every eps: an eps
        is valid when ``h(delta - (1 + e^eps) T) <= eps``, ``h`` the ideal epsilon at a
        delta.  From a valid ``eps_0``, each ``eps_{k+1} = h(delta - (1 + e^eps_k) T)``
        that does not exceed ``eps_k`` is valid and closer to the smallest.  The start
        is the ideal epsilon at ``delta / 2`` when valid; else (a large epsilon, where
        ``e^eps`` makes the charge steep) the minimum of ``h(delta - (1 + e^eps) T) - eps``
        between ``h(delta)`` and that epsilon, found by golden-section search.
        """
        total = math.fsum(tau * count for _, tau, count in self.sampler_tvs)
        if total == 0.0:
            return delta
        eps_k = self._ideal_epsilon(delta / 2.0)[0]
        left = delta / 2.0
        if not tv_charge(eps_k, total) <= delta / 2.0:
            eps_k = self._tv_start(delta, total, self._ideal_epsilon(delta)[0], eps_k)
            if math.isinf(eps_k):
                return 0.0
            left = delta - tv_charge(eps_k, total)
        for _ in range(30):
            candidate = delta - tv_charge(eps_k, total)
            eps_next = self._ideal_epsilon(candidate)[0]
            if not eps_next <= eps_k:
                break
            left, eps_k, done = candidate, eps_next, eps_next >= eps_k * (1 - 1e-13)
            if done:
                break
        return left

    def _tv_start(self, delta, total, lo, hi):
        """A valid eps in ``[lo, hi]`` for :meth:`_tv_delta` (``inf`` if none is found)."""
        def gap(eps):
            left = delta - tv_charge(eps, total)
            return (self._ideal_epsilon(left)[0] if left > 0.0 else math.inf) - eps

        if not lo < hi < math.inf:
            return math.inf
        ratio = (math.sqrt(5.0) - 1.0) / 2.0
        a, b = lo, hi
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        gc, gd = gap(c), gap(d)
        for _ in range(60):
            if gc <= 0.0:
                return c
            if gd <= 0.0:
                return d
            if gc < gd:
                b, d, gd = d, c, gc
                c = b - ratio * (b - a)
                gc = gap(c)
            else:
                a, c, gc = c, d, gd
                d = a + ratio * (b - a)
                gd = gap(d)
            if b - a <= 1e-12 * b:
                break
        return math.inf

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

    def sampler_slack_cost(self, delta=None):
        """What the floating-point sampler slack costs the total: ``(epsilon added,
        delta taken)``.

        As :meth:`get_epsilon` accounts it: ``2 H`` is added to epsilon
        (``H = sum eta * count``, :meth:`add_sampler_error`), and the mechanisms
        are accounted at the delta left once the total-variation slack is paid
        (:meth:`add_sampler_tv`) and the rest multiplied by ``e^-H``; the delta
        taken is the target's difference to that.  Both are 0 without slack.

        Parameters
        ----------
        delta : float, optional
            Target delta; defaults to :attr:`delta`.  Without either the delta
            taken is None.

        Returns
        -------
        epsilon_added : float
        delta_taken : float or None
        """
        added = 2.0 * self._sampler_slack()
        if delta is None:
            delta = self._delta
            if delta is None:
                return added, None
        delta = check_delta(delta)
        return added, delta - slack_delta(self._tv_delta(delta), self._sampler_slack())

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
        key = self._cache_key(delta) if _CACHING[0] else None
        if key is not None and key in _CACHE:
            eps, method = _CACHE[key]
        else:
            left = self._tv_delta(delta)
            eps, method = (math.inf, "sampler slack") if left <= 0.0 else \
                self._ideal_epsilon(left)
            if key is not None:
                if len(_CACHE) >= _CACHE_SIZE:
                    del _CACHE[next(iter(_CACHE))]
                _CACHE[key] = (eps, method)
        return (eps, method) if return_method else eps

    def _cache_key(self, delta):
        """The ledger's content at ``delta`` as a string (None: not cacheable)."""
        try:
            return json.dumps([repr(delta), self.relation,
                               [e.as_dict() for e in self.entries],
                               list(self.sampler_errors), list(self.sampler_tvs)],
                              sort_keys=True, default=_plain)
        except (TypeError, ValueError):
            return None

    def _ideal_epsilon(self, delta):
        """(epsilon, method) at delta with the multiplicative sampler slack H."""
        slack = self._sampler_slack()
        if slack > 0:
            delta = slack_delta(delta, slack)
            if delta <= 0.0:
                return math.inf, "sampler slack"
        eps, method = best_epsilon(self.candidates(), delta)
        if slack > 0:
            eps = math.nextafter(eps + 2.0 * slack, math.inf)
        return eps, method

    def to_list(self):
        """List of dicts describing each recorded mechanism
        (:meth:`Mechanism.as_dict <sparsedp.privacy.mechanisms.Mechanism.as_dict>`)."""
        return [e.as_dict() for e in self.entries]

    def to_dict(self):
        """The privacy report as a dict of plain Python values.

        Computing it never changes the ledger.

        Returns
        -------
        report : dict
            * ``epsilon``: total epsilon at :attr:`delta` (:meth:`get_epsilon`):
              ``float('inf')`` if something leaked or the sampler slack uses up
              delta; ``None`` if no delta is set;
            * ``delta``: the target delta (``None`` if unset);
            * ``relation``: the neighbouring relation of every mechanism;
            * ``method``: the accountant giving the total (``"gdp"``, ``"pld"``,
              ``"rdp"``, ``"split"``, ...; ``"leak"`` if not private; ``None``
              if no delta is set);
            * ``private``: False if a leak was recorded;
            * ``epsilon_ignoring_leaks``: what the accounted mechanisms alone
              would spend (``get_epsilon(delta, ignore_leaks=True)``): equal to
              ``epsilon`` without leaks, **void as a guarantee** with them;
            * ``mechanisms``: one dict per mechanism (:meth:`to_list`): ``name``,
              ``kind``, ``count``, ``sensitivity``, ``relation``,
              ``noise_multiplier``, ``noise_scale``, ``epsilon0``,
              ``sampling_rate`` (``None`` where one does not apply);
            * ``sampler_slack``: one dict per floating-point sampler entry:
              ``name``, ``kind`` (``"log-ratio"``, with ``eta``, see
              :meth:`add_sampler_error`; or ``"total-variation"``, with ``tau``,
              see :meth:`add_sampler_tv`) and ``count``;
            * ``leaks``: one dict per leak, ``name`` and ``description``.

        Notes
        -----
        JSON has no infinity: ``json.dumps(report)`` (whose default is
        ``allow_nan=True``) writes ``inf`` as ``Infinity``, which ``json.loads``
        reads back as ``float('inf')``; a strict JSON consumer needs
        ``epsilon`` mapped to ``None`` or a string first.  The report holds no NaN.

        Examples
        --------
        >>> import json
        >>> ledger = PrivacyLedger(delta=1e-5)
        >>> ledger.add_gaussian("gradients", noise_multiplier=20.0, count=1000)
        >>> report = ledger.to_dict()
        >>> report["method"], report["mechanisms"][0]["count"]
        ('gdp', 1000)
        >>> json.loads(json.dumps(report)) == report
        True
        """
        epsilon = method = accounted = None
        if self._delta is not None:
            epsilon, method = self.get_epsilon(self._delta, return_method=True)
            accounted = (self.get_epsilon(self._delta, ignore_leaks=True) if self.leaks
                         else epsilon)
        slack = [{"name": name, "kind": "log-ratio", "eta": eta, "count": count}
                 for name, eta, count in self.sampler_errors]
        slack += [{"name": name, "kind": "total-variation", "tau": tau, "count": count}
                  for name, tau, count in self.sampler_tvs]
        return {"epsilon": epsilon, "delta": self._delta, "relation": self.relation,
                "method": method, "private": self.private,
                "epsilon_ignoring_leaks": accounted, "mechanisms": self.to_list(),
                "sampler_slack": slack,
                "leaks": [{"name": name, "description": description}
                          for name, description in self.leaks]}

    @classmethod
    def compose(cls, ledgers, names=None, *, delta=None):
        """One ledger holding everything several fits on the same data spent.

        For instance the ``K`` binary fits of a one-vs-rest classifier: every
        mechanism, sampler-slack entry and leak of each ledger is recorded in a
        new ledger, its name prefixed (``"class 2: coordinate gradients"``).
        The total is then computed over all the entries at once by
        :meth:`get_epsilon`, i.e. by the tightest valid composition (``K``
        Gaussian-only fits: exact GDP, ``mu = sqrt(sum mu_k^2)``); a leak in any
        part makes the whole not private, and the sampler slacks add up.  The
        parts' deltas are not added: ``delta`` is the composite's own target.

        Parameters
        ----------
        ledgers : iterable of PrivacyLedger
            Ledgers of fits on the same data, all under the same neighbouring
            relation.  They are not changed.
        names : iterable of str, optional
            One prefix per ledger; default ``"fit 0"``, ``"fit 1"``, ...
        delta : float, optional
            Target delta of the composite.  Default: the parts' delta if they
            all have the same one, else none (set it before asking for epsilon).

        Returns
        -------
        PrivacyLedger

        Raises
        ------
        ValueError
            No ledger, as many names as ledgers not given, or ledgers under
            different neighbouring relations.
        TypeError
            A part that is not a :class:`PrivacyLedger`.

        Examples
        --------
        >>> fits = []
        >>> for k in range(4):
        ...     fit = PrivacyLedger(delta=1e-5)
        ...     fit.add_gaussian("gradients", noise_multiplier=40.0, count=1000)
        ...     fits.append(fit)
        >>> ovr = PrivacyLedger.compose(fits, names=[f"class {k}" for k in range(4)])
        >>> ovr.entries[2].name
        'class 2: gradients'
        >>> ovr.epsilon == gdp_epsilon(math.sqrt(4 * 1000) / 40.0, 1e-5)
        True
        """
        ledgers = check_instances(ledgers, PrivacyLedger, "ledgers", kind="PrivacyLedger",
                                  empty="compose needs at least one ledger")
        if names is None:
            names = [f"fit {k}" for k in range(len(ledgers))]
        else:
            if isinstance(names, str):
                raise TypeError("names must be an iterable of str, one per ledger, not a str")
            names = [str(name) for name in names]
            if len(names) != len(ledgers):
                raise ValueError(f"names has {len(names)} entries for {len(ledgers)} ledgers")
        relations = sorted({ledger.relation for ledger in ledgers})
        if len(relations) > 1:
            by_relation = ", ".join(f"{name!r}: {ledger.relation}"
                                    for name, ledger in zip(names, ledgers))
            raise ValueError(f"cannot compose ledgers under different neighbouring relations "
                             f"({by_relation}); a guarantee needs one relation for all")
        if delta is None:
            deltas = {ledger.delta for ledger in ledgers}
            delta = deltas.pop() if len(deltas) == 1 else None
        out = cls(delta=delta, relation=relations[0])
        for prefix, ledger in zip(names, ledgers):
            for m in ledger.entries:
                out.add(dataclasses.replace(m, name=f"{prefix}: {m.name}"))
            out.sampler_errors += [(f"{prefix}: {name}", eta, count)
                                   for name, eta, count in ledger.sampler_errors]
            out.sampler_tvs += [(f"{prefix}: {name}", tau, count)
                                for name, tau, count in ledger.sampler_tvs]
            out.leaks += [(f"{prefix}: {name}", description)
                          for name, description in ledger.leaks]
        return out

    def __repr__(self):
        return f"PrivacyLedger(delta={self._delta!r}, relation={self.relation!r}, " \
               f"{len(self.entries)} mechanisms)"

    def report(self, verbose=False):
        """The privacy report as an aligned table (also ``str(ledger)``).

        Parameters
        ----------
        verbose : bool, default=False
            Also list each floating-point sampler entry (by default one line
            sums them up: how many, and what they add to the total, which
            includes them).  ``format(ledger, "v")`` is the same.

        Returns
        -------
        str
            Relation and total; one row per mechanism (kind, count, sensitivity,
            noise scale in the released value's units, eps0, sampling rate); the
            slack; the leaks; the ``Total:`` line (``docs/privacy.rst``).
        """
        return report(self, verbose=verbose)

    def __str__(self):
        """The privacy report as an aligned table (:meth:`report`)."""
        return report(self)

    def __format__(self, format_spec):
        """``format(ledger, "v")``: the verbose report (:meth:`report`); ``""``: ``str``."""
        if format_spec not in ("", "v"):
            raise ValueError(f"unknown format {format_spec!r} for a PrivacyLedger: "
                             f"'' (the report) or 'v' (with every sampler entry)")
        return report(self, verbose=format_spec == "v")
