"""The solver registry: every consumer asks the specs, and a new solver is one module.

The toy solver below is what docs/developer.rst ("Adding a solver") walks
through: DP cyclic coordinate descent, the DP-CD release (a clipped coordinate
gradient, integer Gaussian noise on a public grid) in a cyclic order, written in
Python on the :class:`~sparsedp.solvers._base.PrivateSolver` skeleton.  Its spec
put in the registry is enough for the estimators, the command line's grids and
the experiments' runner to run it.
"""
import math

import numpy as np
import pytest

from problems import make_sparse_problem
from sparsedp import DPLasso
from sparsedp.cli import default_grid
from sparsedp.datafits import Hinge, Logistic, Squared
from sparsedp.experiments import Problem, expand_grid, run_grid
from sparsedp.linear_model import choose_solver
from sparsedp.penalties import L1, L2
from sparsedp.privacy import calibrate_gaussian
from sparsedp.solvers import REGISTRY, Hyperparameter, SolverSpec, get_spec
from sparsedp.solvers._base import KernelOutput, PrivateSolver
from sparsedp.solvers._release import GridRelease


# ---- the toy solver: what a new solver module holds --------------------------------
class DPCyclicCD(PrivateSolver):
    """DP-CD's coordinate release in cyclic order: ``passes * p`` releases of
    ``sum_i clip(loss'(z_i, y_i) x_ij, C_j)`` (replace-one sensitivity ``2 C_j``),
    each with integer Gaussian noise on a public grid; a proximal step each."""

    def check_options(self, problem, *, passes):
        return {"steps": max(1, int(round(passes * problem.p)))}

    def integer_draws(self, problem, options):
        return options["steps"]

    def calibrate(self, problem, constants, budget, ledger, options):
        if not budget.private:
            return None
        z = calibrate_gaussian(budget.epsilon, budget.delta, options["steps"])
        release = GridRelease("gaussian", z, problem.n, 2.0 * constants.thresholds)
        ledger.add_gaussian("coordinate gradients (integer Gaussian on a grid, L2 "
                            "sensitivity 2 C_j rho / n)", z, count=options["steps"])
        ledger.add_sampler_error("coordinate gradients' integer noise", release.noise.eta,
                                 count=options["steps"])
        return release

    def run(self, problem, constants, release, generator, options, trace):
        X, y, datafit, penalty = problem.X.tocsc(), problem.y, problem.datafit, problem.penalty
        w = np.zeros(problem.p) if options["coef_init"] is None else options["coef_init"]
        margin = X @ w
        for t in range(options["steps"]):
            j = t % problem.p
            col = X[:, [j]]
            rows, values = col.indices, col.data
            C = constants.thresholds[j]
            terms = np.clip(datafit.derivative(margin[rows], y[rows]) * values, -C, C)
            total = math.fsum(terms)
            if release is not None:
                total = float(release.noise.release(total, release.inv_grid[j],
                                                    release.grid[j], generator))
            step = constants.steps[j]
            new = float(penalty.prox(w[j] - step * total / problem.n, step))
            margin[rows] += (new - w[j]) * values
            w[j] = new
        return KernelOutput(coef=w, n_iter=options["steps"],
                            info={"clip_thresholds": constants.thresholds}, counters={})


def dp_toy(X, y, datafit, penalty=None, *, epsilon, delta, passes, clip, step_size=1.0,
           smoothness=None, feature_bounds=None, random_state=None, trace=False,
           diagnostics=False, coef_init=None):
    """DP cyclic coordinate descent (the developer guide's toy solver)."""
    return DPCyclicCD().fit(X, y, datafit, penalty, epsilon=epsilon, delta=delta, clip=clip,
                            step_size=step_size, smoothness=smoothness,
                            feature_bounds=feature_bounds, random_state=random_state,
                            trace=trace, diagnostics=diagnostics, coef_init=coef_init,
                            passes=passes)


TOY = SolverSpec(
    name="dp_toy", key="toy", label="DP-toy", function=dp_toy, budget="passes",
    relation="replace-one",
    datafit_requires=(("smooth", "a smooth datafit (finite beta)"),), penalty_requires=(),
    smoothness="coordinate",
    budget_grid=Hyperparameter("passes", (1, 2), (1, 2, 5)),
    hyperparameters=(Hyperparameter("clip", (0.1, 1.0), (0.1, 0.3, 1.0), per_unit=True),),
    default_budget=lambda n, p, epsilon: 2.0,
    default_step=lambda n, p, datafit: 1.0,
    default_kappa=lambda n, releases, epsilon, delta: 1.0,
    releases=lambda passes, n_columns: passes * n_columns)


@pytest.fixture
def toy_registered(monkeypatch):
    monkeypatch.setitem(REGISTRY, TOY.name, TOY)
    return TOY


# ---- the specs of the shipped solvers --------------------------------------------
def test_registry_holds_the_five_papers_private_solvers_in_auto_order():
    assert list(REGISTRY) == ["dp_cd", "dp_gcd", "dp_sgd", "dp_scd"]
    for spec in REGISTRY.values():
        assert get_spec(spec.name) is get_spec(spec.key) is spec
        assert spec.budget in spec.required and "clip" in spec.required
        for h in (spec.budget_grid,) + spec.hyperparameters:
            assert spec.takes(h.name), (spec.name, h.name)
        for option in spec.options:
            assert spec.takes(option), (spec.name, option)
    with pytest.raises(ValueError, match="unknown solver 'newton'.*dp_cd"):
        get_spec("newton")


def test_specs_declare_the_models_each_solver_fits():
    # a model is fitted exactly when its functional solver accepts it
    for spec in REGISTRY.values():
        for datafit in (Squared(), Logistic(), Hinge()):
            for penalty in (None, L1(0.1), L2(0.1)):
                from sparsedp.penalties import as_penalty
                unmet = spec.unmet(datafit, as_penalty(penalty))
                X, y = make_sparse_problem(n=20, p=5, logistic=True, seed=1)
                budget = {spec.budget: 1, "clip": 1.0}
                if spec.takes("batch_size"):
                    budget["batch_size"] = 2
                if spec.takes("smoothness"):
                    budget["smoothness"] = np.ones(5)
                call = lambda: spec.function(X, y, datafit, penalty, epsilon=math.inf,  # noqa
                                             delta=1e-5, random_state=0, **budget)
                if unmet is None:
                    call()
                else:
                    with pytest.raises((TypeError, ValueError)):
                        call()


def test_choose_solver_reads_the_auto_rules():
    assert choose_solver("hinge", 0.0, 10, 10) == "scd"
    assert choose_solver("logistic", 1e-3, 10, 10) == "gcd"
    assert choose_solver("logistic", 0.0, 10, 10) == "sgd"
    assert choose_solver("logistic", 0.0, 10_000, 10) == "cd"


# ---- a new solver: its spec in the registry is enough ------------------------------
def test_toy_without_noise_is_cyclic_proximal_coordinate_descent():
    """At epsilon = inf the toy is plain cyclic proximal CD: checked against a
    dense numpy computation of the same updates."""
    X, y = make_sparse_problem(n=40, p=6, seed=2)
    M = Squared().smoothness(X)
    res = dp_toy(X, y, Squared(), L1(0.01), epsilon=math.inf, delta=1e-5, passes=3,
                 clip=math.inf, smoothness=M)
    A, w = X.toarray(), np.zeros(6)
    for t in range(18):
        j = t % 6
        g = A[:, j] @ (2.0 * (A @ w - y)) / 40
        w[j] = L1(0.01).prox(w[j] - g / M[j], 1.0 / M[j])
    np.testing.assert_allclose(res.coef, w, rtol=1e-12, atol=1e-14)
    assert res.privacy.epsilon == math.inf


def test_toy_is_accounted_as_its_mechanisms(toy_registered):
    X, y = make_sparse_problem(n=60, p=8, seed=3)
    res = dp_toy(X, y, Squared(), L1(0.01), epsilon=1.0, delta=1e-5, passes=2, clip=1.0,
                 smoothness=np.full(8, 0.5), random_state=0)
    assert 0.99 < res.privacy.epsilon <= 1.0
    assert "coordinate gradients" in str(res.privacy)


def test_estimators_run_a_registered_solver(toy_registered):
    X, y = make_sparse_problem(n=80, p=10, seed=4)
    M = np.full(10, 0.5)
    est = DPLasso(alpha=0.01, solver="toy", smoothness=M, target_bound=3.0, random_state=1,
                  fit_intercept=False).fit(X, y)
    assert est.solver_ == "toy" and est.privacy_.epsilon <= 1.0
    assert est.solver_params_["passes"] == 2.0  # the spec's default budget
    again = dp_toy(X, y, Squared(), L1(0.01), epsilon=1.0, delta=est.delta_, random_state=1,
                   **est.solver_params_)
    np.testing.assert_array_equal(est.coef_, again.coef)
    # its signature says what it takes: no greedy rule, no intercept
    with pytest.raises(ValueError, match="rule does not apply to solver='toy'"):
        DPLasso(solver="toy", rule="gs-s", smoothness=M, fit_intercept=False).fit(X, y)
    with pytest.raises(ValueError, match=r"solver='toy' \(DP-toy\) fits no intercept"):
        DPLasso(solver="toy", smoothness=M).fit(X, y)


def test_cli_and_experiments_run_a_registered_solver(toy_registered):
    grid = default_grid("quick", 2.0, ["toy"])
    assert grid == {"dp_toy": {"passes": [1, 2], "clip": [0.2, 2.0]}}
    assert len(expand_grid(grid)) == 4
    X, y = make_sparse_problem(n=50, p=6, seed=5)
    problem = Problem("toy data", X, y, Squared(), L1(0.01), smoothness=np.full(6, 0.5))
    rows = run_grid(problem, grid, epsilon=1.0, delta=1e-4, n_runs=1)
    assert {r["solver"] for r in rows} == {"dp_toy"}
    assert all(r["ledger_epsilon"] <= 1.0 for r in rows)


def test_a_registered_solver_leaves_with_its_spec():
    assert "dp_toy" not in REGISTRY
    with pytest.raises(ValueError, match="solver must be one of"):
        DPLasso(solver="toy").fit(*make_sparse_problem(n=20, p=6))
