"""The batch solvers' skeleton (DP-SGD, DP-SCD): sampled batches, one noisy batch sum a step.

:class:`BatchSolver` runs the steps every batch solver shares, in this order; a
batch solver is a subclass that fills in the steps specific to it, plus one
compiled kernel:

1. validate: the data and the model (the subclass's :meth:`~BatchSolver.check_problem`),
   the budget, the clip, the batch size and the sampling, then the solver's own
   options (:meth:`~BatchSolver.check_options`);
2. the sampling (:class:`Sampling`): ``steps = round(passes n / B)`` batches,
   Poisson at rate ``B / n`` (add/remove neighbours: a batch sum of per-row
   terms of norm at most C has L2 sensitivity C) or of exactly B rows without
   replacement (replace-one: sensitivity 2C); the ledger states that relation;
3. public constants (:meth:`~BatchSolver.public_constants`: DP-SGD's step size);
4. reserve the samplers' slack (the walks' integer draws and the batch sizes,
   :func:`~sparsedp.solvers._release.walk_slack`) and record it;
5. calibrate the noise multiplier of the ``steps`` Gaussian releases of the
   batch sums (:func:`~sparsedp.solvers._release.calibrate_batches`: PLD or RDP
   of the subsampled Gaussian, exact GDP at rate 1);
6. the walk tables (:meth:`~BatchSolver.release`) and the kernel
   (:meth:`~BatchSolver.run`);
7. the :class:`~sparsedp.solvers.Result`.
"""
from dataclasses import dataclass

from .._kernels._sampling import Batches
from .._validation import (check_bool, check_integer, check_option, check_privacy_budget,
                           check_random_state, check_real)
from ..privacy import PrivacyLedger
from ._base import Budget, _after_slack, check_clip, result_of
from ._release import WALK_SLACK_SOURCES, calibrate_batches, record_walk_slack, walk_slack

__all__ = ["SAMPLINGS", "BatchSolver", "Sampling"]

SAMPLINGS = ("poisson", "fixed")


@dataclass(frozen=True)
class Sampling:
    """A run's batches: ``steps`` draws of ``batches`` (public values only)."""

    passes: float
    batch_size: int
    sampling: str
    rate: float
    steps: int
    batches: Batches

    @property
    def poisson(self):
        return self.sampling == "poisson"

    @property
    def relation(self):
        """The neighbouring relation the sampling's accounting holds for."""
        return "add-remove" if self.poisson else "replace-one"


class BatchSolver:
    """Template of a batch solver's private fit; subclasses implement the steps below.

    Subclasses set ``RELEASED`` (what each step's noisy sum is, for the ledger)
    and define :meth:`check_problem`, :meth:`check_options`,
    :meth:`walk_draws`, :meth:`release` and :meth:`run`; they may extend
    :meth:`public_constants`.  :meth:`fit` is the same for every batch solver.
    """

    #: the released batch sum, in the ledger's words
    RELEASED = None

    def check_problem(self, X, y, datafit, penalty, fit_intercept, intercept_scaling):
        """The validated :class:`~sparsedp.solvers._base.Problem` (intercept appended)."""
        raise NotImplementedError

    def check_options(self, problem, sampling, trace, **options):
        """Validate the solver's own options; return them as a dict."""
        raise NotImplementedError

    def private_constants(self, problem, sampling, options, ledger, budget, generator):
        """Private estimates of the constants not given (recorded on ``ledger``), and
        the budget left (none by default)."""
        return options, budget

    def public_constants(self, problem, sampling, options, ledger):
        """Public constants of the run, added to ``options`` (leaks on ``ledger``)."""
        return options

    def walk_draws(self, problem, sampling, options):
        """Number of integer walk draws of the run (the samplers' slack)."""
        raise NotImplementedError

    def release(self, problem, sampling, options, z, sensitivity):
        """The :class:`~sparsedp.solvers._release.WalkRelease` of multiplier ``z``."""
        raise NotImplementedError

    def run(self, problem, sampling, options, clip, release, generator, trace):
        """Run the kernel (``release`` None: no noise); return a ``KernelOutput``."""
        raise NotImplementedError

    def fit(self, X, y, datafit, penalty, *, epsilon, delta, passes, clip, batch_size,
            sampling, random_state, trace, diagnostics, fit_intercept=False,
            intercept_scaling=1.0, **options):
        """Run the steps in order (module docstring) and return the Result."""
        problem = self.check_problem(X, y, datafit, penalty, fit_intercept, intercept_scaling)
        epsilon, delta = check_privacy_budget(epsilon, delta)
        n = problem.n
        passes = check_real(passes, "passes")
        clip = check_clip(clip, epsilon)
        batch_size = check_integer(batch_size, "batch_size", low=1, high=n)
        kind = check_option(sampling, "sampling", SAMPLINGS)
        trace, diagnostics = check_bool(trace, "trace"), check_bool(diagnostics, "diagnostics")
        steps = max(1, int(round(passes * n / batch_size)))
        rate = batch_size / n
        sampling = Sampling(passes, batch_size, kind, rate, steps,
                            Batches(n, rate, batch_size if kind == "fixed" else 0))
        options = self.check_options(problem, sampling, trace, **options)
        generator = check_random_state(random_state)
        ledger = PrivacyLedger(delta=delta, relation=sampling.relation)
        budget = Budget(epsilon, delta)
        options, budget = self.private_constants(problem, sampling, options, ledger, budget,
                                                 generator)
        options = self.public_constants(problem, sampling, options, ledger)
        if budget.private:
            from .._kernels._noise import NOISE_ETA
            draws = self.walk_draws(problem, sampling, options)
            eta, tv = walk_slack(draws, sampling.batches, steps)
            # a private estimate's integer draws (on the ledger already)
            eta += NOISE_ETA * options.get("estimate_draws", 0)
            budget = _after_slack(budget.epsilon, budget.delta, eta, tv, WALK_SLACK_SOURCES)
            record_walk_slack(ledger, self.RELEASED, draws, sampling.batches, steps)
        sensitivity = clip if sampling.poisson else 2.0 * clip
        z = calibrate_batches(
            ledger, f"{self.RELEASED} (integer Gaussian on a grid, L2 sensitivity "
            f"{'C' if sampling.poisson else '2C'} = {sensitivity:.6g})", budget, rate, steps,
            kind, sensitivity)
        release = self.release(problem, sampling, options, z, sensitivity) if z > 0 else None
        out = self.run(problem, sampling, options, clip, release, generator, trace)
        return result_of(problem, out, ledger, diagnostics or trace)
