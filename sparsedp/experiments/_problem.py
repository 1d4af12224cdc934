"""A problem of an experiment: data, objective, public constants and the exact optimum."""
import math

import numpy as np
import scipy.sparse as sp

from .._validation import check_X_y, check_real, mark_checked
from ..penalties import as_penalty
from ..solvers import exact, get_spec
from ..solvers._smoothness import gradient_scale

__all__ = ["Problem"]


class Problem:
    """One optimisation problem of an experiment, with its exact optimum.

    ``F(w) = (1/n) sum_i loss(x_i . w, y_i) + penalty(w)`` on ``(X, y)``.  The
    exact optimum ``F*`` and minimiser ``w*`` (:func:`sparsedp.solvers.exact`)
    are computed on first use and cached on the object, so that every task of
    a grid compares with the same reference (and a pickled problem, sent to a
    worker, carries them).  ``F*`` and ``w*`` are non-private: they are
    computed on the data without noise, to judge the private fits.

    Parameters
    ----------
    name : str
        The problem's name in results tables (unique within a grid run).
    X : sparse matrix/array or ndarray of shape (n_samples, n_features)
        Converted once to canonical CSC (float64), and kept as the problem's own
        read-only copy.
    y : array-like of shape (n_samples,)
        Kept as the problem's own read-only float64 copy (the kernels keep what they
        derive from read-only data across fits: DP-GCD's start).
    datafit : Squared, Logistic, Hinge or SquaredHinge
    penalty : L1, L2, ElasticNet or None, default=None
    smoothness : None, "leak" or array of shape (n_features,), default=None
        Public coordinate-wise smoothness constants ``M_j`` given to DP-CD and
        DP-GCD (``smoothness=``).  None: the solvers' private defaults (each fit
        estimates them inside its budget).  ``"leak"``: every solver computes
        them (and DP-SGD its global constant) from the data, a leak their
        privacy report records (epsilon ``inf``), as in the papers' experiments.
    global_smoothness : None or float, default=None
        A public bound on the datafit's global smoothness ``beta ||X||_2^2 / n``
        given to the solvers that use it (DP-SGD's ``global_smoothness``).
        None: as ``smoothness`` says (a private estimate, or the leak).
        ``sum(smoothness)`` is always such a bound (``||X||_2^2 <= ||X||_F^2``), a
        loose one.
    tol : float, default=1e-10
        Tolerance of the exact solver (KKT violation).

    Attributes
    ----------
    n_samples, n_features : int
    optimum : Result
        The exact solver's result (computed on first access).
    f_star : float
        ``F(w*)``: non-private.
    w_star : ndarray of shape (n_features,)
        The exact minimiser: non-private.
    support : ndarray of int
        Indices of the nonzero coefficients of ``w*``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sparsedp.datafits import Squared
    >>> from sparsedp.penalties import L1
    >>> X = sp.random(50, 20, density=0.3, format="csc", rng=0)
    >>> y = X @ np.r_[1.0, 1.0, np.zeros(18)]
    >>> problem = Problem("toy", X, y, Squared(), L1(1e-3))
    >>> bool(problem.f_star <= Squared().value(np.zeros(50), y))
    True
    """

    def __init__(self, name, X, y, datafit, penalty=None, smoothness=None, *,
                 global_smoothness=None, tol=1e-10):
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"name must be a non-empty str, got {name!r}")
        self.name = name
        X, y = check_X_y(X, y, datafit)
        # the problem's own copies, read-only: what a solver derives from X and y
        # alone (DP-GCD's records, DP-CD's blocks) is then built once per process
        # for all the fits
        self.X = _own_read_only(X, copy=True)
        self.y = _own_read_only_array(y, copy=True)
        self.datafit = datafit
        self.penalty = as_penalty(penalty)
        p = self.X.shape[1]
        if isinstance(smoothness, str):
            if smoothness != "leak":
                raise ValueError(f"smoothness must be None, 'leak' or an array of shape "
                                 f"({p},), got {smoothness!r}")
        elif smoothness is not None:
            if sp.issparse(smoothness) or np.ndim(smoothness) != 1 or len(smoothness) != p:
                raise ValueError(f"smoothness must be None or an array of shape ({p},) "
                                 f"(public M_j, one per feature), got "
                                 f"{np.shape(smoothness)}")
            smoothness = np.array(smoothness, dtype=np.float64)
            if not np.all(np.isfinite(smoothness)) or np.any(smoothness < 0):
                raise ValueError("smoothness must hold finite constants M_j >= 0")
            smoothness.setflags(write=False)
        self.smoothness = smoothness
        self.global_smoothness = (None if global_smoothness is None
                                  else check_real(global_smoothness, "global_smoothness"))
        self.tol = check_real(tol, "tol")
        self._optimum = None
        self._support = None

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def optimum(self):
        return self.solve()

    def solve(self, callback=None):
        """The exact solver's result (computed once, then cached): :attr:`optimum`.

        ``callback(epochs, violation)`` follows the solve (:func:`~sparsedp.solvers.exact`;
        ``sparsedp compare`` shows it as a progress bar); not called once cached.
        """
        if self._optimum is None:
            res = exact(self.X, self.y, self.datafit, self.penalty, tol=self.tol,
                        callback=callback)
            if not res.converged:
                raise RuntimeError(
                    f"problem {self.name!r}: the exact solver did not reach tol = "
                    f"{self.tol:g} (KKT violation {res.diagnostics['kkt_violation']:.3g}); "
                    f"rescale the data or raise tol")
            res.coef.setflags(write=False)  # the problem's own, as its data
            self._optimum = res
        return self._optimum

    @property
    def f_star(self):
        return float(self.optimum.diagnostics.objective)

    @property
    def w_star(self):
        return self.optimum.coef

    @property
    def clip_unit(self):
        """The per-sample gradient scale at 0, ``sqrt(tr M / beta) rms(loss'(0, y))``,
        computed from the data (non-private, as ``f_star``): it places the clipping
        grids (``kappa x unit``), as the papers' grids are placed, and is part of
        the tuning a grid's best point reports."""
        M = self.datafit.smoothness(self.X)
        derivative = self.datafit.derivative(np.zeros(self.n_samples), self.y)
        return float(gradient_scale(float(M.sum()), self.datafit.beta,
                                    math.sqrt(np.mean(derivative ** 2))))

    @property
    def support(self):
        """The indices of the nonzero coefficients of ``w*`` (computed once)."""
        if getattr(self, "_support", None) is None:
            self._support = np.flatnonzero(self.w_star)
        return self._support

    def applicable(self, solver):
        """None if ``solver`` (a name, a key or a spec) can run on this problem, else
        the reason why not (a str)."""
        return get_spec(solver).unmet(self.datafit, self.penalty)

    def solver_constants(self, solver):
        """The public constants this problem gives ``solver`` (keyword arguments), as
        its spec's ``smoothness`` says it takes them."""
        kind = get_spec(solver).smoothness
        if isinstance(self.smoothness, str):  # "leak": every solver computes them
            return {"smoothness": "leak"} if kind is not None else {}
        if kind == "global" and self.global_smoothness is not None:
            return {"global_smoothness": self.global_smoothness}
        if kind == "coordinate" and self.smoothness is not None:
            return {"smoothness": self.smoothness}
        return {}

    def __setstate__(self, state):
        # unpickled (a dask worker, a process of one's own), X's arrays come back
        # writeable, or over the pickle's buffers: the problem's own and read-only again
        self.__dict__.update(state)
        self.X = _own_read_only(self.X, copy=False)
        self.y = _own_read_only_array(self.y, copy=False)
        if isinstance(self.smoothness, np.ndarray):  # what the fits derive from it is kept
            self.smoothness = _own_read_only_array(self.smoothness, copy=False)
        if self._optimum is not None:
            self._optimum.coef.setflags(write=False)

    def __sizeof__(self):
        # what the data weighs: read by dask's sizeof, so that joblib's dask
        # backend scatters a problem to the workers once instead of with every task
        X = self.X
        return (object.__sizeof__(self) + X.data.nbytes + X.indices.nbytes
                + X.indptr.nbytes + self.y.nbytes)

    def __repr__(self):
        f_star = "not computed" if self._optimum is None else f"{self.f_star:.6g}"
        return (f"Problem({self.name!r}, n={self.n_samples}, p={self.n_features}, "
                f"{self.datafit!r} + {self.penalty!r}, F*={f_star})")


def _own_read_only_array(a, copy):
    """``a`` read-only and its own: a copy (always with ``copy``, else when it views
    another object's memory), except a read-only memory map (joblib's), kept."""
    read_only_map = isinstance(a, np.memmap) and not a.flags.writeable
    if copy or not (read_only_map or a.base is None):
        a = np.array(a)
    a.setflags(write=False)
    return a


def _own_read_only(X, copy):
    """Canonical CSC ``X`` on read-only arrays of its own: copies (all with ``copy``,
    else those that view another object's memory), except a read-only memory map
    (joblib's), kept as it is."""
    arrays = tuple(_own_read_only_array(a, copy) for a in (X.data, X.indices, X.indptr))
    own = sp.csc_array(arrays, shape=X.shape, copy=False)
    own.has_canonical_format = True
    return mark_checked(own)
