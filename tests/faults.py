"""The planted bugs: each fault injected into the objects a fit builds.

A privacy test that cannot fail proves nothing: every audit runs once against
the real mechanism (it must pass) and once against a deliberately broken
variant (it must fail).  The library has no switch for these.  Inside
``with injected(bug):`` the names that the solver modules look up -- their
release classes (:mod:`sparsedp.solvers._release`) and the kernel entry points
they imported -- are monkeypatched with broken stand-ins, and put back on exit.
Each stand-in breaks the mechanism only: the ledger and the fit's ``info`` still
state what the *correct* mechanism spends (the multiplier, the noise scales),
so a planted bug is an under-noised mechanism that claims the correct budget.

Bugs
----
``"noise_halved"``
    Every noise scale halved: the releases' (a ``GridRelease`` / ``WalkRelease``
    built at half the multiplier: the private constants' histograms and DP-GCD's
    estimate after selection too) and DP-GCD's selection noise.
``"no_clipping"``
    Per-sample terms not clipped (the kernel's clip is ``inf``, and DP-GCD's
    smoothness estimate after selection sums unclipped terms; DP-CD's blocks
    hold ``2**64 C_j``, its grid scaled back by ``2**-64``, so the grid and the
    noise are still those of ``C_j``), the noise calibrated for the clipped
    sensitivity.
``"sensitivity_halved"``
    The release's sensitivity taken as half its value (the grid and the noise
    computed from ``Delta / 2``); DP-GCD's selection scale halved.
``"monotone_selection"``
    DP-GCD's report-noisy-max at scale ``Delta / eps0`` (the monotone-scores
    scale of Dwork and Roth's Claim 3.9) on scores that are not monotone.
``"leaked_bound"``
    The private bound on ``|X_ij|`` of the default constants
    (:func:`sparsedp.solvers._scales.private_row_scales`, read by
    ``estimate_bounds`` at a finite epsilon) replaced by the data's own largest
    ``|X_ij|``, its histogram still drawn and recorded: a data-dependent value used
    without budget, the ledger unchanged.
``"raw_float_noise"``
    The releases add raw floating-point noise to the raw value (the sampler
    this library used before the floating-point fix): Mironov's attack applies.
    The kernel the solver calls is replaced by the real kernel run without
    noise, followed by the same single release in numpy, ``value + scale N``
    in floating point (N standard Gaussian or Laplace, from the fit's noise
    generator).  The stand-ins reproduce the audited configurations only (one
    release per coordinate from a zero iterate; DP-GCD's iterate then moves by
    the exact gradient, which the audit's tiny steps leave unread) and refuse
    any other.  DP-SCD and DP-SGD's integer frame release integers on a grid:
    they have no raw floating-point variant.
"""
import contextlib
import inspect
import math

import numpy as np
import pytest

BUGS = ("noise_halved", "no_clipping", "sensitivity_halved", "monotone_selection",
        "raw_float_noise", "leaked_bound")

#: DP-CD's clips are scaled up by this (unclipped), its grid per clip down by it:
#: a power of two, so that the grid ``g_j = grid_per_clip C_j`` is bit for bit the same
UNCLIP = 2.0 ** 64


#: the constructors' parameters, in order (extension types carry no signature)
CONSTRUCTORS = {
    "CoordinateBlocks": ("X", "step_sizes", "clip_thresholds", "theta", "narrow_rows",
                         "intercept_scaling", "ones"),
    "GreedyKernel": ("X", "y", "loss", "smoothness", "clip_thresholds", "step_sizes", "l1",
                     "l2", "rule", "selection", "selection_scale", "gradient_release", "noise",
                     "grid", "inv_grid", "generator", "refresh_every", "refresh_work",
                     "coef_init", "intercept_scaling", "step_estimate"),
}


def _signature(fn):
    try:
        return inspect.signature(fn)
    except ValueError:  # an extension type: its listed parameters (the call passes them
        # back by name, so a wrong list fails loudly in the constructor)
        return inspect.Signature([
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
            for name in CONSTRUCTORS[fn.__name__]])


def _bound(fn, args, kwargs):
    """The call's arguments by parameter name (raises if they do not fit ``fn``)."""
    return _signature(fn).bind(*args, **kwargs).arguments


def _with(fn, **changes):
    """``fn`` with some arguments replaced: ``name=f`` calls ``f(value)``."""
    def call(*args, **kwargs):
        arguments = _bound(fn, args, kwargs)
        for name, change in changes.items():
            arguments[name] = change(arguments[name])
        return fn(**arguments)
    return call


def _halve(x):
    return x / 2.0


def _unclipped(clip):
    return np.full_like(np.asarray(clip, dtype=np.float64), math.inf) \
        if np.ndim(clip) else math.inf


def _unclipped_estimate(estimate):
    """DP-GCD's estimate after selection with its terms unclipped (and uncapped): the
    bound ``beta B^2`` infinite, the release's grid and noise still those of it."""
    if estimate is None:
        return None
    noise, grid, inv_grid, beta, bound, floor, gamma = estimate
    return noise, grid, inv_grid, beta, math.inf, floor, gamma


def _grid_release(cls, noise=1.0, sensitivity=1.0, record=None):
    """A ``GridRelease`` built at ``noise`` times the multiplier and ``sensitivity``
    times the sensitivity, reporting the correct ``multiplier`` and ``scales``;
    ``record`` (a list) receives each one built."""
    class Planted(cls):
        def __init__(self, law, multiplier, n_terms, sens):
            super().__init__(law, multiplier * noise, n_terms, sens * sensitivity)
            self.multiplier = multiplier
            self.scales = multiplier * self.rho * sens
            # the ideal noise scale on the sum, for a raw floating-point release
            self.raw_scale = multiplier * np.asarray(sens, dtype=np.float64)
            if record is not None:
                record.append(self)
    return Planted


def _walk_release(cls, noise=1.0, sensitivity=1.0):
    """A ``WalkRelease`` built at ``noise`` times the multiplier and ``sensitivity``
    times the sensitivity, reporting the correct ``multiplier`` and ``noise_sd``."""
    class Planted(cls):
        def __init__(self, multiplier, n_terms, dim, sens, max_steps, data_multipliers=(1,),
                     used=None):
            super().__init__(multiplier * noise, n_terms, dim, sens * sensitivity, max_steps,
                             data_multipliers, used)
            self.multiplier = multiplier
            self.noise_sd = multiplier * self.sensitivity_int * self.grid
    return Planted


class _RawNoise:
    """Stands for an ``IntegerNoise`` in ``noise.release(values, inv_grid, grid,
    generator)``: ``values + scale N`` in floating point, no grid."""

    def __init__(self, law, scale, eta):
        self.law, self.scale, self.eta = law, scale, eta

    def release(self, values, inv_grid, grid, generator):
        size = np.shape(values)
        draws = (generator.laplace(0.0, 1.0, size=size) if self.law == "laplace"
                 else generator.standard_normal(size=size))
        return values + draws * self.scale


def _raw_smoothness_release(cls):
    class Raw(_grid_release(cls)):
        def __init__(self, law, multiplier, n_terms, sens):
            super().__init__(law, multiplier, n_terms, sens)
            self.noise = _RawNoise(law, self.raw_scale, self.noise.eta)
    return Raw


def _refuse(what):
    raise NotImplementedError(f"the raw floating-point stand-in reproduces the audit's "
                              f"configuration only: {what}")


class _RawDPCD:
    """DP-CD with raw floating-point noise: the kernel run without noise, then each
    moved coordinate's release ``G_j + 2 z C_j N`` and step ``theta_j = -release / n``
    (the audit's steps: from 0, unit step size, no penalty, each coordinate once)."""

    def patches(self):
        """What to patch in ``sparsedp.solvers._dp_cd``: the blocks and the streams
        (recorded: the clips, step sizes and noise generator of the run), the
        release (recorded: its multiplier) and the kernel."""
        import sparsedp.solvers._dp_cd as dp_cd
        self.releases, self.blocks, self.generators = [], {}, []
        self.kernel = dp_cd.dp_cd_steps
        blocks_cls, streams_cls = dp_cd.CoordinateBlocks, dp_cd.RandomStreams

        def blocks(*args, **kwargs):
            arguments = _bound(blocks_cls, args, kwargs)
            made = blocks_cls(**arguments)
            self.blocks[id(made)] = (np.asarray(arguments["step_sizes"], dtype=np.float64),
                                     np.asarray(arguments["clip_thresholds"], dtype=np.float64))
            return made

        def streams(n_features, index_generator, noise_generator, **kwargs):
            self.generators.append(noise_generator)
            return streams_cls(n_features, index_generator, noise_generator, **kwargs)

        return [("sparsedp.solvers._dp_cd", "CoordinateBlocks", lambda _: blocks),
                ("sparsedp.solvers._dp_cd", "RandomStreams", lambda _: streams),
                ("sparsedp.solvers._dp_cd", "GridRelease",
                 lambda cls: _grid_release(cls, record=self.releases)),
                ("sparsedp.solvers._dp_cd", "dp_cd_steps", lambda _: self.steps)]

    def steps(self, *args, **kwargs):
        a = _bound(self.kernel, args, kwargs)
        if a["noise"] != "grid":
            return self.kernel(**a)
        blocks, n = a["blocks"], a["margin"].shape[0]
        step_sizes, clips = self.blocks[id(blocks)]
        if a["l1"] or a["l2"] or a["averaging"] or a["k_start"] or n & (n - 1) \
                or not np.all(step_sizes == 1.0):
            _refuse("no penalty, no averaging, unit steps, one call a loop, n a power of two")
        before = blocks.get_theta()
        a["noise"] = "none"
        moves = self.kernel(**a)
        after = blocks.get_theta()
        moved = np.flatnonzero(after != before)
        if moves != moved.size or np.any(before[moved] != 0.0):
            _refuse("each coordinate moved once, from 0")
        exact = -after[moved] * n  # G_j (n a power of two: exact)
        sd = self.releases[-1].raw_scale * clips[moved]
        noisy = exact + sd * self.generators[-1].standard_normal(moved.size)
        theta = after.copy()
        theta[moved] = -(noisy * (1.0 / n))
        blocks.set_theta(theta)
        return moves


class _RawGreedy:
    """DP-GCD's kernel without noise, its released gradients ``G_j / n`` then given
    raw floating-point noise of the release's scale ``z 2 C_j / n`` (Laplace or
    Gaussian).  The iterate moves by the exact gradient."""

    def __init__(self, kernel, scales, law, generator):
        self._kernel, self._scales, self._law, self._generator = kernel, scales, law, generator

    def run(self, n_iter):
        selected, released = self._kernel.run(n_iter)
        draws = (self._generator.laplace(0.0, 1.0, size=n_iter) if self._law == "laplace"
                 else self._generator.standard_normal(size=n_iter))
        return selected, released + self._scales[selected] * draws

    def __getattr__(self, name):
        return getattr(self._kernel, name)


def _raw_dp_gcd():
    """What to patch in ``sparsedp.solvers._dp_gcd``: the release (recorded: its law
    and scales) and the kernel (:class:`_RawGreedy` around the noiseless one)."""
    import sparsedp.solvers._dp_gcd as dp_gcd
    releases, kernel_cls = [], dp_gcd.GreedyKernel

    def kernel(*args, **kwargs):
        a = _bound(kernel_cls, args, kwargs)
        if a["gradient_release"] != "grid":
            return kernel_cls(**a)
        release, n = releases[-1], a["X"].shape[0]
        scales = release.raw_scale / n
        if np.shape(scales) != (a["X"].shape[1],) or a.get("intercept_scaling") is not None:
            _refuse("every coordinate live, no intercept")
        a.update(gradient_release="none", noise=None)
        return _RawGreedy(kernel_cls(**a), scales, release.law, a["generator"])

    return [("sparsedp.solvers._dp_gcd", "GridRelease",
             lambda cls: _grid_release(cls, record=releases)),
            ("sparsedp.solvers._dp_gcd", "GreedyKernel", lambda _: kernel)]


def _raw_sgd_eager(fn):
    """DP-SGD's eager kernel without noise, then one step's release ``G_j + sd N``
    (``sd = z Delta_int g``, the release's noise) and the proximal step."""
    def call(*args, **kwargs):
        a = _bound(fn, args, kwargs)
        noise = a["noise"]
        if noise is None:
            return fn(**a)
        w, step = a["w"], a["step"]
        if a["steps"] != 1 or np.any(np.asarray(w) != 0.0) or a["l2"] \
                or math.frexp(step)[0] != 0.5:
            _refuse("one step from 0, no L2, a step size that is a power of two")
        a["noise"] = None
        fn(**a)
        exact = -np.asarray(w) / step  # G_j: the L1 prox (1e-300) is the identity here
        x = exact + noise.scale * a["grid"] * a["generator"].standard_normal(exact.size)
        v = -step * x
        threshold = a["prox_step"] * a["l1"]
        np.asarray(w)[:] = np.sign(v) * np.maximum(np.abs(v) - threshold, 0.0)
    return call


def _leaked_bound(fn):
    """``private_row_scales`` whose bound is the data's own largest ``|X_ij|``."""
    import copy

    def call(X, *args, **kwargs):
        scales = copy.copy(fn(X, *args, **kwargs))
        scales.bound = float(abs(X).max())
        return scales
    return call


def _patches(bug):
    """``(module, name, make)``: ``module.name`` becomes ``make(module.name)``."""
    grid_modules = ("sparsedp.solvers._dp_cd", "sparsedp.solvers._dp_gcd",
                    "sparsedp.solvers._smoothness", "sparsedp.solvers._scales")
    walk_modules = ("sparsedp.solvers._dp_sgd", "sparsedp.solvers._dp_scd")
    out = []
    if bug in ("noise_halved", "sensitivity_halved"):
        factors = {"noise": 0.5} if bug == "noise_halved" else {"sensitivity": 0.5}
        out += [(m, "GridRelease", lambda cls: _grid_release(cls, **factors))
                for m in grid_modules]
        out += [(m, "WalkRelease", lambda cls: _walk_release(cls, **factors))
                for m in walk_modules]
    if bug in ("noise_halved", "sensitivity_halved", "monotone_selection"):
        out.append(("sparsedp.solvers._dp_gcd", "GreedyKernel",
                    lambda cls: _with(cls, selection_scale=_halve)))
    if bug == "no_clipping":
        out += [("sparsedp.solvers._dp_cd", "CoordinateBlocks",
                 lambda cls: _with(cls, clip_thresholds=lambda c: np.asarray(c) * UNCLIP)),
                ("sparsedp.solvers._dp_cd", "dp_cd_steps",
                 lambda fn: _with(fn, grid_per_clip=lambda g: g / UNCLIP,
                                  inv_grid_per_clip=lambda g: g * UNCLIP)),
                ("sparsedp.solvers._dp_gcd", "GreedyKernel",
                 lambda cls: _with(cls, clip_thresholds=_unclipped,
                                   step_estimate=_unclipped_estimate)),
                ("sparsedp.solvers._dp_sgd", "sgd_eager", lambda fn: _with(fn, clip=_unclipped)),
                ("sparsedp.solvers._dp_sgd", "sgd_lazy", lambda fn: _with(fn, clip=_unclipped)),
                ("sparsedp.solvers._dp_scd", "dp_scd_steps",
                 lambda fn: _with(fn, clip=_unclipped))]
    if bug == "leaked_bound":
        out.append(("sparsedp.solvers._scales", "private_row_scales", _leaked_bound))
    if bug == "raw_float_noise":
        out += _RawDPCD().patches() + _raw_dp_gcd()
        out += [("sparsedp.solvers._smoothness", "GridRelease", _raw_smoothness_release),
                ("sparsedp.solvers._dp_sgd", "sgd_eager", _raw_sgd_eager)]
    return out


@contextlib.contextmanager
def injected(bug, modules=None):
    """Run the body with ``bug`` planted in the solvers (not thread-safe); with
    ``modules``, only in those (an audit of one release inside a fit, whose other
    mechanisms' stand-ins would refuse the fit's configuration)."""
    import importlib
    if bug not in BUGS:
        raise ValueError(f"unknown planted bug {bug!r}; one of {BUGS}")
    with pytest.MonkeyPatch.context() as patch:
        for module_name, name, make in _patches(bug):
            if modules is not None and module_name not in modules:
                continue
            module = importlib.import_module(module_name)
            patch.setattr(module, name, make(getattr(module, name)))
        yield
