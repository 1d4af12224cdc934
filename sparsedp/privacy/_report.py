"""The privacy report: a ledger printed as an aligned table (``str(ledger)``).

Formatting only: every figure comes from the ledger's own accounting
(:class:`~sparsedp.privacy.PrivacyLedger`) and its records
(:meth:`Mechanism.as_dict <sparsedp.privacy.mechanisms.Mechanism.as_dict>`).
"""
import decimal
import math

__all__ = ["mechanism_cells", "relation_text", "report", "total_line", "upper_text"]

#: the neighbouring relations in the report's words.  Under add/remove the number of
#: rows n is treated as public: the solvers derive the sampling rate and the number of
#: steps from it, and the accounting compares runs of the same rate and steps.
RELATION_TEXT = {"replace-one": "replace-one neighbours",
                 "add-remove": "add/remove neighbours (n public)"}

#: what each column of the mechanism table shows, printed under its header
LEGEND = ("  (sensitivity: of the released value, '-' if not one number (see the name); "
          "noise: its scale in the released value's units; eps0: pure DP of one use")

#: the law of a noisy max's noise on each score, in words
_LAWS = {"laplace": "Laplace", "gumbel": "Gumbel"}

#: the kinds whose noise scale is a standard deviation (sigma)
_GAUSSIAN_KINDS = ("gaussian", "sampled_gaussian", "sampled_gaussian_wor")


def upper_text(value, digits=6):
    """``value`` printed to ``digits`` significant digits, rounded up: a printed epsilon
    or delta never understates the one computed (``f"{value:.6g}"`` rounds to nearest)."""
    if not math.isfinite(value) or value <= 0:
        return f"{value:.{digits}g}"
    exact = decimal.Decimal(value)  # the double's exact value
    step = decimal.Decimal(1).scaleb(exact.adjusted() - digits + 1)
    up = exact.quantize(step, rounding=decimal.ROUND_CEILING)
    return f"{float(up):.{digits}g}"


def relation_text(relation):
    """``"replace-one neighbours"`` or ``"add/remove neighbours (n public)"``."""
    return RELATION_TEXT.get(relation, f"{relation} neighbours")


def total_line(ledger, accounted=None):
    """The last line of the report: the total, its relation and accountant, or why there
    is none.  ``accounted``: ``get_epsilon(delta, return_method=True)`` if known."""
    if ledger.delta is None:
        return "Total: set a delta to compute epsilon"
    if ledger.leaks:
        eps, method = ledger.get_epsilon(ledger.delta, return_method=True,
                                         ignore_leaks=True)
        names = ", ".join(name for name, _ in ledger.leaks)
        return (f"Total: (inf, {upper_text(ledger.delta, 3)})-DP: NOT PRIVATE, leaks: {names} "
                f"(void: the accounted mechanisms alone would spend "
                f"({upper_text(eps)}, {upper_text(ledger.delta, 3)}) [{method}])")
    eps, method = accounted or ledger.get_epsilon(ledger.delta, return_method=True)
    slack = ", incl. floating-point slack" if ledger.sampler_errors or ledger.sampler_tvs \
        else ""
    return (f"Total: ({upper_text(eps)}, {upper_text(ledger.delta, 3)})-DP under "
            f"{relation_text(ledger.relation)} "
            f"[{method}{slack}]")


def report(ledger, verbose=False):
    """The privacy report of ``ledger`` as an aligned table.

    A header (neighbouring relation, total), one row per mechanism (name,
    kind, count, sensitivity, the noise's scale in the released value's units,
    pure epsilon0 of one use, sampling rate if any) under a line saying what
    each column shows, one line summing up the floating-point sampler slack
    (``verbose``: one line per sampler entry besides), the leaks, and the
    ``Total:`` line with the relation.  A name longer than the name column is
    printed whole on a line of its own, its row below.
    """
    accounted = None
    if ledger.delta is None:
        status = "no delta set"
    elif ledger.leaks:
        status = "NOT PRIVATE"
    else:
        accounted = ledger.get_epsilon(ledger.delta, return_method=True)
        status = f"({upper_text(accounted[0])}, {upper_text(ledger.delta, 3)})-DP"
    lines = [f"PrivacyLedger: {relation_text(ledger.relation)}, {status}"]
    if ledger.entries:
        lines += _mechanism_table([e.as_dict() for e in ledger.entries])
    else:
        lines.append("  (no mechanism recorded)")
    if ledger.sampler_errors or ledger.sampler_tvs:
        lines.append(_slack_summary(ledger, verbose))
    if verbose:
        for name, eta, count in ledger.sampler_errors:
            lines.append(f"  ~ {name}: floating-point sampler: {count} draws within "
                         f"exp(+-{eta:.6g}) of the ideal law")
        for name, tau, count in ledger.sampler_tvs:
            lines.append(f"  ~ {name}: floating-point sampler: {count} draws within "
                         f"total variation {tau:.3g} of the ideal law")
    if ledger.leaks:
        lines.append("leaks (data-dependent quantities used without budget):")
    for name, description in ledger.leaks:
        lines.append(f"  ! NOT PRIVATE: {name}: {description}")
    lines.append(total_line(ledger, accounted))
    return "\n".join(lines)


def _slack_summary(ledger, verbose):
    """One line: how many samplers, and what their slack adds to the total.

    The ledger's own figures (:meth:`PrivacyLedger.sampler_slack_cost`): what
    the slack adds to epsilon, and the part of delta it takes.
    """
    entries = ledger.sampler_errors + ledger.sampler_tvs
    draws = sum(count for _, _, count in entries)
    added, taken = ledger.sampler_slack_cost()
    line = (f"floating-point slack of {len(entries)} samplers ({draws} draws), in the total: "
            f"epsilon +{added:.3g}")
    if taken is not None:
        line += f", {taken:.3g} of delta"
    if verbose:
        return line + ":"
    return line + '; format(ledger, "v") or ledger.to_dict() for each'


#: widest name column of the report; a longer name gets a line of its own
_NAME_WIDTH = 40


def _number(value):
    return "-" if value is None else f"{value:.6g}"


def _noise_cell(row):
    """The noise's scale in the released value's units, with its ratio to the sensitivity.

    ``sigma=0.4 = 20 x sensitivity`` for a Gaussian, ``scale=12 = 8 x sensitivity``
    for a Laplace mechanism, ``Laplace scale=0.036 = 19.1 x sensitivity, on each
    score`` for a noisy max that records its noise; without a sensitivity only
    the ratio (``sigma=45.2 x sensitivity``); ``-`` where no noise is recorded.
    """
    z = row.get("noise_multiplier")
    if z is None:
        return "-"
    law = row.get("noise_law")
    if law is not None:
        symbol, where = f"{_LAWS.get(law, law)} scale", ", on each score"
    else:
        symbol, where = ("sigma" if row["kind"] in _GAUSSIAN_KINDS else "scale"), ""
    scale = row.get("noise_scale")
    if scale is None:
        return f"{symbol}={z:.6g} x sensitivity{where}"
    return f"{symbol}={scale:.6g} = {z:.6g} x sensitivity{where}"


def mechanism_cells(row):
    """``[(label, text)]`` of a mechanism's figures (an ``as_dict`` row): sensitivity,
    noise, eps0 and, if subsampled, the sampling rate q; ``-`` where one does not apply."""
    cells = [("sensitivity", _number(row["sensitivity"])), ("noise", _noise_cell(row)),
             ("eps0", _number(row.get("epsilon0")))]
    if row.get("sampling_rate") is not None:
        cells.append(("q", _number(row["sampling_rate"])))
    return cells


def _mechanism_table(rows):
    """Lines of the mechanism table of :meth:`PrivacyLedger.__str__` from ``as_dict`` rows."""
    header = ["mechanism", "kind", "count", "sensitivity", "noise", "eps0"]
    sampled = any(row.get("sampling_rate") is not None for row in rows)
    if sampled:
        header.append("q")
    cells = []
    for row in rows:
        figures = dict(mechanism_cells(row))
        cell = [row["name"], row["kind"], str(row["count"])]
        cell += [figures.get(label, "-") for label in header[3:]]
        cells.append(cell)
    name_width = max([len(header[0])] + [len(c[0]) for c in cells if len(c[0]) <= _NAME_WIDTH])
    widths = [name_width] + [max(len(header[k]), *(len(c[k]) for c in cells))
                             for k in range(1, len(header))]

    def line(cell):
        parts = [cell[0].ljust(widths[0]), cell[1].ljust(widths[1]),
                 cell[2].rjust(widths[2])] + [c.ljust(w) for c, w in zip(cell[3:], widths[3:])]
        return ("  " + "  ".join(parts)).rstrip()

    out = [line(header), LEGEND + ("; q: sampling rate)" if sampled else ")")]
    for cell in cells:
        if len(cell[0]) > name_width:
            out.append("  " + cell[0])
            cell = [""] + cell[1:]
        out.append(line(cell))
    return out
