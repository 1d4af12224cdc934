"""The audit of a mechanism on neighbouring datasets: many runs, a learned event, a bound.

:func:`audit` runs a mechanism (any callable ``mechanism(dataset, seed)``: one
release, or a whole fit) ``n_trials`` times on each dataset of a neighbouring
pair, in parallel with joblib, and passes the outputs to :func:`audit_samples`:

1. each sample is split in halves (the runs are i.i.d.: the order is arbitrary);
2. on the first halves, each learner (:mod:`sparsedp.audit._events`) proposes its
   best event in both orientations (more likely under D, or under D'), and the
   event with the largest bound there is kept;
3. on the second halves, ``P(E | D)`` is bounded from below and ``P(E | D')``
   from above with one-sided Clopper-Pearson bounds at level ``alpha = (1 -
   confidence) / 2`` each, and ``epsilon >= log((P(E|D)_low - delta) /
   P(E|D')_high)`` is reported.

The event is fixed before the second halves are read, so the bound holds with
probability at least ``confidence``: a mechanism that is (epsilon, delta)-DP
gives a lower bound above its epsilon at most that rarely.  Several pairs
(:func:`audit` with a list, e.g. :func:`sparsedp.audit.worst_case_pairs`) share
``1 - confidence`` equally (Bonferroni), so the largest of their bounds holds
at ``confidence`` too.
"""
import dataclasses
import math
import time
from collections.abc import Iterable

import numpy as np

from .._validation import check_integer, check_random_state, check_real
from ._bounds import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound
from ._events import learn_bits, learn_linear, learn_threshold, learn_values

__all__ = ["AuditReport", "NeighbouringPair", "audit", "audit_samples"]

LEARNERS = {"threshold": learn_threshold, "linear": learn_linear, "values": learn_values,
            "bits": learn_bits}


@dataclasses.dataclass(frozen=True)
class NeighbouringPair:
    """Two neighbouring datasets, as the audited mechanism takes them.

    Parameters
    ----------
    d, d_prime : object
        The datasets (for the solvers of sparsedp: ``(X, y)`` tuples).
    relation : str
        The neighbouring relation the pair belongs to ("replace-one", or
        "add/remove" with n public: a removed row is an empty row).
    description : str
        What differs, for the report.
    """
    d: object
    d_prime: object
    relation: str = "replace-one"
    description: str = ""


class Verdict:
    """What the reports share: their bound against their claim."""

    @property
    def violated(self):
        """The lower bound exceeds the claim (a claim of None is never violated)."""
        return self.claimed_epsilon is not None and self.epsilon_lower_bound > self.claimed_epsilon

    def verdict(self):
        """", claimed e: VIOLATED" or ", claimed e: consistent" ("" without a claim)."""
        if self.claimed_epsilon is None:
            return ""
        return (f", claimed {self.claimed_epsilon:.4g}: "
                + ("VIOLATED" if self.violated else "consistent"))


@dataclasses.dataclass
class AuditReport(Verdict):
    """An audited lower bound on epsilon, beside the claimed epsilon.

    Attributes
    ----------
    epsilon_lower_bound : float
        Holds with probability at least ``confidence`` (``-inf``: no event was
        more likely under one dataset by more than delta).
    claimed_epsilon : float or None
    delta : float
    violated : bool
        The lower bound exceeds the claim: the mechanism is not
        (claimed_epsilon, delta)-DP, with probability at least ``confidence``.
    event : str
        The event the bound is about, learned on the first halves.
    favours : str
        "D" or "D'": the dataset under which the event is more likely.
    k1, n1, k2, n2 : int
        Outputs in the event of the second halves, on the favoured dataset and
        on the other.
    p1_low, p2_high : float
        Their Clopper-Pearson bounds.
    confidence : float
    n_trials : int
        Runs per dataset.
    pair : str
        The neighbouring pair (its description) the bound is about.
    bounds : list of (str, float)
        With several pairs, each pair's description and bound.
    seconds : float
        The audit's wall time.
    """
    epsilon_lower_bound: float
    claimed_epsilon: float
    delta: float
    event: str
    favours: str
    k1: int
    n1: int
    k2: int
    n2: int
    p1_low: float
    p2_high: float
    confidence: float
    n_trials: int
    pair: str = ""
    bounds: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    def __str__(self):
        lines = [f"audited epsilon >= {self.epsilon_lower_bound:.4g} at delta = {self.delta:g} "
                 f"({100 * self.confidence:g}% confidence, {self.n_trials} runs a dataset"
                 f"{', ' + self.pair if self.pair else ''}){self.verdict()}",
                 f"  event {self.event}, more likely under {self.favours}: "
                 f"{self.k1}/{self.n1} (P >= {self.p1_low:.4g}) against "
                 f"{self.k2}/{self.n2} (P <= {self.p2_high:.4g})"]
        if len(self.bounds) > 1:
            lines += [f"  {len(self.bounds)} pairs (confidence shared):"]
            lines += [f"    {eps:8.4g}  {name}" for name, eps in self.bounds]
        return "\n".join(lines)


def _learners(events, discrete):
    if events == "auto":
        return [learn_values] if discrete else [learn_threshold, learn_linear]
    if isinstance(events, str) or callable(events):
        events = [events]
    out = []
    for e in events:
        if callable(e):
            out.append(e)
        elif e in LEARNERS:
            out.append(LEARNERS[e])
        else:
            raise ValueError(f"events must be 'auto', a learner or a list of "
                             f"{sorted(LEARNERS)} and learners, got {e!r}")
    return out


def _as_samples(x, name):
    x = np.asarray(x)
    if x.ndim not in (1, 2) or x.shape[0] < 2:
        raise ValueError(f"{name} must be an array of shape (n_trials,) or (n_trials, d) "
                         f"with n_trials >= 2, got shape {x.shape}")
    if x.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {x.dtype}")
    if x.dtype.kind == "f" and not np.all(np.isfinite(x)):
        raise ValueError(f"{name} holds NaN or infinite outputs")
    return x


def audit_samples(samples, samples_prime, *, delta, epsilon=None, events="auto",
                  confidence=0.95):
    """Lower-bound epsilon from i.i.d. outputs of a mechanism on D and on D'.

    Parameters
    ----------
    samples, samples_prime : array of shape (n, ) or (n, d)
        Independent outputs on D and on D' (one row a run).
    delta : float in [0, 1)
        The delta at which epsilon is bounded.
    epsilon : float, optional
        The claimed epsilon, reported beside the bound.
    events : "auto", str, callable or list
        The learners: "threshold", "linear", "values", "bits" (the
        floating-point attack) or callables ``(x1, x2, delta, alpha) -> (event,
        bound)``.  "auto": "values" for integer outputs, else "threshold" and
        "linear".
    confidence : float in (0, 1)
        The bound holds with at least this probability.

    Returns
    -------
    AuditReport
    """
    start = time.perf_counter()
    x, x2 = _as_samples(samples, "samples"), _as_samples(samples_prime, "samples_prime")
    if x.shape[1:] != x2.shape[1:]:
        raise ValueError(f"samples and samples_prime have outputs of different shapes: "
                         f"{x.shape[1:]} and {x2.shape[1:]}")
    delta = check_real(delta, "delta", high=1.0, include_low=True)
    confidence = check_real(confidence, "confidence", high=1.0)
    if epsilon is not None:
        epsilon = check_real(epsilon, "epsilon", include_low=True, allow_inf=True)
    alpha = (1.0 - confidence) / 2.0
    discrete = x.dtype.kind in "biu" and x2.dtype.kind in "biu"
    learners = _learners(events, discrete)
    h, h2 = x.shape[0] // 2, x2.shape[0] // 2
    a1, a2, b1, b2 = x[:h], x[h:2 * h], x2[:h2], x2[h2:2 * h2]
    best = None
    for learner in learners:
        for favours, u, v in (("D", a1, b1), ("D'", b1, a1)):
            event, lb = learner(u, v, delta, alpha)
            if event is not None and (best is None or lb > best[0]):
                best = (lb, event, favours)
    n_trials = min(x.shape[0], x2.shape[0])
    if best is None:
        return AuditReport(-math.inf, epsilon, delta, "none", "D", 0, a2.shape[0], 0,
                           b2.shape[0], 0.0, 1.0, confidence, n_trials,
                           seconds=time.perf_counter() - start)
    _, event, favours = best
    y1, y2 = (a2, b2) if favours == "D" else (b2, a2)
    k1, k2 = int(np.count_nonzero(event(y1))), int(np.count_nonzero(event(y2)))
    return AuditReport(
        float(epsilon_lower_bound(k1, y1.shape[0], k2, y2.shape[0], delta, alpha)), epsilon,
        delta, str(event), favours, k1, y1.shape[0], k2, y2.shape[0],
        float(clopper_pearson_lower(k1, y1.shape[0], alpha)),
        float(clopper_pearson_upper(k2, y2.shape[0], alpha)), confidence, n_trials,
        seconds=time.perf_counter() - start)


def output_array(output, intercept=True):
    """A run's output as a 1-d array: a ``Result``'s ``coef`` and ``intercept``, an
    estimator's ``coef_`` and ``intercept_`` (raveled; ``intercept=False``: the
    coefficients alone), or the array (scalar) itself."""
    for coef_name, intercept_name in (("coef", "intercept"), ("coef_", "intercept_")):
        coef = getattr(output, coef_name, None)
        if coef is not None and not callable(coef):
            parts = [np.ravel(np.asarray(coef, dtype=np.float64))]
            b = getattr(output, intercept_name, None) if intercept else None
            if b is not None and not callable(b):
                parts.append(np.ravel(np.asarray(b, dtype=np.float64)))
            return np.concatenate(parts)
    return np.ravel(np.asarray(output))


def _run_trials(mechanism, dataset, seeds, intercept=True):
    out = [output_array(mechanism(dataset, seed), intercept) for seed in seeds]
    shapes = {o.shape for o in out}
    if len(shapes) > 1:
        raise ValueError(f"the mechanism's outputs have different shapes: {sorted(shapes)}")
    return np.stack(out)


def _run(mechanism, dataset, seeds, n_jobs):
    """The outputs of ``mechanism(dataset, seed)`` for each seed, in order."""
    joblib = None
    if n_jobs != 1:
        try:
            import joblib
        except ImportError:
            raise ImportError(f"n_jobs={n_jobs} needs joblib: pip install "
                              f"'sparsedp[experiments]'") from None
    if joblib is None:
        return _run_trials(mechanism, dataset, seeds)
    workers = max(1, joblib.effective_n_jobs(n_jobs))
    chunks = np.array_split(np.arange(len(seeds)), min(len(seeds), 4 * workers))
    parts = joblib.Parallel(n_jobs=n_jobs)(
        joblib.delayed(_run_trials)(mechanism, dataset, [seeds[i] for i in chunk])
        for chunk in chunks if chunk.size)
    return np.concatenate(parts)


def seed_sequence(random_state):
    """A SeedSequence from None (fresh entropy), an int, a SeedSequence or a
    Generator (from its next 126 bits)."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(2 ** 63, size=2).tolist())
    check_random_state(random_state)  # the errors of every random_state
    return np.random.SeedSequence(random_state)


def _pairs(pair):
    if isinstance(pair, NeighbouringPair):
        return [pair]
    if isinstance(pair, tuple) and len(pair) == 2 and not any(
            isinstance(p, NeighbouringPair) for p in pair):
        return [NeighbouringPair(pair[0], pair[1])]
    if isinstance(pair, Iterable):
        pairs = list(pair)
        if pairs and all(isinstance(p, NeighbouringPair) for p in pairs):
            return pairs
    raise TypeError("pair must be a NeighbouringPair, a tuple (D, D_prime) or a sequence "
                    "of NeighbouringPair (e.g. worst_case_pairs(...))")


def audit(mechanism, pair, *, epsilon, delta, n_trials=1000, events="auto",
          confidence=0.95, n_jobs=1, random_state=None):
    """Audit a mechanism or a whole fit: a lower bound on its epsilon, beside the claim.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, seed)`` runs the mechanism (or the whole fit
        configuration) once on ``dataset`` with the randomness ``seed`` (a
        :class:`numpy.random.SeedSequence`, accepted by every ``random_state``
        of sparsedp and by :func:`numpy.random.default_rng`) and returns its
        output: a number, an array, a solver's ``Result`` (its ``coef`` and
        ``intercept``) or a fitted estimator (its ``coef_`` and ``intercept_``).  With ``n_jobs != 1`` it must be
        picklable by joblib (a module-level function, or a lambda: joblib's
        loky workers use cloudpickle).
    pair : NeighbouringPair, tuple (D, D_prime) or list of NeighbouringPair
        The neighbouring datasets; a list (e.g. :func:`worst_case_pairs`) is
        audited pair by pair, the confidence shared, and the largest bound
        reported.
    epsilon : float
        The claimed epsilon (of the whole mechanism, at ``delta``).
    delta : float in [0, 1)
        The delta of the claim, at which epsilon is bounded.
    n_trials : int, default=1000
        Runs on each dataset (half learn the event, half bound it).
    events : "auto", str, callable or list, default="auto"
        The event learners, as in :func:`audit_samples`.
    confidence : float, default=0.95
        The lower bound holds with at least this probability.
    n_jobs : int, default=1
        joblib's ``n_jobs`` for the runs (-1: every core).
    random_state : None, int or SeedSequence
        The root of the runs' seeds (reproducible).

    Returns
    -------
    AuditReport
        ``report.violated`` when the bound exceeds ``epsilon``.
    """
    start = time.perf_counter()
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable (dataset, seed) -> output, got "
                        f"{type(mechanism).__name__}")
    pairs = _pairs(pair)
    n_trials = check_integer(n_trials, "n_trials", low=4)
    epsilon = check_real(epsilon, "epsilon", include_low=True, allow_inf=True)
    check_real(delta, "delta", high=1.0, include_low=True)
    confidence = check_real(confidence, "confidence", high=1.0)
    root = seed_sequence(random_state)
    share = 1.0 - (1.0 - confidence) / len(pairs)
    reports = []
    for p, seeds in zip(pairs, root.spawn(len(pairs))):
        children = seeds.spawn(2 * n_trials)
        outputs = [_run(mechanism, data, children[i * n_trials:(i + 1) * n_trials], n_jobs)
                   for i, data in enumerate((p.d, p.d_prime))]
        report = audit_samples(*outputs, delta=delta, epsilon=epsilon, events=events,
                               confidence=share)
        report.pair = p.description
        reports.append(report)
    best = max(reports, key=lambda r: r.epsilon_lower_bound)
    best.bounds = [(r.pair, r.epsilon_lower_bound) for r in reports]
    best.confidence = confidence
    best.seconds = time.perf_counter() - start
    return best
