"""Worst-case neighbouring datasets and samplers of the audited mechanisms.

Every sampler calls the *public* solver API (or, for the noisy max, the
kernel's sampler) and returns i.i.d. outputs of ONE release of the audited
mechanism on two neighbouring datasets D and D' (replace-one: they differ in
row 0 only), with the claimed epsilon of that one release at the audit's delta.

Many i.i.d. releases per fit
----------------------------
A fit costs at least 0.3-0.8 ms of Python overhead, so one release per fit
would take most of the CI budget.  The datasets are built so that one fit makes
many independent releases of the same mechanism on the same input:

* DP-CD (``order="shuffle"``, ``passes=1``, ``averaging=False``, no
  penalty, ``M_j = step_size = 1``): each coordinate is updated exactly once,
  from ``theta_j = 0``, so ``coef_j = -(the noisy release of g_j)`` exactly.
  Row 0 has a 1 in every column and the label ``+L`` on D, ``-L`` on D'
  (``L = 1e6``: the label flip of the issue), so its clipped term is ``-C_j``
  on D and ``+C_j`` on D' in every column whatever the iterate; column j's other
  nonzero is in a row of its own.  The p releases of a fit are i.i.d.: p
  samples of one Gaussian release, each claimed with the run's multiplier z.
* DP-GCD: every per-sample term is saturated (labels ``+-L``), so every clipped
  term is exactly ``+-C_j`` whatever the iterate: the clipped gradient, hence
  the scores, never change.  Each of the ``n_iter`` iterations is an
  independent draw of the same selection on the same scores, and an
  independent release of the same value: n_iter samples of each (20 per fit,
  see ``GCD_BUDGET``), claimed at the per-step epsilon0.  Steps of 2^-40 keep
  the iterate nearly still, so that even the planted variant without clipping
  (whose terms then depend on it) keeps nearly fixed scores.
* Private smoothness constants: one feature (a one-coordinate Laplace release
  is a tight audit), one call of ``private_smoothness`` per sample.

The single-release configurations of the issue (``dp_cd`` with ``T K = 1``,
``dp_gcd`` with ``n_iter = 1``, smoothness through ``dp_cd``) are here too
(``batched=False``, :func:`smoothness_dp_cd_samples`); the long suite runs them.
"""
import contextlib
import dataclasses
import functools
import importlib
import math
import warnings

import numpy as np
import scipy.sparse as sp

import oracles
from faults import injected
from sparsedp.privacy import calibrate_gaussian, gdp_epsilon
from sparsedp.privacy.pld import sampled_gaussian_epsilon_pld
from sparsedp.datafits import Squared
from sparsedp.solvers import dp_cd, dp_gcd

#: a label this large saturates every clipped term: |X_ij loss'(0, y)| = 2e6 >> C_j
L = 1e6
#: the audits' delta (Gaussian releases are claimed at it)
DELTA = 1e-3
#: the claimed epsilon of one Gaussian release (at DELTA) in the batched audits
GAUSSIAN_CLAIM = 2.0
#: clipped term per coordinate C_j (not dyadic: neighbouring values differ in
#: their low-order bits, which is what the floating-point attack needs)
C_J = 0.7


@dataclasses.dataclass
class Samples:
    """i.i.d. outputs of one release on D and on D', and the release's claim."""
    d: np.ndarray
    d2: np.ndarray
    claim: float      # epsilon of one release at ``delta`` (the integer
                      # samplers' slack, 2 eta ~ 4e-13, left out)
    delta: float      # DELTA for Gaussian releases, 0 for pure mechanisms
    what: str         # the mechanism and the configuration
    seconds: float = 0.0


def variant(bug, modules=None):
    """The fits with ``bug`` injected (:func:`faults.injected`, in ``modules`` only if
    given), or nothing for ``bug=None`` (the real mechanism)."""
    return injected(bug, modules) if bug else contextlib.nullcontext()


# ---- integer noise tables -----------------------------------------------------------
#
# The solvers build an IntegerNoise table (alias table computed exactly, ~25 ms)
# at every fit.  The table is immutable once built and the draws take the
# generator as an argument, so handing the solver an already built table for
# the same arguments changes nothing but the time (checked bit for bit by
# test_noise_table_cache_is_transparent).

_TABLES = {}
_PATCH_MODULES = ("sparsedp.solvers._release", "sparsedp.solvers._dp_cd", "sparsedp.solvers._dp_gcd",
                  "sparsedp.solvers._smoothness", "sparsedp._kernels._dp_gcd_fast",
                  "sparsedp._kernels._dp_cd_fast")


def _cached_integer_noise(cls):
    @functools.wraps(cls)
    def make(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        table = _TABLES.get(key)
        if table is None:
            table = _TABLES[key] = cls(*args, **kwargs)
        return table
    make.__wrapped_class__ = cls
    return make


@contextlib.contextmanager
def cached_noise_tables(enabled=True):
    """Memoise ``IntegerNoise(law, scale)`` in the solver modules (no-op if absent)."""
    patched = []
    if enabled:
        for name in _PATCH_MODULES:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            cls = module.__dict__.get("IntegerNoise")
            if isinstance(cls, type):
                module.IntegerNoise = _cached_integer_noise(cls)
                patched.append((module, cls))
    try:
        yield
    finally:
        for module, cls in patched:
            module.IntegerNoise = cls


# ---- DP-CD: coordinate gradient release (Gaussian) ------------------------------------

#: the varied smoothness constants of the audits that need them (C_j, gamma_j and the
#: GS-r normalisation all depend on M_j): cycled over the coordinates
VARIED_M = (16.0, 1.0, 4.0, 0.25)


def dp_cd_datasets(p, n, varied=False, saturated=False):
    """X (n x p), labels of D and D', public smoothness and the clip of the DP-CD audit.

    Row 0: a 1 in every column, label ``L`` (D) or ``-L`` (D'): clipped term
    ``-C_j`` / ``+C_j``.  Row 1 + j: a 1 in column j only, label ``-0.15 C_J``
    (term ``0.3 C_J``, unclipped; it is read once, before theta_j moves), or with
    ``saturated`` the label ``L`` (term ``-C_j`` whatever theta_j: every release of
    a coordinate has the same data part).  Rows beyond 1 + p are empty (n a power of
    two: the division by n is exact).  ``varied``: M_j cycles over
    :data:`VARIED_M` (else 1), so C_j = sqrt(M_j / tr M) clip varies too.
    """
    assert n >= p + 1
    rows = np.r_[np.zeros(p, dtype=int), 1 + np.arange(p)]
    cols = np.r_[np.arange(p), np.arange(p)]
    X = sp.csc_matrix((np.ones(2 * p), (rows, cols)), shape=(n, p))
    y = np.zeros(n)
    y[1:p + 1] = L if saturated else -0.15 * C_J
    y_d, y_d2 = y.copy(), y.copy()
    y_d[0], y_d2[0] = L, -L
    M = np.resize(VARIED_M, p) if varied else np.ones(p)
    clip = C_J * math.sqrt(M.sum())  # C_j = sqrt(M_j / tr M) clip = C_J sqrt(M_j)
    return X, y_d, y_d2, M, clip


def _fit_stream(seed, stream):
    return np.random.default_rng([seed, stream])


def coordinate_claim(epsilon, releases, share):
    """The epsilon at DELTA of ``share`` of ``releases`` Gaussian releases of one
    multiplier whose composition the budget ``(epsilon, DELTA)`` allows: the least
    multiplier is ``z = sqrt(releases) / mu(epsilon)`` (Gaussian DP composes
    exactly), so ``share`` of them are ``sqrt(share) / z``-GDP.  From the budget,
    with the oracles' closed forms, never from the fit's report."""
    mu = oracles.gdp_mu(epsilon, DELTA) * math.sqrt(share / releases)
    return oracles.gdp_epsilon(mu, DELTA)


@functools.lru_cache(maxsize=None)
def dp_cd_samples(n_samples, seed, bug=None, batched=True, claim=GAUSSIAN_CLAIM, outer=1,
                  varied=False):
    """DP-CD's coordinate releases: ``coef_j`` of fits updating each coordinate
    ``outer`` times (``order="shuffle"``, one pass an outer loop, no averaging).

    ``batched``: p = 64 coordinates (64 i.i.d. samples per fit), the budget such that
    one coordinate's ``outer`` releases are ``(claim, DELTA)``-DP (the GDP share of
    ``outer`` of the ``64 outer`` releases); else the issue's ``T K = 1``: one
    feature, ``epsilon = claim``.  **The claim is computed from that budget**
    (:func:`coordinate_claim`): a fit calibrated for fewer releases than it makes
    (one inner loop of ``outer``) or for half the sensitivity shows above it.

    ``outer > 1`` saturates every term (``dp_cd_datasets(saturated=True)``): coordinate
    j then sums ``outer`` releases of the same value, a sufficient statistic.
    ``varied``: M_j cycles over :data:`VARIED_M`; the samples are ``coef_j M_j / C_j``
    (the release's own units: i.i.d. across coordinates).
    """
    import time
    t0 = time.perf_counter()
    p, n = (64, 128) if batched else (1, 2)
    X, y_d, y_d2, M, clip = dp_cd_datasets(p, n, varied=varied, saturated=outer > 1)
    releases = outer * p
    mu_share = oracles.gdp_mu(claim, DELTA)  # one coordinate's releases: mu_share-GDP
    epsilon = oracles.gdp_epsilon(mu_share * math.sqrt(p), DELTA) if batched else claim
    C = np.sqrt(M / M.sum()) * clip
    out, zs = [], []
    for stream, y in enumerate((y_d, y_d2)):
        rng = _fit_stream(seed, stream)
        chunks, count = [], 0
        with variant(bug), cached_noise_tables():
            while count < n_samples:
                res = dp_cd(X, y, Squared(), epsilon=epsilon, delta=DELTA, passes=outer,
                            outer=outer, clip=clip, smoothness=M, order="shuffle",
                            averaging=False, random_state=rng)
                chunks.append(res.coef * M / C * C_J if varied else res.coef)
                count += p
        zs.append(res.info["noise_multiplier"])
        out.append(np.concatenate(chunks)[:n_samples])
    z = max(zs)
    return Samples(out[0], out[1], coordinate_claim(epsilon, releases, outer), DELTA,
                   f"DP-CD coordinate release (Gaussian, z = {z:.4g} for the budget "
                   f"({epsilon:.4g}, {DELTA:g}) of {releases} releases, "
                   f"{f'{outer} outer loops, ' if outer > 1 else ''}"
                   f"{'varied M_j, ' if varied else ''}"
                   f"{'64 coordinates per fit' if batched else 'T K = 1'})",
                   time.perf_counter() - t0)


# ---- DP-GCD: selection and gradient release ----------------------------------------

GCD_P, GCD_N = 16, 64
#: tiny steps: the iterate barely moves, so even a planted variant without
#: clipping (whose terms then depend on the iterate) keeps nearly fixed scores
GCD_STEP = 2.0 ** -40

#: (selection, gradient noise, batched) -> (epsilon, delta, n_iter) of a fit, such
#: that epsilon0 ~ 1 (the Gaussian release with the exponential mechanism: z =
#: 2 / epsilon0 ~ 1.44, one release ~ (2, 1e-3)).  Found offline with
#: calibrate_dp_gcd; the samplers read the actual epsilon0 from the fit.
#: 20 iterations per fit at delta = 0.5: dp_gcd charges the noisy max sampler's
#: total variation to delta as (1 + e^epsilon) n_iter tv, which caps the total
#: epsilon of a fit (about 24 at delta = 0.5, 18 at delta = 1e-3).  The
#: audited selection is pure (epsilon0-DP) and one Gaussian release is claimed
#: from its multiplier z, so the fit's delta plays no part in the claims.
GCD_BUDGET = {
    ("exponential", "laplace", True): (12.5, 0.5, 20),
    ("exponential", "gaussian", True): (12.25, 0.5, 20),
    ("laplace", "laplace", True): (18.0, 0.5, 20),
    ("laplace", "laplace", False): (2.0, 1e-3, 1),
    ("exponential", "laplace", False): (2.0, 1e-3, 1),
}


def dp_gcd_datasets(p, n, monotone, varied=False):
    """X (n x p), labels of D and D', public smoothness and clip of the DP-GCD audits.

    Every label is ``+-L``: every clipped term is ``+-C_j`` for any iterate.
    Row 0 has a nonzero in every column and label ``L`` (D) / ``-L`` (D'); rows
    1 + 2j, 2 + 2j (``monotone``) or 1 + j hold a 1 in column j, label ``-L``
    (term ``+C_j``).

    * ``monotone=True`` (the release audit): row 0 is all ones: on D every
      column's clipped gradient is ``(2 - 1) C_j / n``, on D' ``3 C_j / n`` -- a
      shift of the sensitivity ``2 C_j / n``; all scores equal.
    * ``monotone=False`` (the selection audit): row 0 is ``+1`` on column 0 and
      ``-1`` elsewhere, one own row per column: on D the scores are
      ``(0, Delta, ..., Delta)``, on D' ``(Delta, 0, ..., 0)``: coordinate 0 gains
      Delta and every other loses Delta (non-monotone neighbours, the worst case
      of report-noisy-max).

    ``varied``: M_j cycles over :data:`VARIED_M` (coordinate 0, the one that gains,
    has M_0 = 16), the clip scaled so that ``C_j = C_J sqrt(M_j)``.  The rules'
    scores are normalised by M (GS-r: ``|g_j| / sqrt(M_j)``), so they are the same as
    with unit constants: only a score that forgets its normalisation changes.
    """
    own = 2 if monotone else 1
    assert n >= 1 + own * p
    rows, cols, vals = [0] * p, list(range(p)), [1.0] * p
    if not monotone:
        vals = [1.0] + [-1.0] * (p - 1)
    for j in range(p):
        for r in range(own):
            rows.append(1 + own * j + r)
            cols.append(j)
            vals.append(1.0)
    X = sp.csc_matrix((vals, (rows, cols)), shape=(n, p))
    y = np.zeros(n)
    y[1:1 + own * p] = -L
    y_d, y_d2 = y.copy(), y.copy()
    y_d[0], y_d2[0] = L, -L
    M = np.resize(VARIED_M, p) if varied else np.ones(p)
    clip = C_J * math.sqrt(M.sum())
    return X, y_d, y_d2, M, clip


def _gcd_runs(X, ys, M, clip, budget, n_samples, seed, bug, key, **kwargs):
    epsilon, delta, n_iter = budget
    out, infos = [], []
    for stream, y in enumerate(ys):
        rng = _fit_stream(seed, stream)
        chunks, count = [], 0
        with variant(bug), cached_noise_tables():
            while count < n_samples:
                res = dp_gcd(X, y, Squared(), epsilon=epsilon, delta=delta, n_iter=n_iter,
                             clip=clip, smoothness=M, step_size=GCD_STEP,
                             random_state=rng, **kwargs)
                chunks.append(np.asarray(res.info[key]))
                count += n_iter
        infos.append(res.info)
        out.append(np.concatenate(chunks)[:n_samples])
    return out, infos[0]


@functools.lru_cache(maxsize=None)
def dp_gcd_release_samples(n_samples, seed, bug=None, gradient_noise="laplace",
                           batched=True):
    """DP-GCD's released coordinate gradient (``info["released"]``); the fits
    select with the exponential mechanism (``batched=False``: Laplace)."""
    import time
    t0 = time.perf_counter()
    X, y_d, y_d2, M, clip = dp_gcd_datasets(GCD_P, GCD_N, monotone=True)
    selection = "exponential" if batched else "laplace"
    budget = GCD_BUDGET[selection, gradient_noise, batched]
    (d, d2), info = _gcd_runs(X, (y_d, y_d2), M, clip, budget, n_samples, seed, bug,
                              "released", selection=selection,
                              gradient_noise=gradient_noise)
    eps0 = info["epsilon0"]
    if gradient_noise == "laplace":  # pure: audited at delta = 0
        claim, delta, law = eps0, 0.0, f"Laplace, epsilon0 = {eps0:.4g}"
    else:
        z = (2.0 if selection == "exponential" else 1.0) / eps0
        claim, delta, law = gdp_epsilon(1.0 / z, DELTA), DELTA, f"Gaussian, z = {z:.4g}"
    return Samples(d, d2, claim, delta,
                   f"DP-GCD gradient release ({law}, {selection} selection, "
                   f"n_iter = {budget[2]} per fit)", time.perf_counter() - t0)


@functools.lru_cache(maxsize=None)
def dp_gcd_selection_samples(n_samples, seed, bug=None, selection="laplace", rule="gs-r",
                             batched=True, varied=False):
    """DP-GCD's selected coordinate (``info["selected"]``) on non-monotone neighbours
    (``varied``: varied smoothness constants, :func:`dp_gcd_datasets`)."""
    import time
    t0 = time.perf_counter()
    X, y_d, y_d2, M, clip = dp_gcd_datasets(GCD_P, GCD_N, monotone=False, varied=varied)
    budget = GCD_BUDGET[selection, "laplace", batched]
    (d, d2), info = _gcd_runs(X, (y_d, y_d2), M, clip, budget, n_samples, seed, bug,
                              "selected", selection=selection, rule=rule,
                              gradient_noise="laplace")
    eps0 = info["epsilon0"]
    # Laplace report-noisy-max: the claim from the budget (the largest epsilon0 any
    # correct accounting allows, tests/oracles.py); the exponential mechanism's
    # bounded-range composition has no oracle here: the fit's epsilon0
    claim = oracles.rnm_laplace_epsilon0(*budget) if selection == "laplace" else eps0
    return Samples(d, d2, claim, 0.0,
                   f"DP-GCD selection ({selection}, {rule}, epsilon0 = {eps0:.4g}, "
                   f"{'varied M_j, ' if varied else ''}"
                   f"n_iter = {budget[2]} per fit)", time.perf_counter() - t0)


# ---- report-noisy-max / exponential mechanism, the kernel's sampler -----------------

NM_P, NM_DELTA, NM_EPS0 = 16, 1.0, 1.0


@functools.lru_cache(maxsize=None)
def noisy_max_samples(n_samples, seed, selection="laplace", scale_factor=2.0):
    """``NoisyMax(scores, scale, selection).draw`` on s and s' (StatDP style).

    ``s = (0, Delta, ..., Delta)`` and ``s' = s + Delta`` at index 0, ``- Delta``
    elsewhere.  ``scale = scale_factor * Delta / eps0``: 2 is the library's
    (Laplace ``2 Delta / eps0``; exponential ``P(j) ∝ exp(eps0 s_j / (2 Delta))``),
    1 the monotone-scores scale (the planted bug "monotone_selection").
    """
    import time
    from sparsedp.random import NoisyMax
    t0 = time.perf_counter()
    s = np.full(NM_P, NM_DELTA)
    s[0] = 0.0
    s2 = s - NM_DELTA
    s2[0] = s[0] + NM_DELTA
    scale = scale_factor * NM_DELTA / NM_EPS0
    out = []
    for stream, scores in enumerate((s, s2)):
        rng = _fit_stream(seed, stream)
        out.append(NoisyMax(scores, scale, selection, rng).draw(n_samples))
    return Samples(out[0], out[1], NM_EPS0, 0.0,
                   f"NoisyMax kernel ({selection}, scale {scale_factor:g} Delta / eps0, "
                   f"p = {NM_P})", time.perf_counter() - t0)


# ---- private smoothness constants (Laplace) -------------------------------------------

SM_N, SM_BOUND, SM_EPS = 64, 0.9, 1.0


def smoothness_datasets(n=SM_N, bound=SM_BOUND, at_bound=4, features=1):
    """``features`` identical columns; ``at_bound`` rows at the bound; row 0 is 0 (D) or
    2 bound (D') in every column.

    Row 0's clipped value is 0 on D and b on D' (``b = 2 bound^2 = 1.62``, not
    dyadic; ``2 bound`` is clipped): a shift of the sensitivity b of each
    clipped sum (``4 b`` against ``5 b``).  The Laplace noise (scale ``b /
    epsilon'`` on the sum, times the number of features) is then comparable to the
    sum, so raw floating-point noise often cancels most of it -- the regime of the
    floating-point attack -- while the post-processing clamp ``[scale, b]`` (of the
    average) rarely acts.  With several features, row 0 moves every sum at once:
    the worst case of the vector's L1 sensitivity (``features`` b).
    """
    col = np.zeros(n)
    col[1:1 + at_bound] = bound
    X_d = sp.csc_matrix(np.tile(col[:, None], (1, features)))
    col2 = col.copy()
    col2[0] = 2.0 * bound
    X_d2 = sp.csc_matrix(np.tile(col2[:, None], (1, features)))
    return X_d, X_d2


@functools.lru_cache(maxsize=None)
def smoothness_samples(n_samples, seed, bug=None, features=1):
    """``private_smoothness(X, Squared(), eps, bound, generator)[0]`` (Laplace).

    One feature: one number a call, claimed at epsilon'.  ``features > 1``:
    identical columns of ``64 features`` rows, a quarter of them at the bound (the
    averages far from the clamp ``[noise scale, b]``), row 0 moving every sum by b.  The vector of
    sums has L1 sensitivity ``features`` b, so each sum gets Laplace noise of scale
    ``features b / epsilon'``: one coordinate is ``epsilon' / features``-DP, the
    claim, and the coordinates of a call are i.i.d. samples (identical columns,
    independent noise).  A scale that forgets the factor ``features`` makes each
    coordinate ``epsilon'``-DP alone.
    """
    import time
    from sparsedp.solvers._smoothness import private_smoothness
    t0 = time.perf_counter()
    out = []
    bounds = np.full(features, SM_BOUND)
    shape = {} if features == 1 else {"n": 64 * features, "at_bound": 16 * features}
    for stream, X in enumerate(smoothness_datasets(features=features, **shape)):
        rng = _fit_stream(seed, stream)
        calls = -(-n_samples // features)
        vals = np.empty((calls, features))
        with variant(bug), cached_noise_tables():
            for i in range(calls):
                vals[i] = private_smoothness(X, Squared(), SM_EPS, bounds, rng)[0]
        out.append(vals.ravel()[:n_samples])
    return Samples(out[0], out[1], SM_EPS / features, 0.0,
                   f"private smoothness constant (Laplace, epsilon' = {SM_EPS:g} for "
                   f"{features} feature{'s' if features > 1 else ''}: one is "
                   f"{SM_EPS / features:g}-DP)", time.perf_counter() - t0)


@functools.lru_cache(maxsize=None)
def smoothness_dp_cd_samples(n_samples, seed, bug=None):
    """The same release through ``dp_cd(..., smoothness=0.5, feature_bounds=bound)``:
    ``res.info["smoothness"]`` (epsilon = 2, so epsilon' = 1).  The bug is planted in
    the smoothness estimate only: the audited value does not depend on the steps, and
    the steps' raw floating-point stand-in refuses this fit's configuration."""
    import time
    t0 = time.perf_counter()
    out = []
    for stream, X in enumerate(smoothness_datasets()):
        rng = _fit_stream(seed, stream)
        vals = np.empty(n_samples)
        y = np.zeros(X.shape[0])
        with variant(bug, ("sparsedp.solvers._smoothness",)), cached_noise_tables(), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(n_samples):
                res = dp_cd(X, y, Squared(), epsilon=2.0 * SM_EPS, delta=DELTA, passes=1,
                            clip=1.0, smoothness=0.5, feature_bounds=SM_BOUND,
                            random_state=rng)
                vals[i] = res.info["smoothness"][0]
        out.append(vals)
    return Samples(out[0], out[1], SM_EPS, 0.0,
                   "private smoothness constant through dp_cd (Laplace, epsilon' = "
                   f"{SM_EPS:g} of epsilon = {2 * SM_EPS:g})", time.perf_counter() - t0)


# ---- the private bound on |X_ij| of the default constants (DP-CD) ---------------------

BOUND_N, BOUND_P, BOUND_OUTLIER = 256, 4, 1000.0


def feature_bound_datasets():
    """256 x 4: features 1-3 in [1/2, 1] on every row; feature 0 empty but for row 0,
    at 1 (D) or at 1,000 (D').  Feature 0's one entry is below any count the private
    histograms detect, so its constant is the floor ``beta t B^2 / n`` at the bound B
    on ``|X_ij|``: the private bound (from the other features: about 1 on both) or,
    leaked, the data's max (1 against 1,000)."""
    rng = np.random.default_rng(35)
    X = rng.uniform(0.5, 1.0, (BOUND_N, BOUND_P))
    X[:, 0] = 0.0
    X2 = X.copy()
    X[0, 0], X2[0, 0] = 1.0, BOUND_OUTLIER
    y = rng.normal(size=BOUND_N)
    return sp.csc_matrix(X), sp.csc_matrix(X2), y


@functools.lru_cache(maxsize=None)
def feature_bound_samples(n_samples, seed, bug=None, epsilon=2.0):
    """``dp_cd``'s ``info["smoothness"][0]``: the private constant of its default
    (``smoothness=None``, ``feature_bounds=None``), whose histogram's range and noise
    are set by the private bound on ``|X_ij|``; one number a fit.  It is released
    (``info`` is covered by the guarantee), so the claim is the fit's budget.  A
    bound read off the data without budget (the planted ``leaked_bound``, or the
    leak of ``feature_bounds=None`` at a finite epsilon) follows the outlier: feature
    0's constant grows a million-fold on D' and gives the pair away."""
    import time
    t0 = time.perf_counter()
    X, X2, y = feature_bound_datasets()
    out = []
    for stream, Xd in enumerate((X, X2)):
        rng = _fit_stream(seed, stream)
        vals = np.empty(n_samples)
        with variant(bug), cached_noise_tables(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(n_samples):
                res = dp_cd(Xd, y, Squared(), epsilon=epsilon, delta=DELTA, passes=0.25,
                            clip=1.0, random_state=rng)
                vals[i] = res.info["smoothness"][0]
        out.append(vals)
    return Samples(out[0], out[1], epsilon, DELTA,
                   f"private smoothness constant through dp_cd's default constants (the fit's "
                   f"budget ({epsilon:g}, {DELTA:g}), one outlier row)",
                   time.perf_counter() - t0)


# ---- DP-SGD: one step's release of the clipped batch sum (Gaussian) --------------------
#
# One step of dp_sgd releases the clipped batch sum G (L2 sensitivity C under
# add/remove) with Gaussian noise of sd z C on every coordinate.  With
# ``batch_size = n`` the Poisson rate is 1 (every row, no subsampling: the PLD of
# the step is the Gaussian's) and ``passes = 1`` is one step, from w = 0.
#
# Many i.i.d. releases per fit.  Row j holds a single 1, in column j, and the
# label L: its gradient 2 (0 - L) e_j has norm 2e6, clipped to exactly C (the
# clipping is on the row's L2 norm, hence one coordinate per row).  On D every
# row is present (``G_j = -C``), on D' every row is empty (``G_j = 0``: an empty
# row adds nothing to any batch sum, the same as a removed row, n kept equal).
# Coordinate j of a fit on D (on D') is distributed as the one coordinate a pair
# of add/remove neighbours (row j alone, present or absent; same n and p, so the
# same public grid and step) can change: a post-processing of one step's
# release on that pair.  The p coordinates are independent (independent noise,
# data part fixed), so a fit gives p i.i.d. samples, claimed at the epsilon of
# the Gaussian of multiplier z (``info["noise_multiplier"]``) at DELTA.  With a
# Poisson rate q < 1 (``rate``) each row is sampled on its own and coordinate j
# is one Poisson-subsampled Gaussian release, claimed by the PLD accountant.
#
# The output is ``-coef / c`` (c = 1 / n, a power of two: exact), the released
# noisy sum as a function of the step's integers and public constants.  Paths:
#
# * "lazy": no penalty, the integer frame with lazy walk noise (``lazy="auto"``);
# * "lazy_l2": an L2 penalty, the shrunk integer frame (multiplier 2**12);
# * "eager_l1": an L1 penalty of 1e-300 (its prox is the identity on these
#   values), the eager float kernel: the only path with the raw-float variant.

SGD_P = 1024
SGD_EPSILON = 2.0  # the fit's budget: z ~ 1.445 at rate 1, one release ~ (2, 1e-3)
SGD_PATHS = {"lazy": (None, True), "lazy_l2": ("l2", True), "eager_l1": ("l1", False),
             "lazy_l2_halving": ("l2_halving", True)}


def dp_sgd_datasets(p=SGD_P, joint=False):
    """X (p x p) with row j = e_j, labels ``L``, and D' = the same shape, every row
    empty (``joint``: the even rows empty, the odd rows kept)."""
    X = sp.csr_matrix((np.ones(p), (np.arange(p), np.arange(p))), shape=(p, p))
    kept = np.arange(1, p, 2) if joint else np.arange(0)
    X_removed = sp.csr_matrix((np.ones(kept.size), (kept, kept)), shape=(p, p))
    return X, X_removed, np.full(p, L)


def _pairs_of_coordinates(x):
    """``(x_2k, x_2k+1)``: the samples of the joint audits, shape (p / 2, 2)."""
    return np.asarray(x).reshape(-1, 2)


def _sgd_penalty(name):
    from sparsedp.penalties import L1, L2
    # l2_halving: the shrinkage 1 / (1 + l2) = 2**-0.25 a step (c = 1 at B = n): the frame
    # changes rung every step and halves U at step 4
    return {None: None, "l2": L2(1e-3), "l1": L1(1e-300),
            "l2_halving": L2(2.0 ** 0.25 - 1.0)}[name]


_SGD_SETUP = {}


def _memoised(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        key = (fn, args, tuple(sorted(kwargs.items())))
        if key not in _SGD_SETUP:
            _SGD_SETUP[key] = fn(*args, **kwargs)
        return _SGD_SETUP[key]
    return call


@contextlib.contextmanager
def cached_dp_sgd_setup(enabled=True):
    """Memoise dp_sgd's set-up: the walks ``GaussianWalk(scale, max_steps)`` and the
    eager path's ``IntegerNoise`` (immutable tables, the generator passed to every
    draw); the calibration is cached by the library itself."""
    import sparsedp._kernels._walk as walk_module
    import sparsedp.solvers._dp_sgd as sgd_module
    saved = [(walk_module, "GaussianWalk"), (sgd_module, "IntegerNoise")]
    originals = [getattr(m, name) for m, name in saved]
    if enabled:
        for (m, name), fn in zip(saved, originals):
            setattr(m, name, _memoised(fn))
    try:
        yield
    finally:
        for (m, name), fn in zip(saved, originals):
            setattr(m, name, fn)


@functools.lru_cache(maxsize=None)
def dp_sgd_samples(n_samples, seed, bug=None, path="lazy", rate=1.0, epsilon=SGD_EPSILON,
                   steps=1, sampling="poisson", joint=False, p=SGD_P):
    """One DP-SGD step's release of coordinate j: ``-coef_j / c`` (p = 1024 per fit).

    ``rate``: the Poisson rate ``B / n`` (``passes = steps rate``); ``epsilon``: the
    fit's budget (at DELTA), from which dp_sgd calibrates z.

    **The claim is the budget** (epsilon at DELTA), never the fit's report:
    coordinate j is a function of row j alone (its own column, its own noise), and
    its law under D is its law under the neighbouring pair "row j present / absent"
    (or flipped), the others as they are; the fit promises (epsilon, DELTA) for
    that pair.  Without penalty its final value is a sufficient statistic of the
    pair, so a correctly calibrated fit is tight against its budget, and a
    calibration or accounting bug (too little noise for the budget) shows.

    ``joint``: samples are the pairs ``(coef_2k, coef_2k+1)`` (shape (n_samples, 2)),
    D' removing only the even rows: on D ``(-C, -C)``, on D' ``(0, -C)``; each pair of
    coordinates is a function of rows 2k and 2k + 1 only, neighbours through row 2k.
    Events on the pair (differences) see noise shared between coordinates.

    ``p``: rows and columns (``sampling="fixed"`` with ``p = 2``, ``rate = 1/2``: the
    audit of the sampler itself, see :func:`floyd_samples`).

    ``steps > 1`` (rate 1): the final iterate after ``steps`` steps.  The clipped
    terms stay ``-C`` (the margins are far below L), so on D every coordinate is
    touched at every step and gets one walk step per step, while on D' no
    coordinate is ever touched and its whole noise is one lazy catch-up at the
    end (the walk's ladder of tables).  Without penalty ``-coef_j / c`` is the sum
    of the T releases, a sufficient statistic: exactly the T-fold Gaussian
    composition (claimed at ``mu = sqrt(T) / z``); with L2 the releases are
    weighted by the shrinkage (a lower bound below the claim).

    ``sampling="fixed"`` (replace-one neighbours, sensitivity 2C; rate 1: the
    batch is every row): D' has the same rows with the labels ``-L``, each clipped
    term ``+C`` instead of ``-C``.  Claimed at the exact Gaussian's epsilon of the
    run's z (below the RDP accountant's, which calibrated z).
    """
    import time
    from sparsedp.solvers import dp_sgd
    t0 = time.perf_counter()
    penalty, lazy = SGD_PATHS[path]
    X, X_removed, y = dp_sgd_datasets(p, joint)
    n = X.shape[0]
    batch = max(1, int(round(rate * n)))
    pair = ((X, y), (X_removed, y)) if sampling == "poisson" else ((X, y), (X, -y))
    per_fit = n // 2 if joint else n
    out, zs = [], []
    for stream, (Xd, yd) in enumerate(pair):
        rng = _fit_stream(seed, stream)
        chunks, count = [], 0
        with variant(bug), cached_dp_sgd_setup():
            while count < n_samples:
                res = dp_sgd(Xd, yd, Squared(), _sgd_penalty(penalty), epsilon=epsilon,
                             delta=DELTA, passes=steps * batch / n, clip=C_J,
                             step_size=1.0, batch_size=batch, sampling=sampling,
                             global_smoothness=1.0, random_state=rng)
                if (res.n_iter != steps or res.info["lazy"] != lazy
                        or res.info["step"] != 1.0 / batch):
                    raise RuntimeError(f"dp_sgd did not run {steps} {path} steps of size 1/B: "
                                       f"{res.n_iter} steps, info {res.info}")
                release = -res.coef * batch
                chunks.append(_pairs_of_coordinates(release) if joint else release)
                count += per_fit
        zs.append(res.info["noise_multiplier"])
        out.append(np.concatenate(chunks)[:n_samples])
    z = max(zs)
    q = batch / n
    what = "step release" if steps == 1 else f"final iterate after {steps} steps"
    return Samples(out[0], out[1], epsilon, DELTA,
                   f"DP-SGD {what} ({path}, Gaussian, z = {z:.4g} for the budget "
                   f"({epsilon:g}, {DELTA:g}), "
                   f"{'rate 1' if q == 1.0 else f'rate {q:g}'}, {sampling} sampling, "
                   f"{'pairs of coordinates, ' if joint else ''}{per_fit} releases per fit)",
                   time.perf_counter() - t0)


# ---- DP-SCD: one step's release of the shared vector v (Gaussian) ---------------------
#
# One step of dp_scd adds to v the batch's update sum_j zeta_j x_j, each term scaled
# to |zeta_j| max(1, ||x_j||) <= C (L2 sensitivity C under add/remove), with
# Gaussian noise of sd z C on every coordinate of v, on the public grid; only v is
# released (coef = v / (lambda n)), the dual variables alpha are hidden state
# (docs/dp_scd.rst).  The pair is DP-SGD's: p = n = 1024, row j a single 1 in column j
# (norm 1) with label L, present on D and empty on D' (an empty row adds nothing to v,
# as a removed one; n, the public grid, lambda n and the batch size stay the same).
# Ridge's dual step from alpha_j = 0 is zeta_j = (L - x_j . w) / (1/2 + kappa),
# kappa = B ||x_j||^2 / (lambda n) = B, about 1e6 / 1024 >> C: every update is
# scaled to exactly C (it stays so over a few steps: x_j . w is a few C), so
# coordinate j of v moves by C on D and by 0 on D'.  The coordinates are
# independent chains (row j reads and writes coordinate j only): a fit gives p
# i.i.d. samples of one release on the pair "row j present / absent".
#
# ``lambda = 1 / n``: lambda n = 1, coef = v / 1 is v exactly (the output is the
# released vector itself, g times an integer).  Paths (``lazy``, ``noise_alpha``):
#
# * "lazy": the lazy walk noise (a coordinate is caught up when its row reads it,
#   and at the end; on D' never read: one catch-up at the end);
# * "eager": ``lazy=False``, every coordinate gets its walk step at every step;
# * "lazy_noise_alpha": the paper's variant, noise sqrt(2) z C on v (and on the
#   hidden alphas), accounted as z.  Audited against the epsilon of the noise it
#   documents, the Gaussian of multiplier sqrt(2) z (~1.32; the ledger's claim at z,
#   2.0, holds a fortiori): at z the planted bugs (noise sqrt(2) z / 2) would sit
#   at ~3.06 against a claim of 2.0, too close for the CI sample.
#
# dp_scd has no raw floating-point variant (v lives on its grid only), so that bug
# is n/a here, as for DP-SGD's lazy frame.

SCD_P = 1024
SCD_EPSILON = 2.0  # the fit's budget: z ~ 1.445 at rate 1, one release ~ (2, 1e-3)
SCD_PATHS = {"lazy": (True, False), "eager": (False, False),
             "lazy_noise_alpha": (True, True)}


def dp_scd_datasets(p=SCD_P, row_norm=1.0):
    """X (p x p) with row j = ``row_norm e_j``, labels ``L``; D' the same shape with
    every row empty; and the penalty ``L2(1 / p)`` (lambda n = 1: ``coef = v``).

    ``row_norm > 1`` exercises the scaling by ``max(1, ||x_j||)``: the update
    ``zeta_j x_j`` is still of norm C (``|zeta_j| = C / row_norm``)."""
    from sparsedp.penalties import L2
    X, X_removed, y = dp_sgd_datasets(p)
    return row_norm * X, X_removed, y, L2(1.0 / p)


@functools.lru_cache(maxsize=None)
def dp_scd_samples(n_samples, seed, bug=None, path="lazy", rate=1.0, epsilon=SCD_EPSILON,
                   steps=1, sampling="poisson", row_norm=1.0):
    """One DP-SCD step's release of coordinate j of v: ``coef_j`` (p = 1024 per fit).

    ``rate``: the Poisson rate ``B / n`` (``passes = steps rate``; below 1 each row
    is sampled on its own: coordinate j is one Poisson-subsampled Gaussian release,
    claimed by the PLD accountant); ``epsilon``: the fit's budget (at DELTA), from
    which dp_scd calibrates z.

    ``steps > 1`` (rate 1): v after ``steps`` steps.  On D every coordinate is read
    (caught up) and moved by C at every step; on D' no coordinate is ever read, so
    its whole noise is one lazy catch-up of ``steps`` walk steps at the end.  v_j is
    the sum of the releases, a sufficient statistic: exactly the T-fold Gaussian
    composition (claimed at ``mu = sqrt(T) / z``).

    ``row_norm``: rows ``row_norm e_j`` (above 1: the update scaled by the row's
    norm as well, ``|zeta_j| ||x_j|| = C``).

    ``path="lazy_noise_alpha"``: claimed at the Gaussian of multiplier ``sqrt(2) z``,
    the noise the variant puts on v (z is what the ledger accounts).

    ``sampling="fixed"`` (replace-one, batch n: every row): D' has the same rows
    with the labels ``-L`` (updates ``-C`` against ``+C``, sensitivity 2C, noise
    ``2 z C``), claimed at the exact Gaussian's epsilon of the run's z (calibrated
    by the RDP of sampling without replacement, which is looser).
    """
    import time
    from sparsedp.solvers import dp_scd
    t0 = time.perf_counter()
    lazy, noise_alpha = SCD_PATHS[path]
    X, X_removed, y, penalty = dp_scd_datasets(row_norm=row_norm)
    n = X.shape[0]
    lam_n = penalty.alpha * n
    assert lam_n == 1.0
    batch = max(1, int(round(rate * n)))
    pair = ((X, y), (X_removed, y)) if sampling == "poisson" else ((X, y), (X, -y))
    out, zs = [], []
    for stream, (Xd, yd) in enumerate(pair):
        rng = _fit_stream(seed, stream)
        chunks, count = [], 0
        with variant(bug):
            while count < n_samples:
                res = dp_scd(Xd, yd, Squared(), penalty, epsilon=epsilon, delta=DELTA,
                             passes=steps * batch / n, clip=C_J, batch_size=batch,
                             sampling=sampling, lazy=lazy, noise_alpha=noise_alpha,
                             random_state=rng)
                if (res.n_iter != steps or res.info["lazy"] != lazy
                        or res.info["noise_alpha"] != noise_alpha):
                    raise RuntimeError(f"dp_scd did not run {steps} {path} steps: "
                                       f"{res.n_iter} steps, info {res.info}")
                chunks.append(res.coef * lam_n)
                count += n
        zs.append(res.info["noise_multiplier"])
        out.append(np.concatenate(chunks)[:n_samples])
    z = max(zs) * (math.sqrt(2.0) if noise_alpha else 1.0)  # the noise on v
    q = batch / n
    claim = epsilon
    if noise_alpha:  # the noise sqrt(2) z_min on v, z_min the least the budget allows
        if q != 1.0 or sampling != "poisson":
            raise NotImplementedError("noise_alpha is audited at rate 1 only")
        claim = oracles.gdp_epsilon(oracles.gdp_mu(epsilon, DELTA) / math.sqrt(2.0), DELTA)
    what = "release of v" if steps == 1 else f"v after {steps} steps"
    return Samples(out[0], out[1], claim, DELTA,
                   f"DP-SCD {what} ({path}, Gaussian, z = {z:.4g} for the budget "
                   f"({epsilon:g}, {DELTA:g}), "
                   f"{'rate 1' if q == 1.0 else f'Poisson rate {q:g}'}, {sampling} sampling, "
                   f"rows of norm {row_norm:g}, {n} releases per fit)",
                   time.perf_counter() - t0)
