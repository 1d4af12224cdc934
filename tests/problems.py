"""Problem generators and paths shared by the tests (importable: tests/ is on pythonpath)."""
import math
import os
import pathlib

import numpy as np
import scipy.sparse as sp

ROOT = pathlib.Path(__file__).resolve().parents[1]

LABELS = ("regression", "sign", "coin")
VALUES = ("normal", "uniform", "uniform-legacy")
FORMATS = {"csc": sp.csc_array, "csr": sp.csr_array}


def make_sparse_problem(n=60, p=40, density=0.2, seed=0, logistic=False, n_active=5,
                        index_dtype=np.int32, *, labels=None, noise=0.1, offset=0.0,
                        values="normal", format="csc", empty_columns=()):
    """A small random sparse problem ``X, y`` (X a ``csc_array`` or ``csr_array``).

    Everything is a function of ``seed``; the keywords reproduce, draw for draw, the
    generators the test files had before this one (their tolerances and statistical
    tests were tuned on that data).

    values
        ``"normal"``: X's pattern and standard-normal entries drawn from
        ``rng = default_rng(seed)``, the targets then from the same ``rng``.
        ``"uniform"``: X as ``scipy.sparse.random(..., rng=seed)`` draws it (entries
        uniform on [0, 1)); ``"uniform-legacy"``: as ``random_state=seed`` draws it
        (numpy's legacy ``RandomState``); in both the targets come from a fresh
        ``default_rng(seed)``.
    labels
        ``"regression"``: ``y = X w + offset + noise * e``, ``w`` standard normal on its
        first ``n_active`` coordinates (then 0), ``e`` standard normal; ``"sign"``: the
        +-1 sign of that regression target (``logistic=True`` means ``labels="sign"``);
        ``"coin"``: +-1 labels of a fair coin, independent of X. A sequence of kinds
        (with ``noise`` a sequence of the same length, or one scale for all) returns one
        target per kind, ``X, y1, y2, ...``: the same ``w``, a fresh ``e`` for each, in
        order.
    empty_columns
        Columns set to 0 (entries removed) before the targets are computed.
    """
    if labels is None:
        labels = "sign" if logistic else "regression"
    elif logistic:
        raise ValueError("logistic=True is labels='sign': give one of them")
    kinds = (labels,) if isinstance(labels, str) else tuple(labels)
    scales = np.broadcast_to(np.asarray(noise, dtype=float), (len(kinds),))
    if not set(kinds) <= set(LABELS) or values not in VALUES or format not in FORMATS:
        raise ValueError(f"labels in {LABELS}, values in {VALUES}, format in {set(FORMATS)}")
    rng = np.random.default_rng(seed)
    if values == "normal":
        X = sp.random(n, p, density=density, format=format, rng=rng,
                      data_rvs=rng.standard_normal)
    elif values == "uniform":
        X = sp.random(n, p, density=density, format=format, rng=seed)
    else:
        X = sp.random(n, p, density=density, format=format, random_state=seed)
    if len(empty_columns):
        X = X.tolil()
        X[:, list(empty_columns)] = 0
        X = X.asformat(format)
    w = None
    targets = []
    for kind, scale in zip(kinds, scales):
        if kind == "coin":
            targets.append(np.where(rng.random(n) < 0.5, -1.0, 1.0))
            continue
        if w is None:
            w = np.zeros(p)
            w[:n_active] = rng.standard_normal(n_active)
        z = X @ w + offset + scale * rng.standard_normal(n)
        targets.append(np.where(z >= 0, 1.0, -1.0) if kind == "sign" else z)
    X = FORMATS[format]((X.data, X.indices.astype(index_dtype),
                         X.indptr.astype(index_dtype)), shape=X.shape)
    return (X, *targets)


def read_only_csc(X, own=True):
    """X with read-only arrays: owned copies (``own``), or read-only views of
    writeable arrays (which the views' owner can still change).  Returns the
    matrix and its (data, indices, indptr)."""
    arrays = [np.array(a) for a in (X.data, X.indices, X.indptr)]
    if not own:
        arrays = [a.view() for a in arrays]
    for a in arrays:
        a.setflags(write=False)
    return sp.csc_array(tuple(arrays), shape=X.shape, copy=False), arrays


def data_dir():
    """Where the real data sets live ($SPARSEDP_DATA, default ../shared/data)."""
    return pathlib.Path(os.environ.get("SPARSEDP_DATA", ROOT.parent / "shared" / "data"))


def gsq_model_value(penalty, w, grad, lipschitz):
    """The GS-q rule's definition: per coordinate, the optimal value (<= 0) of the model
    ``min_d grad d + lipschitz / 2 d^2 + pen(w + d) - pen(w)``, attained at the proximal
    step of size ``1 / lipschitz`` (``-inf`` where its terms overflow: the minimum of a
    ``lipschitz``-strongly convex model that is 0 at 0 is at most ``-lipschitz d^2 / 2``)."""
    w = np.asarray(w, dtype=float)
    grad = np.asarray(grad, dtype=float)
    lipschitz = np.asarray(lipschitz, dtype=float)
    d = penalty.prox_step(w, grad, 1.0 / lipschitz)
    with np.errstate(over="ignore", invalid="ignore"):
        # pen(w + d) - pen(w) term by term (no 0 * inf)
        change = penalty.l1 * (np.abs(w + d) - np.abs(w)) if penalty.l1 else np.zeros_like(w)
        if penalty.l2:
            change = change + 0.5 * penalty.l2 * d * (2.0 * w + d)
        value = grad * d + 0.5 * lipschitz * d * d + change
    return np.where(np.isnan(value), -np.inf, value)


# NoisyMax's HEAD_BITS (sparsedp/_kernels/_noisy_max.pyx): a score may rise
# (HEAD_BITS - 1) log 2 b above ref before the weights are re-referenced.
NOISY_MAX_HEAD_BITS = 24


def noisy_max_weights(nm):
    """The integer weights r_k of ``NoisyMax``'s exponential sampler, recomputed from
    its public state (``scores``, ``ref``, ``scale``, ``units``) with the kernel's own
    double operations (``NoisyMax.integer_weight``, libm's exp, as Python's math):
    ``x = (s_k - ref) / b``; ``r_k = 1`` below ``x_one = -(Q + 1) log 2`` (where
    ``2^Q e^x < 1/2``), else ``ceil(2^Q exp(x))`` (the product by 2^Q is exact, and so
    is the ceiling of a double: Python ints).  The sampler's word-for-word replays
    (tests/test_noisy_max_float.py, tests/test_dp_gcd.py) draw with these weights, so
    a replica that differs from the kernel fails them."""
    assert nm.scale > 0
    scores = [float(s) for s in nm.scores]
    assert len(scores) == nm.p
    x_head = (NOISY_MAX_HEAD_BITS - 1) * math.log(2)
    x_one = -(nm.units + 1) * math.log(2)
    weights = []
    for s in scores:
        x = (s - nm.ref) / nm.scale
        assert x <= x_head  # past the headroom the kernel re-references at flush
        weights.append(1 if x < x_one else math.ceil(math.ldexp(math.exp(x), nm.units)))
    return weights


class FixedModel:
    """A binary logistic "estimator" that returns the model ``w`` whatever its data,
    with an empty ledger: what a :class:`~sparsedp.model_selection.PrivateSearch` over
    it releases is the search's own mechanism alone.  Counts the fits of trials (those
    seeded by a Generator; the search's public-shape fits get an int)."""

    trial_fits = 0

    def __init__(self, w=0.0, epsilon=1.0, delta=None, random_state=None, classes=(-1.0, 1.0)):
        self.w, self.epsilon, self.delta = w, epsilon, delta
        self.random_state, self.classes = random_state, classes

    def get_params(self, deep=True):
        return {"w": self.w, "epsilon": self.epsilon, "delta": self.delta,
                "random_state": self.random_state, "classes": self.classes}

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def fit(self, X, y):
        from sparsedp.privacy import PrivacyLedger
        if isinstance(self.random_state, np.random.Generator):
            type(self).trial_fits += 1
        self.coef_ = np.array([[float(self.w)]])
        self.intercept_ = np.zeros(1)
        self.classes_ = np.array([-1.0, 1.0])
        self.privacy_ = PrivacyLedger(delta=1e-3)
        return self

    def _datafit(self):
        from sparsedp.datafits import Logistic
        return Logistic()

    def _penalty(self):
        return None

    def _decision(self, X):
        return np.asarray(X @ self.coef_.T)
