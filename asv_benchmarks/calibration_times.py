"""Cold time of every calibrator: ``python asv_benchmarks/calibration_times.py``.

For each calibrator of ``benchmarks/bench_accounting.py`` (``CALIBRATORS``: the
public calibrators of the privacy package and ``calibrate_dp_gcd``) and each
T in (10, 1000, 10000), prints the median over repeats of one call made after
clearing every ``functools`` cache of ``sparsedp`` (a cold call), in one process.
The list of calibrators, and where their names are looked up
(``benchmarks/common.py``, ``PRIVACY_MODULES``), are shared with the asv suite.

Options: ``--repeats R`` (default 7), ``--steps T [T ...]``, ``--only SUBSTRING``.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchmarks.bench_accounting import CALIBRATORS, STEPS  # noqa: E402
from benchmarks.common import clear_caches  # noqa: E402

TARGET = 10e-3  # seconds, for T <= 10,000 (issue 18)


def cold_time(call, steps, repeats):
    """Median over ``repeats`` of one call after clearing the caches, and the result."""
    times = []
    for _ in range(repeats):
        clear_caches()
        t0 = time.perf_counter()
        value = call(steps)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, nargs="+", default=list(STEPS))
    parser.add_argument("--only", default="", help="calibrators whose name contains this")
    args = parser.parse_args(argv)
    names = [name for name in CALIBRATORS if args.only in name]
    width = max(len(name) for name in names)
    print(f"cold calibration, median of {args.repeats} calls (ms); "
          f"* marks a time above {1e3 * TARGET:g} ms")
    print(f"{'calibrator':<{width}}" + "".join(f"{'T=' + str(T):>14}" for T in args.steps)
          + "   returned (largest T)")
    worst = 0.0
    for name in names:
        cells = []
        for steps in args.steps:
            seconds, value = cold_time(CALIBRATORS[name], steps, args.repeats)
            worst = max(worst, seconds) if steps <= 10_000 else worst
            flag = "*" if seconds > TARGET and steps <= 10_000 else " "
            cells.append(f"{1e3 * seconds:>13.2f}{flag}")
        print(f"{name:<{width}}" + "".join(cells) + f"   {value:.6g}")
    print(f"slowest cold call for T <= 10,000: {1e3 * worst:.2f} ms "
          f"(target {1e3 * TARGET:g} ms)")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("calibration_times.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
