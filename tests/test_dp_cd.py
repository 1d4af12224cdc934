"""DP-CD: against the exact solver, an independent reference implementation, the
noise law it was calibrated for, and the clipped gradient's sensitivity."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from problems import make_sparse_problem, read_only_csc
from sparsedp._kernels import kernel_id
from sparsedp._kernels._dp_cd_fast import CoordinateBlocks, RandomStreams, dp_cd_steps
from sparsedp.datafits import Logistic, Squared
from sparsedp.exceptions import PrivacyLeakWarning
from sparsedp.penalties import L1, L2, ElasticNet
from sparsedp.privacy import calibrate_gaussian, gaussian_epsilon
from sparsedp.random import NOISE_ETA, IntegerNoise, float_sum_factor
from sparsedp.solvers import NonPrivateDiagnostics, dp_cd, exact, objective

SQUARED = kernel_id(Squared())  # the loss id of the kernels' direct calls

CASES = [
    (Squared(), L1(0.02), False),
    (Squared(), ElasticNet(0.02, 0.5), False),
    (Logistic(), L1(0.01), True),
    (Logistic(), L2(0.01), True),
]

BATCH = 256  # coordinates drawn at a time: integers(0, p, 256) (RandomStreams)


def coordinates_of_steps(p, selection, seed, count):
    """The coordinates of ``count`` kernel steps with RandomStreams(p, default_rng(seed),
    ..., selection), each read off the run: on X = I (one nonzero per column, large
    labels, step 1e-3) every step moves exactly its coordinate."""
    X = sp.identity(p, format="csc")
    y = 1e3 + np.arange(p, dtype=np.float64)
    blocks = CoordinateBlocks(X, np.full(p, 1e-3), np.full(p, np.inf), np.zeros(p))
    margin = np.zeros(p)
    deriv = Squared().derivative(margin, y)
    streams = RandomStreams(p, np.random.default_rng(seed), np.random.default_rng(0),
                            selection=selection)
    out, before = np.empty(count, dtype=np.int64), blocks.get_theta()
    for k in range(count):
        dp_cd_steps(SQUARED, blocks, y, margin, deriv, "none", 0.0, 0.0, False, k, 1, 0.0,
                    0.0, streams)
        after = blocks.get_theta()
        (moved,) = np.flatnonzero(after != before)
        out[k], before = moved, after
    return out


def noisy_streams(p, sd):
    """Streams (seeds 0 and 1) and the grid per clip of releases with integer Gaussian
    noise of standard deviation ``sd`` clips: ``(streams, grid_per_clip, inverse)``."""
    grid = 2.0 ** -13
    streams = RandomStreams(p, np.random.default_rng(0), np.random.default_rng(1),
                            noise=IntegerNoise("gaussian", sd / grid))
    return streams, grid, 1.0 / grid


def fisher_yates(rng, p):
    """arange(p) shuffled by swapping i with integers(0, i + 1), i = p - 1 .. 1."""
    perm = np.arange(p)
    for i in range(p - 1, 0, -1):
        j = rng.integers(0, i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def reference_dp_cd(X, y, datafit, penalty, M, clip, info, step_size, T, K, seed,
                    averaging=True, order="uniform"):
    """Naive DP-CD (dense numpy, O(p) average per step) on the same random streams.

    The release: the clipped sum over the column's nonzeros (in CSC order) on the
    grid g_j = 2 C_j rho / S plus g_j K, K from the integer law of sd z S.
    """
    # dp_cd's streams: SFC64 generators seeded by entropy drawn from default_rng(seed)
    rng_index, rng_noise = (
        np.random.Generator(np.random.SFC64(np.random.SeedSequence(entropy)))
        for entropy in np.random.default_rng(seed).integers(0, 2**63, size=(2, 4)))
    n_steps = T * K
    if order == "uniform":
        coordinates = rng_index.integers(0, X.shape[1], size=-(-n_steps // BATCH) * BATCH)
    else:  # passes over fresh permutations
        coordinates = np.concatenate([fisher_yates(rng_index, X.shape[1])
                                      for _ in range(-(-n_steps // X.shape[1]))])
    z, points = info["noise_multiplier"], info["grid_points"]
    draws = IntegerNoise("gaussian", z * points).draw(rng_noise, n_steps)
    grid_per_clip = 2.0 * info["float_sum_factor"] / points
    Xc = X.tocsc()
    X = X.toarray()
    n, p = X.shape
    C = np.sqrt(M / M.sum()) * clip
    w = np.zeros(p)
    for _ in range(T):
        theta = w.copy()
        iterates = []
        for _ in range(K):
            j, coordinates = int(coordinates[0]), coordinates[1:]
            rows = Xc.indices[Xc.indptr[j]:Xc.indptr[j + 1]]
            terms = Xc.data[Xc.indptr[j]:Xc.indptr[j + 1]] * datafit.derivative(
                X[rows] @ theta, y[rows])
            G = 0.0
            for term in np.clip(terms, -C[j], C[j]):  # in CSC order, as the kernel
                G += term
            if C[j] > 0:
                inv = grid_per_clip ** -1 * (1.0 - 2.0 ** -50) / C[j]
                G = grid_per_clip * C[j] * (np.rint(G * inv) + draws[0])
                draws = draws[1:]
            g = G / n
            gamma = step_size / M[j]
            theta[j] = penalty.prox(np.array([theta[j] - gamma * g]), gamma)[0]
            iterates.append(theta.copy())
        w = np.mean(iterates, axis=0) if averaging else theta.copy()
    return w


@pytest.mark.parametrize("datafit,penalty,logistic", CASES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_noiseless_reaches_exact_solution(datafit, penalty, logistic, index_dtype):
    X, y = make_sparse_problem(n=80, p=30, logistic=logistic, index_dtype=index_dtype)
    ref = exact(X, y, datafit, penalty)
    M = datafit.smoothness(X)
    for kwargs in ({"averaging": False}, {"outer": 300}):
        res = dp_cd(X, y, datafit, penalty, epsilon=math.inf, delta=1e-5, passes=300,
                    clip=math.inf, smoothness=M, random_state=0, diagnostics=True,
                    **kwargs)
        F, F_star = res.diagnostics.objective, ref.diagnostics.objective
        assert abs(F - F_star) <= 1e-9 * F_star
        np.testing.assert_allclose(res.coef, ref.coef, atol=1e-6)


def test_averaged_convex_setting_converges_slowly_but_surely():
    """T = 1: the average of all iterates; its error decreases with the passes."""
    X, y = make_sparse_problem(n=80, p=30)
    ref = exact(X, y, Squared(), L1(0.02))
    M = Squared().smoothness(X)
    errs = [dp_cd(X, y, Squared(), L1(0.02), epsilon=math.inf, delta=1e-5, passes=k,
                  clip=math.inf, smoothness=M, random_state=0, diagnostics=True
                  ).diagnostics.objective / ref.diagnostics.objective - 1
            for k in (10, 100, 1000)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 0.01


@pytest.mark.parametrize("datafit,penalty,logistic", CASES)
@pytest.mark.parametrize("averaging,outer,order", [
    (True, 1, "uniform"), (True, 3, "uniform"), (False, 2, "uniform"),
    (True, 3, "shuffle"), (False, 1, "shuffle")])
def test_matches_naive_reference_on_the_same_random_stream(datafit, penalty, logistic,
                                                           averaging, outer, order):
    """Lazy averaging, incremental margins, clipping and coordinate selection equal a
    naive O(p) version (uniform: Generator.integers; shuffle: Generator.permutation)."""
    X, y = make_sparse_problem(n=50, p=12, logistic=logistic, seed=4)
    M = datafit.smoothness(X)
    clip, step, passes, seed = 0.5, 0.7, 6, 11
    res = dp_cd(X, y, datafit, penalty, epsilon=2.0, delta=1e-4, passes=passes,
                clip=clip, step_size=step, outer=outer, smoothness=M,
                averaging=averaging, order=order, random_state=seed)
    K = res.info["inner_steps"]
    assert K * outer == passes * 12
    ref = reference_dp_cd(X, y, datafit, penalty, M, clip, res.info,
                          step, outer, K, seed, averaging, order)
    np.testing.assert_allclose(res.coef, ref, rtol=1e-10, atol=1e-12)


def test_same_seed_same_result_different_seed_different_result():
    X, y = make_sparse_problem()
    M = Squared().smoothness(X)
    kw = dict(epsilon=1.0, delta=1e-5, passes=3, clip=1.0, smoothness=M)
    a = dp_cd(X, y, Squared(), L1(0.01), random_state=5, **kw).coef
    b = dp_cd(X, y, Squared(), L1(0.01), random_state=5, **kw).coef
    c = dp_cd(X, y, Squared(), L1(0.01), random_state=6, **kw).coef
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_streams_follow_the_generator_state():
    """The streams are seeded from the generator's own stream: the same state gives
    the same fit, whatever the generator's seed sequence; a generator that was
    jumped, advanced or used by a previous fit gives fresh noise."""
    X, y = make_sparse_problem()
    M = Squared().smoothness(X)
    kw = dict(epsilon=1.0, delta=1e-5, passes=3, clip=1.0, smoothness=M)

    def fit(random_state):
        return dp_cd(X, y, Squared(), L1(0.01), random_state=random_state, **kw).coef
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    first, second = fit(gen), fit(gen)
    assert not np.array_equal(first, second)  # gen moved on
    np.testing.assert_array_equal(first, fit(5))
    np.testing.assert_array_equal(first, fit(np.random.SeedSequence(5)))
    restored = np.random.Generator(np.random.PCG64())  # other seed sequence, same state
    restored.bit_generator.state = state
    np.testing.assert_array_equal(first, fit(restored))
    # same seed sequence, other states: other noise (no shared noise across fits)
    for other in (np.random.Generator(np.random.PCG64(5).jumped()),
                  np.random.Generator(np.random.PCG64(5).advance(1))):
        assert not np.array_equal(first, fit(other))
    legacy = np.random.Generator(np.random.RandomState(7)._bit_generator)
    np.testing.assert_array_equal(
        fit(legacy), fit(np.random.Generator(np.random.RandomState(7)._bit_generator)))


def test_noise_is_calibrated_exactly():
    """sigma_j = z * 2 C_j / n with z the exact GDP multiplier for T K releases."""
    X, y = make_sparse_problem(n=100, p=20)
    M = Squared().smoothness(X)
    res = dp_cd(X, y, Squared(), L1(0.01), epsilon=0.5, delta=1e-6, passes=4, outer=2,
                clip=3.0, smoothness=M, random_state=0)
    steps = 4 * 20
    z = res.info["noise_multiplier"]
    # the sampler's slack H = eta_max T K (sparsedp.random.NOISE_ETA) comes off first
    H = NOISE_ETA * steps
    assert z == calibrate_gaussian(0.5 - 2 * H, 1e-6 * math.exp(-H), steps)
    assert gaussian_epsilon(z, steps, 1e-6) <= 0.5
    assert gaussian_epsilon(z * (1 - 1e-6), steps, 1e-6) > 0.5  # tight
    C = np.sqrt(M / M.sum()) * 3.0
    np.testing.assert_allclose(res.info["clip_thresholds"], C, rtol=1e-14)
    rho = res.info["float_sum_factor"]  # the computed sum's sensitivity is 2 C_j rho
    assert 1 < rho < 1 + 1e-11
    np.testing.assert_allclose(res.info["noise_scales"], z * rho * 2 * C / 100, rtol=1e-14)
    np.testing.assert_allclose(res.info["grid"], rho * 2 * C / 100 / 1024, rtol=1e-14)
    assert res.privacy.epsilon <= 0.5 and res.privacy.private


def test_one_step_noise_has_the_calibrated_law():
    """p = 1, one step, no penalty: coef = -gamma (g + eta); eta ~ N(0, sigma^2)."""
    n = 40
    rng = np.random.default_rng(0)
    X = sp.csc_array(rng.standard_normal((n, 1)))
    y = rng.standard_normal(n)
    M = Squared().smoothness(X)
    clip, eps, delta = 0.8, 1.0, 1e-5
    g = np.clip(X.toarray()[:, 0] * Squared().derivative(np.zeros(n), y),
                -clip, clip).sum() / n
    sigma = calibrate_gaussian(eps, delta, 1) * 2 * clip / n
    eta = np.array([
        -dp_cd(X, y, Squared(), None, epsilon=eps, delta=delta, passes=1, clip=clip,
               smoothness=M, random_state=s).coef[0] * M[0] - g
        for s in range(4000)])
    # sample variance within 4 standard errors (sqrt(2/N) relative), mean within 4 s.e.
    assert abs(eta.var() / sigma**2 - 1) < 4 * math.sqrt(2 / eta.size)
    assert abs(eta.mean()) < 4 * sigma / math.sqrt(eta.size)
    assert stats.kstest(eta / sigma, "norm").pvalue > 1e-3


def test_each_coordinate_gets_its_own_noise_scale():
    """sigma_j = z 2 C_j / n with C_j = sqrt(M_j / tr M) C differing 10x between two
    coordinates: each one's noise has its own variance (the kernel computes sigma_j
    from the row's threshold).  Disjoint column supports keep the two gradients
    independent of the order; a shuffled pass updates each coordinate once."""
    n = 40
    rng = np.random.default_rng(1)
    X = np.zeros((n, 2))
    X[:20, 0] = rng.standard_normal(20)
    X[20:, 1] = rng.standard_normal(20)
    M = np.array([1.0, 100.0])  # public constants: C_1 = 10 C_0
    X, y = sp.csc_array(X), rng.standard_normal(n)
    clip, eps, delta = 2.0, 1.0, 1e-5
    C = np.sqrt(M / M.sum()) * clip
    g = np.clip(X.toarray() * Squared().derivative(np.zeros(n), y)[:, None],
                -C, C).sum(axis=0) / n
    sigma = calibrate_gaussian(eps, delta, 2) * 2 * C / n
    eta = np.array([
        -dp_cd(X, y, Squared(), None, epsilon=eps, delta=delta, passes=1, clip=clip,
               smoothness=M, order="shuffle", averaging=False,
               random_state=s).coef * M - g
        for s in range(3000)])
    for j in range(2):
        assert abs(eta[:, j].var() / sigma[j]**2 - 1) < 4 * math.sqrt(2 / len(eta))
        assert stats.kstest(eta[:, j] / sigma[j], "norm").pvalue > 1e-3


@pytest.mark.parametrize("datafit,logistic", [(Squared(), False), (Logistic(), True)])
def test_clipped_gradient_sensitivity_is_at_most_2C_over_n(datafit, logistic):
    """Between random replace-one neighbours (with extreme records), at random
    iterates, the kernel's clipped coordinate gradient moves by <= 2 C_j / n."""
    rng = np.random.default_rng(1)
    n, p = 30, 6
    C = rng.uniform(0.1, 2.0, size=p)
    worst = 0.0
    for trial in range(300):
        X, y = make_sparse_problem(n=n, p=p, density=0.5, seed=trial, logistic=logistic)
        Xd = X.toarray()
        Xn, yn = Xd.copy(), y.copy()
        i = rng.integers(n)
        Xn[i] = rng.standard_normal(p) * 10 ** rng.uniform(-2, 3)
        yn[i] = rng.choice([-1.0, 1.0]) if logistic else rng.standard_normal() * 100
        theta = rng.standard_normal(p)
        grads = []
        for A, b in ((Xd, y), (Xn, yn)):
            A = sp.csc_array(A)
            blocks = CoordinateBlocks(A, np.ones(p), C, theta)
            margin = A @ theta
            deriv = datafit.derivative(margin, b)
            gen = np.random.default_rng(trial)  # same coordinate on both sides
            dp_cd_steps(kernel_id(datafit), blocks, b, margin, deriv, "none", 0.0, 0.0, False,
                        0, 1, 0.0, 0.0, RandomStreams(p, gen, np.random.default_rng(0)))
            th = blocks.get_theta()
            j = int(np.random.default_rng(trial).integers(0, p, size=BATCH)[0])
            # gamma_j = 1, no penalty: theta_j moves by exactly -g_j
            grads.append((j, theta[j] - th[j]))
            # independent computation of the clipped gradient
            expect = np.clip(A.toarray()[:, j] * datafit.derivative(A @ theta, b),
                             -C[j], C[j]).sum() / n
            assert grads[-1][1] == pytest.approx(expect, rel=1e-12, abs=1e-15)
        (j, g1), (_, g2) = grads
        ratio = abs(g1 - g2) / (2 * C[j] / n)
        assert ratio <= 1 + 1e-12
        worst = max(worst, ratio)
    assert worst > 0.9  # the bound is nearly attained: the test can fail


def _censored_pvalue(draws, law, low, high):
    """Goodness of fit of draws to min(max(V, low), high), V of CDF ``law``.

    The atom at ``low`` by an exact binomial test of its mass ``law(low)``; the
    draws above it by Kolmogorov-Smirnov against V's law conditioned on
    (low, high) (no draw reaches ``high`` in these tests).  The smaller p-value.
    """
    at_floor = draws == low
    atom = stats.binomtest(int(at_floor.sum()), len(draws), float(law(low))).pvalue
    rest = draws[~at_floor]
    assert np.all(rest < high)
    lo, hi = law(low), law(high)
    ks = stats.kstest(rest, lambda t: (law(t) - lo) / (hi - lo)).pvalue
    return min(atom, ks)


def test_private_smoothness_is_laplace_with_the_right_scale():
    """DP-CD-P: clipped per-sample constants + Lap(p b_j / (n eps')), then raised to
    the noise scale and capped at b_j (post-processing)."""
    from sparsedp.solvers._smoothness import private_smoothness
    X, y = make_sparse_problem(n=200, p=5, density=0.8)
    bounds = np.full(5, 3.0)
    b = Squared().beta * bounds**2
    clipped = np.minimum(Squared().beta * X.toarray()**2, b).mean(axis=0)
    draws = np.array([private_smoothness(X, Squared(), 0.5, bounds,
                                         np.random.default_rng(s))[0]
                      for s in range(3000)])
    scale = 5 * b / (200 * 0.5) * float_sum_factor(200)  # the computed sums' sensitivity
    assert np.all((draws >= scale) & (draws <= b))
    assert np.all(np.mean(draws == scale, axis=0) > 0.05)  # the floor is reached
    # law: min(max(clipped_j + Lap(scale_j), scale_j), b_j); 10 p-values (5 columns,
    # atom and KS), each above 1e-4: a family-wise false-alarm rate of 1e-3
    for j in range(5):
        law = lambda t, j=j: stats.laplace.cdf(t, loc=clipped[j], scale=scale[j])  # noqa: E731
        assert _censored_pvalue(draws[:, j], law, scale[j], b[j]) > 1e-4
    # a twice-too-small scale is rejected (the test can fail)
    law = lambda t: stats.laplace.cdf(t, loc=clipped[0], scale=scale[0] / 2)  # noqa: E731
    assert _censored_pvalue(draws[:, 0], law, scale[0], b[0]) < 1e-6


def test_private_smoothness_gaussian_has_the_right_law():
    from sparsedp.solvers._smoothness import private_smoothness
    X, y = make_sparse_problem(n=200, p=5, density=0.8)
    bounds = np.full(5, 3.0)
    b = Squared().beta * bounds**2
    clipped = np.minimum(Squared().beta * X.toarray()**2, b).mean(axis=0)
    z = 1.5
    draws = np.array([private_smoothness(X, Squared(), None, bounds,
                                         np.random.default_rng(s), mechanism="gaussian",
                                         noise_multiplier=z)[0]
                      for s in range(3000)])
    sd = z * np.sqrt(5) * b / 200  # L2 sensitivity sqrt(p) b_j / n
    assert np.all((draws >= sd) & (draws <= b))
    for j in range(5):
        law = lambda t, j=j: stats.norm.cdf(t, clipped[j], sd[j])  # noqa: E731
        assert _censored_pvalue(draws[:, j], law, sd[j], b[j]) > 1e-3
    law = lambda t: stats.norm.cdf(t, clipped[0], sd[0] / 2)  # noqa: E731
    assert _censored_pvalue(draws[:, 0], law, sd[0], b[0]) < 1e-6


def test_private_smoothness_is_raised_to_its_noise_scale_and_capped():
    """A heavy-tailed feature with a loose public bound: the estimate is mostly
    noise; it is never below the noise scale (a step at most 1/scale) nor above b_j."""
    from sparsedp.solvers._smoothness import private_smoothness
    rng = np.random.default_rng(0)
    n = 1000
    X = sp.csc_array(np.c_[rng.standard_normal(n), rng.standard_normal(n) * 0.01])
    bounds = np.array([50.0, 50.0])  # far above both features' values
    M, scale, eta = private_smoothness(X, Squared(), 1.0, bounds, rng)
    b = Squared().beta * bounds**2
    np.testing.assert_allclose(scale, 2 * b / n * float_sum_factor(n), rtol=1e-15)
    assert 0 < eta <= NOISE_ETA
    assert np.all(M >= scale) and np.all(M <= b)
    draws = np.array([private_smoothness(X, Squared(), 1.0, bounds,
                                         np.random.default_rng(s))[0] for s in range(400)])
    # true M_1 = 2e-4, scale 10: at least half the draws sit at the floor
    assert np.mean(draws[:, 1] == scale[1]) > 0.45


@pytest.mark.parametrize("fraction", [0.1, 0.5])
def test_dp_cd_p_gaussian_splits_the_gdp_budget_exactly(fraction):
    X, y = make_sparse_problem(n=200, p=10)
    res = dp_cd(X, y, Squared(), L1(0.01), epsilon=1.0, delta=1e-5, passes=2,
                clip=1.0, smoothness=fraction, feature_bounds=5.0,
                smoothness_mechanism="gaussian", random_state=0)
    assert res.privacy.private
    eps = res.privacy.epsilon
    assert 1.0 - 1e-6 < eps <= 1.0 + 1e-9, eps
    # independent: mu_total^2 = 1/z_M^2 + K/z^2 with K = 20 releases
    z = res.info["noise_multiplier"]
    z_m = [e.noise_multiplier for e in res.privacy.entries if "smoothness" in e.name][0]
    mu = math.sqrt(1 / z_m**2 + 20 / z**2)
    assert mu == pytest.approx(1 / calibrate_gaussian(1.0, 1e-5, 1), rel=1e-9)
    assert 1 / z_m**2 == pytest.approx(fraction * mu**2, rel=1e-9)


def test_dp_cd_p_accounts_the_whole_budget():
    X, y = make_sparse_problem(n=200, p=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = dp_cd(X, y, Squared(), L1(0.01), epsilon=1.0, delta=1e-5, passes=2,
                    clip=1.0, smoothness=0.1, feature_bounds=5.0, random_state=0)
    assert res.privacy.private
    assert res.privacy.epsilon <= 1.0 + 1e-9
    assert res.privacy.epsilon > 0.99
    H = NOISE_ETA * (20 + 10)  # the sampler's slack (sparsedp.random.NOISE_ETA)
    assert res.info["noise_multiplier"] == calibrate_gaussian(
        0.9 * (1 - 2 * H), 1e-5 * math.exp(-H), 20)
    assert "laplace" in str(res.privacy) and "gaussian" in str(res.privacy)


def test_smoothness_from_data_warns_and_is_reported():
    X, y = make_sparse_problem()
    with warnings.catch_warnings():  # the default: a private estimate, no leak
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = dp_cd(X, y, Squared(), L1(0.01), epsilon=1.0, delta=1e-5, passes=1,
                    clip=1.0, random_state=0)
    assert res.privacy.private and res.privacy.epsilon <= 1.0
    with pytest.warns(PrivacyLeakWarning, match="smoothness constants"):
        res = dp_cd(X, y, Squared(), L1(0.01), epsilon=1.0, delta=1e-5, passes=1,
                    clip=1.0, smoothness="leak", random_state=0)
    assert not res.privacy.private and res.privacy.epsilon == math.inf
    assert "NOT PRIVATE, leaks: smoothness constants" in str(res.privacy)
    with warnings.catch_warnings():  # a fraction without feature bounds: a private bound
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = dp_cd(X, y, Squared(), L1(0.01), epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
                    smoothness=0.2, random_state=0)
    assert res.privacy.private and res.privacy.epsilon <= 1.0
    assert any(m.name.startswith("bound on |X_ij|") for m in res.privacy.entries)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        dp_cd(X, y, Squared(), L1(0.01), epsilon=math.inf, delta=1e-5, passes=1,
              clip=1.0, random_state=0)  # nothing private, nothing to warn about


def test_diagnostics_are_apart_from_the_private_output():
    """The trace and the objective are non-private diagnostics, not released:
    computed only on request, kept out of info and off the ledger; the private
    output is the same with or without them."""
    X, y = make_sparse_problem(n=60, p=20)
    kw = dict(epsilon=1.0, delta=1e-5, passes=2, clip=1.0, smoothness=np.ones(20),
              random_state=0)
    plain = dp_cd(X, y, Squared(), L1(0.01), **kw)
    assert plain.diagnostics is None
    assert "moves" not in plain.info
    for name in ("objective", "trace"):  # only under diagnostics, named as non-private
        assert not hasattr(plain, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PrivacyLeakWarning: nothing is released
        diag = dp_cd(X, y, Squared(), L1(0.01), diagnostics=True, **kw)
        traced = dp_cd(X, y, Squared(), L1(0.01), trace=True, **kw)
    for res in (diag, traced):
        assert res.privacy.private and "trace" not in str(res.privacy)
        assert res.privacy.epsilon == plain.privacy.epsilon <= 1.0
        np.testing.assert_array_equal(res.coef, plain.coef)
        d = res.diagnostics
        assert isinstance(d, NonPrivateDiagnostics)
        assert "non-private diagnostic: computed on the training data without privacy, " \
            "not covered by the privacy report" in repr(d)
        assert "non-private diagnostic" in d.__doc__.lower()
        assert d.objective == pytest.approx(objective(X, y, res.coef, Squared(), L1(0.01)),
                                            rel=1e-12)
        assert d["moves"] == d.counters["moves"] > 0
        assert not hasattr(res, "objective") and not hasattr(res, "trace")
    assert diag.diagnostics.trace is None and traced.diagnostics.trace is not None


def test_trace_records_the_objective_of_the_would_be_output():
    X, y = make_sparse_problem(n=60, p=20)
    M = Squared().smoothness(X)
    res = dp_cd(X, y, Squared(), L1(0.01), epsilon=math.inf, delta=1e-5, passes=6,
                outer=2, clip=math.inf, smoothness=M, random_state=0, trace=True,
                trace_every=1.5)
    tr = res.diagnostics.trace
    np.testing.assert_allclose(tr["passes"], [1.5, 3.0, 4.5, 6.0])
    assert tr["objective"][-1] == pytest.approx(res.diagnostics.objective, rel=1e-12)
    assert tr["objective"][-1] < tr["objective"][0]


@pytest.mark.parametrize("order", ["uniform", "shuffle"])
def test_a_run_split_into_calls_is_the_same_run(order):
    """Tracing splits the inner loop into kernel calls at points that are not
    batch boundaries; the coordinate ring and the noise buffer carry over, so the
    output is bit-identical to the unsplit run (and moves are counted the same)."""
    X, y = make_sparse_problem(n=80, p=700, density=0.05)
    M = Squared().smoothness(X) + 1e-3
    kw = dict(epsilon=1.0, delta=1e-5, passes=3.3, clip=1.0, smoothness=M,
              order=order, random_state=3)
    whole = dp_cd(X, y, Squared(), L1(1e-3), diagnostics=True, **kw)
    split = dp_cd(X, y, Squared(), L1(1e-3), trace=True, trace_every=0.37, **kw)
    assert len(split.diagnostics.trace["passes"]) == 9  # 8 splits inside the run
    assert whole.diagnostics["moves"] > 100
    np.testing.assert_array_equal(split.coef, whole.coef)
    assert split.diagnostics["moves"] == whole.diagnostics["moves"]


@pytest.mark.parametrize("kwargs,match", [
    ({"epsilon": 0.0}, "epsilon == 0.0, must be > 0"),
    ({"epsilon": -1.0}, "epsilon == -1.0, must be > 0"),
    ({"epsilon": float("nan")}, "epsilon must be a number, got nan"),
    ({"delta": 0.0}, "delta == 0.0, must be > 0"),
    ({"delta": 1.0}, "delta == 1.0, must be < 1"),
    ({"passes": 0}, "passes == 0.0, must be > 0"),
    ({"clip": -1.0}, "clip == -1.0, must be > 0"),
    ({"clip": math.inf}, "finite clip is required"),
    ({"step_size": 0.0}, "step_size == 0.0, must be > 0"),
    ({"outer": 0}, "outer == 0, must be >= 1"),
    ({"outer": 41}, "larger than the number of updates"),
    ({"order": "cyclic"}, "order must be one of"),
    ({"averaging": "no"}, None),
    ({"smoothness": "0.1"}, None),
    ({"smoothness": np.full(40, 1e-320)}, "step_size / smoothness overflows"),
    ({"smoothness": 1.5}, r"fraction of epsilon"),
    ({"smoothness": np.ones(3)}, r"shape \(40,\)"),
    ({"smoothness": -np.ones(40)}, "non-negative"),
    ({"smoothness": 0.1, "smoothness_mechanism": "exp"}, "smoothness_mechanism"),
])
def test_bad_arguments_raise_clear_errors(kwargs, match):
    X, y = make_sparse_problem()
    args = dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
                smoothness=np.ones(40), random_state=0)
    args.update(kwargs)
    with pytest.raises(ValueError if match else TypeError, match=match):
        dp_cd(X, y, Squared(), L1(0.01), **args)


def test_bad_data_raise_clear_errors():
    X, y = make_sparse_problem()
    kw = dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0, smoothness=np.ones(40))
    with pytest.raises(ValueError, match="labels"):
        dp_cd(X, y, Logistic(), None, **kw)
    with pytest.raises(ValueError):
        dp_cd(X, y[:-1], Squared(), None, **kw)
    Xn = X.copy()
    Xn.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN|nan|finite"):
        dp_cd(Xn, y, Squared(), None, **kw)


def test_shuffle_updates_every_coordinate_once_per_pass():
    """order='shuffle': after exactly one pass from 0 with no penalty and no noise,
    every coordinate with a nonzero gradient has moved."""
    X, y = make_sparse_problem(n=200, p=300, density=0.3)
    M = Squared().smoothness(X)
    moved = [np.count_nonzero(dp_cd(X, y, Squared(), None, epsilon=math.inf, delta=1e-5,
                                    passes=1, clip=math.inf, smoothness=M,
                                    averaging=False, order=sel,
                                    random_state=0).coef)
             for sel in ("shuffle", "uniform")]
    assert moved[0] == 300
    assert moved[1] < 300 * (1 - 0.25)  # uniform leaves about 1/e of them out


def test_uniform_coordinates_are_numpys_integers():
    """order='uniform' draws exactly Generator.integers(0, p, 256) batch after batch."""
    p = 1000
    got = coordinates_of_steps(p, "uniform", 7, 1000)
    expect = np.random.default_rng(7).integers(0, p, size=4 * BATCH)[:1000]
    np.testing.assert_array_equal(got, expect)


def test_shuffle_draws_uniform_permutations():
    """order='shuffle': every block of p coordinates is a permutation, and the
    6 permutations of 3 coordinates are equally likely (chi-square, 12,000 blocks);
    the coordinates are read off the kernel's steps."""
    blocks = coordinates_of_steps(3, "shuffle", 0, 3 * 12_000).reshape(-1, 3)
    assert np.all(np.sort(blocks, axis=1) == [0, 1, 2])
    codes = blocks[:, 0] * 3 + blocks[:, 1]  # the first two fix the permutation
    counts = np.unique(codes, return_counts=True)[1]
    assert len(counts) == 6
    assert stats.chisquare(counts).pvalue > 1e-3
    # larger p: blocks are permutations, and position 0 is uniform over coordinates
    blocks = coordinates_of_steps(50, "shuffle", 1, 50 * 1_000).reshape(-1, 50)
    assert np.all(np.sort(blocks, axis=1) == np.arange(50))
    assert stats.chisquare(np.bincount(blocks[:, 0], minlength=50)).pvalue > 1e-3


def test_kernel_rejects_mismatched_inputs():
    """The kernel's own checks: rows fit int32; streams, blocks, samples and average
    records agree."""
    class Huge:
        shape = (2**31, 1)
    with pytest.raises(ValueError, match="at most 2\\*\\*31 - 1 samples"):
        CoordinateBlocks(Huge(), np.ones(1), np.ones(1), np.zeros(1))
    X, y = make_sparse_problem(n=20, p=5)
    with pytest.raises(ValueError, match="clip_thresholds must have shape \\(5,\\)"):
        CoordinateBlocks(X, np.ones(5), np.ones(4), np.zeros(5))
    class Truncated:  # indptr promising more nonzeros than there are
        shape, data, indices, indptr = X.shape, X.data[:-1], X.indices[:-1], X.indptr
    with pytest.raises(ValueError, match="not a consistent CSC matrix"):
        CoordinateBlocks(Truncated(), np.ones(5), np.ones(5), np.zeros(5))
    blocks = CoordinateBlocks(X, np.ones(5), np.ones(5), np.zeros(5))
    margin, deriv = np.zeros(20), Squared().derivative(np.zeros(20), y)
    args = (0, blocks, y, margin, deriv, "none", 0.0, 0.0)
    with pytest.raises(ValueError, match="streams were made for 6 features"):
        dp_cd_steps(*args, False, 0, 1, 0.0, 0.0,
                    RandomStreams(6, np.random.default_rng(0), np.random.default_rng(1)))
    for short in range(3):  # y, margin or deriv one entry short
        arrays = [a[:19] if i == short else a for i, a in enumerate((y, margin, deriv))]
        with pytest.raises(ValueError, match="one entry per sample \\(20\\)"):
            dp_cd_steps(SQUARED, blocks, *arrays, "none", 0.0, 0.0, False, 0, 1, 0.0, 0.0,
                        RandomStreams(5, np.random.default_rng(0), np.random.default_rng(1)))
    with pytest.raises(TypeError):
        dp_cd_steps(SQUARED, None, y, margin, deriv, "none", 0.0, 0.0, False, 0, 1, 0.0, 0.0,
                    RandomStreams(5, np.random.default_rng(0), np.random.default_rng(1)))
    with pytest.raises(TypeError):
        dp_cd_steps(*args, False, 0, 1, 0.0, 0.0, None)


@pytest.mark.parametrize("n, narrow_rows, row_size", [
    (50, None, 10), (50, False, 12), (65_536, None, 10), (65_537, None, 12)])
def test_coordinate_blocks_hold_columns_and_theta(n, narrow_rows, row_size):
    """Each block holds its parameters, theta and exactly its column's nonzeros
    (empty and long columns included, rows up to n - 1), 8-byte aligned; rows are
    uint16 when n <= 65,536 unless asked otherwise."""
    rng = np.random.default_rng(3)
    X = sp.random(n, 40, density=min(0.2, 500 / n), format="csc", rng=rng)
    last_row = sp.csc_array(([1.5], ([n - 1], [0])), shape=(n, 1))  # the highest row
    X = sp.csc_array(sp.hstack([X, sp.csc_array((n, 1)), last_row,
                                sp.csc_array(rng.standard_normal((n, 1)))]).tocsc())
    X.sort_indices()
    p = X.shape[1]
    steps, clips, theta = rng.random(p), rng.random(p), rng.standard_normal(p)
    blocks = CoordinateBlocks(X, steps, clips, theta, narrow_rows=narrow_rows)
    assert blocks.narrow_rows == (row_size == 10)
    np.testing.assert_array_equal(blocks.get_theta(), theta)
    blocks.set_theta(-theta)
    np.testing.assert_array_equal(blocks.get_theta(), -theta)
    blocks.set_theta(theta)
    # what the blocks hold, seen through the kernel: each noiseless step on j (seed
    # 5's integers) moves theta_j by -step_j times the clipped gradient of column j
    # and the margins by exactly delta X_ij at its rows
    y = rng.standard_normal(n) * 3
    margin = X @ theta
    deriv = Squared().derivative(margin, y)
    streams = RandomStreams(p, np.random.default_rng(5), np.random.default_rng(0))
    order = np.random.default_rng(5).integers(0, p, size=2 * BATCH)
    for k in range(3 * p):
        j = int(order[k])
        before, m_before = blocks.get_theta(), margin.copy()
        col = slice(X.indptr[j], X.indptr[j + 1])
        rows, values = X.indices[col], X.data[col]
        grad = np.clip(values * deriv[rows], -clips[j], clips[j]).sum() / n
        dp_cd_steps(SQUARED, blocks, y, margin, deriv, "none", 0.0, 0.0, False, k, 1, 0.0,
                    0.0, streams)
        after = blocks.get_theta()
        assert np.array_equal(np.flatnonzero(after != before), [j] if grad else [])
        assert after[j] == pytest.approx(before[j] - steps[j] * grad, rel=1e-14)
        expect = m_before.copy()
        expect[rows] += (after[j] - before[j]) * values
        np.testing.assert_array_equal(margin, expect)
    assert set(order[:3 * p].tolist()) >= {p - 3, p - 2, p - 1}  # empty, last row, dense


def test_narrow_rows_refuse_more_than_65536_samples():
    X = sp.csc_array(([1.0], ([65_536], [0])), shape=(65_537, 1))
    with pytest.raises(ValueError, match="narrow_rows holds at most 65536 samples"):
        CoordinateBlocks(X, np.ones(1), np.ones(1), np.zeros(1), narrow_rows=True)


@pytest.mark.parametrize("logistic", [False, True])
def test_narrow_and_wide_rows_run_the_same_steps(logistic):
    """The two row widths are one kernel: bit-identical iterates, margins,
    derivative caches and averages after noisy moving steps."""
    datafit = Logistic() if logistic else Squared()
    X, y = make_sparse_problem(n=300, p=40, density=0.1, seed=4, logistic=logistic)
    p = X.shape[1]
    M = datafit.smoothness(X)
    C = np.sqrt(M / M.sum())
    runs = []
    for narrow in (True, False):
        blocks = CoordinateBlocks(X, 1.0 / M, C, np.zeros(p), narrow_rows=narrow)
        margin = np.zeros(300)
        deriv = datafit.derivative(margin, y)
        streams, grid, inv = noisy_streams(p, 2.0)
        moves = dp_cd_steps(kernel_id(datafit), blocks, y, margin, deriv, "grid", grid, inv, True,
                            0, 5 * p, 1e-3, 0.0, streams)
        runs.append((moves, blocks.get_theta(), margin, deriv, blocks.get_average(5 * p)))
    (m1, *a), (m2, *b) = runs
    assert m1 == m2 > p
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_restart_is_set_theta_then_reset_average():
    """restart(theta), one walk, leaves the blocks as set_theta(theta) then
    reset_average() do (the same steps after it: the same iterates and averages, bit
    for bit); a fresh instance starts as after restart(start)."""
    X, y = make_sparse_problem(n=40, p=7, density=0.5, seed=3)
    p = X.shape[1]
    M = Squared().smoothness(X)
    start, theta = np.linspace(-0.5, 0.5, p), np.linspace(1, -1, p)
    runs = []
    for how in ("two calls", "restart"):
        blocks = CoordinateBlocks(X, 1.0 / M, np.full(p, 0.5), start)
        streams, grid, inv = noisy_streams(p, 2.0)
        seen = [blocks.get_theta()]
        for period, w in enumerate((start, theta)):
            if period and how == "restart":
                blocks.restart(w)
            elif period:
                blocks.set_theta(w)
                blocks.reset_average()
            margin = X @ w
            deriv = Squared().derivative(margin, y)
            dp_cd_steps(SQUARED, blocks, y, margin, deriv, "grid", grid, inv, True, 0, 20,
                        0.05, 0.0, streams)
            seen += [blocks.get_theta(), blocks.get_average(20)]
        runs.append(seen)
    for u, v in zip(*runs):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(runs[0][1], start)  # the steps did move
    np.testing.assert_array_equal(runs[0][0], start)
    with pytest.raises(ValueError, match="theta must have shape"):
        blocks.restart(np.zeros(p + 1))


@pytest.mark.parametrize("logistic", [False, True])
@pytest.mark.parametrize("scaling", [None, 1.0])
def test_a_binary_matrix_runs_the_same_steps_on_rows_alone(logistic, scaling):
    """Where every value of X is 1 (and the intercept's column, if any), the blocks
    hold the rows alone (``ones``): the same iterates, margins, derivative caches,
    averages and restart margins, bit for bit, as the (value, row) records, with
    both row widths."""
    datafit = Logistic() if logistic else Squared()
    X, y = make_sparse_problem(n=300, p=40, density=0.1, seed=4, logistic=logistic)
    X = sp.csc_array(X)
    X.data[:] = 1.0
    p = X.shape[1] + (scaling is not None)
    A = X if scaling is None else sp.hstack([X, sp.csc_array(np.ones((300, 1)))]).tocsc()
    M = datafit.smoothness(A)
    C = np.sqrt(M / M.sum())
    w = np.random.default_rng(1).normal(size=p)
    runs = []
    for narrow in (True, False):
        for ones in (None, False):
            blocks = CoordinateBlocks(X, 1.0 / M, C, np.zeros(p), narrow_rows=narrow,
                                      intercept_scaling=scaling, ones=ones)
            assert blocks.ones == (ones is None)
            margin = np.zeros(300)
            deriv = datafit.derivative(margin, y)
            streams, grid, inv = noisy_streams(p, 2.0)
            moves = dp_cd_steps(kernel_id(datafit), blocks, y, margin, deriv, "grid", grid,
                                inv, True, 0, 5 * p, 1e-3, 0.0, streams)
            state = [blocks.get_theta(), margin.copy(), deriv, blocks.get_average(5 * p)]
            restarted = np.empty(300)
            blocks.restart(w, restarted)
            runs.append((moves, *state, restarted))
    first = runs[0]
    assert first[0] > p
    np.testing.assert_array_equal(first[-1], A @ w)
    for run in runs[1:]:
        assert run[0] == first[0]
        for u, v in zip(run[1:], first[1:]):
            np.testing.assert_array_equal(u, v)


def test_rows_alone_only_where_every_value_is_one():
    """A value other than 1, or an intercept column of another scaling, keeps the
    (value, row) records; asking for rows alone there is an error; a kept layout
    (read-only X) is reused with its records."""
    X = sp.csc_array(sp.random(20, 6, density=0.5, format="csc",
                               rng=np.random.default_rng(0), data_rvs=np.ones))
    args = (np.ones(6), np.ones(6), np.zeros(6))
    assert CoordinateBlocks(X, *args).ones
    assert not CoordinateBlocks(X, *args, ones=False).ones
    args7 = (np.ones(7), np.ones(7), np.zeros(7))
    assert CoordinateBlocks(X, *args7, intercept_scaling=1.0).ones
    assert not CoordinateBlocks(X, *args7, intercept_scaling=2.0).ones
    with pytest.raises(ValueError, match="ones=True needs every stored value of X to be 1"):
        CoordinateBlocks(X, *args7, intercept_scaling=2.0, ones=True)
    frozen, _ = read_only_csc(X)  # a kept layout keeps its records
    CoordinateBlocks(frozen, *args).release()
    again = CoordinateBlocks(frozen, *args)
    assert again.reused and again.ones
    X.data[3] = 2.0
    assert not CoordinateBlocks(X, *args).ones
    with pytest.raises(ValueError, match="ones=True needs every stored value of X to be 1"):
        CoordinateBlocks(X, *args, ones=True)


@pytest.mark.parametrize("n, narrow, scaling", [(40, None, None), (70_000, None, None),
                                                (60, False, 1.5), (60, True, 0.7)])
def test_restart_computes_the_margin_scipy_computes(n, narrow, scaling):
    """restart(theta, margin) writes [X, s 1] @ theta into margin, bit for bit the
    values of scipy's product (and of Problem.margin: the intercept's term last),
    with zero and negative-zero weights skipped; rows beyond 2**16 (wide records)
    and both record widths; a wrong margin array is a ValueError."""
    rng = np.random.default_rng(n)
    X = sp.random(n, 25, density=0.3, format="csc", rng=rng, data_rvs=rng.standard_normal)
    X.sort_indices()
    p = 25 + (scaling is not None)
    blocks = CoordinateBlocks(X, np.ones(p), np.ones(p), np.zeros(p), narrow_rows=narrow,
                              intercept_scaling=scaling)
    w = rng.normal(size=p)
    w[rng.random(p) < 0.3] = 0.0
    w[2] = -0.0
    margin = np.full(n, np.nan)
    blocks.restart(w, margin)
    expected = X @ (w if scaling is None else w[:-1])
    if scaling is not None:
        expected += scaling * w[-1]
    np.testing.assert_array_equal(margin, expected)
    assert not np.signbit(margin[margin == 0.0]).any()  # +0.0, as scipy's
    np.testing.assert_array_equal(blocks.get_theta(), w)
    for bad in (np.empty(n + 1), np.empty(n, dtype=np.float32), np.empty((n, 1))):
        with pytest.raises(ValueError, match="margin must be"):
            blocks.restart(w, bad)


def test_lazy_average_in_the_headers_equals_the_naive_average():
    """get_average(k) is the mean of the iterates after steps 1..k (one step per
    call, theta recorded after each), also after reset_average and across calls;
    averaging=False leaves the running sums untouched."""
    X, y = make_sparse_problem(n=40, p=7, density=0.5, seed=2)
    p = X.shape[1]
    M = Squared().smoothness(X)
    blocks = CoordinateBlocks(X, 1.0 / M, np.full(p, 0.5), np.zeros(p))
    margin = np.zeros(40)
    deriv = Squared().derivative(margin, y)
    streams, grid, inv = noisy_streams(p, 2.0)
    for start in (np.zeros(p), np.linspace(-1, 1, p)):  # two outer iterations
        blocks.set_theta(start)
        margin[:] = X @ start
        deriv[:] = Squared().derivative(margin, y)
        blocks.reset_average()
        iterates = []
        for k in range(60):
            dp_cd_steps(SQUARED, blocks, y, margin, deriv, "grid", grid, inv, True, k, 1, 0.05,
                        0.0, streams)
            iterates.append(blocks.get_theta())
            if k % 7 == 6:
                np.testing.assert_allclose(blocks.get_average(k + 1),
                                           np.mean(iterates, axis=0), rtol=1e-12, atol=1e-15)
        assert len({tuple(t) for t in iterates}) > 10  # the iterates did move

    averaged = blocks.get_average(60)
    dp_cd_steps(SQUARED, blocks, y, margin, deriv, "grid", grid, inv, False, 60, 50, 0.05, 0.0,
                streams)
    assert not np.array_equal(blocks.get_theta(), iterates[-1])
    blocks.set_theta(iterates[-1])  # the running sums untouched: the same average
    np.testing.assert_array_equal(blocks.get_average(60), averaged)
    with pytest.raises(ValueError, match="k must be >= 1"):
        blocks.get_average(0)
    # an average up to an iterate before the last recorded move cannot be formed
    blocks.reset_average()
    iterates = [blocks.get_theta()]
    for k in range(30):
        dp_cd_steps(SQUARED, blocks, y, margin, deriv, "grid", grid, inv, True, k, 1, 0.05,
                    0.0, streams)
        iterates.append(blocks.get_theta())
    # the last step that moved (0-based k) recorded iterate k + 1
    last = 1 + max(k for k in range(30) if not np.array_equal(iterates[k + 1], iterates[k]))
    assert last > 2
    blocks.get_average(last - 1)
    with pytest.raises(ValueError, match="before the last recorded move"):
        blocks.get_average(last - 2)


def kernel_sigmoid(t):
    """``(t', 1 / (1 + exp(t')))`` from the kernel's logistic derivative cache, t' ~ t.

    One noiseless step on a column of ones (labels 1, clip inf, step 1, the cache
    set to -1 so the gradient is -n / n) moves theta by delta ~ 1 and every margin
    from ``t - delta`` to t'; the kernel then refreshes ``deriv_i = -sigmoid(-t'_i)``
    with its vectorised loop, CHUNK (128) rows at a time."""
    t = np.asarray(t, dtype=np.float64)
    n = t.size
    X = sp.csc_array((np.ones(n), np.arange(n), [0, n]), shape=(n, 1))
    delta = float(n) * (1.0 / n)  # the step: -(-n * (1 / n)) in the kernel's arithmetic
    margin = t - delta
    deriv = np.full(n, -1.0)
    blocks = CoordinateBlocks(X, np.ones(1), np.full(1, np.inf), np.zeros(1))
    dp_cd_steps(kernel_id(Logistic()), blocks, np.ones(n), margin, deriv, "none", 0.0, 0.0,
                False, 0, 1, 0.0, 0.0,
                RandomStreams(1, np.random.default_rng(0), np.random.default_rng(0)))
    assert blocks.get_theta()[0] == delta
    return margin, -deriv


def test_sigmoid_loop_against_extended_precision():
    """The vectorised loop behind the logistic derivative cache: 1 / (1 + exp(t))
    within 2 ulp of an 80-bit computation for |t| < 700, exactly 0 / 1 beyond
    (as ``loss_derivative``), 1/2 at 0; read off the kernel's derivative cache."""
    t = np.concatenate([np.linspace(-710, 710, 1_000_001),
                        np.random.default_rng(0).standard_normal(100_000) * 5])
    if np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps:
        pytest.skip("no extended precision long double on this platform")
    t, got = kernel_sigmoid(t)
    inside = np.abs(t) < 700
    ref = 1 / (1 + np.exp(t[inside].astype(np.longdouble)))
    rel = np.abs((got[inside] - ref) / ref).astype(np.float64)
    assert rel.max() <= 2 * np.finfo(np.float64).eps
    assert np.all(got[t >= 700] == 0.0) and np.all(got[t <= -700] == 1.0)
    t, got = kernel_sigmoid(np.array([0.0, 700.0, np.inf, -np.inf]))
    np.testing.assert_array_equal(t, [0.0, 700.0, np.inf, -np.inf])
    np.testing.assert_array_equal(got, [0.5, 0.0, 0.0, 1.0])


def test_sigmoid_loop_is_the_same_ieee_computation_on_every_cpu():
    """Bit for bit the same operations done one at a time by numpy (IEEE double,
    no fused multiply-add): whichever copy of the loop the CPU gets (an AVX2
    copy where it has AVX2, SSE2 otherwise), fits do not depend on the machine."""
    rng = np.random.default_rng(1)
    t = np.concatenate([rng.standard_normal(200_000) * 10, rng.uniform(-720, 720, 50_000),
                        [0.0, -0.0, 699.9999, 700.0, -700.0, 1e-300, -1e-300]])
    t = t[rng.permutation(t.size)][:250_003]  # an odd length: the loops' tails too
    t, got = kernel_sigmoid(t)  # the kernel's margins (t - delta + delta) and its values
    a = np.minimum(np.abs(t), 700.0)
    shifter = 6755399441055744.0
    ks = -a * 1.4426950408889634 + shifter
    kd = ks - shifter
    r = (-a - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10
    # exp(r) = 1 + (r + r^2 P(r)), P (degree 11, coefficients 1/k!, k = 2..13) by
    # Estrin's scheme: pairs a_i = c_2i + c_2i+1 r, then pairs in r^2, then r^4, r^8
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    a = [1.0 / math.factorial(k) + r * (1.0 / math.factorial(k + 1)) for k in range(2, 14, 2)]
    b = [a[0] + a[1] * r2, a[2] + a[3] * r2, a[4] + a[5] * r2]
    poly = 1.0 + (r + r2 * ((b[0] + b[1] * r4) + b[2] * r8))
    scale = ((ks.view(np.uint64) << np.uint64(52)) + (np.uint64(1023) << np.uint64(52)))
    e = np.where(np.abs(t) < 700.0, poly * scale.view(np.float64), 0.0)
    inv = 1.0 / (1.0 + e)
    ref = np.where(t > 0.0, e * inv, inv)
    np.testing.assert_array_equal(got.view(np.uint64), ref.view(np.uint64))


def test_logistic_derivative_cache_after_moving_steps():
    """After noisy moving steps on columns longer than the kernel's chunk (128
    nonzeros) the logistic derivative cache equals loss'(margin) computed
    independently (within 4 ulp), and the margin equals X theta."""
    X, y = make_sparse_problem(n=1000, p=30, density=0.4, seed=7, logistic=True)
    assert np.diff(X.indptr).min() > 2 * 128
    p = X.shape[1]
    M = Logistic().smoothness(X)
    blocks = CoordinateBlocks(X, 2.0 / M, np.sqrt(M / M.sum()), np.zeros(p))
    margin = np.zeros(1000)
    deriv = Logistic().derivative(margin, y)
    streams, grid, inv = noisy_streams(p, 10.0)
    moves = dp_cd_steps(kernel_id(Logistic()), blocks, y, margin, deriv, "grid", grid, inv, False,
                        0, 20 * p, 0.0, 0.0, streams)
    assert moves == 20 * p
    np.testing.assert_allclose(margin, X @ blocks.get_theta(), rtol=1e-12, atol=1e-12)
    assert np.abs(y * margin).max() > 5  # the exponentials are not all near 1
    np.testing.assert_allclose(deriv, Logistic().derivative(margin, y),
                               rtol=4 * np.finfo(np.float64).eps, atol=0)


def test_blocks_of_an_immutable_matrix_are_packed_once():
    """A released CoordinateBlocks' layout is kept for the next one on the same
    read-only X and layout (``reused``), never for a writeable X, a read-only view
    of writeable arrays, another intercept or another row width; the kept layout
    gets the new instance's constants; a released instance refuses to be used."""
    from sparsedp._kernels import _dp_cd_fast
    X, _ = make_sparse_problem(30, 25, density=0.2, seed=4)
    X = sp.csc_array(X)
    frozen = read_only_csc(X)[0]
    p = 25
    rng = np.random.default_rng(0)

    def blocks(A, **kw):
        n_features = p + (kw.get("intercept_scaling") is not None)
        theta = rng.standard_normal(n_features)
        b = CoordinateBlocks(A, rng.random(n_features), rng.random(n_features), theta, **kw)
        np.testing.assert_array_equal(b.get_theta(), theta)
        return b

    first = blocks(frozen)
    assert not first.reused
    first.release()
    with pytest.raises(ValueError, match="released"):
        first.get_theta()
    with pytest.raises(ValueError, match="released"):
        dp_cd_steps(0, first, np.zeros(30), np.zeros(30), np.zeros(30), "none", 0.0, 0.0,
                    False, 0, 1, 0.0, 0.0, RandomStreams(p, np.random.default_rng(0),
                                                         np.random.default_rng(1)))
    first.release()  # twice: nothing
    # the same arrays through another matrix object: reused (and taken: a second
    # instance alive at the same time packs its own)
    same = sp.csc_array((frozen.data, frozen.indices, frozen.indptr), shape=X.shape)
    second, third = blocks(same), blocks(frozen)
    assert second.reused and not third.reused
    second.release()
    third.release()
    for other in (dict(intercept_scaling=2.0), dict(narrow_rows=False), dict(ones=False)):
        b = blocks(frozen, **other)
        assert not b.reused
        b.release()
        b = blocks(frozen, **other)
        assert b.reused
        b.release()
    for A in (X, read_only_csc(X, own=False)[0]):
        blocks(A).release()
        assert not blocks(A).reused
    assert len(_dp_cd_fast._FREE_BLOCKS) <= _dp_cd_fast.BLOCKS_KEPT


@pytest.mark.parametrize("intercept", [False, True])
def test_fit_on_kept_blocks_is_the_fit_on_fresh_ones(intercept):
    """DP-CD on a read-only X (blocks packed once, reused with each fit's own step
    sizes, thresholds and start) gives the fits it gives on a writeable copy
    (blocks packed afresh), same seeds, bit for bit."""
    X, y = make_sparse_problem(60, 40, density=0.2, seed=7)
    X = sp.csc_array(X)
    frozen, _ = read_only_csc(X)
    for seed, clip, step in ((0, 1.0, 1.0), (1, 0.1, 0.5), (2, 10.0, 2.0)):
        fits = [dp_cd(A, y, Squared(), L1(1e-2), epsilon=1.0, delta=1e-5, passes=3,
                      clip=clip, step_size=step, smoothness=np.full(40, 0.3),
                      fit_intercept=intercept, random_state=seed)
                for A in (X, frozen, frozen)]
        for res in fits[1:]:
            np.testing.assert_array_equal(res.coef, fits[0].coef)
            assert res.intercept == fits[0].intercept


def test_kept_blocks_go_with_their_matrix():
    """The layout kept for a read-only X is dropped as soon as X's arrays are
    (no 100 MB buffer outliving the sweep's problem)."""
    import gc
    from sparsedp._kernels import _dp_cd_fast
    X, _ = make_sparse_problem(30, 25, density=0.2, seed=5)
    frozen, arrays = read_only_csc(sp.csc_array(X))
    b = CoordinateBlocks(frozen, np.ones(25), np.ones(25), np.zeros(25))
    b.release()
    kept = len(_dp_cd_fast._FREE_BLOCKS)
    assert kept >= 1
    del frozen, arrays, b
    gc.collect()
    assert len(_dp_cd_fast._FREE_BLOCKS) == kept - 1
