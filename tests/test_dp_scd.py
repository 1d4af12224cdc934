"""DP-SCD: the exact solutions without noise (against scikit-learn), the noise law
it was calibrated for, lazy against eager noise, the batch update's sensitivity on
random neighbours, the privacy report and clear errors."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from faults import injected
from problems import make_sparse_problem
from sparsedp._kernels import kernel_id
from sparsedp._kernels._dp_scd_fast import coordinate_states, dp_scd_steps
from sparsedp.datafits import Hinge, Logistic, Squared, SquaredHinge
from sparsedp.penalties import L1, L2, ElasticNet
from sparsedp.random import Batches
from sparsedp.solvers import dp_scd


def make_problem(n=200, p=30, density=0.3, seed=0):
    """CSR X with a regression target and a +-1 target of the same dense w."""
    return make_sparse_problem(n, p, density=density, seed=seed, n_active=p,
                               labels=("regression", "sign"), noise=(0.1, 0.3),
                               values="uniform-legacy", format="csr")


def primal(datafit, X, y, lam, w):
    return datafit.value(X @ w, y) + 0.5 * lam * w @ w


# ---------------------------------------------------------------- exact solutions
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("sampling, batch_size", [("fixed", 1), ("fixed", 10), ("poisson", 10)])
@pytest.mark.parametrize("name", ["ridge", "logistic", "svm"])
def test_noiseless_dp_scd_reaches_scikit_learn_solution(name, sampling, batch_size):
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.svm import LinearSVC
    X, y_reg, y_cls = make_problem()
    n, lam = X.shape[0], 0.05
    # F = (1/n) sum loss + lam/2 ||w||^2: Ridge's alpha = lam n / 2 (no 1/2 on the
    # squared loss here), C = 1 / (lam n) for the classifiers
    if name == "ridge":
        datafit, y = Squared(), y_reg
        ref = Ridge(alpha=lam * n / 2, fit_intercept=False, tol=1e-12).fit(X, y).coef_
    elif name == "logistic":
        datafit, y = Logistic(), y_cls
        ref = LogisticRegression(C=1 / (lam * n), fit_intercept=False, tol=1e-12,
                                 max_iter=10_000).fit(X, y).coef_.ravel()
    else:
        datafit, y = Hinge(), y_cls
        # liblinear's dual solver stops short of 1e-12 on hinge: its solution is
        # the reference only up to its own gap, hence the objective comparison
        ref = LinearSVC(C=1 / (lam * n), loss="hinge", fit_intercept=False, dual=True,
                        tol=1e-12, max_iter=10**6).fit(X, y).coef_.ravel()
    res = dp_scd(X, y, datafit, L2(lam), epsilon=math.inf, delta=1e-5, passes=500,
                 clip=math.inf, batch_size=batch_size, sampling=sampling, random_state=0)
    f_ref = primal(datafit, X, y, lam, ref)
    gap = (primal(datafit, X, y, lam, res.coef) - f_ref) / f_ref
    assert gap < 1e-6
    if name != "svm":
        np.testing.assert_allclose(res.coef, ref, atol=1e-6)
    assert res.privacy.epsilon == math.inf


def test_noiseless_dense_and_sparse_input_agree():
    X, y_reg, _ = make_problem(n=50, p=8, seed=3)
    kw = dict(epsilon=math.inf, delta=1e-5, passes=20, clip=math.inf, batch_size=5,
              random_state=4)
    a = dp_scd(X, y_reg, Squared(), L2(0.1), **kw)
    b = dp_scd(X.toarray(), y_reg, Squared(), L2(0.1), **kw)
    np.testing.assert_array_equal(a.coef, b.coef)


# ---------------------------------------------------------------- noise law
def zero_data_coef_std(lazy=True, noise_alpha=False, sampling="poisson", seed=0):
    """On X = 0 v is the noise alone: coef = v / (lam n), sum of `steps` draws."""
    n, p, lam = 100, 4000, 1.0
    X = sp.csr_array((n, p))
    res = dp_scd(X, np.ones(n), Squared(), L2(lam), epsilon=1.0, delta=1e-5, passes=1,
                 clip=1.0, batch_size=10, sampling=sampling, lazy=lazy,
                 noise_alpha=noise_alpha, random_state=seed)
    measured = np.std(res.coef * lam * n)
    expected = res.info["noise_scale"] * math.sqrt(res.info["steps"])
    return measured, expected, res


@pytest.mark.parametrize("lazy", [True, False])
def test_noise_on_v_has_the_calibrated_standard_deviation(lazy):
    # 4000 coordinates: the sample standard deviation is within 1.1% (one sd) of
    # the truth; tolerance 5%
    measured, expected, res = zero_data_coef_std(lazy=lazy, seed=1)
    z, C = res.info["noise_multiplier"], 1.0
    # the grid's extra factor (float sums, rounding of 4000 coordinates) is tiny
    assert z * C <= res.info["noise_scale"] <= z * C * (1 + 1e-3)
    assert abs(measured / expected - 1) < 0.05


def test_noise_alpha_puts_sqrt2_more_noise_on_v():
    measured, expected, res = zero_data_coef_std(noise_alpha=True, seed=2)
    z = res.info["noise_multiplier"]
    assert math.sqrt(2) * z <= res.info["noise_scale"] <= math.sqrt(2) * z * (1 + 1e-3)
    assert abs(measured / expected - 1) < 0.05


def test_fixed_batches_noise_is_calibrated_for_sensitivity_2C():
    measured, expected, res = zero_data_coef_std(sampling="fixed", seed=3)
    z = res.info["noise_multiplier"]
    assert 2 * z <= res.info["noise_scale"] <= 2 * z * (1 + 1e-3)
    assert abs(measured / expected - 1) < 0.05


def test_planted_halved_noise_fails_the_variance_check():
    with injected("noise_halved"):
        measured, expected, _ = zero_data_coef_std(seed=1)
    assert abs(measured / expected - 0.5) < 0.05  # the check above would fail


# ---------------------------------------------------------------- lazy vs eager
def coefficient_samples(lazy, runs, noise_halved=False):
    X, _, y_cls = make_problem(n=60, p=12, density=0.3, seed=5)
    out = np.empty((runs, X.shape[1]))
    for r in range(runs):
        if noise_halved:
            with injected("noise_halved"):
                res = dp_scd(X, y_cls, Logistic(), L2(0.1), epsilon=2.0, delta=1e-5,
                             passes=3, clip=0.5, batch_size=6, lazy=lazy, random_state=r)
        else:
            res = dp_scd(X, y_cls, Logistic(), L2(0.1), epsilon=2.0, delta=1e-5,
                         passes=3, clip=0.5, batch_size=6, lazy=lazy,
                         random_state=10_000 * lazy + r)
        out[r] = res.coef
    return out


def test_lazy_and_eager_noise_give_the_same_law():
    # 400 fits each (seeds 0..399 eager, 10000..10399 lazy); two-sample KS test on
    # each of the 12 coefficients at level 1e-3 (Bonferroni: 1.2% family-wise)
    eager = coefficient_samples(False, 400)
    lazy = coefficient_samples(True, 400)
    pvalues = [stats.ks_2samp(eager[:, j], lazy[:, j]).pvalue for j in range(12)]
    assert min(pvalues) > 1e-3
    # the twin: eager with half the noise is told apart
    halved = coefficient_samples(False, 400, noise_halved=True)
    pvalues = [stats.ks_2samp(halved[:, j], lazy[:, j]).pvalue for j in range(12)]
    assert min(pvalues) < 1e-3


# ---------------------------------------------------------------- sensitivity
def one_step_update(X, y, alpha, v, loss, clip, batch_size, lambda_n):
    """Delta v of one step of the kernel on the whole of X (no noise; ``clip=inf``:
    updates not scaled).

    ``lambda_n`` is public (lambda times the public dataset size n: the
    add/remove relation with n public, docs/dp_scd.rst), the same on D and D'.
    """
    Xr = sp.csr_array(X)
    n, p = Xr.shape
    data = Xr.data.astype(np.float64)
    indptr = Xr.indptr.astype(np.int64)
    norms = np.sqrt(np.bincount(np.repeat(np.arange(n), np.diff(indptr)),
                                weights=data ** 2, minlength=n))
    state = coordinate_states(p)
    state["v"] = v
    dp_scd_steps(loss, data, Xr.indices.astype(np.int32), indptr, y, norms, alpha.copy(),
                 state, np.zeros(n), np.zeros(n, np.int64), Batches(n, 1.0), 0, 1, batch_size,
                 lambda_n, clip, 0, None, 0.0, 0.0, False,
                 np.random.default_rng(0), np.random.default_rng(1))
    return state["v"] - v


@pytest.mark.parametrize("datafit", [Squared(), Logistic(), Hinge()])
def test_batch_update_moves_by_at_most_C_between_neighbours(datafit):
    # 200 random pairs D, D' = D minus one row (add/remove), rows of norms up to 10,
    # random public v and private alphas; the batch is the whole dataset
    rng = np.random.default_rng(7)
    C, lam, loss = 0.3, 0.01, int(kernel_id(datafit))
    worst, worst_unclipped = 0.0, 0.0
    for trial in range(200):
        n, p = 20, 15
        X = sp.random(n, p, density=0.4, format="csr", random_state=trial).toarray()
        X *= rng.uniform(0.1, 10.0, size=(n, 1))
        y = rng.choice([-1.0, 1.0], n) if loss else rng.standard_normal(n) * 3
        alpha = y * rng.uniform(0, 1, n)
        v = rng.standard_normal(p)
        k = rng.integers(n)
        keep = np.arange(n) != k
        for clip in (C, np.inf):
            d = one_step_update(X, y, alpha, v, loss, clip, 5, lam * n)
            d2 = one_step_update(X[keep], y[keep], alpha[keep], v, loss, clip, 5, lam * n)
            gap = np.linalg.norm(d - d2)
            if clip == C:
                worst = max(worst, gap)
            else:
                worst_unclipped = max(worst_unclipped, gap)
    assert worst <= C * (1 + 1e-12)
    assert worst > 0.5 * C  # the bound is reached, not vacuous
    assert worst_unclipped > C  # the twin: without the scaling it is exceeded


# ---------------------------------------------------------------- sampling and report
def test_poisson_batches_have_the_expected_size():
    n = 500
    X = sp.random(n, 10, density=0.2, format="csr", random_state=0)
    res = dp_scd(X, np.ones(n), Squared(), L2(0.1), epsilon=1.0, delta=1e-5, passes=20,
                 clip=1.0, batch_size=25, random_state=0, diagnostics=True)
    steps, q = res.info["steps"], 25 / n
    rows = res.diagnostics.counters["sampled_rows"]
    mean, sd = steps * n * q, math.sqrt(steps * n * q * (1 - q))
    assert steps == 400 and abs(rows - mean) < 5 * sd


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_privacy_report_states_relation_sampling_and_accountant(sampling):
    X, _, y_cls = make_problem(n=100, p=10)
    res = dp_scd(X, y_cls, Hinge(), L2(0.01), epsilon=0.7, delta=1e-6, passes=2, clip=0.2,
                 batch_size=10, sampling=sampling, random_state=0)
    report = str(res.privacy)
    assert res.privacy.epsilon <= 0.7
    if sampling == "poisson":
        assert res.privacy.relation == "add-remove"
        assert "Poisson" in report and "PLD" in report and "add/remove" in report
    else:
        assert res.privacy.relation == "replace-one"
        assert "without replacement" in report and "Wang, Balle and Kasiviswanathan" in report


def test_same_seed_same_fit_and_private_fit_is_finite():
    X, y_reg, _ = make_problem()
    kw = dict(epsilon=1.0, delta=1e-5, passes=3, clip=0.5, batch_size=20, random_state=9)
    a = dp_scd(X, y_reg, Squared(), L2(0.05), **kw)
    b = dp_scd(X, y_reg, Squared(), L2(0.05), **kw)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert np.all(np.isfinite(a.coef)) and a.n_iter == 30


# ---------------------------------------------------------------- bad input
def base_args():
    X, y_reg, y_cls = make_problem(n=30, p=5)
    return X, y_reg, y_cls


@pytest.mark.parametrize("penalty, error, match", [
    (L2(0.0), ValueError, "alpha > 0"),
    (L1(0.1), ValueError, "L2"),
    (ElasticNet(0.1, 0.5), ValueError, "no L1 part"),
    (None, ValueError, "L2"),
])
def test_bad_penalty_is_refused(penalty, error, match):
    X, y, _ = base_args()
    with pytest.raises(error, match=match):
        dp_scd(X, y, Squared(), penalty, epsilon=1.0, delta=1e-5, passes=1, clip=1.0,
               batch_size=5)


def test_elastic_net_without_l1_part_is_ridge():
    """ElasticNet(alpha, 0) is L2(alpha): what the spec's ``ridge`` accepts."""
    X, y, _ = base_args()
    kw = dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0, batch_size=5, random_state=2)
    np.testing.assert_array_equal(dp_scd(X, y, Squared(), ElasticNet(0.1, 0.0), **kw).coef,
                                  dp_scd(X, y, Squared(), L2(0.1), **kw).coef)


def test_bad_datafit_and_labels_are_refused():
    X, y_reg, y_cls = base_args()
    with pytest.raises(ValueError, match="Squared"):
        dp_scd(X, y_cls, SquaredHinge(), L2(0.1), epsilon=1.0, delta=1e-5, passes=1,
               clip=1.0, batch_size=5)
    for datafit in (Logistic(), Hinge()):
        with pytest.raises(ValueError, match="labels"):
            dp_scd(X, y_reg, datafit, L2(0.1), epsilon=1.0, delta=1e-5, passes=1,
                   clip=1.0, batch_size=5)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=1.0), "delta"),
    (dict(batch_size=0), "batch_size"),
    (dict(batch_size=31), "batch_size"),
    (dict(batch_size=2.5), "batch_size"),
    (dict(passes=0), "passes"),
    (dict(clip=math.inf), "clip"),
    (dict(clip=-1.0), "clip"),
    (dict(sampling="shuffle"), "sampling"),
])
def test_bad_options_are_refused(kwargs, match):
    X, y, _ = base_args()
    args = dict(epsilon=1.0, delta=1e-5, passes=1, clip=1.0, batch_size=5)
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        dp_scd(X, y, Squared(), L2(0.1), **args)


def test_planted_bugs_change_the_mechanism_not_the_ledger():
    X, y_reg, _ = make_problem(n=100, p=10)
    X = X * 10.0  # rows of norm > 1: the scaling matters
    kw = dict(epsilon=1.0, delta=1e-5, passes=2, clip=0.1, batch_size=10, random_state=3)
    clean = dp_scd(X, y_reg, Squared(), L2(0.05), **kw)
    with injected("no_clipping"):
        unclipped = dp_scd(X, y_reg, Squared(), L2(0.05), **kw)
    with injected("sensitivity_halved"):
        halved = dp_scd(X, y_reg, Squared(), L2(0.05), **kw)
    assert not np.allclose(unclipped.coef, clean.coef)
    assert unclipped.privacy.epsilon == clean.privacy.epsilon
    assert halved.info["noise_scale"] == pytest.approx(clean.info["noise_scale"] / 2)
    assert halved.privacy.epsilon == clean.privacy.epsilon


@pytest.mark.parametrize("p", [1, 7, 1000])
def test_coordinate_states_are_zeroed_aligned_records(p):
    state = coordinate_states(p)
    assert state.shape == (p,) and state.dtype.itemsize == 32
    assert state.ctypes.data % 64 == 0  # a record never straddles two cache lines
    assert not any(np.any(state[name]) for name in state.dtype.names)


def test_lazy_auto_reads_only_public_quantities():
    """lazy="auto" is lazy while L < 0.7 p, whatever the data's nonzeros: two data sets
    of one shape and different densities get the same choice (info["lazy"] is released,
    so it must not depend on the rows)."""
    y = np.where(np.arange(40) % 2, 1.0, -1.0)
    for p, batch_size, lazy in ((200, 5, True), (200, 20, True), (20, 14, False),
                                (20, 13, True)):
        for density in (0.05, 0.9):
            X = sp.random(40, p, density=density, format="csr", rng=0)
            res = dp_scd(X, y, Logistic(), L2(0.1), epsilon=1.0, delta=1e-5, passes=1,
                         clip=1.0, batch_size=batch_size, random_state=0)
            assert res.info["lazy"] is lazy, (p, batch_size, density)


def test_lazy_steps_and_finish_refuse_the_draws_of_another_walk():
    """The buffered draws belong to one walk: draws built for another walk (or for
    several) would add noise of the wrong scale, so both kernels raise ValueError;
    the run's own buffers are accepted."""
    from sparsedp._kernels._walk import GaussianWalk, WalkBuffers
    X = sp.random(6, 4, density=0.5, format="csr", random_state=0)
    n, p = X.shape
    data, indptr = X.data.astype(np.float64), X.indptr.astype(np.int64)
    walk, other = GaussianWalk(2.0 ** 20, 64), GaussianWalk(2.0 ** 14, 64)

    def steps(draws):
        state = coordinate_states(p)
        dp_scd_steps(0, data, X.indices.astype(np.int32), indptr, np.ones(n), np.ones(n),
                     np.zeros(n), state, np.zeros(n), np.zeros(n, np.int64),
                     Batches(n, 1.0), 0, 2, 2, 1.0, 1.0, 2, walk, 1e-6, 1e6, False,
                     np.random.default_rng(0), np.random.default_rng(1), draws)
        return state

    from sparsedp._kernels._dp_scd_fast import dp_scd_finish
    for wrong in (WalkBuffers([other]), WalkBuffers([walk, other])):
        with pytest.raises(ValueError, match="WalkBuffers of this walk"):
            steps(wrong)
        with pytest.raises(ValueError, match="WalkBuffers of this walk"):
            dp_scd_finish(coordinate_states(p), 3, walk, 1e-6, np.random.default_rng(1), wrong)
    own = WalkBuffers([walk])
    state = steps(own)
    dp_scd_finish(state, 2, walk, 1e-6, np.random.default_rng(1), own)
    assert np.all(state["last"] == 2)


def test_lazy_catch_up_of_no_steps_draws_nothing():
    """The catch-up is branch-free: a coordinate already at t reads the exact 0 of a
    sum of no steps.  Finishing at the states' own step (or before it) leaves them
    unchanged and draws nothing (the next draws are those of a fresh buffer), and a
    finish at t + 3 adds, per coordinate, the sum of 3 walk steps (the walk's law)."""
    from sparsedp._kernels._dp_scd_fast import dp_scd_finish
    from sparsedp._kernels._walk import GaussianWalk, WalkBuffers
    p, grid = 2000, 1e-6
    walk = GaussianWalk(2.0 ** 20, 64)
    state = coordinate_states(p)
    state["last"] = 5
    state["acc"] = np.arange(p)
    state["v"] = grid * state["acc"]
    before = state.copy()
    draws = WalkBuffers([walk])
    rng = np.random.default_rng(1)
    for t in (5, 2, 0):  # at or before the states' step: nothing to add, nothing drawn
        dp_scd_finish(state, t, walk, grid, rng, draws)
        np.testing.assert_array_equal(state, before)
    dp_scd_finish(state, 8, walk, grid, rng, draws)
    assert np.all(state["last"] == 8)
    fresh = walk.sums(np.random.default_rng(1), np.full(p, 3), buffered=True)
    np.testing.assert_array_equal(state["acc"] - before["acc"], fresh)
    np.testing.assert_array_equal(state["v"], grid * state["acc"])


def test_csr_rows_are_scipys_rows_with_int32_indices():
    """The stochastic kernels' rows (DP-SGD's and DP-SCD's): scipy's CSR arrays with
    int32 column indices (12 bytes a nonzero), row norms against numpy's; a matrix
    whose column indices do not fit is refused, never wrapped."""
    from sparsedp.solvers._base import csr_rows
    X = sp.csc_array(make_problem(n=50, p=40, density=0.2, seed=3)[0])
    indptr, indices, data, norms = csr_rows(X)
    ref = X.tocsr()
    ref.sort_indices()
    assert indices.dtype == np.int32 and indptr.dtype == np.int64
    np.testing.assert_array_equal(indptr, ref.indptr)
    np.testing.assert_array_equal(indices, ref.indices)
    np.testing.assert_array_equal(data, ref.data)
    np.testing.assert_allclose(norms, np.linalg.norm(X.toarray(), axis=1), rtol=1e-14)
    wide = sp.csr_array((np.ones(1), np.array([2 ** 31], dtype=np.int64),
                         np.array([0, 1], dtype=np.int64)), shape=(1, 2 ** 31 + 1))
    with pytest.raises(ValueError, match=r"2147483649 columns.*at most 2147483648 \(int32\)"):
        csr_rows(wide)
    assert csr_rows(wide, np.int64)[1].tolist() == [2 ** 31]
