"""Public constants a fit derives from a read-only array, kept per process
(``sparsedp._kernels._immutable.kept_derived``), and the noisy max DP-GCD copies
for a kept start: what a sweep's fits share.  Kept values must be the values
computed afresh, read-only, and go with the array they come from."""
import gc

import numpy as np
import pytest

from problems import make_sparse_problem, read_only_csc
from sparsedp._kernels import _dp_gcd_fast, _immutable
from sparsedp._kernels._immutable import kept_derived
from sparsedp.datafits import Logistic, Squared
from sparsedp.penalties import L1
from sparsedp.solvers import dp_cd, dp_gcd


def _frozen(a):
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def test_a_value_derived_from_a_read_only_array_is_computed_once_and_read_only():
    M = _frozen(np.linspace(0.1, 1.0, 50))
    calls = []

    def twice():
        calls.append(1)
        return 2.0 * M

    first = kept_derived(M, ("twice", 1), twice)
    second = kept_derived(M, ("twice", 1), twice)
    assert second is first and len(calls) == 1
    np.testing.assert_array_equal(first, 2.0 * M)
    assert not first.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 1.0
    other = kept_derived(M, ("twice", 2), twice)  # another key: computed afresh
    assert other is not first and len(calls) == 2


@pytest.mark.parametrize("make", [lambda a: np.array(a), lambda a: _frozen_view(a)],
                         ids=["writeable", "read-only view of a writeable array"])
def test_an_array_that_can_change_gets_a_fresh_value_every_time(make):
    M = make(np.linspace(0.1, 1.0, 50))
    values = [kept_derived(M, ("twice",), lambda: 2.0 * M) for _ in range(2)]
    assert values[0] is not values[1]
    assert values[0].flags.writeable  # not frozen: the caller's own array


def _frozen_view(a):
    base = np.array(a)
    view = base.view()
    view.setflags(write=False)
    return view


def test_kept_values_go_with_their_array_and_are_bounded():
    M = _frozen(np.ones(10))
    kept_derived(M, ("goes",), lambda: 2.0 * M)
    key_id = id(M)
    del M
    gc.collect()
    N = _frozen(np.ones(10))  # may reuse the address (and the id): never the old value
    value = kept_derived(N, ("goes",), lambda: 3.0 * N)
    np.testing.assert_array_equal(value, 3.0 * N)
    assert all(key[0] != key_id or ref() is not None
               for key, (ref, _, _) in _immutable._DERIVED.items())
    arrays = [_frozen(np.full(5, float(k))) for k in range(_immutable.DERIVED_KEPT + 5)]
    for a in arrays:
        kept_derived(a, ("bound",), lambda: a + 1.0)
    assert len(_immutable._DERIVED) <= _immutable.DERIVED_KEPT
    # and at most DERIVED_BYTES of arrays: six values of a fifth of it, the five most
    # recent kept (the older, smaller values gone first)
    big = _frozen(np.zeros(_immutable.DERIVED_BYTES // 40))
    for k in range(6):
        kept_derived(big, ("big", k), lambda: big + 1.0)
    assert sum(entry[2] for entry in _immutable._DERIVED.values()) <= _immutable.DERIVED_BYTES
    assert [key[-1] for key in _immutable._DERIVED] == [("big", k) for k in range(1, 6)]
    huge = _frozen(np.zeros(_immutable.DERIVED_BYTES // 24))  # a third: never kept
    values = [kept_derived(huge, ("huge",), lambda: huge + 1.0) for _ in range(2)]
    assert values[0] is not values[1] and not values[0].flags.writeable


@pytest.mark.parametrize("solver", ["dp_gcd", "dp_cd"])
def test_fits_with_kept_constants_are_the_fits_computed_afresh(solver):
    """The same fits (coefficients, public figures) with read-only data and M, whose
    thresholds, steps and grids are kept, as with writeable copies; DP-GCD's later
    runs also copy the noisy max built on their kept start."""
    X, y = make_sparse_problem(60, 40, density=0.2, seed=4, logistic=True)
    M = Logistic().smoothness(X)
    frozen_X, frozen_y, frozen_M = read_only_csc(X)[0], _frozen(y), _frozen(M)

    def fit(A, b, m, seed, clip):
        kwargs = dict(n_iter=6) if solver == "dp_gcd" else dict(passes=2)
        fit_function = dp_gcd if solver == "dp_gcd" else dp_cd
        return fit_function(A, b, Logistic(), L1(0.01), epsilon=2.0, delta=1e-5, clip=clip,
                            smoothness=m, random_state=seed, **kwargs)

    for clip in (0.5, 2.0):
        for seed in range(4):
            fresh, kept = fit(X, y, M, seed, clip), fit(frozen_X, frozen_y, frozen_M, seed, clip)
            np.testing.assert_array_equal(fresh.coef, kept.coef)
            for key in ("clip_thresholds", "step_sizes", "noise_scales", "grid"):
                if key in fresh.info:
                    np.testing.assert_array_equal(fresh.info[key], kept.info[key])
            assert not kept.info["clip_thresholds"].flags.writeable
    if solver == "dp_gcd":  # the runs after a start's first copy its noisy max
        assert any(ref() is not None for ref, _ in _dp_gcd_fast._MAXES.values())


def test_a_copied_noisy_max_selects_as_one_built_afresh():
    """Runs on one kept start, alternating two iteration counts (two noise scales of
    the selection): the first run of each scale builds its noisy max, the next copy
    it; their selections are those of kernels on writeable data (built afresh)."""
    X, y = make_sparse_problem(50, 30, density=0.2, seed=8)
    frozen_X, frozen_y = read_only_csc(X)[0], _frozen(y)
    M = _frozen(Squared().smoothness(X))

    def selected(A, b, seed, n_iter):
        res = dp_gcd(A, b, Squared(), L1(0.01), epsilon=3.0, delta=1e-5, n_iter=n_iter,
                     clip=1.0, smoothness=M, random_state=seed, selection="laplace")
        return res.info["selected"]

    _dp_gcd_fast._MAXES.clear()
    for seed in range(3):
        for n_iter in (15, 40):
            np.testing.assert_array_equal(selected(X, y, seed, n_iter),
                                          selected(frozen_X, frozen_y, seed, n_iter))
    assert len(_dp_gcd_fast._MAXES) == 2


def test_kept_noisy_maxes_are_bounded_by_count_and_bytes(monkeypatch):
    """The kept maxes stay within MAXES_KEPT and MAXES_BYTES (by NoisyMax.nbytes,
    what a copy copies: 8 + 16 + 8 bytes a coordinate and the block sums), the most
    recent kept, one at least whatever its size."""
    from sparsedp._kernels._noisy_max import NoisyMax
    scores = np.linspace(0.0, 1.0, 1000)
    one = NoisyMax(scores, 0.1, "laplace", np.random.default_rng(0))
    assert 32 * 1000 <= one.nbytes <= 40 * 1000
    frozen = _frozen(scores)
    monkeypatch.setattr(_dp_gcd_fast, "MAXES_BYTES", int(2.5 * one.nbytes))
    _dp_gcd_fast._MAXES.clear()
    for k, scale in enumerate((0.1, 0.2, 0.3, 0.4)):
        _dp_gcd_fast._start_noisy_max(frozen, scale, "laplace", np.random.default_rng(k), True)
    assert [key[1] for key in _dp_gcd_fast._MAXES] == [0.3, 0.4]  # two fit 2.5 x nbytes
    monkeypatch.setattr(_dp_gcd_fast, "MAXES_BYTES", 1)
    _dp_gcd_fast._start_noisy_max(frozen, 0.5, "laplace", np.random.default_rng(9), True)
    assert [key[1] for key in _dp_gcd_fast._MAXES] == [0.5]
    monkeypatch.setattr(_dp_gcd_fast, "MAXES_BYTES", 1 << 40)
    monkeypatch.setattr(_dp_gcd_fast, "MAXES_KEPT", 2)
    for scale in (0.6, 0.7, 0.8):
        _dp_gcd_fast._start_noisy_max(frozen, scale, "laplace", np.random.default_rng(1), True)
    assert [key[1] for key in _dp_gcd_fast._MAXES] == [0.7, 0.8]
    _dp_gcd_fast._MAXES.clear()
