"""DP-SCD: differentially private stochastic (dual) coordinate descent.

Algorithm 1 of Damaskinos, Mendler-Dünner, Guerraoui, Papandreou, Parnell,
"Differentially Private Stochastic Coordinate Descent" (AAAI 2021), for ridge
regression, L2-regularised logistic regression and the linear SVM (hinge), on
sparse rows, with Poisson (or fixed-size) mini-batches accounted tightly, noise
on the shared vector only (sensitivity C, docs/dp_scd.rst) and lazy noise.
"""
import math

import numpy as np

from .._kernels import kernel_id
from .._kernels._dp_scd_fast import coordinate_states, dp_scd_finish, dp_scd_steps
from .._kernels._walk import WalkBuffers
from .._validation import check_bool, check_X_y
from ..penalties import as_penalty
from ._base import KernelOutput, Problem, check_intercept, csr_rows, split_generator
from ._batch import BatchSolver
from ._release import RESERVED_STEP_ETA, WalkRelease
from ._spec import Hyperparameter, SolverSpec

__all__ = ["dp_scd"]


def check_dual_problem(X, y, datafit, penalty, fit_intercept=False, intercept_scaling=1.0):
    """Validate a DP-SCD problem (what its spec accepts: a datafit with a dual step,
    Squared, Logistic or Hinge, and a ridge penalty); the intercept column, if
    any, appended (:meth:`~sparsedp.solvers._base.Problem.with_column`)."""
    unmet = SPEC.unmet(datafit, as_penalty(penalty))
    if unmet is not None:
        raise ValueError(unmet)
    kernel_id(datafit)
    scaling = check_intercept(fit_intercept, intercept_scaling)
    X, y = check_X_y(X, y, datafit)
    return Problem(X, y, datafit, as_penalty(penalty), scaling).with_column()


#: ``lazy="auto"`` is lazy while the batch size is below this fraction of p (public
#: quantities only: the choice is reported in ``info`` and shows in the running time)
LAZY_CROSSOVER = 0.7

class DPSCD(BatchSolver):
    """DP-SCD on the :class:`~sparsedp.solvers._batch.BatchSolver` skeleton (no
    smoothness constants, no step size: closed-form dual steps)."""

    #: each step adds sum_j zeta_j x_j to v, |zeta_j| max(1, ||x_j||) <= C
    RELEASED = "updates sum_j zeta_j x_j of the shared vector v"

    def check_problem(self, X, y, datafit, penalty, fit_intercept, intercept_scaling):
        return check_dual_problem(X, y, datafit, penalty, fit_intercept, intercept_scaling)

    def check_options(self, problem, sampling, trace, *, lazy, noise_alpha):
        if isinstance(lazy, str) and lazy == "auto":  # the running time only: same law
            # from public quantities (L and p), never the data's nonzeros: info["lazy"]
            # and the time it takes then tell nothing about the rows
            lazy = sampling.batch_size < LAZY_CROSSOVER * problem.p
        return {"lazy": check_bool(lazy, "lazy"),
                "noise_alpha": check_bool(noise_alpha, "noise_alpha")}

    def walk_draws(self, problem, sampling, options):
        draws = sampling.steps * problem.p
        if options["noise_alpha"]:  # at most n alphas a step (Poisson), L (fixed)
            per_step = problem.n if sampling.poisson else sampling.batch_size
            draws += sampling.steps * per_step
        return draws

    def release(self, problem, sampling, options, z, sensitivity):
        # the paper's variant: sqrt(2) z on v (and on the alphas), accounted as z
        factor = math.sqrt(2.0) if options["noise_alpha"] else 1.0
        n_terms = sampling.batches.max_size
        release = WalkRelease(factor * z, n_terms, problem.p, sensitivity, sampling.steps + 1)
        if release.step_eta > RESERVED_STEP_ETA:
            raise RuntimeError("walk tables coarser than the reserved slack")
        release.check_range(sampling.steps, n_terms)
        release.accounted_multiplier = z
        return release

    def run(self, problem, sampling, options, clip, release, generator, trace):
        X, y, datafit = problem.X, problem.y, problem.datafit
        n, p = problem.n, problem.p
        lam_n = problem.penalty.l2 * n
        indptr, indices, data, row_norms = csr_rows(X)
        alpha = np.zeros(n)
        state = coordinate_states(p)
        zetas = np.zeros(n)
        batch = np.zeros(n, dtype=np.int64)
        sampler, noise_gen = split_generator(generator)

        if release is None:
            mode, walk, grid, inv_grid = 0, None, 0.0, 0.0
        else:
            mode = 2 if options["lazy"] else 1
            walk, grid, inv_grid = release.walks[0], release.grid, release.inv_grid
        draws = WalkBuffers([walk]) if release is not None and options["lazy"] else None
        noise_alpha = release is not None and options["noise_alpha"]
        loss = int(kernel_id(datafit))
        steps, batch_size = sampling.steps, sampling.batch_size
        per_pass = max(1, int(round(n / batch_size)))
        chunk = per_pass if trace else steps
        passes_done, values, rows = [], [], 0
        t = 0
        while t < steps:
            todo = min(chunk, steps - t)
            rows += dp_scd_steps(
                loss, data, indices, indptr, y, row_norms, alpha, state, zetas, batch,
                sampling.batches, t, todo, batch_size, lam_n, clip, mode, walk,
                grid, inv_grid, noise_alpha, sampler, noise_gen, draws)
            t += todo
            if mode == 2 and (trace or t == steps):
                dp_scd_finish(state, t, walk, grid, noise_gen, draws)
            if trace:
                passes_done.append(t * batch_size / n)
                values.append(problem.objective(state["v"] / lam_n))
        with np.errstate(over="ignore"):
            coef = state["v"] / lam_n
        if not np.all(np.isfinite(coef)):
            raise ValueError(f"dp_scd's coefficients v / (alpha n) overflow with alpha n = "
                             f"{lam_n:.3g}: use a larger L2 penalty alpha")
        info = {"noise_multiplier": 0.0 if release is None else release.accounted_multiplier,
                "noise_scale": 0.0 if release is None else release.noise_sd,
                "clip": clip, "sampling": sampling.sampling,
                "sampling_rate": sampling.rate, "batch_size": batch_size,
                "steps": steps, "lazy": options["lazy"],
                "noise_alpha": options["noise_alpha"]}
        if release is not None:
            info.update(grid=release.grid, grid_points=release.points,
                        float_sum_factor=release.rho)
        tr = ({"passes": np.array(passes_done), "objective": np.array(values)}
              if trace else None)
        return KernelOutput(coef=coef, n_iter=steps, info=info,
                            counters={"sampled_rows": int(rows)}, trace=tr)


def dp_scd(X, y, datafit, penalty, *, epsilon, delta, passes, clip, batch_size=1,
           sampling="poisson", lazy="auto", noise_alpha=False, random_state=None,
           trace=False, diagnostics=False, fit_intercept=False, intercept_scaling=1.0):
    """Differentially private stochastic dual coordinate descent (DP-SCD).

    Minimises ``F(w) = (1/n) sum_i loss(x_i . w, y_i) + (lambda / 2) ||w||^2``
    (``penalty=L2(lambda)``) through its dual: dual variables ``alpha_i`` and the
    shared vector ``v = sum_i alpha_i x_i``, ``w = v / (lambda n)``.  Each step
    draws a mini-batch, computes for each of its rows ``j`` the update
    ``zeta_j`` of the dual subproblem against the current ``v`` (closed form for
    ridge and the SVM, one Newton step for logistic regression), scales it to
    ``|zeta_j| max(1, ||x_j||) <= C``, and adds ``sum_j zeta_j x_j`` plus Gaussian
    noise to ``v`` (Algorithm 1 of Damaskinos et al., AAAI 2021).

    Privacy (docs/dp_scd.rst): only ``v`` is released; one step's update has
    L2 sensitivity ``C`` under add/remove neighbours (``2C`` replace-one) and
    gets noise ``N(0, z^2 C^2 I)`` (``2 z C`` replace-one) on a public grid.
    Poisson batches of rate ``q = batch_size / n`` (the default) are accounted as
    Poisson-subsampled Gaussians under add/remove neighbours with the PLD
    accountant; fixed-size batches (``sampling="fixed"``) as Gaussians on
    batches drawn without replacement under replace-one neighbours (RDP of
    Wang, Balle and Kasiviswanathan 2019).  ``z`` is the smallest multiplier
    meeting (epsilon, delta).

    Parameters
    ----------
    X : sparse matrix/array or ndarray of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Real targets (Squared) or labels in {-1, +1} (Logistic, Hinge).
    datafit : Squared, Logistic or Hinge
    penalty : L2
        ``L2(lambda)`` with ``lambda > 0``.
    epsilon : float
        Privacy budget, > 0; ``inf`` runs the same algorithm without noise.
    delta : float in (0, 1)
    passes : float
        Epochs: ``round(passes * n / batch_size)`` steps (expected epochs under
        Poisson sampling).
    clip : float
        C, the bound on ``|zeta_j| max(1, ||x_j||)`` (``inf`` only with
        ``epsilon=inf``: no scaling).
    batch_size : int, default=1
        L in [1, n]: the expected (Poisson) or exact (fixed) batch size, and the
        subproblem's aggregation parameter.
    sampling : {"poisson", "fixed"}, default="poisson"
    lazy : bool or "auto", default="auto"
        Lazy noise (a coordinate of v receives the noise of the steps it missed
        when a sampled row reads it, and at the end: O(nnz of the batch) a
        step) or eager (every coordinate every step: O(p) a step).  Same law.
        ``"auto"``: lazy while ``L < 0.7 p``, a rule of public quantities only
        (the choice is reported in ``info["lazy"]`` and shows in the running
        time, so it must not read the data: an earlier rule on the batches'
        expected nonzeros ``L nnz / n`` was a data-dependent bit).  Lazy costs
        more than eager only when a batch touches most coordinates: on the
        dorothea shape at ``L = 100`` (0.91 p nonzeros a step) a lazy epoch takes
        20 ms and an eager one 15 ms; at ``L = 30``, 21 and 40 ms.  The choice
        changes the running time, not the law of the output.
    noise_alpha : bool, default=False
        The paper's variant: noise ``sqrt(2) z C`` on v and on the updated
        alphas (sensitivity ``sqrt(2) C`` of ``[alpha; v]``).  More noise on v
        for the same accounting.
    random_state : None, int, SeedSequence or numpy Generator
    trace : bool, default=False
        Record the objective after every epoch (non-private diagnostic).
    diagnostics : bool, default=False
        Also compute the non-private objective at ``coef`` and the number of
        sampled rows.
    fit_intercept : bool, default=False
        Fit an intercept as the coefficient of the public column
        ``intercept_scaling * 1`` appended to X (one copy of X's arrays; penalised
        as the other coefficients, as in :func:`dp_cd`); ``Result.intercept``.
        DP-SCD takes no starting point (its dual state is not kept): no
        ``coef_init`` nor ``intercept_init``.
    intercept_scaling : float, default=1.0

    Returns
    -------
    Result
        ``coef`` (the private output ``v / (lambda n)``), ``n_iter`` (steps),
        ``privacy`` (the ledger: relation, sampling, accountant), ``info``
        (public: ``noise_multiplier``, ``noise_scale`` (standard deviation of a
        step's noise on each coordinate of v), ``grid``, ``sampling``,
        ``sampling_rate``, ``steps``, ...).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sparsedp.datafits import Logistic
    >>> from sparsedp.penalties import L2
    >>> X = sp.random(400, 30, density=0.1, format="csr", rng=0)
    >>> y = np.where(X @ np.ones(30) > 0.3, 1.0, -1.0)
    >>> res = dp_scd(X, y, Logistic(), L2(1e-2), epsilon=1.0, delta=1e-5, passes=5,
    ...              clip=0.1, batch_size=40, random_state=0)
    >>> res.privacy.epsilon <= 1.0
    True
    """
    return DPSCD().fit(X, y, datafit, penalty, epsilon=epsilon, delta=delta, clip=clip,
                       random_state=random_state, trace=trace, diagnostics=diagnostics,
                       passes=passes, batch_size=batch_size, sampling=sampling, lazy=lazy,
                       noise_alpha=noise_alpha, fit_intercept=fit_intercept,
                       intercept_scaling=intercept_scaling)


SPEC = SolverSpec(
    name="dp_scd", key="scd", label="DP-SCD", function=dp_scd, budget="passes",
    relation="add-remove",
    datafit_requires=(("dual", "Squared(), Logistic() or Hinge() (ridge, logistic "
                       "regression, SVM: a closed-form dual step)"),),
    penalty_requires=(("ridge", "an L2 penalty L2(alpha) with alpha > 0 and no L1 part "
                       "(the dual's regulariser)"),),
    smoothness=None,    budget_grid=Hyperparameter("passes", (1, 5), (1, 2, 5, 10, 20)),
    hyperparameters=(Hyperparameter("clip", (0.1, 1.0), (0.01, 0.1, 1.0)),),
    default_budget=lambda n, p, epsilon: 20.0,
    default_clip=1.0,  # |zeta_j| max(1, ||x_j||) <= C: a scale-free bound on the dual step
    releases=lambda passes, n_columns: passes * n_columns,
    # the only solver of a loss that is not smooth
    auto=lambda datafit, l1, n, p: not datafit.smooth,
    options={"batch_size": 64})
