"""Private by default: the estimators with nothing given but epsilon, on fresh seeds.

For each problem, epsilon = 1, delta = 1/n^2, ``fit_intercept=False`` (so that
F* is the exact solver's optimum of the same objective), the relative error
``(F(w) - F*) / F*`` of the library's objective (a non-private diagnostic) of

* ``w = 0``;
* the leaky fit: ``leak_constants=True`` (every constant computed from the data
  without budget, the library's defaults otherwise; epsilon = inf);
* the private default: nothing given but epsilon (and the public classes);
  its error is that of the model it returns: where it clips the features to
  its private per-feature bounds (``feature_clip_``, DP-CD's per-feature
  constants), ``F`` of ``clip(X) @ coef_``, the decision function its
  ``predict`` uses; the last column gives ``F(coef_)`` on the raw X beside it;

with the private default's reported epsilon and, beside each error, the support
found (nonzeros of w* found / nonzeros outside w*'s support).  Mean over
``--seeds`` seeds (default 10) starting at ``--first-seed`` (default 1000):
the defaults were chosen on seeds 0-4, so these seeds chose nothing.

Problems:

* ``dorothea``: logistic + L1, alpha 0.00996 (800 x 100,000 binary);
* ``california``: squared + L1, alpha 3, raw features, y in $100,000 (20,640 x 8);
* ``california-std``: squared + L1, alpha 0.1718 (3 nonzeros, ``dp_gcd_table3.py``),
  standardised features (scikit-learn's), y in $100,000;
* ``electricity``: logistic + L2, alpha 1/n (45,312 x 8);
* ``readme``: the README's 20,000 x 20,000 sparse binary example, logistic + L1,
  alpha 1e-3.

Usage: ``python experiments/private_defaults.py [--seeds 10] [--problems ...]``;
prints a table (Markdown) and writes ``experiments/results/private_defaults.txt``.
"""
import argparse
import math
import pathlib
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from sparsedp import DPLasso, DPLogisticRegression  # noqa: E402
from sparsedp.datafits import Logistic, Squared  # noqa: E402
from dp_gcd_table3 import california as california_std  # noqa: E402  (scikit-learn's features)
from sparsedp.datasets import load_california, load_dorothea, load_electricity  # noqa: E402
from sparsedp.exceptions import PrivacyLeakWarning  # noqa: E402
from sparsedp.penalties import L1, L2  # noqa: E402
from sparsedp.solvers import exact  # noqa: E402
from sparsedp.solvers._scales import clip_to_bounds  # noqa: E402

RESULTS = pathlib.Path(__file__).parent / "results"


def readme_data():
    rng = np.random.default_rng(0)
    useful = sp.random(20_000, 10, density=0.3, rng=rng, data_rvs=np.ones)
    rest = sp.random(20_000, 19_990, density=0.002, rng=rng, data_rvs=np.ones)
    X = sp.hstack([useful, rest], format="csc")
    y = X @ np.r_[[2.0, -2.0] * 5, np.zeros(19_990)] + rng.standard_normal(20_000) > 0
    return X, np.where(y, 1.0, -1.0)


def problems():
    """name -> (load, datafit, penalty of n, estimator of (alpha), alpha of n)."""
    def logistic(penalty):
        return lambda alpha, **kw: DPLogisticRegression(
            penalty=penalty, alpha=alpha, classes=[-1.0, 1.0], **kw)

    return {
        "dorothea": (load_dorothea, Logistic(), lambda n: 0.00996, logistic("l1"), L1),
        "california": (lambda: (lambda X, y: (X, y / 1e5))(*load_california()), Squared(),
                       lambda n: 3.0, lambda alpha, **kw: DPLasso(alpha=alpha, **kw), L1),
        "california-std": (california_std, Squared(), lambda n: 0.17177124906472602,
                           lambda alpha, **kw: DPLasso(alpha=alpha, **kw), L1),
        "electricity": (load_electricity, Logistic(), lambda n: 1.0 / n, logistic("l2"), L2),
        "readme": (readme_data, Logistic(), lambda n: 1e-3, logistic("l1"), L1),
    }


def support(coef, w_star):
    true = w_star != 0
    found = coef != 0
    return int(np.sum(found & true)), int(np.sum(found & ~true))


def run(name, seeds, log):
    load, datafit, alpha_of, make, penalty_of = problems()[name]
    X, y = load()
    X = sp.csc_array(X, dtype=np.float64)
    n = X.shape[0]
    alpha = alpha_of(n)
    ref = exact(X, y, datafit, penalty_of(alpha))
    f_star, w_star = ref.diagnostics.objective, ref.coef
    penalty = penalty_of(alpha)

    def rel(coef, clip=None):
        Xc = X if clip is None else clip_to_bounds(X, clip)
        F = datafit.value(Xc @ coef, y) + penalty.value(coef)
        return (F - f_star) / f_star

    rows = {"leaky": [], "private": []}
    for seed in seeds:
        for kind in rows:
            est = make(alpha, epsilon=1.0, fit_intercept=False, random_state=seed,
                       leak_constants=(kind == "leaky"))
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                est.fit(X, y)
            coef = np.ravel(est.coef_)
            rows[kind].append((rel(coef, est.feature_clip_), *support(coef, w_star),
                               est.privacy_.epsilon, time.perf_counter() - t0, est.solver_,
                               rel(coef)))
        log(f"  {name} seed {seed}: leaky {rows['leaky'][-1][0]:.4g}, private "
            f"{rows['private'][-1][0]:.4g} (eps {rows['private'][-1][3]:.4f}, "
            f"{rows['private'][-1][5]})")
    return {"n": n, "p": X.shape[1], "zero": rel(np.zeros(X.shape[1])),
            "nnz": int(np.count_nonzero(w_star)), "rows": rows}


def fmt(values):
    v = np.array(values)
    return f"{v.mean():.3g} ± {v.std(ddof=1) if v.size > 1 else 0:.2g}"


def table(results):
    lines = ["| problem | solver | w = 0 | leaky fit (eps = inf) | support | private default | "
             "support | private eps (max) | ratio | private, F(coef_) on raw X |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        leaky, private = r["rows"]["leaky"], r["rows"]["private"]
        el = [x[0] for x in leaky]
        ep = [x[0] for x in private]
        sup = [f"{np.mean([x[1] for x in rr]):.1f}/{r['nnz']} + {np.mean([x[2] for x in rr]):.1f}"
               for rr in (leaky, private)]
        lines.append(
            f"| {name} ({r['n']} x {r['p']}) | {private[0][5]} | {r['zero']:.3g} | {fmt(el)} | "
            f"{sup[0]} | **{fmt(ep)}** | {sup[1]} | {max(x[3] for x in private):.4f} | "
            f"{np.mean(ep) / np.mean(el):.2f} | {fmt([x[6] for x in private])} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--problems", nargs="+", default=list(problems()))
    parser.add_argument("--output", default=str(RESULTS / "private_defaults.txt"))
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    results = {}

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    for name in args.problems:
        log(f"{name}: exact solve and {2 * args.seeds} fits")
        results[name] = run(name, seeds, log)
    out = (f"Private by default: epsilon = 1, delta = 1/n^2, mean ± sd over seeds "
           f"{seeds.start}-{seeds.stop - 1} (fresh), relative error (F - F*)/F*; support: "
           f"nonzeros of w* found / of w*, + nonzeros outside it\n\n" + table(results))
    print(out)
    if args.output:
        pathlib.Path(args.output).write_text(out + "\n")


if __name__ == "__main__":
    from sparsedp._progress import watch
    with watch("private_defaults.py"):  # a line on stderr after 4 s of silence (a terminal)
        main()
