"""Separable penalties: none, L1, L2, elastic net.

Every penalty here is the separable elastic net::

    penalty(w) = sum_j  l1 * |w_j| + l2 / 2 * w_j^2

so one compiled prox serves them all (``L1``: l2 = 0, ``L2``: l1 = 0).  Each
gives its value, the proximal operator of a coordinate, the distance of
``-gradient`` to the subdifferential (the GS-s score) and the optimal value of
the one-dimensional GS-q model, all vectorised over coordinates.
"""
import numpy as np

from ._kernels import KernelId
from ._validation import check_real

__all__ = ["L1", "L2", "ElasticNet", "as_penalty"]


def _strength(value, name):
    """A penalty strength: a finite real ``>= 0``."""
    return check_real(value, name, include_low=True)


class _SeparableElasticNet:
    """``l1 * |w| + l2 / 2 * w^2`` coordinate-wise (base of every penalty)."""

    l1 = 0.0
    l2 = 0.0
    #: the compiled kernel (each concrete class declares its own)
    kernel_id = None

    @property
    def ridge(self):
        """Whether it is ``(l2 / 2) ||w||^2`` with ``l2 > 0`` and no L1 part (what
        DP-SCD's dual needs: its regulariser lambda)."""
        return self.l1 == 0.0 and self.l2 > 0.0

    def value(self, w):
        """penalty(w); a term whose strength is 0 is 0 whatever ``w`` (no 0 * inf)."""
        w = np.asarray(w, dtype=float)
        value = self.l1 * np.abs(w).sum() if self.l1 else 0.0
        if self.l2:
            value += 0.5 * self.l2 * (w @ w)
        return float(value)

    def prox(self, x, step):
        """prox of ``step * penalty`` at ``x`` (coordinate-wise; step may be an array)."""
        x = np.asarray(x, dtype=float)
        shrunk = np.sign(x) * np.maximum(np.abs(x) - step * self.l1, 0.0)
        return shrunk / (1.0 + step * self.l2)

    def subdiff_distance(self, w, grad):
        """Distance of ``-grad`` to the subdifferential of the penalty at ``w``.

        Zero exactly at the optimality condition ``0 in grad + d penalty(w)``;
        this is the GS-s score and the KKT violation of a coordinate.
        """
        w = np.asarray(w, dtype=float)
        grad = np.asarray(grad, dtype=float)
        smooth = grad + self.l2 * w
        return np.where(w != 0.0,
                        np.abs(smooth + self.l1 * np.sign(w)),
                        np.maximum(np.abs(smooth) - self.l1, 0.0))

    def prox_step(self, w, grad, step):
        """The proximal coordinate step ``prox(w - step*grad, step) - w``."""
        return self.prox(np.asarray(w) - step * np.asarray(grad), step) - w

    def __eq__(self, other):
        return (isinstance(other, _SeparableElasticNet)
                and (self.l1, self.l2) == (other.l1, other.l2))

    def __hash__(self):
        return hash((self.l1, self.l2))

    def __repr__(self):
        params = [f"{name}={getattr(self, name)!r}" for name in ("alpha", "l1_ratio")
                  if name in vars(self)]
        return f"{type(self).__name__}({', '.join(params)})"


class _NoPenalty(_SeparableElasticNet):
    """No penalty (what ``penalty=None`` means)."""

    kernel_id = KernelId.ELASTIC_NET

    def __repr__(self):
        return "None"


class L1(_SeparableElasticNet):
    """``alpha * ||w||_1``."""

    kernel_id = KernelId.ELASTIC_NET

    def __init__(self, alpha):
        self.alpha = self.l1 = _strength(alpha, "alpha")


class L2(_SeparableElasticNet):
    """``(alpha / 2) * ||w||_2^2``."""

    kernel_id = KernelId.ELASTIC_NET

    def __init__(self, alpha):
        self.alpha = self.l2 = _strength(alpha, "alpha")


class ElasticNet(_SeparableElasticNet):
    """``alpha * (l1_ratio * ||w||_1 + (1 - l1_ratio) / 2 * ||w||_2^2)``."""

    kernel_id = KernelId.ELASTIC_NET

    def __init__(self, alpha, l1_ratio=0.5):
        self.alpha = _strength(alpha, "alpha")
        self.l1_ratio = check_real(l1_ratio, "l1_ratio", include_low=True, high=1.0,
                                   include_high=True)
        self.l1 = self.alpha * self.l1_ratio
        self.l2 = self.alpha * (1.0 - self.l1_ratio)


def as_penalty(penalty):
    """The penalty object for ``penalty`` (None means no penalty)."""
    if penalty is None:
        return _NoPenalty()
    if not isinstance(penalty, _SeparableElasticNet):
        raise TypeError(
            "penalty must be None, L1, L2 or ElasticNet, got "
            f"{type(penalty).__name__}")
    return penalty
