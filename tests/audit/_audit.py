"""The audit suite's conventions over the public :mod:`sparsedp.audit` (issue 17, 35).

An audit draws many outputs of one mechanism on two neighbouring datasets D and
D', learns a distinguishing event on the first halves of the samples and bounds
``eps_lb = log((P(E | D)_low - delta) / P(E | D')_high)`` on the second halves
(:func:`sparsedp.audit.audit_samples`).  The suite runs every bound at
``ALPHA = 5e-4`` (two one-sided Clopper-Pearson bounds: 1e-3 an audit, i.e.
confidence 0.999), and every test uses a fixed seed, so a given build gets the
same verdict every time.
"""
import os

import numpy as np

from sparsedp.audit import (audit_samples, clopper_pearson_lower, clopper_pearson_upper,
                            epsilon_lower_bound, learn_bits, learn_linear, learn_threshold,
                            learn_values)

__all__ = ["ALPHA", "AUDIT_SEED", "audit", "audit_seed", "cp_lower", "cp_upper", "eps_lower_bound", "learn_bits",
           "learn_linear", "learn_threshold", "learn_values", "per_value_bounds"]

#: level of each one-sided Clopper-Pearson bound (an audit uses two: 1e-3 per audit)
ALPHA = 5e-4

#: ``SPARSEDP_AUDIT_SEED=k`` shifts every audit's seed (0: the suite's own seeds), so
#: that a verdict can be checked on other draws: a planted bug caught at one seed
#: only was caught by luck (``tests/mutations/run.py --audit-seeds``)
AUDIT_SEED = int(os.environ.get("SPARSEDP_AUDIT_SEED", "0"))


def audit_seed(base):
    """The seed of an audit whose own seed is ``base``, under ``SPARSEDP_AUDIT_SEED``."""
    return base + 100_003 * AUDIT_SEED


def cp_lower(k, n, alpha=ALPHA):
    return clopper_pearson_lower(k, n, alpha)


def cp_upper(k, n, alpha=ALPHA):
    return clopper_pearson_upper(k, n, alpha)


def eps_lower_bound(k1, n1, k2, n2, delta, alpha=ALPHA):
    return epsilon_lower_bound(k1, n1, k2, n2, delta, alpha)


def audit(samples_d, samples_d2, learners, delta, alpha=ALPHA):
    """:func:`sparsedp.audit.audit_samples` at the suite's level (``1 - 2 alpha``)."""
    learners = list(learners) if isinstance(learners, (list, tuple)) else [learners]
    return audit_samples(samples_d, samples_d2, delta=delta, events=learners,
                         confidence=1.0 - 2.0 * alpha)


def per_value_bounds(samples_d, samples_d2, values, delta=0.0, alpha=2 * ALPHA):
    """StatDP-style: ``eps_lb`` of ``{x == j}`` for each j of ``values``, both ways.

    The events are fixed in advance, so the whole samples are used; the ``2 *
    len(values)`` bounds share ``alpha`` (Bonferroni): each pair of
    Clopper-Pearson bounds is at ``alpha / (4 len(values))``, and all the
    returned bounds hold together with probability at least ``1 - alpha``.

    Returns an array of shape ``(len(values), 2)``: column 0 the events favouring
    D, column 1 those favouring D'.
    """
    d, d2 = np.ravel(samples_d), np.ravel(samples_d2)
    values = np.asarray(values)
    a = alpha / (4 * values.size)
    k = (d[:, None] == values[None, :]).sum(axis=0)
    k2 = (d2[:, None] == values[None, :]).sum(axis=0)
    return np.stack([epsilon_lower_bound(k, d.size, k2, d2.size, delta, a),
                     epsilon_lower_bound(k2, d2.size, k, d.size, delta, a)], axis=1)
