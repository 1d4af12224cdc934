"""coef_init, the public starting point of dp_cd, dp_gcd and dp_sgd."""
import numpy as np
import pytest

from problems import make_sparse_problem
from sparsedp.datafits import Logistic
from sparsedp.penalties import L2
from sparsedp.solvers import dp_cd, dp_gcd, dp_sgd, exact

INF = float("inf")
pytestmark = pytest.mark.filterwarnings("ignore::sparsedp.exceptions.PrivacyLeakWarning")
STEPS = {dp_cd: dict(passes=3), dp_gcd: dict(n_iter=30, selection="exponential"),
         dp_sgd: dict(passes=2, batch_size=300)}


def problem():
    X, y = make_sparse_problem(300, 40, density=0.3, seed=0, labels="coin", values="uniform")
    return X, y, exact(X, y, Logistic(), L2(0.01), tol=1e-13).coef


@pytest.mark.parametrize("solver", [dp_cd, dp_gcd, dp_sgd])
def test_noiseless_run_from_the_optimum_stays_there(solver):
    X, y, w_star = problem()
    res = solver(X, y, Logistic(), L2(0.01), epsilon=INF, delta=1e-5, clip=INF,
                 coef_init=w_star, random_state=0, **STEPS[solver])
    np.testing.assert_allclose(res.coef, w_star, atol=1e-8)
    cold = solver(X, y, Logistic(), L2(0.01), epsilon=INF, delta=1e-5, clip=INF,
                  random_state=0, **STEPS[solver])
    assert np.abs(cold.coef - w_star).max() > 1e-3  # so the start mattered


@pytest.mark.parametrize("lazy", [True, False])
def test_dp_sgd_noise_does_not_depend_on_the_start(lazy):
    """w(T) - w_init-run is the same noise whatever the start: with full batches the
    data part is a contraction, the noise part identical.  The logistic step is not
    linear, so the two differences agree only as the paths from the two starts
    meet: after 20 passes within 0.12 of the largest (seeds 0-9; 0.33 after 5
    passes), where independent noises would differ by about 1.4 of it."""
    X, y, w_star = problem()
    kw = dict(epsilon=20.0, delta=1e-5, clip=100.0, passes=20, batch_size=300, lazy=lazy)
    for seed in range(3):
        noisy = [dp_sgd(X, y, Logistic(), L2(0.01), coef_init=w, random_state=seed, **kw).coef
                 for w in (None, w_star)]
        clean = [dp_sgd(X, y, Logistic(), L2(0.01), epsilon=INF, delta=1e-5, clip=INF,
                        passes=20, batch_size=300, coef_init=w, random_state=seed).coef
                 for w in (None, w_star)]
        # the same integer noise enters both runs; the paths differ by the data term only
        d0, d1 = noisy[0] - clean[0], noisy[1] - clean[1]
        assert np.abs(d0).max() > 1e-3
        np.testing.assert_allclose(d0, d1, atol=0.25 * np.abs(d0).max())


@pytest.mark.parametrize("solver", [dp_cd, dp_gcd, dp_sgd])
def test_bad_coef_init(solver):
    X, y, _ = problem()
    kw = dict(epsilon=1.0, delta=1e-5, clip=1.0, smoothness=np.full(40, 0.25),
              random_state=0, **STEPS[solver])
    with pytest.raises(ValueError, match=r"coef_init must have shape \(40,\)"):
        solver(X, y, Logistic(), L2(0.01), coef_init=np.zeros(39), **kw)
    with pytest.raises(ValueError, match="coef_init contains NaN"):
        solver(X, y, Logistic(), L2(0.01), coef_init=np.full(40, np.nan), **kw)
