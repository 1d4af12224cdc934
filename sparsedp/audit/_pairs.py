"""Worst-case neighbouring datasets for the solvers of sparsedp.

Every private solver clips the terms one row contributes (coordinate-wise for
DP-CD and DP-GCD, the row's gradient or dual update for DP-SGD and DP-SCD) and
calibrates its noise to the clip.  A pair is worst case when the row that
differs contributes exactly the clip, with opposite signs (replace-one) or
against nothing (add/remove, n public: the removed row is an empty row, which
contributes nothing to any sum), and when every other row contributes the same
in both datasets whatever the iterate: then every release moves by its full
sensitivity at every step, and nothing else differs.

The pairs saturate every clip: labels ``+-L`` with ``L`` huge (squared loss,
whose derivative ``2 (z - y)`` is then ``-+2 L`` at any reasonable margin), or
feature values ``V`` huge (logistic loss, labels in ``{-1, 1}``, whose derivative
is then ``-+V/2`` or more at margin 0 on the row's own columns).  The other rows
each hold one saturated nonzero, so their clipped terms are fixed too.
"""
import numpy as np
import scipy.sparse as sp

from .._validation import check_integer, check_option
from ._audit import NeighbouringPair

__all__ = ["worst_case_pairs"]

#: the label (squared loss) or feature value (logistic loss) that saturates every clip
SATURATE = 1e6
RELATIONS = ("replace-one", "add-remove")  # the registry's spellings


def _solver_relation(solver):
    from ..solvers import get_spec
    return get_spec(solver).relation


def _background(n, p, loss):
    """Rows 1 .. n - 1: one saturated nonzero each, in column ``(i - 1) mod p``,
    signs alternating (the columns' clipped terms balance out)."""
    rows = np.arange(1, n)
    cols = (rows - 1) % p
    sign = np.where(rows % 2 == 0, 1.0, -1.0)
    if loss == "squared":
        values, labels = np.ones(n - 1), SATURATE * sign
    else:
        values, labels = np.full(n - 1, SATURATE), sign
    return rows, cols, values, labels


def worst_case_pairs(solver, *, n_samples=64, n_features=16, loss="squared", relation=None):
    """Worst-case neighbouring pairs ``(X, y)`` / ``(X', y')`` for a solver of sparsedp.

    Parameters
    ----------
    solver : str
        A solver's name or key (``"dp_cd"`` or ``"cd"``...); its relation
        (:data:`sparsedp.solvers.REGISTRY`) decides the pairs unless
        ``relation`` is given.
    n_samples, n_features : int
        The datasets' shape (the same in both: n is public).
    loss : {"squared", "logistic"}
        The datafit the audited fit uses (labels are then real or in {-1, 1}).
    relation : {"replace-one", "add-remove"}, optional
        E.g. "replace-one" for DP-SGD with ``sampling="fixed"``.

    Returns
    -------
    list of NeighbouringPair
        Row 0 differs, every clip saturated (module docstring):

        * replace-one: row 0 with its sign flipped (label for the squared loss,
          features for the logistic loss), on one column and on every column;
        * add-remove: row 0 present or empty, on one column and on every column.

        ``d`` and ``d_prime`` are ``(X, y)`` with X a CSR matrix.
    """
    relation = relation or _solver_relation(solver)
    check_option(relation, "relation", RELATIONS)
    check_option(loss, "loss", ("squared", "logistic"))
    n = check_integer(n_samples, "n_samples", low=2)
    p = check_integer(n_features, "n_features")
    rows, cols, values, labels = _background(n, p, loss)
    pairs = []
    for width, where in ((1, "column 0"), (p, "every column")):
        first = np.zeros(width, dtype=np.int64)
        first_cols = np.arange(width)
        value = 1.0 if loss == "squared" else SATURATE
        label = SATURATE if loss == "squared" else 1.0
        datasets = []
        for sign, present in ((1.0, True), (-1.0, relation == "replace-one")):
            r = np.concatenate([first, rows]) if present else rows
            c = np.concatenate([first_cols, cols]) if present else cols
            v = np.concatenate([np.full(width, value * (sign if loss == "logistic" else 1.0)),
                                values]) if present else values
            y = np.concatenate([[label * (sign if loss == "squared" else 1.0)], labels])
            datasets.append((sp.csr_matrix((v, (r, c)), shape=(n, p)), y))
        change = ("its sign flipped" if relation == "replace-one"
                  else "present in D, empty in D' (removed, n public)")
        pairs.append(NeighbouringPair(
            datasets[0], datasets[1], relation,
            f"{relation}: row 0 on {where}, {change}, every clip saturated"))
    return pairs
