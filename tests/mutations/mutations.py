"""The planted bugs of the mutation run (issue 35): one source edit each.

Each :class:`Mutation` replaces ``old`` (a string that must occur exactly once in
``file``, relative to the repository root) by ``new``: a minimal, realistic edit that
plants one bug the test suite must catch.  ``run.py`` applies them one at a time to a
copy of the source (a git worktree, never the user's checkout), rebuilds and runs the
tests; an ``old`` that no longer occurs exactly once is reported "stale", so the list
has to follow the code.  README.md beside this file says how to add one.
"""
from dataclasses import dataclass

__all__ = ["Mutation", "MUTATIONS"]


@dataclass(frozen=True)
class Mutation:
    """One planted bug: ``old`` (exactly once in ``file``) becomes ``new``.

    ``kind``: what the bug breaks --

    * "mechanism": a release's noise, sensitivity, clipping or law (too little
      noise for what the fit claims, whatever its accounting says);
    * "sampling": the law of a sampler the accounting relies on;
    * "calibration": the noise computed for the wrong number of releases;
    * "accounting": a privacy curve or a composition theorem;
    * "leak": a data-dependent value used without budget or record;
    * "utility": no privacy loss (the fit is as private, only worse).

    The statistical audit (``-m audit``) must catch every "mechanism",
    "sampling" and "calibration" bug by itself; an accounting slip smaller than an
    audit resolves is for the accountants' unit tests.
    """

    name: str
    file: str
    old: str
    new: str
    description: str
    kind: str = "mechanism"


MUTATIONS = [
    # 1
    Mutation(
        "dp_cd_sensitivity_halved",
        "sparsedp/solvers/_dp_cd.py",
        'release = GridRelease("gaussian", z, problem.n, 2.0)',
        'release = GridRelease("gaussian", z, problem.n, 1.0)',
        "DP-CD's coordinate release built for sensitivity C_j instead of 2 C_j "
        "(grid and noise halved; the ledger still states z on 2 C_j)"),
    # 2
    Mutation(
        "dp_cd_inner_loop_only",
        "sparsedp/solvers/_dp_cd.py",
        'steps = options["outer"] * options["inner"]',
        'steps = options["inner"]',
        "DP-CD calibrated (and recorded on its ledger) for the K steps of one inner "
        "loop instead of the T K steps of the run: wrong as soon as outer > 1",
        kind="calibration"),
    # 3
    Mutation(
        "dp_gcd_laplace_selection_as_bounded_range",
        "sparsedp/solvers/_dp_gcd.py",
        '    if selection == "exponential":\n        ledger.add_bounded_range(',
        '    if selection in ("exponential", "laplace"):\n        ledger.add_bounded_range(',
        "DP-GCD's Laplace report-noisy-max accounted as an epsilon0-bounded-range "
        "mechanism (only the exponential mechanism is): its calibration takes "
        "the bounded-range compositions' smaller cost",
        kind="accounting"),
    # 4
    Mutation(
        "dp_gcd_gs_r_unnormalised",
        "sparsedp/_kernels/_dp_gcd_fast.pyx",
        "return m * fabs(d) * self.inv_sqrt_M[k]",
        "return m * fabs(d)",
        "the GS-r score M_k |prox step| without its 1 / sqrt(M_k): the scores no longer "
        "share the sensitivity the selection noise is calibrated for"),
    # 5
    Mutation(
        "dp_gcd_selection_scale_halved",
        "sparsedp/_kernels/_dp_gcd_fast.pyx",
        "self.noisy_max = NoisyMax(scores, selection_scale, selection, generator)",
        "self.noisy_max = NoisyMax(scores, selection_scale / 2, selection, generator)",
        "GreedyKernel's noisy max run at half the selection scale it is given "
        "(info['selection_scale'] and the ledger unchanged)"),
    # 6
    Mutation(
        "dp_scd_row_norms_not_square_rooted",
        "sparsedp/solvers/_dp_scd.py",
        "indptr, indices, data, row_norms = csr_rows(X, np.int64)",
        "indptr, indices, data, row_norms = csr_rows(X, np.int64)\n"
        "        row_norms = row_norms * row_norms",
        "DP-SCD's kernel gets sum_k x_jk^2 where ||x_j|| belongs (its dual step's "
        "kappa and the update's scaling by max(1, ||x_j||)).  csr_rows is shared with "
        "DP-SGD, so the norms are squared in dp_scd only, not by dropping "
        "csr_rows' np.sqrt.  Not a privacy bug: max(1, ||x||^2) >= max(1, ||x||), so "
        "the update is clipped at least as hard; the dual steps are only worse",
        kind="utility"),
    # 7
    Mutation(
        "floyd_sampling_off_by_one",
        "sparsedp/_kernels/_sampling.pxd",
        "r = <int64_t> random_bounded_uint64(rng, 0, <uint64_t> j, 0, False)",
        "r = <int64_t> random_bounded_uint64(rng, 0, <uint64_t> (j - 1), 0, False)",
        "Floyd's algorithm draws r in [0, j - 1] instead of [0, j] (the bound of "
        "random_bounded_uint64 is inclusive): the batches are no longer uniform "
        "subsets.  Floyd's loop is in _sampling.pxd (inline), not _sampling.pyx",
        kind="sampling"),
    # 8
    Mutation(
        "walk_digit_place_value_dropped",
        "sparsedp/_kernels/_walk.pyx",
        'IntegerNoise("gaussian", scale * math.sqrt(d * 16.0 ** i))',
        'IntegerNoise("gaussian", scale * math.sqrt(d))',
        "the lazy walk's table for digit d at base-16 position i built at scale "
        "t sqrt(d) instead of t sqrt(d 16^i): a catch-up of k >= 16 steps draws "
        "far too little noise"),
    # 9
    Mutation(
        "dp_scd_lazy_gap_minus_one",
        "sparsedp/_kernels/_dp_scd_fast.pyx",
        "cdef int64_t missed = t - c.last",
        "cdef int64_t missed = t - c.last - 1",
        "DP-SCD's lazy catch-up one walk step short (gap - 1) each time a "
        "coordinate is caught up"),
    # 10
    Mutation(
        "pld_losses_rounded_down",
        "sparsedp/privacy/pld.py",
        "return LossDistribution(grid, points[0], pmf, infinity)",
        "return LossDistribution(grid, points[0] - 1, pmf, infinity)",
        "every loss of a connect-the-dots PLD placed one grid step lower: the "
        "pessimistic discretisation made optimistic.  The PLDs are built by "
        "connect-the-dots, which rounds no loss, so this shift of the grid "
        "(_connect_dots' offset) is the closest single edit to a rounding down",
        kind="accounting"),
    # 11
    Mutation(
        "rdp_sampled_gaussian_q_squared",
        "sparsedp/privacy/_subsampled.py",
        "logq, log1mq = math.log(q), math.log1p(-q) if q < 1 else -math.inf",
        "logq, log1mq = 2.0 * math.log(q), math.log1p(-q) if q < 1 else -math.inf",
        "the Poisson-subsampled Gaussian's RDP series (MTZ 2019) with q^2 where q "
        "belongs (its terms' q^k become q^2k, integer and fractional orders)",
        kind="accounting"),
    # 12
    Mutation(
        "raw_float_release",
        "sparsedp/_kernels/_noise.pxd",
        "    return grid * (a + noise)",
        "    return x + grid * noise",
        "grid_release returns the raw float x plus the noise instead of the grid "
        "value grid * (rint(x / grid) + noise): the low-order bits of the data's "
        "sum are released (DP-CD, DP-GCD and the smoothness estimates).  "
        "solvers/_release.py only sets the grid up; the value is formed in "
        "_noise.pxd's grid_release"),
    # 13
    Mutation(
        "private_smoothness_laplace_without_p",
        "sparsedp/solvers/_smoothness.py",
        'multiplier, law = p / epsilon, "laplace"',
        'multiplier, law = 1.0 / epsilon, "laplace"',
        "the private smoothness estimate's Laplace at scale b_j / (n eps') instead "
        "of p b_j / (n eps'): its L1 sensitivity p missing"),
    # 14
    Mutation(
        "feature_bound_leak_unrecorded",
        "sparsedp/solvers/_smoothness.py",
        "    if feature_bounds is None and multiplier is None:\n",
        "    if feature_bounds is None:\n",
        "estimate_bounds takes the data's own largest |X_ij| whenever feature_bounds "
        "is None, at every epsilon: a data-computed bound used with neither "
        "add_leak / PrivacyLeakWarning nor the private bound's Gaussian on the "
        "ledger.  The library now estimates this bound privately, so no leaked "
        "feature bound is left to silence: the leak is planted where the bound "
        "is made",
        kind="leak"),
    # 15
    Mutation(
        "dp_sgd_eager_shared_noise_draw",
        "sparsedp/_kernels/_dp_sgd_fast.pyx",
        "            for j in range(p):\n"
        "                if noisy:\n"
        "                    x = grid * (rint(G[j] * inv_grid) + <double> noise_draw(&noise.table, rng))",
        "            if noisy:\n"
        "                k = noise_draw(&noise.table, rng)\n"
        "            for j in range(p):\n"
        "                if noisy:\n"
        "                    x = grid * (rint(G[j] * inv_grid) + <double> k)",
        "eager DP-SGD (sgd_eager) draws one noise value per step and adds it to "
        "every coordinate, instead of one independent draw per coordinate"),
    # 16
    Mutation(
        "batch_sensitivity_fixed_at_c",
        "sparsedp/solvers/_batch.py",
        "sensitivity = clip if sampling.poisson else 2.0 * clip",
        "sensitivity = clip",
        "fixed-size batches (replace-one) calibrated and recorded at sensitivity C "
        "instead of 2C.  The line is in the batch solvers' shared skeleton, so "
        "DP-SCD's fixed-size batches get the bug too",
        kind="calibration"),
    # 17
    Mutation(
        "wor_rdp_factor_halved",
        "sparsedp/privacy/_subsampled.py",
        "thm27 = math.log(4.0) + ",
        "thm27 = math.log(2.0) + ",
        "the without-replacement RDP bound (Wang, Balle and Kasiviswanathan 2019, "
        "Thm 27) with 2 sqrt(M M') instead of 4 sqrt(M M') in its terms B_j",
        kind="accounting"),
    # 18
    Mutation(
        "advanced_without_linear_term",
        "sparsedp/privacy/accountants.py",
        "lin = math.fsum(m.count * m.pure_epsilon * math.expm1(m.pure_epsilon)\n"
        "                    if m.pure_epsilon < 700 else math.inf for m in mechanisms)",
        "lin = 0.0",
        "advanced composition (Dwork and Roth, Thm 3.20) without its linear term "
        "sum k eps0 (e^eps0 - 1)",
        kind="accounting"),
]
