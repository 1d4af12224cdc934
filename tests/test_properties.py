"""Property-based tests (hypothesis): every solver on random sparse problems.

Random shapes (1..30 rows and columns, empty rows and columns), entries from
1e-160 to 1e160 in magnitude, every datafit, penalty and option.  Whatever the
input, a solver either returns finite coefficients of the right shape or raises
a ValueError / TypeError with a message; the same seed gives the same result;
CSC, CSR, dense and non-canonical CSC (unsorted, duplicated entries) give the
same result.
"""
import warnings

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sparsedp.datafits import Logistic, Squared
from sparsedp.exceptions import PrivacyLeakWarning
from sparsedp.penalties import L1, L2, ElasticNet
from sparsedp.solvers import dp_cd, dp_gcd, exact

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw):
    """(X as canonical CSC, y, datafit): random sparsity, signs and magnitudes."""
    n = draw(st.integers(1, 30))
    p = draw(st.integers(1, 30))
    seed = draw(st.integers(0, 2**32 - 1))
    density = draw(st.sampled_from([0.0, 0.05, 0.3, 1.0]))
    low, high = sorted(draw(st.lists(st.integers(-160, 160), min_size=2, max_size=2)))
    rng = np.random.default_rng(seed)
    mask = rng.random((n, p)) < density
    values = rng.choice([-1.0, 1.0], size=(n, p)) * 10.0 ** rng.uniform(low, high, (n, p))
    X = sp.csc_array(np.where(mask, values, 0.0))
    logistic = draw(st.booleans())
    if logistic:
        y = rng.choice([-1.0, 1.0], size=n)
    else:
        y = rng.normal(size=n) * 10.0 ** draw(st.integers(-160, 160))
    return X, y, Logistic() if logistic else Squared()


penalties = st.one_of(
    st.none(),
    st.builds(L1, st.floats(1e-6, 10.0)),
    st.builds(L2, st.floats(1e-6, 10.0)),
    st.builds(ElasticNet, st.floats(1e-6, 10.0), st.floats(0.0, 1.0)),
)


@st.composite
def fits(draw):
    """A solver with random options: ``(name, call(X, y, datafit, penalty))``."""
    solver = draw(st.sampled_from(["exact", "dp_cd", "dp_gcd"]))
    if solver == "exact":
        opts = dict(max_epochs=draw(st.integers(1, 50)), tol=1e-8)
        return solver, lambda X, y, f, g: exact(X, y, f, g, **opts)
    common = dict(
        epsilon=draw(st.sampled_from([0.1, 1.0, 10.0, float("inf")])),
        delta=1e-6,
        clip=draw(st.sampled_from([1e-3, 1.0, 100.0])),
        step_size=draw(st.sampled_from([0.1, 1.0])),
        smoothness=draw(st.sampled_from([None, "public", 0.2])),
        random_state=draw(st.integers(0, 100)),
    )
    if solver == "dp_cd":
        common.update(passes=draw(st.integers(1, 3)), averaging=draw(st.booleans()),
                      order=draw(st.sampled_from(["uniform", "shuffle"])))
        fit = dp_cd
    else:
        common.update(n_iter=draw(st.integers(1, 20)),
                      rule=draw(st.sampled_from(["gs-r", "gs-s", "gs-q"])),
                      selection=draw(st.sampled_from([None, "laplace", "exponential"])),
                      gradient_noise=draw(st.sampled_from(["laplace", "gaussian"])))
        fit = dp_gcd

    def call(X, y, datafit, penalty):
        kw = dict(common)
        if kw["smoothness"] == "public":  # constants the user states (here: the true ones)
            kw["smoothness"] = datafit.smoothness(sp.csc_array(X)) + 1e-300
        if isinstance(kw["smoothness"], float):
            kw["feature_bounds"] = 1.0
        return fit(X, y, datafit, penalty, **kw)

    return solver, call


def run(call, X, y, datafit, penalty):
    """The coefficients, or None after a clear ValueError / TypeError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        try:
            res = call(X, y, datafit, penalty)
        except (ValueError, TypeError) as err:
            assert str(err), "an error without a message"
            event(f"{type(err).__name__}: {str(err)[:40]}")
            return None
    event("fitted")
    return res.coef


def non_canonical(X):
    """The same matrix as CSC with unsorted row indices and each entry split in two."""
    X = sp.csc_array(X)
    rows, cols, data = [], [], []
    rng = np.random.default_rng(0)
    for j in range(X.shape[1]):
        lo, hi = X.indptr[j], X.indptr[j + 1]
        idx = np.concatenate([X.indices[lo:hi], X.indices[lo:hi]])
        val = np.concatenate([X.data[lo:hi] / 2, X.data[lo:hi] / 2])
        order = rng.permutation(idx.size)
        rows.append(idx[order])
        data.append(val[order])
        cols.append(np.full(idx.size, j))
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows])])
    out = sp.csc_array((np.concatenate(data), np.concatenate(rows).astype(np.int32),
                        indptr.astype(np.int32)), shape=X.shape)
    assert X.nnz == 0 or not out.has_canonical_format
    return out


@SETTINGS
@given(problem=problems(), penalty=penalties, fit=fits())
def test_finite_or_a_clear_error_and_deterministic(problem, penalty, fit):
    X, y, datafit = problem
    _, call = fit
    coef = run(call, X, y, datafit, penalty)
    if coef is None:
        return
    assert coef.shape == (X.shape[1],)
    assert np.all(np.isfinite(coef))
    again = run(call, X, y, datafit, penalty)
    np.testing.assert_array_equal(coef, again)


@SETTINGS
@given(problem=problems(), penalty=penalties, fit=fits())
def test_same_result_for_every_input_format(problem, penalty, fit):
    X, y, datafit = problem
    _, call = fit
    # halving an entry is exact unless it is subnormal: keep to entries whose halves are normal
    if X.nnz and np.abs(X.data).min() < 1e-300:
        return
    ref = run(call, X, y, datafit, penalty)
    for other in (sp.csr_array(X), X.toarray(), non_canonical(X)):
        coef = run(call, other, y, datafit, penalty)
        if ref is None:
            assert coef is None
        else:
            np.testing.assert_array_equal(coef, ref)
