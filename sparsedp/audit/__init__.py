"""Empirical privacy audits: is this configuration really private?

A lower bound on the epsilon of a mechanism or of a whole fit, from its outputs,
beside the epsilon it claims.  A bound above the claim is a privacy bug, found
with known confidence; a bound below it is evidence, never a proof, of privacy.

* :func:`audit` -- many runs on a pair of neighbouring datasets (in parallel with
  joblib), an event learned on half of the outputs, Clopper-Pearson bounds on the
  other half; :func:`audit_samples` does the same from outputs already drawn;
* :func:`worst_case_pairs` -- neighbouring datasets that make the solvers of
  sparsedp release their full sensitivity at every step;
* :func:`one_run_audit` -- one fit with canaries inserted by coin flips
  (Steinke, Nasr and Jagielski 2023);
* the bounds themselves (:func:`epsilon_lower_bound`, :func:`one_run_epsilon`)
  and the event learners (:mod:`sparsedp.audit._events`).

See ``docs/audit.rst``.
"""
from ._audit import AuditReport, NeighbouringPair, audit, audit_samples
from ._bounds import (clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound,
                      one_run_epsilon, one_run_p_value)
from ._events import (BitPattern, Linear, Threshold, Value, learn_bits, learn_linear,
                      learn_threshold, learn_values)
from ._one_run import OneRunReport, canary_dataset, one_run_audit
from ._pairs import worst_case_pairs

__all__ = ["AuditReport", "BitPattern", "Linear", "NeighbouringPair", "OneRunReport",
           "Threshold", "Value", "audit", "audit_samples", "canary_dataset",
           "clopper_pearson_lower", "clopper_pearson_upper", "epsilon_lower_bound",
           "learn_bits", "learn_linear", "learn_threshold", "learn_values", "one_run_audit",
           "one_run_epsilon", "one_run_p_value", "worst_case_pairs"]
