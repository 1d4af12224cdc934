"""Tests of the privacy package's structure: the root finder, the calibration routine,
the accountants as candidates of the ledger, extreme arguments, and adding a mechanism."""
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from sparsedp.privacy import (Gaussian, Laplace, Mechanism, PrivacyLedger, PureDP, calibrate,
                              calibrate_gaussian, gaussian_epsilon, gdp_epsilon,
                              pure_composition_epsilon)
from sparsedp.privacy._root import bracket_root, refine_root
from sparsedp.privacy.rdp import rdp_pure
from sparsedp.solvers import calibrate_dp_gcd
from sparsedp.solvers._dp_gcd import _ledger
from sparsedp.privacy._report import upper_text


# --------------------------------------------------------------------------------------
# The root finder
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("root", [1e-250, 3e-7, 1.0, math.e ** 3, 7.5e12, 1e250])
def test_bracket_root_brackets_the_sign_change(root):
    calls = []

    def fun(x):
        calls.append(x)
        return math.log(x) - math.log(root)

    lo, hi = bracket_root(fun, 1.0, rtol=1e-12)
    assert fun(lo) <= 0 < fun(hi)
    assert hi <= lo * (1 + 1e-12) * (1 + 1e-15)
    assert len(calls) < 80


def test_bracket_root_with_infinite_values_and_limits():
    def step(x):  # -inf below 0.3, +inf above: bisection only
        return -math.inf if x <= 0.3 else math.inf

    lo, hi = bracket_root(step, 1.0, rtol=1e-10)
    assert lo <= 0.3 < hi and hi / lo < 1 + 1e-9
    assert bracket_root(lambda x: 1.0, 1.0) == (0.0, 1e-300)  # never <= 0
    assert bracket_root(lambda x: -1.0, 1.0) == (1e300, math.inf)  # always <= 0


@pytest.mark.parametrize("root", [0.3, 1.7, 123.0])
def test_bracket_root_evaluations_bisection_bound_and_superlinear(root):
    """ITP's guarantee: after the bracket is found, at most one evaluation beyond
    bisection's ``ceil(log2(width / tol))``, even where interpolation is useless (a
    jump of 1e12 at the root); on a smooth function, fewer than half of bisection's
    (the Anderson-Bjorck regula falsi with bisection steps it replaced took 70 and
    24 evaluations here, ITP 37-41 and 10-13)."""
    rtol = 1e-10

    def run(fun):
        calls = []
        lo, hi = bracket_root(lambda x: calls.append(x) or fun(x), 1.0, rtol=rtol)
        assert fun(lo) <= 0 < fun(hi) and hi <= lo * (1 + rtol) * (1 + 1e-15)
        # the bracket found by the growth phase: the last x on each side before
        # the refinement, i.e. the evaluations up to the first sign change
        signs = [fun(x) > 0 for x in calls]
        first = next(i for i in range(1, len(signs)) if signs[i] != signs[0])
        width = abs(math.log(calls[first]) - math.log(calls[first - 1]))
        bisection = math.ceil(math.log2(width / math.log1p(rtol)))
        return len(calls) - (first + 1), bisection

    refine, bisection = run(lambda x: -1.0 if x <= root else 1e12)
    assert refine <= bisection + 1
    u0 = math.log(root)
    refine, bisection = run(lambda x: (math.log(x) - u0) ** 3 + 1e-3 * (math.log(x) - u0))
    assert refine < bisection / 2


def _cubic(root, calls):
    """Smooth and increasing in log x, concave near ``root`` (as a PLD's log delta)."""
    u0 = math.log(root)

    def fun(x):
        calls.append(x)
        u = math.log(x) - u0
        return 20.0 * u - 10.0 * u * u + 5.0 * u ** 3
    return fun


@pytest.mark.parametrize("shift, most", [(1e-7, 2), (1e-3, 3), (-1e-3, 3), (2e-2, 5),
                                         (-2e-2, 5), (0.3, 6)])
def test_refine_root_closes_the_bracket_from_a_shifted_guess(shift, most):
    """From the root of a shifted copy of the function and the slope there (20): a
    bracket within rtol in 2-3 evaluations for a shift of up to 1e-3 in log x, where
    bracket_root from the same guess takes 6-7; the end returned is within rtol / 4
    of the root whichever side the guess is."""
    rtol, root = 1e-6, 1.7
    calls, plain = [], []
    lo, hi = refine_root(_cubic(root, calls), root * math.exp(-shift), 20.0, rtol=rtol)
    assert lo <= root < hi <= lo * (1 + rtol)
    assert math.log(root / lo) <= rtol / 4
    assert len(calls) <= most
    bracket_root(_cubic(root, plain), root * math.exp(-shift), rtol=rtol)
    assert len(plain) >= len(calls) + 3


@pytest.mark.parametrize("case", ["jump", "plateaus", "wrong slope", "infinite below"])
def test_refine_root_falls_back_to_the_safe_search(case):
    """Where the secant steps cannot work (a jump at the root, plateaus on both sides, a
    slope that is not positive, -inf below the root), the bracket is still
    bracket_root's."""
    rtol, root, calls = 1e-9, 0.37, []

    def fun(x):
        calls.append(x)
        if case == "jump":
            return -1.0 if x <= root else 1e12
        if case == "plateaus":  # secant steps bisect: MAX_SECANT, then ITP
            return -1.0 if x <= root else 1.0
        if case == "infinite below":
            return -math.inf if x <= root else math.log(x / root)
        return math.log(x / root)

    slope = -1.0 if case == "wrong slope" else 1.0
    lo, hi = refine_root(fun, 0.5, slope, rtol=rtol)
    assert lo <= root < hi <= lo * (1 + rtol) * (1 + 1e-15)
    assert len(calls) < 80


# --------------------------------------------------------------------------------------
# Calibration: tight, safe, monotone, never more noise than a plain bisection
# --------------------------------------------------------------------------------------
def _bisection_e0(epsilon, delta, n_iter, selection, noise):
    """Independent reference: the largest e0 whose ledger spends <= epsilon (bisection)."""
    def spent(e0):
        return _ledger(e0, n_iter, selection, noise, delta).get_epsilon(delta)

    lo, hi = epsilon / (8 * n_iter), 4 * epsilon
    assert spent(lo) <= epsilon < spent(hi)
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if spent(mid) <= epsilon else (lo, mid)
    return lo


@pytest.mark.parametrize("selection", ["laplace", "exponential"])
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("epsilon, delta, n_iter", [(1.0, 1e-6, 10), (0.3, 1e-8, 200),
                                                    (5.0, 1e-5, 2000)])
def test_calibrate_dp_gcd_is_the_ledger_boundary(selection, noise, epsilon, delta, n_iter):
    e0 = calibrate_dp_gcd(epsilon, delta, n_iter, selection, noise)
    assert _ledger(e0, n_iter, selection, noise, delta).get_epsilon(delta) <= epsilon
    assert _ledger(e0 * (1 + 1e-8), n_iter, selection, noise, delta).get_epsilon(delta) \
        > epsilon * (1 - 1e-9)
    assert e0 >= _bisection_e0(epsilon, delta, n_iter, selection, noise) * (1 - 1e-9)


@pytest.mark.parametrize("selection", ["laplace", "exponential"])
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_calibrate_dp_gcd_is_monotone(selection, noise):
    by_delta = [calibrate_dp_gcd(1.0, d, 20, selection, noise)
                for d in np.geomspace(1e-12, 0.9, 25)]
    assert np.all(np.diff(by_delta) >= 0)
    by_epsilon = [calibrate_dp_gcd(e, 1e-6, 1, selection, noise)
                  for e in np.geomspace(1e-3, 1e4, 25)]
    assert np.all(np.diff(by_epsilon) > 0)
    by_steps = [calibrate_dp_gcd(1.0, 1e-6, t, selection, noise) for t in (1, 3, 30, 300, 3000)]
    assert np.all(np.diff(by_steps) < 0)


def test_calibrate_dp_gcd_large_epsilon_is_finite_and_within_budget():
    for epsilon in (800.0, 1e4):
        for selection in ("laplace", "exponential"):
            e0 = calibrate_dp_gcd(epsilon, 1e-6, 1, selection, "laplace")
            assert math.isfinite(e0) and e0 >= epsilon / 2 * (1 - 1e-12)
            assert _ledger(e0, 1, selection, "laplace", 1e-6).get_epsilon(1e-6) <= epsilon


def test_calibrate_gaussian_tiny_epsilon_returns():
    """Below about 1e-15 the old search never ended (its bracket started at 0)."""
    for epsilon in (1e-16, 1e-100):
        z = calibrate_gaussian(epsilon, 1e-6, 1000)
        assert math.isfinite(z)
        assert gaussian_epsilon(z, 1000, 1e-6) <= epsilon
    with pytest.raises(ValueError, match="too small"):
        calibrate_gaussian(1e-320, 1e-320, 10**6)


def test_calibrate_any_ledger_noise_multiplier():
    """The generic routine gives calibrate_gaussian's answer for a Gaussian ledger."""
    def ledger_of(z):
        ledger = PrivacyLedger()
        ledger.add_gaussian("g", z, count=500)
        return ledger

    z = calibrate(ledger_of, 1.0, 1e-6, 10.0, noise=True)
    assert z == pytest.approx(calibrate_gaussian(1.0, 1e-6, 500), rel=1e-9)
    assert ledger_of(z).get_epsilon(1e-6) <= 1.0


# --------------------------------------------------------------------------------------
# The ledger's candidates
# --------------------------------------------------------------------------------------
def test_ledger_split_beats_every_delta_share():
    """The optimised epsilon split between a Gaussian group (exact GDP) and a pure group
    (best composition) is at least as good as any fixed split of delta."""
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add_gaussian("gradients", 30.0, count=300)
    ledger.add_pure("selections", 0.01, count=300)
    eps = ledger.get_epsilon(1e-6)
    mu = math.sqrt(300) / 30.0
    for share in (0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99):
        by_share = gdp_epsilon(mu, 1e-6 * share) + pure_composition_epsilon(
            0.01, 300, 1e-6 * (1 - share))
        assert eps <= by_share * (1 + 1e-9)


def test_ledger_extreme_noise_never_raises():
    for z in (1e-320, 1e-200, 1e200):
        for add in ("add_gaussian", "add_laplace"):
            ledger = PrivacyLedger(delta=1e-6)
            getattr(ledger, add)("m", z, count=10)
            ledger.add_pure("selection", 0.1)
            eps = ledger.epsilon
            assert eps >= 0 and not math.isnan(eps)
            assert (z < 1e-100) == (eps > 1e3) or math.isinf(eps)
            assert "Total" in str(ledger)


# --------------------------------------------------------------------------------------
# Adding a mechanism is adding a class
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """Binary randomized response with flip probability 1 / (1 + e^eps0): eps0-DP."""

    epsilon0: float
    kind: ClassVar[str] = "randomized_response"

    @property
    def pure_epsilon(self):
        return self.epsilon0

    def rdp(self, orders):
        return self.count * rdp_pure(self.epsilon0, orders)


def test_a_new_mechanism_is_accounted_by_every_applicable_accountant():
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add(RandomizedResponse(0.05, name="votes", count=400))
    names = [name for name, _ in ledger.candidates()]
    assert set(names) == {"basic", "advanced", "zcdp", "rdp", "optimal"}
    same = PrivacyLedger(delta=1e-6)
    same.add(PureDP(0.05, name="votes", count=400))
    assert ledger.epsilon == same.epsilon
    # the same curve inverted from another starting guess: the same root, both ends
    # of brackets of relative width 1e-12 on the safe side
    assert ledger.epsilon == pytest.approx(pure_composition_epsilon(0.05, 400, 1e-6), rel=1e-12)
    assert "randomized_response" in str(ledger)
    with pytest.raises(ValueError, match="relation must be one of"):
        Gaussian(1.0, relation="neighbours")
    assert Laplace(2.0, count=3).as_dict()["kind"] == "laplace"


def test_gdp_delta_is_an_upper_bound_at_every_scale():
    """log delta(eps) of mu-GDP never below a 120-digit evaluation, for mu from 1e-25 (where
    the two terms of the formula agree to every double digit) to 30 (seeded, 400 pairs)."""
    import mpmath

    from sparsedp.privacy.gdp import gdp_log_delta

    mpmath.mp.dps = 120
    rng = np.random.default_rng(1)
    for _ in range(400):
        mu, eps = 10 ** rng.uniform(-25, 1.5), 10 ** rng.uniform(-30, 1.5)
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        exact = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
        ref = float(mpmath.log(exact)) if exact > 0 else -math.inf
        got = gdp_log_delta(eps, mu)
        assert got >= ref - 1e-12 * abs(ref), (mu, eps)
        if mu > 1e-3 and ref > -700:
            assert got <= ref + 1e-9, (mu, eps)


def test_gdp_log_delta_array_is_the_scalar_curve():
    """The PLD's vectorised GDP curve takes the same branches as the scalar one (seeded)."""
    from sparsedp.privacy.gdp import gdp_log_delta, gdp_log_delta_array

    rng = np.random.default_rng(0)
    for mu in list(10 ** rng.uniform(-8, 1.5, 100)) + [1e-4, 1.4e-3, 1.0]:
        eps = np.concatenate([[0.0, np.inf], 10 ** rng.uniform(-8, 2, 30)])
        got = gdp_log_delta_array(eps, mu)
        want = np.array([gdp_log_delta(e, mu) for e in eps])
        np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-13, atol=1e-13)


# --------------------------------------------------------------------------------------
# The report: to_dict, the printed table, composition of ledgers
# --------------------------------------------------------------------------------------
MECHANISM_KEYS = ["name", "kind", "count", "sensitivity", "relation", "noise_multiplier",
                  "noise_scale", "epsilon0", "sampling_rate"]


def mixed_ledger():
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add_gaussian("coordinate gradients", 20.0, count=1000, sensitivity=0.02)
    ledger.add_laplace("smoothness constants", 8.0, count=1, sensitivity=1.5)
    ledger.add_pure("coordinate selection (report-noisy-max, Lap(2 Delta / eps0) on the "
                    "rule's score)", 0.01, count=50)
    ledger.add_bounded_range("exponential selection", 0.02, count=30, sensitivity=0.1)
    ledger.add_sampler_error("Laplace draws", 2.0 ** -40, count=51)
    ledger.add_sampler_tv("report-noisy-max draws", 1e-15, count=50)
    return ledger


def test_to_dict_round_trips_through_json_and_states_the_ledger():
    import json

    ledger = mixed_ledger()
    report = ledger.to_dict()
    assert json.loads(json.dumps(report)) == report
    eps, method = ledger.get_epsilon(return_method=True)
    assert (report["epsilon"], report["method"]) == (eps, method)
    assert report["epsilon_ignoring_leaks"] == eps
    assert (report["delta"], report["relation"], report["private"]) == (1e-6, "replace-one",
                                                                        True)
    assert len(report["mechanisms"]) == len(ledger)
    for row, entry in zip(report["mechanisms"], ledger.entries):
        assert list(row)[:len(MECHANISM_KEYS)] == MECHANISM_KEYS
        assert (row["name"], row["kind"], row["count"], row["sensitivity"]) == (
            entry.name, entry.kind, entry.count, entry.sensitivity)
        assert row["epsilon0"] == entry.pure_epsilon
    gauss, lap, rnm, expo = report["mechanisms"]
    assert (gauss["noise_multiplier"], gauss["noise_scale"], gauss["epsilon0"]) == (
        20.0, 20.0 * 0.02, None)
    assert (lap["noise_scale"], lap["epsilon0"]) == (8.0 * 1.5, 1 / 8.0)
    assert (rnm["noise_multiplier"], rnm["sensitivity"], rnm["epsilon0"]) == (None, None, 0.01)
    assert expo["kind"] == "bounded_range" and expo["sampling_rate"] is None
    assert report["sampler_slack"] == [
        {"name": "Laplace draws", "kind": "log-ratio", "eta": 2.0 ** -40, "count": 51},
        {"name": "report-noisy-max draws", "kind": "total-variation", "tau": 1e-15,
         "count": 50}]
    assert report["leaks"] == []

    ledger.add_leak("feature bounds", "twice the largest |X_ij|")
    leaky = ledger.to_dict()
    text = json.dumps(leaky)
    assert '"epsilon": Infinity' in text and json.loads(text) == leaky
    assert (leaky["epsilon"], leaky["method"], leaky["private"]) == (math.inf, "leak", False)
    assert leaky["epsilon_ignoring_leaks"] == eps == ledger.get_epsilon(ignore_leaks=True)
    assert leaky["leaks"] == [{"name": "feature bounds",
                               "description": "twice the largest |X_ij|"}]

    sampled = PrivacyLedger(relation="add-remove")
    sampled.add_sampled_gaussian("minibatch", 1.1, 0.01, count=100, sensitivity=2.0)
    report = sampled.to_dict()
    assert report["epsilon"] is None and report["method"] is None and report["delta"] is None
    row = report["mechanisms"][0]
    assert (row["sampling_rate"], row["noise_scale"], row["relation"]) == (0.01, 2.2,
                                                                          "add-remove")
    assert json.loads(json.dumps(report)) == report


def test_as_dict_gives_every_mechanism_the_same_keys():
    mechanisms = [Gaussian(3.0), Laplace(2.0, count=3), PureDP(0.5),
                  RandomizedResponse(0.05, name="votes", count=4)]
    for m in mechanisms:
        assert list(m.as_dict())[:len(MECHANISM_KEYS)] == MECHANISM_KEYS
    assert RandomizedResponse(0.05).as_dict()["epsilon0"] == 0.05
    assert Laplace(0.0).as_dict()["epsilon0"] == math.inf  # no noise
    assert Gaussian(math.inf, sensitivity=0.0).as_dict()["noise_scale"] == math.inf


def _row_of(lines, name):
    """The table row of mechanism ``name`` (the line below the name if it stands alone)."""
    k = next(k for k, line in enumerate(lines) if line.strip().startswith(name))
    return lines[k + 1] if lines[k].strip() == name else lines[k]


def test_report_table_lists_every_mechanism_with_its_count_and_noise():
    ledger = mixed_ledger()
    text = str(ledger)
    lines = text.splitlines()
    eps = ledger.epsilon
    assert lines[0] == f"PrivacyLedger: replace-one neighbours, ({upper_text(eps)}, 1e-06)-DP"
    assert lines[1].split() == ["mechanism", "kind", "count", "sensitivity", "noise", "eps0"]
    count_end = lines[1].index("count") + len("count")
    for entry in ledger.entries:
        row = _row_of(lines, entry.name)
        assert entry.kind in row.split()
        # counts right-aligned under the header
        assert row[:count_end].endswith(f" {entry.count}")
    long_name = ledger.entries[2].name
    assert f"  {long_name}" in lines  # longer than the column: a line of its own
    assert "sigma=0.4 = 20 x sensitivity" in _row_of(lines, "coordinate gradients")
    assert "scale=12 = 8 x sensitivity" in _row_of(lines, "smoothness constants")
    assert _row_of(lines, "smoothness constants").split()[-1] == "0.125"
    assert _row_of(lines, long_name).split()[-1] == "0.01"
    method = ledger.get_epsilon(return_method=True)[1]
    assert lines[-1] == (f"Total: ({upper_text(eps)}, 1e-06)-DP under replace-one neighbours "
                         f"[{method}, incl. floating-point slack]")
    # a planted bug: a mechanism missing from the table is noticed
    dropped = PrivacyLedger(delta=1e-6)
    dropped.entries = ledger.entries[1:]
    with pytest.raises(StopIteration):
        _row_of(str(dropped).splitlines(), "coordinate gradients")

    sampled = PrivacyLedger(delta=1e-5, relation="add-remove")
    sampled.add_sampled_gaussian("minibatch", 1.1, 0.01, count=100, sensitivity=2.0)
    lines = str(sampled).splitlines()
    assert lines[0].startswith("PrivacyLedger: add/remove neighbours (n public), (")
    assert lines[1].split()[-1] == "q"
    assert _row_of(lines, "minibatch").split() == ["minibatch", "sampled_gaussian", "100", "2",
                                                   "sigma=2.2", "=", "1.1", "x", "sensitivity",
                                                   "-", "0.01"]
    assert str(PrivacyLedger()).splitlines() == [
        "PrivacyLedger: replace-one neighbours, no delta set", "  (no mechanism recorded)",
        "Total: set a delta to compute epsilon"]


def gaussian_fit(delta=1e-6, relation="replace-one"):
    fit = PrivacyLedger(delta=delta, relation=relation)
    fit.add_gaussian("smoothness constants", 30.0, count=1, relation=relation)
    fit.add_gaussian("coordinate gradients", 25.0, count=400, relation=relation)
    return fit


@pytest.mark.parametrize("K", [1, 3, 10])
def test_compose_of_gaussian_fits_is_their_exact_gdp_composition(K):
    fits = [gaussian_fit() for _ in range(K)]
    ovr = PrivacyLedger.compose(fits, names=[f"class {k}" for k in range(K)])
    mu = math.sqrt(1 / 30.0 ** 2 + 400 / 25.0 ** 2)  # one fit is mu-GDP
    eps, method = ovr.get_epsilon(return_method=True)
    assert method == "gdp" and ovr.delta == 1e-6 and ovr.relation == "replace-one"
    # mu = sqrt(sum of the squared mu of every entry), as the GDP accountant sums them
    mus = [math.sqrt(1) / 30.0, math.sqrt(400) / 25.0] * K
    assert eps == gdp_epsilon(math.sqrt(math.fsum(m * m for m in mus)), 1e-6)
    assert eps == pytest.approx(gdp_epsilon(math.sqrt(K) * mu, 1e-6), rel=1e-12)
    assert (K == 1) == (eps == fits[0].epsilon)
    assert len(ovr) == 2 * K and all(len(fit) == 2 for fit in fits)  # the parts unchanged
    assert ovr.entries[-1].name == f"class {K - 1}: coordinate gradients"
    assert f"class {K - 1}: coordinate gradients" in str(ovr)
    assert [e.name for e in PrivacyLedger.compose(fits).entries][:2] == [
        "fit 0: smoothness constants", "fit 0: coordinate gradients"]


def test_compose_with_a_leak_in_one_part_is_not_private():
    fits = [gaussian_fit() for _ in range(3)]
    fits[1].add_leak("smoothness constants", "M_j computed from the data")
    ovr = PrivacyLedger.compose(fits, names=["a", "b", "c"])
    assert not ovr.private and ovr.epsilon == math.inf
    assert ovr.get_epsilon(ignore_leaks=True) == PrivacyLedger.compose(
        [gaussian_fit() for _ in range(3)]).epsilon
    assert "NOT PRIVATE, leaks: b: smoothness constants" in str(ovr)
    assert ovr.to_dict()["leaks"] == [{"name": "b: smoothness constants",
                                       "description": "M_j computed from the data"}]


def test_compose_adds_up_the_sampler_slack():
    K, eta, draws = 4, 1e-9, 401
    fits = []
    for _ in range(K):
        fit = gaussian_fit(delta=1e-5)
        fit.add_sampler_error("integer noise", eta, count=draws)
        fit.add_sampler_tv("tail", 1e-14, count=draws)
        fits.append(fit)
    ovr = PrivacyLedger.compose(fits)
    ideal = PrivacyLedger.compose([gaussian_fit(delta=1e-5) for _ in range(K)])
    ideal.add_sampler_error("all integer noise", eta, count=K * draws)
    ideal.add_sampler_tv("all tails", 1e-14, count=K * draws)
    assert ovr.epsilon == pytest.approx(ideal.epsilon, rel=1e-12)
    # H = sum eta * count over every part: more slack than one part's
    one_part = PrivacyLedger.compose([gaussian_fit(delta=1e-5) for _ in range(K)])
    one_part.add_sampler_error("integer noise", eta, count=draws)
    one_part.add_sampler_tv("tail", 1e-14, count=draws)
    assert ovr.epsilon > one_part.epsilon
    assert [s["name"] for s in ovr.to_dict()["sampler_slack"]][:3] == [
        "fit 0: integer noise", "fit 1: integer noise", "fit 2: integer noise"]


def test_compose_arguments():
    with pytest.raises(ValueError, match="different neighbouring relations"):
        PrivacyLedger.compose([gaussian_fit(), gaussian_fit(relation="add-remove")])
    with pytest.raises(ValueError, match="names has 1 entries for 2 ledgers"):
        PrivacyLedger.compose([gaussian_fit(), gaussian_fit()], names=["a"])
    with pytest.raises(TypeError, match="not a str"):
        PrivacyLedger.compose([gaussian_fit(), gaussian_fit()], names="ab")
    with pytest.raises(TypeError, match=r"ledgers\[1\] must be a PrivacyLedger"):
        PrivacyLedger.compose([gaussian_fit(), {"epsilon": 1.0}])
    with pytest.raises(ValueError, match="at least one ledger"):
        PrivacyLedger.compose([])
    # delta: the parts' common one, none if they differ, or the one given
    assert PrivacyLedger.compose([gaussian_fit(1e-5), gaussian_fit(1e-6)]).delta is None
    given = PrivacyLedger.compose([gaussian_fit(1e-5), gaussian_fit(1e-6)], delta=1e-7)
    assert given.delta == 1e-7 and given.epsilon > PrivacyLedger.compose(
        [gaussian_fit(1e-6), gaussian_fit(1e-6)]).epsilon


# ------------------------------------------------------------------ cached epsilons

def _sweep_ledgers():
    from sparsedp.privacy import PrivacyLedger
    a = PrivacyLedger(relation="add-remove")
    a.add_sampled_gaussian("steps", 1.1, 0.01, count=2000)
    a.add_sampler_tv("batch sizes", 1e-20, count=2000)
    b = PrivacyLedger()
    b.add_gaussian("updates", 20.0, count=1000)
    b.add_laplace("selection", 4.0, count=3)
    b.add_sampler_error("grid", 1e-12, count=1003)
    c = PrivacyLedger()
    c.add_gaussian("updates", 20.0 * (1 + 1e-12), count=1000)  # b up to one ulp-ish
    c.add_laplace("selection", 4.0, count=3)
    c.add_sampler_error("grid", 1e-12, count=1003)
    return a, b, c


def test_cached_epsilons_give_the_uncached_answer_and_tell_ledgers_apart():
    from sparsedp.privacy.ledger import cached_epsilons
    ledgers = _sweep_ledgers()
    plain = [led.get_epsilon(1e-6, return_method=True) for led in ledgers]
    with cached_epsilons():
        first = [led.get_epsilon(1e-6, return_method=True) for led in ledgers]
        again = [led.get_epsilon(1e-6, return_method=True) for led in ledgers]
        other_delta = ledgers[1].get_epsilon(1e-8)
    assert first == plain and again == plain
    assert plain[1][0] != plain[2][0]  # a 1e-12 change of the noise is another ledger
    assert other_delta == ledgers[1].get_epsilon(1e-8) > plain[1][0]


def test_cached_epsilons_reuse_only_inside_the_block(monkeypatch):
    from sparsedp.privacy import ledger as ledger_module
    from sparsedp.privacy.ledger import cached_epsilons
    led = _sweep_ledgers()[1]
    calls = []
    real = ledger_module.PrivacyLedger._ideal_epsilon

    def spy(self, delta):
        calls.append(delta)
        return real(self, delta)
    monkeypatch.setattr(ledger_module.PrivacyLedger, "_ideal_epsilon", spy)
    ledger_module._CACHE.clear()
    with cached_epsilons():
        led.get_epsilon(1e-6)
        n = len(calls)
        assert n >= 1
        led.get_epsilon(1e-6)
        assert len(calls) == n  # read back
        led.add_gaussian("one more", 5.0)  # the content changed: computed afresh
        led.get_epsilon(1e-6)
        assert len(calls) > n
    n = len(calls)
    led.get_epsilon(1e-6)  # outside: always computed (an accountant swapped in a test is seen)
    assert len(calls) > n


def test_cached_epsilons_keep_arrays_whole_and_stay_bounded(monkeypatch):
    from sparsedp.privacy import ledger as ledger_module
    # arrays in a record are keyed in full (numpy's repr would elide the middle)
    x, y = np.zeros(5000), np.zeros(5000)
    y[2500] = 1.0
    assert ledger_module._plain(x) != ledger_module._plain(y)
    monkeypatch.setattr(ledger_module, "_CACHE_SIZE", 3)
    ledger_module._CACHE.clear()
    with ledger_module.cached_epsilons():
        for z in (10.0, 11.0, 12.0, 13.0, 14.0):
            led = ledger_module.PrivacyLedger()
            led.add_gaussian("g", z)
            led.get_epsilon(1e-6)
    assert len(ledger_module._CACHE) == 3
