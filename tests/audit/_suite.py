"""The audits of the suite: each mechanism, its samplers, sample sizes and planted bugs.

Shared by the tests (``test_*.py``) and by ``table.py``.  Every audit has

* a *statistical* audit of the real mechanism (threshold events for real-valued
  outputs, per-index events for selections): ``eps_lb <= claim``;
* for real-valued releases, the *floating-point attack* (events on low-order
  bits) against the real mechanism (``eps_lb <= claim``) and against the old
  raw floating-point sampler, planted as ``"raw_float_noise"`` (``eps_lb >
  claim``: the negative control);
* its *planted bugs*: the same audit (threshold and bit events, the better on
  the first halves) against each broken variant must give ``eps_lb > claim``.
"""
import dataclasses

from _audit import audit, audit_seed, learn_bits, learn_linear, learn_threshold, learn_values
import _mechanisms as mech

RELEASE_BUGS = ("noise_halved", "no_clipping", "sensitivity_halved", "raw_float_noise")
SELECTION_BUGS = ("noise_halved", "no_clipping", "sensitivity_halved",
                  "monotone_selection")
SMOOTHNESS_BUGS = ("noise_halved", "sensitivity_halved", "raw_float_noise")


@dataclasses.dataclass(frozen=True)
class Audit:
    """One audited mechanism in one configuration."""
    key: str                 # test id
    name: str                # table row
    sampler: object          # (n_samples, seed, bug) -> Samples
    discrete: bool           # outputs are indices (no floating-point attack)
    bugs: tuple              # planted bugs this audit must detect
    n_ci: int                # samples per dataset in the CI subset
    n_long: int              # ... in the long run (pytest -m audit_long)
    seed: int
    long_only: bool = False  # only in the long run
    ci_bugs: tuple = None    # planted bugs run in CI (None: all of ``bugs``)
    joint: bool = False      # samples are vectors: events on joint releases too

    def bugs_for(self, long):
        return self.bugs if long or self.ci_bugs is None else self.ci_bugs

    def samples(self, bug=None, long=False):
        return self.sampler(self.n_long if long else self.n_ci, audit_seed(self.seed), bug)

    @property
    def learners(self):
        if self.discrete:
            return (learn_values,)
        return (learn_threshold, learn_linear) if self.joint else (learn_threshold,)

    # -- the four kinds of result ------------------------------------------------
    def statistical(self, long=False):
        s = self.samples(None, long)
        return s, audit(s.d, s.d2, self.learners, s.delta)

    def fp_attack(self, bug=None, long=False):
        """The floating-point attack on the real mechanism, or on ``bug``."""
        s = self.samples(bug, long)
        return s, audit(s.d, s.d2, learn_bits, s.delta)

    def planted(self, bug, long=False):
        s = self.samples(bug, long)
        learners = self.learners if self.discrete else self.learners + (learn_bits,)
        return s, audit(s.d, s.d2, learners, s.delta)


def _sampler(fn, **kwargs):
    def sampler(n, seed, bug):
        return fn(n, seed, bug, **kwargs)
    return sampler


def _noisy_max_sampler(selection):
    def sampler(n, seed, bug):
        # the planted bug at the kernel level is the wrong scale itself
        factor = 1.0 if bug == "monotone_selection" else 2.0
        return mech.noisy_max_samples(n, seed, selection, factor)
    return sampler


AUDITS = [
    Audit("dp_cd", "DP-CD coordinate release (Gaussian)",
          _sampler(mech.dp_cd_samples), False, RELEASE_BUGS, 40_000, 400_000, 1701),
    Audit("dp_cd_single", "DP-CD coordinate release, T K = 1 (Gaussian)",
          _sampler(mech.dp_cd_samples, batched=False), False, RELEASE_BUGS,
          20_000, 20_000, 1702, long_only=True),
    Audit("gcd_release_laplace", "DP-GCD gradient release (Laplace)",
          _sampler(mech.dp_gcd_release_samples), False, RELEASE_BUGS,
          20_000, 200_000, 1703),
    Audit("gcd_release_gaussian", "DP-GCD gradient release (Gaussian)",
          _sampler(mech.dp_gcd_release_samples, gradient_noise="gaussian"), False,
          RELEASE_BUGS, 20_000, 200_000, 1704),
    Audit("gcd_release_single", "DP-GCD gradient release, n_iter = 1 (Laplace)",
          _sampler(mech.dp_gcd_release_samples, batched=False), False, RELEASE_BUGS,
          20_000, 20_000, 1706, long_only=True),
]
for i, selection in enumerate(("laplace", "exponential")):
    for j, rule in enumerate(("gs-s", "gs-r", "gs-q")):
        AUDITS.append(Audit(
            f"gcd_selection_{selection}_{rule}",
            f"DP-GCD selection ({selection}, {rule.upper()})",
            _sampler(mech.dp_gcd_selection_samples, selection=selection, rule=rule),
            True, SELECTION_BUGS, 20_000, 100_000, 1710 + 3 * i + j,
            # the hooks do not depend on the rule (and here neither do the
            # scores): CI plants the bugs under GS-r, the long run under all
            ci_bugs=None if rule == "gs-r" else ()))
AUDITS += [
    Audit("gcd_selection_single", "DP-GCD selection, n_iter = 1 (laplace, GS-R)",
          _sampler(mech.dp_gcd_selection_samples, batched=False), True, SELECTION_BUGS,
          20_000, 20_000, 1720, long_only=True),
    Audit("noisy_max_laplace", "NoisyMax kernel: report-noisy-max (Laplace)",
          _noisy_max_sampler("laplace"), True, ("monotone_selection",),
          400_000, 4_000_000, 1721),
    Audit("noisy_max_exponential", "NoisyMax kernel: exponential mechanism",
          _noisy_max_sampler("exponential"), True, ("monotone_selection",),
          400_000, 4_000_000, 1722),
    Audit("smoothness", "private smoothness constant (Laplace)",
          _sampler(mech.smoothness_samples), False, SMOOTHNESS_BUGS, 8_000, 40_000, 1730),
    Audit("smoothness_dp_cd", "private smoothness through dp_cd (Laplace)",
          _sampler(mech.smoothness_dp_cd_samples), False, SMOOTHNESS_BUGS,
          4_000, 20_000, 1731, long_only=True),
]
# DP-SGD, one step's release (_mechanisms.dp_sgd_samples): the lazy integer frame
# (no penalty; L2) and the eager float kernel (L1).  Only the eager kernel has a
# raw floating-point variant (tests/faults.py); the lazy frame's releases are integers.
SGD_LAZY_BUGS = ("noise_halved", "no_clipping", "sensitivity_halved")
AUDITS += [
    Audit("dp_sgd_lazy", "DP-SGD step release, lazy noise, no penalty (Gaussian)",
          _sampler(mech.dp_sgd_samples, path="lazy"), False, SGD_LAZY_BUGS,
          40_000, 400_000, 1740),
    Audit("dp_sgd_lazy_l2", "DP-SGD step release, lazy noise, L2 (Gaussian)",
          _sampler(mech.dp_sgd_samples, path="lazy_l2"), False, SGD_LAZY_BUGS,
          40_000, 400_000, 1741, ci_bugs=("noise_halved",)),
    Audit("dp_sgd_eager_l1", "DP-SGD step release, eager, L1 (Gaussian)",
          _sampler(mech.dp_sgd_samples, path="eager_l1"), False, RELEASE_BUGS,
          40_000, 400_000, 1742),
    Audit("dp_sgd_sampled", "DP-SGD step release, Poisson rate 1/4, lazy (subsampled Gaussian)",
          _sampler(mech.dp_sgd_samples, path="lazy", rate=0.25, epsilon=0.75), False,
          SGD_LAZY_BUGS, 60_000, 400_000, 1743, ci_bugs=("noise_halved",)),
    # 7 steps: on D' every coordinate's noise is one lazy catch-up of 7 walk steps
    Audit("dp_sgd_steps", "DP-SGD final iterate, 7 steps, lazy, no penalty (Gaussian)",
          _sampler(mech.dp_sgd_samples, path="lazy", steps=7), False, SGD_LAZY_BUGS,
          40_000, 400_000, 1744, ci_bugs=("noise_halved",)),
    Audit("dp_sgd_steps_l2", "DP-SGD final iterate, 7 steps, lazy, L2 with halving (Gaussian)",
          _sampler(mech.dp_sgd_samples, path="lazy_l2_halving", steps=7), False,
          SGD_LAZY_BUGS, 40_000, 400_000, 1745, ci_bugs=("sensitivity_halved",)),
    # fixed-size batches: replace-one neighbours (labels flipped), sensitivity 2C
    Audit("dp_sgd_fixed", "DP-SGD step release, fixed-size batch (replace-one, Gaussian)",
          _sampler(mech.dp_sgd_samples, path="lazy", sampling="fixed"), False,
          SGD_LAZY_BUGS, 40_000, 400_000, 1746, ci_bugs=("sensitivity_halved",)),
]
BY_KEY = {a.key: a for a in AUDITS}


def ci_audits(family=None):
    return [a for a in AUDITS if not a.long_only and (family is None or a.key.startswith(family))]


def all_audits(family=None):
    return [a for a in AUDITS if family is None or a.key.startswith(family)]


# DP-SCD, one step's release of the shared vector v (_mechanisms.dp_scd_samples): lazy
# and eager walk noise, the paper's noise_alpha, 7 lazy steps, Poisson rate 1/4 and
# fixed-size batches.  dp_scd refuses raw_float_noise (v lives on its grid only).
# CI: every bug on the 1-step lazy and eager paths, one bug on each other path.
SCD_BUGS = SGD_LAZY_BUGS
AUDITS += [
    Audit("dp_scd_lazy", "DP-SCD release of v, lazy noise (Gaussian)",
          _sampler(mech.dp_scd_samples, path="lazy"), False, SCD_BUGS,
          40_000, 400_000, 1750),
    Audit("dp_scd_eager", "DP-SCD release of v, eager noise (Gaussian)",
          _sampler(mech.dp_scd_samples, path="eager"), False, SCD_BUGS,
          40_000, 400_000, 1751),
    Audit("dp_scd_noise_alpha", "DP-SCD release of v, noise_alpha (noise sqrt(2) z on v), lazy",
          _sampler(mech.dp_scd_samples, path="lazy_noise_alpha"), False, SCD_BUGS,
          40_000, 400_000, 1752, ci_bugs=("noise_halved",)),
    Audit("dp_scd_steps", "DP-SCD v after 7 steps, lazy (Gaussian)",
          _sampler(mech.dp_scd_samples, path="lazy", steps=7), False, SCD_BUGS,
          40_000, 400_000, 1753, ci_bugs=("noise_halved",)),
    Audit("dp_scd_steps_eager", "DP-SCD v after 7 steps, eager (Gaussian)",
          _sampler(mech.dp_scd_samples, path="eager", steps=7), False, SCD_BUGS,
          40_000, 400_000, 1754, ci_bugs=("sensitivity_halved",)),
    Audit("dp_scd_sampled", "DP-SCD release of v, Poisson rate 1/4, lazy (subsampled Gaussian)",
          _sampler(mech.dp_scd_samples, path="lazy", rate=0.25, epsilon=0.75), False,
          SCD_BUGS, 60_000, 400_000, 1755, ci_bugs=("noise_halved",)),
    Audit("dp_scd_fixed", "DP-SCD release of v, fixed-size batch (replace-one, Gaussian)",
          _sampler(mech.dp_scd_samples, path="lazy", sampling="fixed"), False,
          SCD_BUGS, 40_000, 400_000, 1756, ci_bugs=("sensitivity_halved",)),
    # rows 3 e_j: the scaling |zeta_j| max(1, ||x_j||) <= C (|zeta_j| alone would give 3C)
    Audit("dp_scd_row_norm", "DP-SCD release of v, rows of norm 3, lazy (Gaussian)",
          _sampler(mech.dp_scd_samples, path="lazy", row_norm=3.0), False, SCD_BUGS,
          40_000, 400_000, 1757, ci_bugs=("no_clipping",)),
]
BY_KEY.update((a.key, a) for a in AUDITS)


# Issue 35: audits of what the first ones could not see.  Their claims come from the
# budget the fit was given (the DP-SGD and DP-SCD audits above now claim their budget
# too), on data that exercises more of each mechanism:
# * DP-CD with 4 outer loops and varied M_j: the claim of one coordinate's 4 releases is
#   their share of the budget's Gaussian DP (a fit calibrated for one inner loop, or
#   for half the sensitivity, exceeds it);
# * DP-GCD's selection with varied M_j (M_0 = 16 on the coordinate that gains): a
#   score that forgets its 1 / sqrt(M_j) normalisation is 4 times too sensitive there;
# * the private smoothness constants of 4 features at once (the vector's L1
#   sensitivity is 4 b, each coordinate a quarter of epsilon'): a Laplace scale without
#   its factor p;
# * eager DP-SGD on pairs of coordinates, one of which only differs (D' removes the
#   even rows): the difference of a pair cancels noise shared between coordinates;
# * DP-SGD and DP-SCD after 20 lazy steps: on D' a catch-up of 20 steps draws from the
#   walk's second base-16 digit (16 steps and more), which 7 steps never reach;
# * DP-CD's default constants on a feature whose one entry is an outlier: its constant
#   is set by the private bound on |X_ij|, which a bound read off the data follows.
AUDITS += [
    Audit("dp_cd_outer", "DP-CD, 4 outer loops, varied M_j (claim: the budget's share)",
          _sampler(mech.dp_cd_samples, outer=4, varied=True), False,
          ("noise_halved", "sensitivity_halved", "no_clipping"), 40_000, 400_000, 1760,
          ci_bugs=("noise_halved",)),
    Audit("gcd_selection_varied", "DP-GCD selection, varied M_j (laplace, GS-R)",
          _sampler(mech.dp_gcd_selection_samples, selection="laplace", rule="gs-r",
                   varied=True), True, SELECTION_BUGS, 20_000, 100_000, 1761,
          ci_bugs=("noise_halved",)),
    Audit("smoothness_features", "private smoothness constant, one of 4 features (Laplace)",
          _sampler(mech.smoothness_samples, features=4), False,
          ("noise_halved", "sensitivity_halved"), 40_000, 400_000, 1762,
          ci_bugs=("noise_halved",)),
    Audit("dp_sgd_eager_pairs", "DP-SGD step release, eager, L1, pairs of coordinates (joint)",
          _sampler(mech.dp_sgd_samples, path="eager_l1", joint=True), False, RELEASE_BUGS,
          20_000, 200_000, 1763, ci_bugs=("noise_halved",), joint=True),
    Audit("dp_sgd_catch_up_20", "DP-SGD final iterate, 20 steps, lazy (catch-ups of 20 steps)",
          _sampler(mech.dp_sgd_samples, path="lazy", steps=20), False, SGD_LAZY_BUGS,
          40_000, 400_000, 1764, ci_bugs=("noise_halved",)),
    Audit("feature_bound", "private constant at the private bound on |X_ij| (DP-CD's defaults)",
          _sampler(mech.feature_bound_samples), False, ("leaked_bound",), 1_000, 10_000,
          1766),
    Audit("dp_scd_catch_up_20", "DP-SCD v after 20 steps, lazy (catch-ups of 20 steps)",
          _sampler(mech.dp_scd_samples, path="lazy", steps=20), False, SCD_BUGS,
          40_000, 400_000, 1765, ci_bugs=("noise_halved",)),
]
BY_KEY.update((a.key, a) for a in AUDITS)
