"""Print the audit table of issue 17.

For each mechanism: its claimed epsilon (of one release, at the audit's delta),
the audited lower bound on the real mechanism, the floating-point attack before
the fix (the old raw sampler, planted ``raw_float_noise``) and after it (the
real mechanism), and the audited lower bound under each planted bug.

    python tests/audit/table.py            # the CI sample sizes (about a minute)
    python tests/audit/table.py --long     # the long run's sample sizes, every audit
    python tests/audit/table.py --only dp_cd gcd_release_laplace

A mark follows each bound: ``ok`` (real mechanism: at or below the claim;
planted bug or raw sampler: above it, i.e. detected) or ``FAIL``.  ``n/a``: the
bug or the attack does not apply (index outputs have no low-order bits; the
noisy-max kernel takes its scale as an argument, so only the monotone-scores
scale is planted there; DP-SGD's lazy frame and DP-SCD have no raw floating-point
variant).  ``error``: the planted variant raised.
"""
import argparse
import pathlib
import sys
import time
import warnings

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # _suite; the planted bugs (tests/faults.py)

from _suite import AUDITS, BY_KEY  # noqa: E402
from faults import BUGS  # noqa: E402

COLUMNS = ("noise_halved", "no_clipping", "sensitivity_halved", "monotone_selection",
           "raw_float_noise", "leaked_bound")


def _cell(fn, claim_should_exceed):
    try:
        s, r = fn()
    except Exception as exc:  # a planted variant that does not run
        return f"error ({type(exc).__name__})", None
    good = (r.epsilon_lower_bound > s.claim) if claim_should_exceed else (r.epsilon_lower_bound <= s.claim)
    return f"{r.epsilon_lower_bound:.2f} {'ok' if good else 'FAIL'}", r


def _event(r):
    other = "D'" if r.favours == "D" else "D"
    return (f"P(E|{r.favours}) = {r.k1}/{r.n1}, P(E|{other}) = {r.k2}/{r.n2} "
            f"(E: {r.event})")


def row(a, long):
    t0 = time.perf_counter()
    s, r = a.statistical(long)
    real = f"{r.epsilon_lower_bound:.2f} {'ok' if r.epsilon_lower_bound <= s.claim else 'FAIL'}"
    events = []
    if a.discrete:
        before = after = "n/a"
    else:
        rb = None
        if "raw_float_noise" in a.bugs_for(True):
            before, rb = _cell(lambda: a.fp_attack("raw_float_noise", long), True)
        else:  # no raw floating-point variant (DP-SGD's lazy integer frame)
            before = "n/a"
        after, ra = _cell(lambda: a.fp_attack(None, long), False)
        events = [f"FP attack before: {_event(rb)}" if rb else "",
                  f"FP attack after: {_event(ra)}" if ra else ""]
    bugs = []
    for bug in COLUMNS:
        if bug not in a.bugs_for(True):
            bugs.append("n/a")
        elif bug == "raw_float_noise":
            bugs.append(before)  # the floating-point attack is the audit of this bug
        else:
            bugs.append(_cell(lambda: a.planted(bug, long), True)[0])
    n = a.n_long if long else a.n_ci
    note = f"{a.key}: {s.what}; {n:,} samples per dataset; {time.perf_counter() - t0:.1f} s"
    note += "".join(f"\n    {e}" for e in events if e)
    return [a.name, f"{s.claim:.3g}", real, before, after, *bugs], note


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="the long run's sample sizes")
    parser.add_argument("--only", nargs="*", help="audit keys (default: all of the run)")
    args = parser.parse_args(argv)
    assert set(COLUMNS) == set(BUGS)
    audits = ([BY_KEY[k] for k in args.only] if args.only else
              [a for a in AUDITS if args.long or not a.long_only])
    header = ["mechanism", "claim", "audited lb", "FP attack before", "FP attack after",
              *[f"{b}" for b in COLUMNS]]
    rows, notes = [], []
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in audits:
            r, note = row(a, args.long)
            rows.append(r)
            notes.append(note)
            print(f"  {note}", file=sys.stderr, flush=True)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(x).ljust(w) for x, w in zip(r, widths)) + " |")
    print()
    print("Claims: epsilon of one release (Gaussian releases at delta = 1e-3; Laplace "
          "releases and selections: pure epsilon0).  Each bound: event learned on the "
          "first half of each sample, one-sided Clopper-Pearson bounds at alpha = 5e-4 "
          "each on the second half (1e-3 per audit).  'ok': real mechanism at or below "
          "its claim, planted bug or raw sampler above it (detected).")
    for note in notes:
        print(f"- {note}")
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
