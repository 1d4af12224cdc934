"""The privacy report: a ledger printed as an aligned table (``str(ledger)``).

Formatting only: every figure comes from the ledger's own accounting
(:class:`~sparsedp.privacy.PrivacyLedger`).
"""

__all__ = ["report", "total_line"]


def total_line(ledger):
    """The last line of the report: the total, or why there is none."""
    if ledger.delta is None:
        return "Total: set a delta to compute epsilon"
    if ledger.leaks:
        eps, method = ledger.get_epsilon(ledger.delta, return_method=True,
                                         ignore_leaks=True)
        names = ", ".join(name for name, _ in ledger.leaks)
        return (f"Total: (inf, {ledger.delta:.3g})-DP: NOT PRIVATE, leaks: {names} "
                f"(void: the accounted mechanisms alone would spend "
                f"({eps:.6g}, {ledger.delta:.3g}) [{method}])")
    eps, method = ledger.get_epsilon(ledger.delta, return_method=True)
    slack = (" incl. floating-point sampler slack"
             if ledger.sampler_errors or ledger.sampler_tvs else "")
    return f"Total: ({eps:.6g}, {ledger.delta:.3g})-DP [{method}{slack}]"


def report(ledger):
    """The privacy report of ``ledger`` as an aligned table.

    A header (neighbouring relation, total), one row per mechanism
    (name, kind, count, sensitivity, noise multiplier with the noise scale,
    pure epsilon0 of one use, sampling rate if any), the floating-point
    sampler slack, the leaks, and the ``Total:`` line.  A name longer than
    the name column is printed whole on a line of its own, its row below.
    """
    if ledger.delta is None:
        status = "no delta set"
    elif ledger.leaks:
        status = "NOT PRIVATE"
    else:
        eps = ledger.get_epsilon(ledger.delta)
        status = f"({eps:.6g}, {ledger.delta:.3g})-DP"
    lines = [f"PrivacyLedger: {ledger.relation} neighbours, {status}"]
    if ledger.entries:
        lines += _mechanism_table([e.as_dict() for e in ledger.entries])
    else:
        lines.append("  (no mechanism recorded)")
    if ledger.sampler_errors or ledger.sampler_tvs:
        lines.append("floating-point sampler slack (counted in the total):")
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
    lines.append(total_line(ledger))
    return "\n".join(lines)


#: widest name column of the report; a longer name gets a line of its own
_NAME_WIDTH = 40


def _number(value):
    return "-" if value is None else f"{value:.6g}"


def _noise_cell(row):
    """``z=20 (sigma=0.4)`` for a Gaussian, ``b=10 (scale=1)`` for a Laplace mechanism."""
    z = row.get("noise_multiplier")
    if z is None:
        return "-"
    symbol, scale = ("b", "scale") if row["kind"] == "laplace" else ("z", "sigma")
    cell = f"{symbol}={z:.6g}"
    if row.get("noise_scale") is not None:
        cell += f" ({scale}={row['noise_scale']:.6g})"
    return cell


def _mechanism_table(rows):
    """Lines of the mechanism table of :meth:`PrivacyLedger.__str__` from ``as_dict`` rows."""
    header = ["mechanism", "kind", "count", "sensitivity", "noise", "eps0"]
    sampled = any(row.get("sampling_rate") is not None for row in rows)
    if sampled:
        header.append("q")
    cells = []
    for row in rows:
        cell = [row["name"], row["kind"], str(row["count"]), _number(row["sensitivity"]),
                _noise_cell(row), _number(row.get("epsilon0"))]
        if sampled:
            cell.append(_number(row.get("sampling_rate")))
        cells.append(cell)
    name_width = max([len(header[0])] + [len(c[0]) for c in cells if len(c[0]) <= _NAME_WIDTH])
    widths = [name_width] + [max(len(header[k]), *(len(c[k]) for c in cells))
                             for k in range(1, len(header))]

    def line(cell):
        parts = [cell[0].ljust(widths[0]), cell[1].ljust(widths[1]),
                 cell[2].rjust(widths[2])] + [c.ljust(w) for c, w in zip(cell[3:], widths[3:])]
        return ("  " + "  ".join(parts)).rstrip()

    out = [line(header)]
    for cell in cells:
        if len(cell[0]) > name_width:
            out.append("  " + cell[0])
            cell = [""] + cell[1:]
        out.append(line(cell))
    return out
