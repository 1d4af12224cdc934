"""The privacy report (``str(ledger)``) says what each column shows: the noise's scale
in the released value's units (a noisy max's on each score, as the kernel draws it),
the neighbouring relation in the total line, the floating-point slack summed up in one
line (every entry in verbose mode); ``sparsedp compare``'s summary states each row's
relation."""
import json
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp

from sparsedp.datafits import Logistic
from sparsedp.experiments import summarize, tuning_cost
from sparsedp.experiments._summary import RELATION_NOTE, fit_relation
from sparsedp.penalties import L1, L2
from sparsedp.privacy import BoundedRange, PrivacyLedger, PureDP
from sparsedp.solvers import REGISTRY, dp_cd, dp_gcd, dp_scd, dp_sgd
from sparsedp.privacy._report import upper_text

HEADER = ["mechanism", "kind", "count", "sensitivity", "noise", "eps0"]
TOTAL = re.compile(r"Total: \((?P<eps>\S+), (?P<delta>\S+)\)-DP under (?P<relation>.+) "
                   r"\[(?P<method>[\w ]+)(?P<slack>, incl\. floating-point slack)?\]$")
RELATIONS = {"replace-one": "replace-one neighbours",
             "add-remove": "add/remove neighbours (n public)"}


def _row_of(lines, name):
    """The table row of mechanism ``name`` (the line below the name if it stands alone)."""
    k = next(k for k, line in enumerate(lines) if line.strip().startswith(name))
    return lines[k + 1] if lines[k].strip() == name else lines[k]


def _cell(lines, name, column):
    """The text of mechanism ``name``'s row under the table's header ``column``."""
    header = next(line for line in lines if line.split()[:1] == ["mechanism"])
    columns = header.split()
    start = header.index(column)
    after = columns.index(column) + 1
    end = header.index(columns[after]) if after < len(columns) else None
    return _row_of(lines, name)[start:end].strip()


def _noise_of(lines, name):
    """The noise cell of mechanism ``name``."""
    return _cell(lines, name, "noise")


def _data(n=300, p=50, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.2, format="csc", rng=rng)
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


# --------------------------------------------------------------------------------------
# The table: each column says what it shows
# --------------------------------------------------------------------------------------
def test_noise_column_gives_the_scale_in_the_released_values_units():
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add_gaussian("gradients", 20.0, count=1000, sensitivity=0.02)
    ledger.add_gaussian("per-coordinate gradients", 45.0, count=10)  # sensitivity varies
    ledger.add_laplace("constants", 8.0, count=1, sensitivity=1.5)
    ledger.add_laplace("per-coordinate constants", 9.5, count=3)
    ledger.add_pure("some pure mechanism", 0.1, count=5)
    lines = str(ledger).splitlines()
    assert lines[1].split() == HEADER
    legend = lines[2]
    for column in ("sensitivity:", "noise: its scale in the released value's units",
                   "eps0: pure DP of one use"):
        assert column in legend
    # sigma = z x sensitivity, the Laplace scale = b x sensitivity, both in the value's units
    assert _noise_of(lines, "gradients") == "sigma=0.4 = 20 x sensitivity"
    assert _noise_of(lines, "per-coordinate gradients") == "sigma=45 x sensitivity"
    assert _noise_of(lines, "constants") == "scale=12 = 8 x sensitivity"
    assert _noise_of(lines, "per-coordinate constants") == "scale=9.5 x sensitivity"
    assert _noise_of(lines, "some pure mechanism") == "-"  # no noise recorded
    assert _cell(lines, "constants", "eps0") == "0.125"  # eps0 = 1 / b
    # the sensitivity column: the recorded one, '-' where none is
    assert _cell(lines, "gradients", "sensitivity") == "0.02"
    assert _cell(lines, "per-coordinate gradients", "sensitivity") == "-"
    # the one-line description says the same
    assert "noise sigma=0.4 = 20 x sensitivity" in ledger.entries[0].describe()
    assert "under replace-one neighbours" in ledger.entries[0].describe()


def test_sampled_rows_show_the_rate_and_its_legend():
    ledger = PrivacyLedger(delta=1e-5, relation="add-remove")
    ledger.add_sampled_gaussian("minibatch", 1.1, 0.01, count=100, sensitivity=2.0)
    lines = str(ledger).splitlines()
    assert lines[1].split() == HEADER + ["q"]
    assert lines[2].endswith("; q: sampling rate)")
    assert _cell(lines, "minibatch", "q") == "0.01"
    assert _noise_of(lines, "minibatch") == "sigma=2.2 = 1.1 x sensitivity"


@pytest.mark.parametrize("cls, law, word", [(PureDP, "laplace", "Laplace"),
                                            (BoundedRange, "gumbel", "Gumbel")])
def test_a_noisy_max_records_the_noise_on_each_score(cls, law, word):
    eps0, sensitivity = 0.1, 0.003
    m = cls(eps0, name="selection", count=7, sensitivity=sensitivity,
            noise_multiplier=2.0 / eps0, noise_law=law)
    row = m.as_dict()
    assert (row["noise_multiplier"], row["noise_law"], row["epsilon0"]) == (20.0, law, eps0)
    assert row["noise_scale"] == pytest.approx(2.0 * sensitivity / eps0, rel=1e-15)
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add(m)
    report = ledger.to_dict()
    assert json.loads(json.dumps(report)) == report
    assert _noise_of(str(ledger).splitlines(), "selection") == (
        f"{word} scale=0.06 = 20 x sensitivity, on each score")
    # the noise is informational: the guarantee is epsilon0's, with or without it
    bare = PrivacyLedger(delta=1e-6)
    bare.add(cls(eps0, name="selection", count=7, sensitivity=sensitivity))
    assert ledger.epsilon == bare.epsilon


def test_the_ledger_records_a_noisy_maxs_noise():
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add_pure("rnm", 0.2, count=3, sensitivity=0.5, noise_multiplier=10.0,
                    noise_law="laplace")
    ledger.add_bounded_range("expo", 0.2, count=3, sensitivity=0.5, noise_multiplier=10.0)
    rnm, expo = ledger.to_list()
    assert (rnm["noise_law"], rnm["noise_scale"]) == ("laplace", 5.0)
    assert (expo["noise_law"], expo["noise_scale"]) == ("gumbel", 5.0)


def test_a_noisy_maxs_noise_needs_its_law():
    with pytest.raises(ValueError, match="go together"):
        PureDP(0.1, noise_multiplier=20.0)
    with pytest.raises(ValueError, match="go together"):
        PureDP(0.1, noise_law="laplace")
    with pytest.raises(ValueError, match="noise_law must be one of"):
        PureDP(0.1, noise_multiplier=20.0, noise_law="gaussian")
    with pytest.raises(ValueError, match="noise_multiplier"):
        PureDP(0.1, noise_multiplier=-1.0, noise_law="laplace")


@pytest.mark.parametrize("selection", ["laplace", "exponential"])
def test_dp_gcd_report_gives_the_scales_the_kernel_draws_with(selection):
    X, y = _data()
    n = X.shape[0]
    res = dp_gcd(X, y, Logistic(), L1(1e-2), epsilon=1.0, delta=1e-6, n_iter=5, clip=1.0,
                 selection=selection, random_state=0)
    info, lines = res.info, str(res.privacy).splitlines()
    eps0 = info["epsilon0"]
    # the gradient release: Laplace of scale b x sensitivity, b = 1 / eps0, the sensitivity
    # 2 C_j rho / n of the computed sum, as the kernel draws it (info["noise_scales"])
    b = 1.0 / eps0
    np.testing.assert_allclose(info["noise_scales"], b * info["float_sum_factor"] * 2.0
                               * info["clip_thresholds"] / n, rtol=1e-12)
    [gradient] = [m for m in res.privacy.entries if m.kind == "laplace"]
    assert gradient.noise_multiplier == b and gradient.sensitivity is None  # 2 C_j rho / n
    assert _noise_of(lines, gradient.name) == f"scale={b:.6g} x sensitivity"
    # the selection: noise of scale 2 Delta / eps0 on each score (Gumbel for the
    # exponential mechanism), Delta the scores' sensitivity
    scale = info["selection_scale"]
    assert scale == pytest.approx(2.0 * info["score_sensitivity"] / eps0, rel=1e-12)
    [record] = [m for m in res.privacy.entries if m.name.startswith("coordinate selection")]
    assert record.sensitivity == info["score_sensitivity"] and record.epsilon0 == eps0
    if record.noise_multiplier is None:
        pytest.xfail("sparsedp/solvers/_dp_gcd.py does not yet pass the selection's noise "
                     "(noise_multiplier=2 / eps0) to the ledger")
    word = {"laplace": "Laplace", "exponential": "Gumbel"}[selection]
    assert _noise_of(lines, record.name) == (
        f"{word} scale={scale:.6g} = {2.0 / eps0:.6g} x sensitivity, on each score")
    assert record.as_dict()["noise_scale"] == pytest.approx(scale, rel=1e-12)


# --------------------------------------------------------------------------------------
# The total line: the relation of each solver kind
# --------------------------------------------------------------------------------------
FITS = {
    "dp_cd": (dp_cd, {"passes": 1}, {}),
    "dp_gcd": (dp_gcd, {"n_iter": 3}, {}),
    "dp_sgd": (dp_sgd, {"passes": 1, "batch_size": 30}, {}),
    "dp_sgd fixed": (dp_sgd, {"passes": 1, "batch_size": 30}, {"sampling": "fixed"}),
    "dp_scd": (dp_scd, {"passes": 1, "batch_size": 30}, {}),
    "dp_scd fixed": (dp_scd, {"passes": 1, "batch_size": 30}, {"sampling": "fixed"}),
}


@pytest.mark.parametrize("case", list(FITS))
def test_total_line_states_the_fits_relation(case):
    fit, budget, params = FITS[case]
    X, y = _data(n=150, p=10)
    penalty = L2(1e-2) if fit is dp_scd else L1(1e-2)
    res = fit(X, y, Logistic(), penalty, epsilon=1.0, delta=1e-6, clip=1.0, random_state=0,
              **budget, **params)
    ledger = res.privacy
    lines = str(ledger).splitlines()
    match = TOTAL.match(lines[-1])
    assert match, lines[-1]
    eps, method = ledger.get_epsilon(return_method=True)
    assert (match["eps"], match["delta"], match["method"]) == (upper_text(eps), "1e-06", method)
    assert match["relation"] == RELATIONS[ledger.relation]
    assert lines[0].startswith(f"PrivacyLedger: {RELATIONS[ledger.relation]}, ")
    assert match["slack"]  # every solver's samplers have slack, included in the total
    # the relation of a fit is its sampling's: Poisson add/remove, otherwise replace-one
    expected = "replace-one" if fit in (dp_cd, dp_gcd) or params else "add-remove"
    assert ledger.relation == expected
    # the summary's relation of the same fit is the ledger's
    assert fit_relation(fit.__name__, params) == ledger.relation


def test_total_line_without_delta_or_with_a_leak():
    assert str(PrivacyLedger()).splitlines()[-1] == "Total: set a delta to compute epsilon"
    ledger = PrivacyLedger(delta=1e-6, relation="add-remove")
    ledger.add_gaussian("g", 10.0, count=10, relation="add-remove")
    assert str(ledger).splitlines()[-1] == (
        f"Total: ({upper_text(ledger.epsilon)}, 1e-06)-DP under add/remove neighbours (n public) [gdp]")
    ledger.add_leak("constants", "from the data")
    assert str(ledger).splitlines()[-1].startswith("Total: (inf, 1e-06)-DP: NOT PRIVATE")


# --------------------------------------------------------------------------------------
# The floating-point slack: one line, every entry in verbose mode
# --------------------------------------------------------------------------------------
SLACK = [("gradients' integer noise", 2e-13, 1000), ("constants' integer noise", 3e-13, 50),
         ("selections", 4e-12, 20)]


def slack_ledger(tv=False):
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add_gaussian("gradients", 20.0, count=1000, sensitivity=0.02)
    for name, eta, count in SLACK:
        ledger.add_sampler_error(name, eta, count=count)
    if tv:
        ledger.add_sampler_tv("report-noisy-max draws", 1e-14, count=20)
    return ledger


def test_slack_is_one_line_exact_about_what_it_adds():
    ledger = slack_ledger()
    lines = str(ledger).splitlines()
    slack = [line for line in lines if "floating-point" in line]
    assert len(slack) == 2 and slack[1] == lines[-1]  # the summary and the total line
    assert not any(line.lstrip().startswith("~") for line in lines)
    h = math.fsum(eta * count for _, eta, count in SLACK)
    taken = 1e-6 * -math.expm1(-h)  # the mechanisms are accounted at delta e^-H
    assert slack[0] == (f"floating-point slack of 3 samplers (1070 draws), in the total: "
                        f"epsilon +{2 * h:.3g}, {taken:.3g} of delta; "
                        f'format(ledger, "v") or ledger.to_dict() for each')
    added, got = ledger.sampler_slack_cost()
    assert added == pytest.approx(2 * h, rel=1e-12) and got == pytest.approx(taken, rel=1e-6)
    # the total includes it: the ideal epsilon at delta e^-H, plus 2 H
    ideal = PrivacyLedger(delta=1e-6)
    ideal.add_gaussian("gradients", 20.0, count=1000, sensitivity=0.02)
    assert ledger.epsilon == pytest.approx(ideal.get_epsilon(1e-6 - taken) + 2 * h, rel=1e-12)
    assert lines[-1].endswith("incl. floating-point slack]")


def test_total_variation_slack_is_paid_from_delta_in_the_summary():
    ledger = slack_ledger(tv=True)
    added, taken = ledger.sampler_slack_cost()
    h = math.fsum(eta * count for _, eta, count in SLACK)
    eps = ledger.epsilon
    # (1 + e^eps') T of delta for the draws' total variation T, eps' <= eps; then e^-H
    t = 20 * 1e-14
    assert (1 + math.exp(eps - 2 * h)) * t * 0.99 < taken <= (1 + math.exp(eps)) * t * 1.01
    assert "4 samplers (1090 draws)" in str(ledger)
    assert f"{taken:.3g} of delta" in str(ledger) and added == pytest.approx(2 * h)


def test_verbose_report_lists_every_sampler():
    ledger = slack_ledger(tv=True)
    verbose = format(ledger, "v")
    assert verbose == ledger.report(verbose=True) == f"{ledger:v}"
    assert ledger.report() == str(ledger) == format(ledger, "") == f"{ledger}"
    lines = verbose.splitlines()
    for name, eta, count in SLACK:
        assert (f"  ~ {name}: floating-point sampler: {count} draws within "
                f"exp(+-{eta:.6g}) of the ideal law") in lines
    assert ("  ~ report-noisy-max draws: floating-point sampler: 20 draws within total "
            "variation 1e-14 of the ideal law") in lines
    assert sum(line.startswith("  ~ ") for line in lines) == 4
    summary = next(line for line in lines if line.startswith("floating-point slack of"))
    assert summary.endswith(":") and summary[:-1] in str(ledger)
    assert verbose.splitlines()[-1] == str(ledger).splitlines()[-1]
    with pytest.raises(ValueError, match="unknown format"):
        format(ledger, "x")


def test_no_slack_no_slack_line():
    ledger = PrivacyLedger(delta=1e-6)
    ledger.add_gaussian("g", 10.0, count=10)
    assert "floating-point" not in str(ledger) and ledger.sampler_slack_cost() == (0.0, 0.0)


# --------------------------------------------------------------------------------------
# sparsedp compare: each row's relation
# --------------------------------------------------------------------------------------
def planted_row(solver, params, run, objective):
    return {"problem": "p", "solver": solver, "params": json.dumps(params), "run": run,
            "seed": run, "epsilon": 1.0, "delta": 1e-5, "final": True, "passes": 1.0,
            "objective": objective, "optimum": 1.0, "rel_error": objective - 1.0,
            "support_correct": 1, "support_incorrect": 0, "support_true": 3,
            "ledger_epsilon": 1.0, "time": 0.1}


def test_summary_states_each_rows_relation():
    rows = ([planted_row("dp_cd", {"clip": 1.0}, r, 1.1) for r in range(2)]
            + [planted_row("dp_sgd", {"clip": 1.0}, r, 1.2) for r in range(2)]
            + [planted_row("dp_scd", {"clip": 1.0, "sampling": "fixed"}, r, 1.3)
               for r in range(2)])
    summary = summarize(rows)
    assert {r["solver"]: r["relation"] for r in summary} == {
        "dp_cd": "replace-one", "dp_sgd": "add-remove", "dp_scd": "replace-one"}
    lines = str(summary).splitlines()
    header = lines[1].split()
    assert header[2:4] == ["epsilon", "neighbours"]
    column = lines[1].index("neighbours")
    cells = {line.split()[1]: line[column:].split()[0] for line in lines[2:5]}
    assert cells == {"dp_cd": "replace-one", "dp_sgd": "add/remove", "dp_scd": "replace-one"}
    assert RELATION_NOTE in lines
    in_sample = str(summarize(rows, fresh=[dict(r, seed=r["seed"] + 10) for r in rows],
                              in_sample=True)).splitlines()[1].split()
    assert in_sample[2:5] == ["epsilon", "neighbours", "passes"]


def test_fit_relation_follows_the_registry_and_the_sampling():
    for spec in REGISTRY.values():
        assert fit_relation(spec.name, {}) == spec.relation
        assert fit_relation(spec.key, {}) == spec.relation
    assert fit_relation("dp_sgd", {"sampling": "fixed"}) == "replace-one"
    assert fit_relation("dp_scd", {"sampling": "poisson"}) == "add-remove"
    with pytest.raises(ValueError, match="unknown solver"):
        fit_relation("dp_nothing", {})


def test_tuning_cost_states_the_relation_or_that_it_needs_one():
    text = str(tuning_cost(5, 2, epsilon=1.0, delta=1e-6))
    assert "under its own neighbouring relation" in text
    assert "compose fits under one relation" in text
    text = str(tuning_cost(5, 2, epsilon=1.0, delta=1e-6, relation="add-remove"))
    assert "each (1, 1e-06)-DP under add/remove neighbours." in text
    assert "one relation" not in text
    assert tuning_cost(5, epsilon=1.0, delta=1e-6, relation="replace-one").relation == \
        "replace-one"
    with pytest.raises(ValueError, match="relation"):
        tuning_cost(5, epsilon=1.0, delta=1e-6, relation="neighbours")


@pytest.mark.parametrize("value, digits, text", [
    (0.9448231, 6, "0.944824"),     # rounded up where nearest gives 0.944823
    (1.0, 6, "1"),
    (1.0000000000000002, 6, "1.00001"),  # just above 1: never printed as 1
    (1.5625e-06, 3, "1.57e-06"),
    (2.5e-7, 3, "2.5e-07"),
    (123456.7, 6, "123457"),
])
def test_printed_epsilon_and_delta_never_understate(value, digits, text):
    from decimal import Decimal
    from sparsedp.privacy._report import upper_text
    assert upper_text(value, digits) == text
    assert Decimal(text) >= Decimal(value)
