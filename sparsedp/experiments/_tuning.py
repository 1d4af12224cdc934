"""What tuning on the private data costs: the composition of every fit of the grid."""
import math
from dataclasses import dataclass
from typing import Optional

from .._validation import check_integer, check_privacy_budget
from ..privacy import calibrate_gaussian, gdp_epsilon, pure_composition_epsilon
from ..privacy._checks import check_relation

__all__ = ["TuningCost", "tuning_cost"]

# 1 / calibrate_gaussian(eps, delta, 1) is within 1e-12 (relative, below) of the
# largest mu whose mu-GDP curve meets (eps, delta); this factor puts it above
MU_SAFETY = 1.0 + 1e-9


@dataclass(frozen=True)
class TuningCost:
    """The privacy cost of publishing the best of ``n_fits`` private fits.

    Attributes
    ----------
    n_points, n_runs, n_fits : int
        Grid points, runs per point, and fits on the data (``n_points * n_runs``).
    epsilon, delta : float
        The budget of each fit, what the papers report.
    basic_epsilon, basic_delta : float
        Basic composition: ``(n_fits epsilon, n_fits delta)``.
    optimal_epsilon, optimal_delta : float
        The optimal composition of ``n_fits`` (epsilon, delta)-DP mechanisms
        (Kairouz, Oh and Viswanath, Theorem 3.3): valid for any fits; epsilon
        from the pure part at slack ``delta``, total ``1 - (1 - delta)^G (1 - delta)``.
    gdp_mu, gdp_epsilon : float
        When each fit is ``mu``-GDP with the ``mu`` of an (epsilon, delta)-DP
        Gaussian mechanism (``gdp_mu``: DP-CD with public constants, exactly),
        the fits compose to ``sqrt(n_fits) mu``-GDP, exactly: ``gdp_epsilon`` at
        the same ``delta`` as one fit.
    relation : {"replace-one", "add-remove"} or None
        The neighbouring relation every fit's guarantee holds under, and so the
        compositions'; None: not stated (the report then says that the bounds
        need one relation for all the fits).
    """

    n_points: int
    n_runs: int
    n_fits: int
    epsilon: float
    delta: float
    basic_epsilon: float
    basic_delta: float
    optimal_epsilon: float
    optimal_delta: float
    gdp_mu: float
    gdp_epsilon: float
    relation: Optional[str] = None

    def __str__(self):
        if self.relation is None:
            under = ["under its own neighbouring relation.",
                     "The bounds below compose fits under one relation: a grid mixing "
                     "replace-one fits (DP-CD, DP-GCD, fixed-size batches) and add/remove fits "
                     "(Poisson batches: DP-SGD, DP-SCD) is not covered by them (each "
                     "relation's fits compose apart)."]
        else:
            under = [f"under {self.relation.replace('add-remove', 'add/remove')} neighbours."]
        return "\n".join([
            f"Tuning on the private data: {self.n_points} grid points x {self.n_runs} runs = "
            f"{self.n_fits} fits, each ({self.epsilon:g}, {self.delta:.3g})-DP {under[0]}",
            *under[1:],
            "Publishing all of them (choosing among the published models afterwards is "
            "post-processing) costs:",
            f"  basic composition:                  ({self.basic_epsilon:.4g}, "
            f"{self.basic_delta:.3g})-DP",
            f"  optimal composition (any fits):     ({self.optimal_epsilon:.4g}, "
            f"{self.optimal_delta:.3g})-DP",
            f"  Gaussian fits ({self.gdp_mu:.4g}-GDP each, "
            f"sqrt(G) mu = {math.sqrt(self.n_fits) * self.gdp_mu:.4g}): "
            f"({self.gdp_epsilon:.4g}, {self.delta:.3g})-DP",
            "Choosing the best fit by its objective on the training data (the papers' "
            "protocol, and summarize's) is covered by none of these: the choice uses the "
            "data without noise."])


def tuning_cost(n_points, n_runs=1, *, epsilon, delta, relation=None):
    """The privacy cost of tuning on the private data, under composition.

    The papers tune on the private data (best of a grid by the training
    objective) and report the budget of one fit.  Every fit of the grid reads
    the same data, so what was spent is the composition of all of them:
    ``G = n_points * n_runs`` fits.  Three bounds (the first two hold for any
    (epsilon, delta)-DP fits):

    * basic composition: ``(G epsilon, G delta)``;
    * the optimal composition of ``G`` (epsilon, delta)-DP mechanisms (Kairouz,
      Oh and Viswanath 2017, Theorem 3.3, via
      :func:`~sparsedp.privacy.pure_composition_epsilon`): epsilon at slack
      ``delta``, total delta ``1 - (1 - delta)^G (1 - delta)``;
    * Gaussian fits (DP-CD with public constants is exactly ``mu``-GDP, with
      the ``mu`` of the (epsilon, delta) budget): ``G`` of them are exactly
      ``sqrt(G) mu``-GDP, converted at the same delta.  Not valid for fits that
      are not ``mu``-GDP (DP-GCD's noisy max, subsampled DP-SGD / DP-SCD).

    These cost the release of all ``G`` fits.  Picking the best by its
    training objective (non-private) is not covered by any composition bound;
    private selection (Liu and Talwar 2019; Papernot and Steinke 2022) is the
    way to a guarantee for the tuned model.

    Parameters
    ----------
    n_points : int
        Grid points (all solvers' points, if several solvers compete).
    n_runs : int, default=1
        Runs per point (each a fit on the data).
    epsilon : float
        Budget of one fit (> 0, finite).
    delta : float in (0, 1)
    relation : {"replace-one", "add-remove"}, optional
        The neighbouring relation of every fit (:func:`fit_relation
        <sparsedp.experiments._summary.fit_relation>`), which the report then
        states.  The compositions hold for fits under one relation only.

    Returns
    -------
    TuningCost
        ``str(cost)`` is a short report.

    Examples
    --------
    >>> cost = tuning_cost(100, 5, epsilon=1.0, delta=1e-6)
    >>> cost.n_fits, cost.basic_epsilon
    (500, 500.0)
    >>> cost.gdp_epsilon < cost.optimal_epsilon < cost.basic_epsilon
    True
    """
    n_points = check_integer(n_points, "n_points")
    n_runs = check_integer(n_runs, "n_runs")
    epsilon, delta = check_privacy_budget(epsilon, delta)
    relation = None if relation is None else check_relation(relation)
    if math.isinf(epsilon):
        raise ValueError("tuning_cost needs a finite epsilon (epsilon = inf is no privacy)")
    g = n_points * n_runs
    optimal = pure_composition_epsilon(epsilon, g, delta, method="optimal")
    optimal_delta = -math.expm1(g * math.log1p(-delta) + math.log1p(-delta))
    mu = MU_SAFETY / calibrate_gaussian(epsilon, delta, 1)
    return TuningCost(n_points=n_points, n_runs=n_runs, n_fits=g, epsilon=epsilon,
                      delta=delta, basic_epsilon=g * epsilon, basic_delta=min(1.0, g * delta),
                      optimal_epsilon=optimal, optimal_delta=optimal_delta, gdp_mu=mu,
                      gdp_epsilon=gdp_epsilon(math.sqrt(g) * mu, delta), relation=relation)
