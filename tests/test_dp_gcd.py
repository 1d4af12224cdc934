"""DP-GCD: the noisy max against its law and the naive sampler, the incremental
gradient against a recomputation, the rules against their definitions, the
noiseless run against the exact solver, sensitivities and accounting."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import integrate, optimize, stats

from problems import gsq_model_value, make_sparse_problem, noisy_max_weights, read_only_csc
from sparsedp._kernels import kernel_id
from sparsedp._kernels._dp_gcd_fast import GreedyKernel
from sparsedp._kernels._noisy_max import block_size
from sparsedp.datafits import Logistic, Squared
from sparsedp.exceptions import PrivacyLeakWarning
from sparsedp.penalties import L1, L2, ElasticNet, as_penalty
from sparsedp.privacy import calibrate_pure_composition
from sparsedp.random import IntegerNoise, NoisyMax
from sparsedp.solvers._dp_gcd import SCORE_FLOAT_FACTOR, _calibrate, step_estimate_multiplier
from sparsedp import DPLasso
from sparsedp.solvers import NonPrivateDiagnostics, calibrate_dp_gcd, dp_gcd, exact, objective

RULES = ["gs-r", "gs-s", "gs-q"]


def ideal_budget(eps, delta, n_iter, p, private_smoothness=False, selection="exponential"):
    """The budget left for the ideal mechanisms once the samplers' slack is paid:
    H = 2**-40 per integer draw (n_iter gradients, p constants if estimated) +
    2**-38 per exponential selection; report-noisy-max's total variation
    2**-52 (1725 + 14.5 log p) + p 2**-66 per selection, charged as (1 + e^eps) tv,
    reserved twice, with the ledger's 1e-12 margin (none for the exponential
    mechanism); delta e^-H rounded down twice, as the ledger rounds it."""
    H = 2.0 ** -40 * (n_iter + p * private_smoothness) + 2.0 ** -38 * n_iter
    tv = n_iter * (2.0 ** -52 * (1725 + 14.5 * math.log(p)) + p * 2.0 ** -66)
    tv *= selection != "exponential"
    charge = 2 * (1 + math.exp(eps)) * tv * (1 + 1e-12)
    left = math.nextafter(math.nextafter((delta - charge) * math.exp(-H), 0), 0)
    return eps - 2 * H, left
CASES = [
    (Squared(), L1(0.02), False),
    (Squared(), ElasticNet(0.03, 0.5), False),
    (Logistic(), L1(0.01), True),
    (Logistic(), L2(0.05), True),
]


def laplace_max_law(s, b, indices=None):
    """P(argmax_k s_k + Lap(b)_k = j) for j in ``indices``, by quadrature.

    Independent of the sampler: integrates the density of j's value times the
    probability that every other value lies below it.
    """
    indices = range(len(s)) if indices is None else indices
    probs = []
    for j in indices:
        others = np.delete(s, j)

        def density(x):
            return stats.laplace.pdf(x, s[j], b) * np.exp(
                np.sum(stats.laplace.logcdf(x, others, b)))
        probs.append(integrate.quad(density, s[j] - 50 * b, s[j] + 50 * b,
                                    points=[s[j]], limit=500)[0])
    return np.array(probs)


def chi2_pvalue(counts, probs):
    expected = probs / probs.sum() * counts.sum()
    return stats.chisquare(counts, expected).pvalue


# ---------------------------------------------------------------------------------
# The noisy max
# ---------------------------------------------------------------------------------
CLOSE = np.array([1.0, 0.97, 0.97, 0.9, 0.5, 0.99, 0.0, 0.93, 0.3])


@pytest.mark.parametrize("b", [0.01, 0.05, 1.0])
def test_exponential_selection_follows_the_softmax_law(b):
    n = 100_000
    draws = NoisyMax(CLOSE, b, "exponential", np.random.default_rng(0)).draw(n)
    law = np.exp((CLOSE - CLOSE.max()) / b)
    assert chi2_pvalue(np.bincount(draws, minlength=len(CLOSE)), law) > 1e-3


@pytest.mark.parametrize("b", [0.01, 0.05, 1.0])
def test_laplace_selection_follows_the_noisy_max_law(b):
    # b = 0.01: a few coordinates within 8 b of the top (explicit draws + thin
    # tail); b = 1: noise-dominated, every coordinate in the thinned tail
    n = 100_000
    draws = NoisyMax(CLOSE, b, "laplace", np.random.default_rng(1)).draw(n)
    law = laplace_max_law(CLOSE, b)
    assert abs(law.sum() - 1) < 1e-6
    assert chi2_pvalue(np.bincount(draws, minlength=len(CLOSE)), law) > 1e-3
    naive = np.argmax(CLOSE + np.random.default_rng(2).laplace(0, b, (n, len(CLOSE))), 1)
    assert chi2_pvalue(np.bincount(naive, minlength=len(CLOSE)), law) > 1e-3


def test_laplace_selection_is_exact_through_the_fallback():
    # equal scores: no value exceeds the threshold in about exp(-12) of draws;
    # a small p with b tiny against the gaps makes the fallback (all values below
    # t) the common path for a second sampler: both must give the law
    s = np.array([0.0, 0.0, 0.0, 0.0])
    nm = NoisyMax(s, 1.0, "laplace", np.random.default_rng(3))
    counts = np.bincount(nm.draw(40_000), minlength=4)
    assert chi2_pvalue(counts, np.full(4, 0.25)) > 1e-3
    # one dominant coordinate: its noise falls 8 b below in exp(-8) / 2 of draws
    s = np.array([8.5, 0.0, 0.2, 0.1])
    nm = NoisyMax(s, 1.0, "laplace", np.random.default_rng(4))
    counts = np.bincount(nm.draw(200_000), minlength=4)
    assert nm.n_fallbacks > 0
    assert chi2_pvalue(counts, laplace_max_law(s, 1.0)) > 1e-3


@pytest.mark.parametrize("selection", ["exponential", "laplace"])
def test_selection_over_many_blocks_and_after_updates(selection):
    # p spans many blocks; 6 close contenders hidden among 4994 low scores
    rng = np.random.default_rng(5)
    p, b = 5000, 0.05
    s = rng.uniform(0.0, 0.5, p)
    top = rng.choice(p, 6, replace=False)
    s[top] = [1.0, 0.98, 0.96, 0.95, 0.9, 0.85]
    nm = NoisyMax(s, b, selection, np.random.default_rng(6))
    assert nm.n_blocks > 10
    # change scores, including a jump far beyond the reference and back
    moved = rng.choice(np.setdiff1d(np.arange(p), top), 50, replace=False)
    s[moved] = rng.uniform(0.0, 0.4, 50)
    nm.update(moved, s[moved])
    rebuilds = nm.n_rebuilds
    nm.update([top[-1]], [600 * b])
    nm.update([top[-1]], [0.85])
    assert nm.n_rebuilds == rebuilds + 2
    assert np.array_equal(nm.scores, s)
    counts = np.bincount(nm.draw(60_000), minlength=p)
    observed = np.r_[counts[top], counts.sum() - counts[top].sum()]
    if selection == "exponential":
        law = np.exp((s - s.max()) / b)
        expected = np.r_[law[top], law.sum() - law[top].sum()]
    else:
        law = laplace_max_law(s, b, top)
        expected = np.r_[law, 1.0 - law.sum()]
    assert chi2_pvalue(observed, expected) > 1e-3


def test_exponential_selection_is_the_integer_inverse_cdf():
    # same random stream: the block descent picks what the naive inverse CDF over
    # the integer weights (problems.noisy_max_weights) picks, draw for draw (a
    # uniform integer below their sum from 64-bit words by masked rejection; every
    # weight here is an exact integer, so no acceptance test runs)
    import bisect
    import itertools
    rng = np.random.default_rng(7)
    s = rng.normal(size=3000)
    b = 0.3
    nm = NoisyMax(s, b, "exponential", np.random.default_rng(8))
    lazy = nm.draw(5000)
    r = noisy_max_weights(nm)
    assert min(r) > 2 ** 52
    assert abs(r[0] / r[1] - math.exp((s[0] - s[1]) / b)) < 1e-12
    cum, total = list(itertools.accumulate(r)), sum(r)
    bits = (total - 1).bit_length()
    words = iter(int(w) for w in np.random.default_rng(8).bit_generator.random_raw(20_000))
    naive = []
    for _ in range(5000):
        x = total
        while x >= total:
            x = (next(words) >> (128 - bits) << 64) | next(words)
        naive.append(bisect.bisect_right(cum, x))
    assert np.array_equal(lazy, naive)


def test_argmax_selection_is_the_first_largest():
    s = np.array([0.1, 0.7, 0.3, 0.7, 0.2])
    assert np.all(NoisyMax(s, 0.0, "argmax", np.random.default_rng()).draw(5) == 1)
    assert block_size(100_000) ** 2 >= 100_000


def test_noisy_max_rejects_bad_input():
    with pytest.raises(ValueError, match="finite"):
        NoisyMax(np.array([0.0, np.nan]), 1.0, "laplace", np.random.default_rng())
    with pytest.raises(ValueError, match="scale"):
        NoisyMax(np.zeros(3), 0.0, "exponential", np.random.default_rng())
    with pytest.raises(ValueError, match="selection"):
        NoisyMax(np.zeros(3), 1.0, "gumbel", np.random.default_rng())


# ---------------------------------------------------------------------------------
# The kernel: incremental gradient, rules
# ---------------------------------------------------------------------------------
def make_kernel(X, y, datafit, penalty, clip, rule="gs-r", selection="argmax", b=0.0,
                noise=0.0, seed=0, refresh_every=10**9, refresh_work=np.inf):
    """A GreedyKernel; ``noise > 0``: the gradients released on a grid (2**-13) with
    integer Laplace noise of scale ``noise`` on ``G_j / n``."""
    penalty = as_penalty(penalty)
    M = datafit.smoothness(X)
    C = np.sqrt(M / M.sum()) * clip
    steps = np.divide(1.0, M, out=np.zeros_like(M), where=M > 0)
    grid = np.full(X.shape[1], 2.0 ** -13 if noise else 0.0)
    table = IntegerNoise("laplace", noise * X.shape[0] / 2.0 ** -13) if noise else None
    return GreedyKernel(X, y, kernel_id(datafit), M, C, steps, penalty.l1, penalty.l2, rule,
                        selection, b, "grid" if noise else "none", table, grid,
                        np.divide(1.0, grid, out=np.zeros_like(grid), where=grid > 0),
                        np.random.default_rng(seed), refresh_every, refresh_work), M, C


def clipped_gradient(X, y, datafit, w, C):
    """(1/n) sum_i clip(X_ij loss'(x_i w, y_i), C_j) in numpy."""
    d = datafit.derivative(X @ w, y)
    Xc = sp.csc_array(X)
    return np.array([np.clip(Xc.data[Xc.indptr[j]:Xc.indptr[j + 1]]
                             * d[Xc.indices[Xc.indptr[j]:Xc.indptr[j + 1]]], -C[j], C[j]).sum()
                     for j in range(X.shape[1])]) / X.shape[0]


@pytest.mark.parametrize("datafit,penalty,logistic", CASES)
@pytest.mark.parametrize("clip", [0.5, np.inf])
def test_incremental_gradient_equals_recomputed(datafit, penalty, logistic, clip):
    """The gradient kept incrementally (released as is with gradient_release="none")
    equals the clipped gradient recomputed in numpy at the iterate, at each of 2000
    iterations, none of them a refresh; unclipped, the datafit's own gradient."""
    X, y = make_sparse_problem(n=50, p=120, density=0.3, logistic=logistic, seed=1)
    kernel, _, C = make_kernel(X, y, datafit, penalty, clip, selection="exponential",
                               b=0.01)
    for _ in range(2000):
        w = kernel.coef
        selected, released = kernel.run(1)
        j = selected[0]
        assert released[0] == pytest.approx(clipped_gradient(X, y, datafit, w, C)[j],
                                            rel=0, abs=1e-10)
        if np.isinf(clip):
            assert released[0] == pytest.approx(datafit.gradient(X, X @ w, y)[j], abs=1e-10)
    assert kernel.n_refreshes == 0  # all 2000 updates incremental
    assert np.abs(kernel.coef).sum() > 0
    np.testing.assert_allclose(kernel.margins, X @ kernel.coef, rtol=0, atol=1e-10)


def brute_scores(X, y, datafit, penalty, w, rule):
    """The rules' definitions (paper, Appendix C) with penalties' numpy methods."""
    penalty = as_penalty(penalty)
    M = datafit.smoothness(X)
    g = datafit.gradient(X, X @ w, y)
    if rule == "gs-s":
        return penalty.subdiff_distance(w, g) / np.sqrt(M), "max"
    if rule == "gs-r":
        return np.sqrt(M) * np.abs(penalty.prox_step(w, g, 1.0 / M)), "max"
    return gsq_model_value(penalty, w, g, M), "min"  # GS-q: the most negative model value


@pytest.mark.parametrize("datafit,penalty,logistic", CASES)
@pytest.mark.parametrize("rule", RULES)
def test_each_rule_picks_what_its_definition_picks(datafit, penalty, logistic, rule):
    X, y = make_sparse_problem(n=60, p=80, density=0.3, logistic=logistic, seed=2)
    kernel, M, _ = make_kernel(X, y, datafit, penalty, np.inf, rule=rule)
    checked = 0
    for _ in range(25):
        w = kernel.coef
        brute, sense = brute_scores(X, y, datafit, penalty, w, rule)
        target = brute.max() if sense == "max" else brute.min()
        if target == 0:
            break  # converged: nothing to pick
        ours = kernel.noisy_max.scores  # the scores the kernel handed its noisy max
        if rule == "gs-q":  # increasing transform sqrt(2 h) of h = -model value
            np.testing.assert_allclose(ours ** 2 / 2, -np.minimum(brute, 0),
                                       rtol=1e-9, atol=1e-14)
        else:
            np.testing.assert_allclose(ours, brute, rtol=1e-9, atol=1e-12)
        # no exact ties among the candidates in these random problems
        expected = int(np.argmax(brute) if sense == "max" else np.argmin(brute))
        selected, _ = kernel.run(1)
        assert selected[0] == expected
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("datafit,penalty,logistic", CASES)
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_noiseless_run_reaches_the_exact_solution(datafit, penalty, logistic, rule,
                                                  index_dtype):
    X, y = make_sparse_problem(n=60, p=40, logistic=logistic, index_dtype=index_dtype)
    ref = exact(X, y, datafit, penalty, tol=1e-12)
    res = dp_gcd(X, y, datafit, penalty, epsilon=np.inf, delta=1e-5, n_iter=4000,
                 clip=np.inf, rule=rule, diagnostics=True)
    assert res.privacy.entries == []
    F, F_star = res.diagnostics.objective, ref.diagnostics.objective
    assert abs(F - F_star) <= 1e-9 * F_star
    np.testing.assert_allclose(res.coef, ref.coef, atol=1e-5)
    dense = dp_gcd(X.toarray(), y, datafit, penalty, epsilon=np.inf, delta=1e-5,
                   n_iter=200, clip=np.inf, rule=rule)
    sparse = dp_gcd(X, y, datafit, penalty, epsilon=np.inf, delta=1e-5, n_iter=200,
                    clip=np.inf, rule=rule)
    np.testing.assert_array_equal(dense.info["selected"], sparse.info["selected"])
    np.testing.assert_allclose(dense.coef, sparse.coef, rtol=1e-12, atol=1e-14)


def test_refresh_does_not_change_the_run():
    X, y = make_sparse_problem(n=50, p=60, density=0.3, logistic=True, seed=3)
    kw = dict(epsilon=2.0, delta=1e-4, n_iter=300, clip=1.0, smoothness=np.full(60, 0.1),
              random_state=4)
    a = dp_gcd(X, y, Logistic(), L1(0.005), refresh_every=3, diagnostics=True, **kw)
    b = dp_gcd(X, y, Logistic(), L1(0.005), refresh_every=10**6, diagnostics=True, **kw)
    assert a.diagnostics["refreshes"] > 2 * b.diagnostics["refreshes"]
    np.testing.assert_array_equal(a.info["selected"], b.info["selected"])
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-9, atol=1e-12)


def test_empty_columns_are_never_selected_and_change_nothing_else():
    """Columns with M_j = 0 leave the noisy max: the run equals the run on the
    other columns (same seed), mapped back to the full index space."""
    X, y = make_sparse_problem(n=60, p=40, density=0.3, logistic=True, seed=5)
    dead = np.array([0, 7, 8, 23, 39])
    Xd = sp.csc_array(X.toarray())
    Xd[:, dead] = 0.0
    Xd.eliminate_zeros()
    live = np.setdiff1d(np.arange(40), dead)
    M = np.asarray(Xd.power(2).sum(axis=0)).ravel() / (4 * 60)
    assert np.all(M[dead] == 0) and np.all(M[live] > 0)
    for selection in ("exponential", "laplace"):
        kw = dict(epsilon=0.5, delta=1e-4, n_iter=200, clip=1.0, selection=selection,
                  random_state=11)
        full = dp_gcd(Xd, y, Logistic(), L1(0.002), smoothness=M, diagnostics=True, **kw)
        part = dp_gcd(Xd[:, live], y, Logistic(), L1(0.002), smoothness=M[live],
                      diagnostics=True, **kw)
        assert not np.isin(full.info["selected"], dead).any()
        np.testing.assert_array_equal(full.info["selected"], live[part.info["selected"]])
        np.testing.assert_allclose(full.coef[live], part.coef, rtol=1e-12)  # tr M summed in another order
        assert np.all(full.coef[dead] == 0.0)
        assert full.diagnostics.objective == pytest.approx(part.diagnostics.objective,
                                                           rel=1e-12)
        # equal up to the samplers' slack, which depends on p (calibrated to 1e-10)
        assert full.info["epsilon0"] == pytest.approx(part.info["epsilon0"], rel=1e-8)
    with pytest.warns(PrivacyLeakWarning):  # M from the data: same exclusion
        r = dp_gcd(Xd, y, Logistic(), L1(0.002), epsilon=0.5, delta=1e-4, n_iter=200,
                   clip=1.0, smoothness="leak", random_state=1)
    assert not np.isin(r.info["selected"], dead).any()


# ---------------------------------------------------------------------------------
# Privacy: sensitivities, noise law, accounting
# ---------------------------------------------------------------------------------
def neighbours(X, y, rng, logistic):
    """A copy of (X, y) with one random row replaced by a random record."""
    X2, y2 = X.toarray(), y.copy()
    i = rng.integers(X.shape[0])
    row = rng.standard_normal(X.shape[1]) * (rng.random(X.shape[1]) < 0.3) * 3
    X2[i] = row
    y2[i] = rng.choice([-1.0, 1.0]) if logistic else rng.normal(scale=10)
    return sp.csc_array(X2), y2


@pytest.mark.parametrize("datafit,penalty,logistic", CASES)
def test_released_gradient_and_scores_have_the_calibrated_sensitivity(
        datafit, penalty, logistic):
    rng = np.random.default_rng(8)
    X, y = make_sparse_problem(n=30, p=25, density=0.4, logistic=logistic, seed=5)
    M = np.full(25, 0.8)  # public constants: same on both datasets
    clip = 0.7
    C = np.sqrt(M / M.sum()) * clip
    delta_score = 2 * clip / (X.shape[0] * np.sqrt(M.sum()))
    worst_g, worst_s = 0.0, 0.0
    for trial in range(60):
        X2, y2 = neighbours(X, y, rng, logistic)
        w = rng.normal(size=25) * (rng.random(25) < 0.5)
        for rule in RULES:
            pen, z = as_penalty(penalty), np.zeros(25)
            kernels = [GreedyKernel(A, b, kernel_id(datafit), M, C, z, pen.l1, pen.l2, rule,
                                    "exponential", 1e6, "none", None, z, z,
                                    np.random.default_rng(trial), 1000, 4.0, w)
                       for A, b in ((X, y), (X2, y2))]
            # step 0: the state stays at w; about uniform selections read each
            # coordinate's kept gradient off the releases
            grads = []
            for kernel in kernels:
                g = np.full(25, np.nan)
                selected, released = kernel.run(400)
                g[selected] = released
                assert not np.isnan(g).any()
                grads.append(g)
            worst_g = max(worst_g, np.max(np.abs(grads[0] - grads[1]) / (2 * C / X.shape[0])))
            s1, s2 = (k.noisy_max.scores for k in kernels)
            worst_s = max(worst_s, np.max(np.abs(s1 - s2)) / delta_score)
    assert worst_g <= 1 + 1e-12 and worst_s <= 1 + 1e-12
    assert worst_g > 0.8 and worst_s > 0.5  # the bounds are (nearly) attained


@pytest.mark.parametrize("gradient_noise,selection", [
    ("laplace", "laplace"), ("gaussian", "exponential"), ("gaussian", "laplace")])
def test_released_gradient_noise_has_the_calibrated_law(gradient_noise, selection):
    X, y = make_sparse_problem(n=40, p=30, density=0.3, seed=6)
    M = Squared().smoothness(X)
    g0 = Squared().gradient(X, np.zeros(40), y)
    C = np.sqrt(M / M.sum()) * 0.5
    g0 = np.array([np.clip(X[:, [j]].toarray().ravel() * -2 * y, -C[j], C[j]).sum()
                   for j in range(30)]) / 40
    z = []
    for seed in range(3000):
        res = dp_gcd(X, y, Squared(), L1(0.01), epsilon=1.0, delta=1e-4, n_iter=1,
                     clip=0.5, smoothness=M, gradient_noise=gradient_noise,
                     selection=selection, random_state=seed)
        j = res.info["selected"][0]
        z.append((res.info["released"][0] - g0[j]) / res.info["noise_scales"][j])
    eps0 = res.info["epsilon0"]
    if gradient_noise == "laplace":
        np.testing.assert_allclose(res.info["noise_scales"], 2 * C / (40 * eps0))
        assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-3
    else:
        # zCDP cost of the selection: eps0^2 / 8 (bounded range) or eps0^2 / 2
        z_mult = (2.0 if selection == "exponential" else 1.0) / eps0
        np.testing.assert_allclose(res.info["noise_scales"], z_mult * 2 * C / 40)
        assert stats.kstest(z, stats.norm.cdf).pvalue > 1e-3


@pytest.mark.parametrize("selection", ["exponential", "laplace"])
@pytest.mark.parametrize("gradient_noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("n_iter", [1, 5, 20])
def test_calibration_spends_the_budget_and_no_more(selection, gradient_noise, n_iter):
    eps, delta = 1.0, 1e-6
    X, y = make_sparse_problem(n=30, p=20)
    eps_i, delta_i = ideal_budget(eps, delta, n_iter, 20, selection=selection)
    e0 = calibrate_dp_gcd(eps_i, delta_i, n_iter, selection, gradient_noise)
    res = dp_gcd(X, y, Squared(), L1(0.01), epsilon=eps, delta=delta, n_iter=n_iter,
                 clip=1.0, smoothness=np.ones(20), selection=selection,
                 gradient_noise=gradient_noise, random_state=0)
    assert res.info["epsilon0"] == e0
    spent = res.privacy.get_epsilon(delta)
    assert spent <= eps and spent > 0.999 * eps
    assert res.privacy.private
    # the selection noise: scale 2 Delta / eps0 for both mechanisms
    n, trace = 30, 20.0
    assert res.info["selection_scale"] == pytest.approx(
        2 * (2 / (n * trace ** 0.5)) * SCORE_FLOAT_FACTOR / e0, rel=1e-14)


def papers_advanced_epsilon0(epsilon, delta, k):
    """eps0 solving the advanced composition bound (Dwork & Roth, Thm 3.20) = epsilon."""
    def excess(e0):
        return math.sqrt(2 * k * math.log(1 / delta)) * e0 + k * e0 * math.expm1(e0) - epsilon
    return optimize.brentq(excess, 1e-12, epsilon)


def test_default_selection_is_the_exponential_mechanism_everywhere():
    """None means the exponential mechanism in dp_gcd, calibrate_dp_gcd and the
    estimators (one answer): the same fit and epsilon0 as asking for it by name."""
    X, y = make_sparse_problem(n=40, p=50, logistic=True)
    kw = dict(epsilon=1.0, delta=1e-6, clip=1.0, smoothness=np.full(50, 0.1),
              random_state=2)
    for T in (1, 4, 20):
        default = dp_gcd(X, y, Logistic(), L1(0.01), n_iter=T, **kw)
        explicit = dp_gcd(X, y, Logistic(), L1(0.01), n_iter=T, selection="exponential", **kw)
        assert default.info["selection"] == "exponential"
        np.testing.assert_array_equal(default.coef, explicit.coef)
        assert default.info["epsilon0"] == explicit.info["epsilon0"]
        assert calibrate_dp_gcd(1.0, 1e-6, T) == calibrate_dp_gcd(1.0, 1e-6, T, "exponential")
    assert DPLasso(solver="gcd").get_params()["selection"] is None


def test_calibration_beats_the_papers_advanced_composition():
    # Laplace selection + Laplace values: 2T pure eps0 mechanisms; ours is at least
    # the optimal composition's eps0, and 1.3x to 3.8x the paper's (advanced
    # composition) at its iteration counts
    ratios = []
    for T in (1, 2, 5, 10, 20):
        ours = calibrate_dp_gcd(1.0, 1e-6, T, "laplace", "laplace")
        best = calibrate_pure_composition(1.0, 1e-6, 2 * T, "best")
        assert ours >= best * (1 - 1e-6)
        ratios.append(ours / papers_advanced_epsilon0(1.0, 1e-6, 2 * T))
    assert all(r >= 1.3 for r in ratios) and ratios[0] > 3.5
    assert np.all(np.diff(ratios) < 0)
    # the exponential mechanism is bounded-range: more budget per step for T >= 5
    for T in (5, 10, 20):
        assert calibrate_dp_gcd(1.0, 1e-6, T, "exponential") > \
            1.1 * calibrate_dp_gcd(1.0, 1e-6, T, "laplace")


def test_same_seed_same_fit_and_leaks_are_reported():
    X, y = make_sparse_problem(n=40, p=50, logistic=True)
    kw = dict(epsilon=1.0, delta=1e-4, n_iter=10, clip=1.0, random_state=3)
    with pytest.warns(PrivacyLeakWarning, match="smoothness"):
        a = dp_gcd(X, y, Logistic(), L1(0.01), smoothness="leak", **kw)
    with pytest.warns(PrivacyLeakWarning):
        b = dp_gcd(X, y, Logistic(), L1(0.01), smoothness="leak", **kw)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert not a.privacy.private and "NOT PRIVATE" in str(a.privacy)
    assert a.privacy.epsilon == math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = dp_gcd(X, y, Logistic(), L1(0.01), smoothness=np.full(50, 0.1), **kw)
    assert c.privacy.private and c.diagnostics is None
    assert "fallbacks" not in c.info and "refreshes" not in c.info
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the trace is a diagnostic, not released: no leak
        t = dp_gcd(X, y, Logistic(), L1(0.01), smoothness=np.full(50, 0.1), trace=True,
                   **kw)
    assert t.privacy.private and t.privacy.epsilon == c.privacy.epsilon
    d = t.diagnostics
    assert isinstance(d, NonPrivateDiagnostics) and "non-private diagnostic" in repr(d)
    np.testing.assert_array_equal(d.trace["iterations"], np.arange(11))
    assert d.trace["objective"][-1] == pytest.approx(d.objective)
    assert d.objective == pytest.approx(objective(X, y, t.coef, Logistic(), L1(0.01)))
    assert set(d.counters) == {"fallbacks", "refreshes"}
    np.testing.assert_array_equal(t.coef, c.coef)
    np.testing.assert_array_equal(t.info["selected"], c.info["selected"])
    assert not hasattr(c, "objective")  # only c.diagnostics.objective, with diagnostics
    # private smoothness: a fraction of the budget, with fewer iterations (10) than
    # coordinates (50) spent after each selection on the selected coordinate's constant
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # no bounds: a private one
        d = dp_gcd(X, y, Logistic(), L1(0.01), smoothness=0.1, **kw)
    assert d.privacy.private and d.privacy.epsilon <= 1.0
    assert any(m.name.startswith("bound on |X_ij|") for m in d.privacy.entries)
    d = dp_gcd(X, y, Logistic(), L1(0.01), smoothness=0.1, feature_bounds=1.0, **kw)
    assert d.privacy.epsilon <= 1.0 + 1e-9
    eps_i, delta_i = ideal_budget(1.0, 1e-4, 10, X.shape[1], private_smoothness=True)
    z = step_estimate_multiplier(eps_i, delta_i, 10, 0.1)
    assert d.info["epsilon0"] == _calibrate(eps_i, delta_i, 10, d.info["selection"],
                                            "laplace", z)


@pytest.mark.parametrize("kwargs,match", [
    (dict(rule="gs-x"), "rule"),
    (dict(selection="gumbel"), "selection"),
    (dict(gradient_noise="cauchy"), "gradient_noise"),
    (dict(n_iter=0), "n_iter"),
    (dict(n_iter=2.5), "n_iter"),
    (dict(clip=np.inf), "clip=inf"),
    (dict(clip=-1.0), "clip"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(delta=1.0), "delta"),
    (dict(step_size=0.0), "step_size"),
    (dict(refresh_every=0), "refresh_every"),
    (dict(smoothness=np.ones(3)), "shape"),
])
def test_bad_arguments_raise_clear_errors(kwargs, match):
    X, y = make_sparse_problem(n=20, p=10)
    args = dict(epsilon=1.0, delta=1e-4, n_iter=3, clip=1.0, smoothness=np.ones(10))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        dp_gcd(X, y, Squared(), L1(0.1), **args)


def test_bad_data_raise_clear_errors():
    X, y = make_sparse_problem(n=20, p=10)
    with pytest.raises(ValueError, match="NaN|finite"):
        dp_gcd(X, np.r_[y[:-1], np.nan], Squared(), epsilon=1.0, delta=1e-4, n_iter=2,
               clip=1.0)
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        dp_gcd(X, y, Logistic(), epsilon=1.0, delta=1e-4, n_iter=2, clip=1.0)
    with pytest.raises(ValueError, match="zero"):
        dp_gcd(sp.csc_array((20, 10)), y, Squared(), epsilon=1.0, delta=1e-4, n_iter=2,
               clip=1.0, smoothness=np.zeros(10))


def test_kernel_records_of_an_immutable_matrix_are_built_once():
    from sparsedp._kernels import _dp_gcd_fast
    from sparsedp._kernels._dp_gcd_fast import entries
    X, _ = make_sparse_problem(30, 25, density=0.15, seed=4)
    X = sp.csc_array(X)
    frozen = read_only_csc(X)[0]
    first = entries(frozen)
    # the same arrays again (read-only), also through another object on the same arrays
    again = entries(sp.csc_array((frozen.data, frozen.indices, frozen.indptr), shape=X.shape))
    assert all(a is b for a, b in zip(first, again))
    assert not any(a.flags.writeable for a in first)
    # ... but not for another intercept, nor for a writeable X
    assert entries(frozen, 2.0)[0] is not first[0]
    assert entries(X)[0] is not entries(X)[0]
    # views of writeable arrays: their owner can change them, nothing is kept
    views, owners = read_only_csc(X, own=False)
    before = entries(views)[2]["value"].copy()
    owners[0].base[:] *= 2.0
    np.testing.assert_array_equal(entries(views)[2]["value"], 2.0 * before)
    # a dead matrix's records are dropped
    n_kept = len(_dp_gcd_fast._RECORDS)
    del frozen, again, first
    import gc
    gc.collect()
    entries(read_only_csc(X)[0])  # kept while building, dead once returned
    assert len(_dp_gcd_fast._RECORDS) <= n_kept - 1


def test_fit_on_kept_records_is_the_fit_on_fresh_ones():
    """DP-GCD on a read-only X (records built once, reused) gives the fits it gives
    on a writeable copy (records built afresh), same seeds."""
    from sparsedp.datafits import Logistic
    from sparsedp.penalties import L1
    X, y = make_sparse_problem(60, 40, density=0.2, seed=7)
    X = sp.csc_array(X)
    y = np.where(y > np.median(y), 1.0, -1.0)
    frozen, _ = read_only_csc(X)
    for seed in range(3):
        fits = [dp_gcd(A, y, Logistic(), L1(1e-3), epsilon=1.0, delta=1e-5, n_iter=15,
                       clip=1.0, smoothness=np.full(40, 0.25), random_state=seed).coef
                for A in (X, frozen, frozen)]
        np.testing.assert_array_equal(fits[0], fits[1])
        np.testing.assert_array_equal(fits[0], fits[2])


def test_clipped_gradient_at_zero_is_kept_for_immutable_data_and_equal_thresholds():
    """A kernel from w = 0 on read-only X and y takes the clipped gradient an earlier
    one computed with the same loss and thresholds (bit for bit the same C): its
    selections, releases and iterate are the kernel's on writeable copies, which
    compute it afresh.  Other thresholds, a writeable y, a start coef_init or another
    loss compute it afresh, and another rule, penalty or M their scores; a kept
    start goes with its data."""
    import gc

    from sparsedp._kernels import _dp_gcd_fast
    X, y = make_sparse_problem(50, 30, density=0.2, seed=11)
    X = sp.csc_array(X)
    frozen = read_only_csc(X)[0]
    y_frozen = np.array(y)
    y_frozen.setflags(write=False)

    def run(A, b, clip, seed, datafit=Squared(), **kwargs):
        kernel, M, C = make_kernel(A, b, datafit, L1(0.01), clip, selection="laplace",
                                   b=0.05, noise=0.02, seed=seed, **kwargs)
        selected, released = kernel.run(12)
        return kernel.reused_start, selected, released, np.asarray(kernel.coef)

    for clip in (0.5, 2.0):
        for seed in range(3):
            fresh = run(X, y, clip, seed)
            kept = run(frozen, y_frozen, clip, seed)
            assert not fresh[0]
            assert kept[0] == (seed > 0)  # the first run of a clip computes it
            for u, v in zip(fresh[1:], kept[1:]):
                np.testing.assert_array_equal(u, v)
    assert run(frozen, y_frozen, 0.5 * (1 + 2 ** -52), 0)[0] is False  # C differs by an ulp
    assert run(frozen, y_frozen, 0.5, 0)[0] is True
    assert run(frozen, np.array(y), 0.5, 0)[0] is False  # y writeable
    y_sign = np.where(y_frozen > 0, 1.0, -1.0)
    y_sign.setflags(write=False)
    assert run(frozen, y_sign, 0.5, 0, datafit=Logistic())[0] is False  # other y and loss
    assert run(frozen, y_sign, 0.5, 0, datafit=Logistic())[0] is True
    M = Squared().smoothness(X)
    C = np.sqrt(M / M.sum()) * 0.5

    def kernel(M, rule="gs-r", l1=0.0, **kwargs):
        return GreedyKernel(frozen, y_frozen, kernel_id(Squared()), M, C, 1.0 / M, l1, 0.0,
                            rule, "argmax", 0.0, "none", None, np.zeros(30), np.zeros(30),
                            np.random.default_rng(0), **kwargs)

    moved = kernel(M, coef_init=np.full(30, 0.1))
    assert not moved.reused_start
    # the scores at 0 are kept with the gradient: another rule, penalty or M (2 M has
    # the same thresholds C) has its own
    first = kernel(M)
    assert kernel(M).reused_start and not kernel(M, rule="gs-q").reused_start
    assert not kernel(M, l1=0.3).reused_start and not kernel(2.0 * M).reused_start
    for other in (kernel(M, rule="gs-q"), kernel(M, l1=0.3), kernel(2.0 * M)):
        assert other.reused_start  # now kept: the same selections as computed afresh
    kernels = [kernel(2.0 * M, l1=0.3) for _ in range(2)]
    assert [k.reused_start for k in kernels] == [False, True]
    runs = [k.run(10) for k in kernels]
    for u, v in zip(*runs):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(first.run(10)[0], runs[0][0])
    kept_before = len(_dp_gcd_fast._STARTS)
    assert kept_before >= 4
    del frozen, moved, first, kernels
    gc.collect()
    run(read_only_csc(X)[0], y_frozen, 3.0, 0)  # prunes the dead matrix's gradients
    assert len(_dp_gcd_fast._STARTS) <= kept_before - 4 + 1


def test_kept_start_holds_immutable_thresholds_and_copies_writeable_ones():
    """A start keeps read-only C and M themselves (a later fit with the same objects
    matches without comparing them) and copies writeable ones: writing into a
    writeable C after the fit makes the next fit compute its own start, and an
    equal C in a new array still finds the kept one."""
    from sparsedp._kernels import _dp_gcd_fast
    X, y = make_sparse_problem(40, 25, density=0.2, seed=3)
    frozen = read_only_csc(sp.csc_array(X))[0]
    y_frozen = np.array(y)
    y_frozen.setflags(write=False)
    M = Squared().smoothness(X)

    def kernel(C, M):
        return GreedyKernel(frozen, y_frozen, kernel_id(Squared()), M, C, 1.0 / M, 0.0, 0.0,
                            "gs-r", "argmax", 0.0, "none", None, np.zeros(25), np.zeros(25),
                            np.random.default_rng(0))

    C_ro, M_ro = np.full(25, 0.37), M.copy()
    C_ro.setflags(write=False)
    M_ro.setflags(write=False)
    assert not kernel(C_ro, M_ro).reused_start
    entry = _dp_gcd_fast._STARTS[-1]
    assert entry[2] is C_ro and entry[3] is M_ro  # held, not copied
    assert kernel(C_ro, M_ro).reused_start
    assert kernel(np.full(25, 0.37), M.copy()).reused_start  # equal bits, other arrays
    C_rw = np.full(25, 0.41)
    assert not kernel(C_rw, M_ro).reused_start
    assert _dp_gcd_fast._STARTS[-1][2] is not C_rw  # a copy
    C_rw[3] = 0.5  # the kept copy does not change with it
    assert not kernel(C_rw, M_ro).reused_start
    assert kernel(np.full(25, 0.41), M_ro).reused_start


def test_problem_holds_read_only_copies_of_its_data():
    """A Problem's X and y are its own read-only copies, also once unpickled: the
    kernels keep what they derive from them (DP-GCD's gradient at 0) across fits."""
    import pickle

    from sparsedp.experiments import Problem
    X, y = make_sparse_problem(20, 8, density=0.4, seed=1)
    problem = Problem("p", X, y, Squared())
    before = y.copy()
    y[0] += 1.0
    np.testing.assert_array_equal(problem.y, before)
    for prob in (problem, pickle.loads(pickle.dumps(problem))):
        assert not prob.y.flags.writeable and not prob.X.data.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            prob.y[0] = 0.0


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_kernel_records_are_the_csr_transpose(index_dtype):
    """GreedyKernel's row records (a counting sort in Cython) equal X.tocsr() with
    sorted indices; empty rows and columns included."""
    from sparsedp._kernels._dp_gcd_fast import entries
    X, _ = make_sparse_problem(30, 25, density=0.15, seed=4, index_dtype=index_dtype)
    X = X.tolil()
    X[3, :] = 0
    X[:, 7] = 0
    X = sp.csc_array(X)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    cols, col_ptr, rows, row_ptr = entries(X)
    Xr = X.tocsr()
    Xr.sort_indices()
    np.testing.assert_array_equal(row_ptr, Xr.indptr)
    np.testing.assert_array_equal(rows["col"], Xr.indices)
    np.testing.assert_array_equal(rows["value"], Xr.data)
    np.testing.assert_array_equal(col_ptr, X.indptr)
    np.testing.assert_array_equal(cols["row"], X.indices)
    np.testing.assert_array_equal(cols["value"], X.data)
