"""A mutation run: does the test suite catch each planted bug of ``mutations.py``?

Usage::

    python tests/mutations/run.py                      # every mutation, the full suite
    python tests/mutations/run.py --only advanced_without_linear_term \\
        --tests tests/test_accountants_alone.py --select ""
    python tests/mutations/run.py --list               # the mutations, and whether stale

What it does, in order (each stage printed as it starts, with its time):

1. ``git worktree add --detach <tmp>/src HEAD`` of the repository this script is in:
   the mutations are applied to a copy of the *committed* source, never to the
   checkout (uncommitted changes are not part of the run);
2. a fresh virtual environment ``<tmp>/venv`` (``python -m venv``, the interpreter
   running this script), with ``meson-python meson ninja "Cython>=3" "numpy>=2"`` and
   an editable install of the worktree (``pip install --no-build-isolation -e
   "<tmp>/src[test]"``): a mutation then rebuilds only what it changed, on import;
3. the test selection on the unmutated source, which must pass ("the suite fails
   without mutation" otherwise: nothing would be learnt);
4. each mutation in turn: its ``old`` text must occur exactly once in its file
   ("stale" otherwise), the file is rewritten with ``new``, the package rebuilt
   (``import sparsedp``), the selection run (``python -m pytest -x -q -ra -p
   no:cacheprovider <select> <tests>`` from the worktree's root, with a time limit),
   and the file written back;
5. a table: mutation, result (caught: a test failed; missed: every test passed;
   stale; error: the build or pytest itself failed, with the reason; timeout), the
   first failing test (or "-"), seconds (build and tests); then "caught X of N
   (missed: ...)".  The exit code is 0 when every mutation is caught, 1 otherwise.

The worktree and the temporary folder are removed at the end unless ``--keep``
(each mutation's pytest output is in ``<tmp>/logs/<name>.log``).

Time: the setup (venv, dependencies, first build) takes 2-4 minutes; then each
mutation costs its rebuild (seconds for a Python file, up to a minute for a ``.pxd``
that several kernels include) and about one run of the selection until its first
failure: with the default selection (the full suite, ``-m 'not audit_long'``) up to
about 10 minutes a mutation on 2 cores, so a whole run can take hours.  Narrow it
with ``--tests`` (test files or node ids) and ``--select`` (pytest options, e.g.
``-m 'not slow'``, or ``""`` for the project's default quick selection) and pick
mutations with ``--only``.  CI does not run it.

Only the standard library is used (the venv it builds holds the rest).
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from mutations import MUTATIONS  # noqa: E402

#: pytest's exit codes that say something about the tests (others: the run itself failed)
PASSED, FAILED = 0, 1


def say(message):
    print(message, flush=True)


def stage(message):
    """Print ``message`` now; return a function printing the time it took."""
    start = time.monotonic()
    say(f"== {message} ...")

    def done(note=""):
        say(f"   done in {time.monotonic() - start:.0f} s{note}")
    return done


def clean_env():
    """The environment of the commands run in the venv: no trace of the caller's."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    # the tests' real data beside the checkout (conftest.py looks beside the worktree)
    data = ROOT.parent / "shared" / "data"
    if "SPARSEDP_DATA" not in env and data.is_dir():
        env["SPARSEDP_DATA"] = str(data)
    return env


def run(cmd, *, cwd=None, timeout=None, log=None, env=None):
    """Run ``cmd``; return (exit code or None on timeout, output)."""
    # its own process group: a timeout ends it with everything it started (the
    # build's compilers, the tests' worker processes)
    proc = subprocess.Popen(cmd, cwd=cwd, env={**clean_env(), **(env or {})},
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace",
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except BaseException as exc:  # a timeout, or Ctrl-C: end the group, keep its output
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        if not isinstance(exc, subprocess.TimeoutExpired):
            raise
        code = None
    if log is not None:
        log.write_text(out)
    return code, out


def check(cmd, what, **kwargs):
    """Run ``cmd``; stop the whole run with its output's end if it fails."""
    code, out = run(cmd, **kwargs)
    if code != 0:
        tail = "\n".join(out.splitlines()[-30:])
        sys.exit(f"{what} failed ({'timeout' if code is None else f'exit code {code}'}):\n"
                 f"{tail}")
    return out


def first_failure(out):
    """The first ``FAILED``/``ERROR`` test id of pytest's ``-ra`` summary, or "-"."""
    for line in out.splitlines():
        match = re.match(r"(FAILED|ERROR) (\S+)", line)
        if match:
            return match.group(2) + (" (error)" if match.group(1) == "ERROR" else "")
    return "-"


def reason(out):
    """A one-line reason from the end of a failed command's output."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.search(r"Error|error:|ERROR|Exception", ln):
            return ln[:160]
    return lines[-1][:160] if lines else "no output"


def occurrences(text, old):
    return text.count(old)


def list_mutations(root):
    for m in MUTATIONS:
        path = root / m.file
        count = occurrences(path.read_text(), m.old) if path.is_file() else 0
        state = "ok" if count == 1 else f"stale ({count} occurrences)"
        say(f"{m.name:45s} {m.file:40s} {state}\n    {m.description}")


def table(rows):
    header = ("mutation", "kind", "result", "first failing test", "seconds")
    kinds = {m.name: m.kind for m in MUTATIONS}
    cells = [header] + [(r[0], kinds[r[0]], r[1], r[2], f"{r[3]:.0f}") for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(5)]
    lines = []
    for k, c in enumerate(cells):
        lines.append("  ".join(c[i].ljust(widths[i]) if i < 4 else c[i].rjust(widths[i])
                               for i in range(5)))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def test_mutation(python, pytest_args, src, timeout, logs, name, seeds):
    """(result, first failing test) of the selection on the mutated source, once per
    audit seed: "caught" only if every seed's run fails a test ("caught at k of K
    seeds" names a catch that depends on the seed: luck)."""
    caught, failing, result = 0, "-", None
    for seed in seeds:
        say(f"   testing (audit seed {seed}) ...")
        code, out = run([str(python), "-m", "pytest", *pytest_args], cwd=src, timeout=timeout,
                        log=logs / f"{name}-{seed}.log", env={"SPARSEDP_AUDIT_SEED": str(seed)})
        if code is None:
            return "timeout", first_failure(out)
        if code == FAILED:
            caught += 1
            failing = first_failure(out) if failing == "-" else failing
        elif code != PASSED:
            return f"error: pytest exit code {code} ({reason(out)})", first_failure(out)
    if caught == len(seeds):
        result = "caught"
    elif caught == 0:
        result = "missed"
    else:
        result = f"caught at {caught} of {len(seeds)} seeds"
    return result, failing


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Apply each mutation of tests/mutations/mutations.py to a copy of the "
                    "source, rebuild, run the tests, and report which were caught.")
    parser.add_argument("--select", default="-m 'not audit_long'",
                        help="pytest options choosing the tests (default: %(default)s, the "
                             "full suite; \"\" for the project's quick selection)")
    parser.add_argument("--tests", nargs="+", default=["tests"], metavar="PATH",
                        help="test files, folders or node ids (default: tests)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="run these mutations only (default: all)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds allowed to one mutation's tests (default: 3 times "
                             "the unmutated run, plus 10 minutes)")
    parser.add_argument("--audit-seeds", type=int, default=1, metavar="K",
                        help="run each mutation's tests K times, with SPARSEDP_AUDIT_SEED "
                             "= 0 .. K - 1 (the statistical audits' seeds shifted): caught "
                             "only if caught at every seed (default: 1, the suite's seeds)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the worktree, the venv and the logs (printed at the end)")
    parser.add_argument("--list", action="store_true",
                        help="list the mutations and whether each is stale, then exit")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        list_mutations(ROOT)
        return 0
    mutations = MUTATIONS
    if args.only:
        known = {m.name for m in MUTATIONS}
        unknown = [n for n in args.only if n not in known]
        if unknown:
            sys.exit(f"unknown mutation(s): {', '.join(unknown)} (--list names them)")
        mutations = [m for m in MUTATIONS if m.name in args.only]
    pytest_args = ["-x", "-q", "-ra", "-p", "no:cacheprovider",
                   *shlex.split(args.select), *args.tests]

    tmp = Path(tempfile.mkdtemp(prefix="sparsedp-mutations-"))
    src, venv, logs = tmp / "src", tmp / "venv", tmp / "logs"
    logs.mkdir()
    python = venv / "bin" / "python"
    say(f"mutation run: {len(mutations)} mutation(s), tests: pytest {shlex.join(pytest_args)}\n"
        f"working folder {tmp}")
    worktree = False
    try:
        done = stage(f"git worktree add --detach {src} HEAD")
        check(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(src), "HEAD"],
              "git worktree add")
        worktree = True
        done()

        done = stage(f"virtual environment {venv}")
        check([sys.executable, "-m", "venv", str(venv)], "python -m venv")
        done()
        done = stage("pip install meson-python meson ninja Cython>=3 numpy>=2")
        check([str(python), "-m", "pip", "install", "-q", "meson-python", "meson", "ninja",
               "Cython>=3", "numpy>=2"], "pip install (build requirements)")
        done()
        done = stage("pip install --no-build-isolation -e src[test] (the first build: minutes)")
        check([str(python), "-m", "pip", "install", "-q", "--no-build-isolation", "-e",
               f"{src}[test]"], "pip install -e (the editable build)", log=logs / "install.log")
        done()

        seeds = range(max(1, args.audit_seeds))
        baseline = 0.0
        for seed in seeds:
            done = stage(f"the tests on the unmutated source (audit seed {seed})")
            start = time.monotonic()
            code, out = run([str(python), "-m", "pytest", *pytest_args], cwd=src,
                            log=logs / f"unmutated-{seed}.log",
                            env={"SPARSEDP_AUDIT_SEED": str(seed)})
            baseline = max(baseline, time.monotonic() - start)
            if code != PASSED:
                tail = "\n".join(out.splitlines()[-30:])
                sys.exit(f"the suite fails without mutation (audit seed {seed}, pytest exit "
                         f"code {code}); nothing to learn from a mutation run:\n{tail}")
            done()
        timeout = args.timeout if args.timeout else 3.0 * baseline + 600.0

        rows = []
        for k, m in enumerate(mutations, 1):
            prefix = f"[{k}/{len(mutations)}] {m.name}"
            path = src / m.file
            original = path.read_text() if path.is_file() else None
            count = 0 if original is None else occurrences(original, m.old)
            if count != 1:
                say(f"{prefix}: stale ({m.old!r} occurs {count} times in {m.file})")
                rows.append((m.name, "stale", "-", 0.0))
                continue
            say(f"{prefix}: {m.file} ({m.description})")
            start = time.monotonic()
            path.write_text(original.replace(m.old, m.new, 1))
            try:
                say("   building ...")
                # the editable install rebuilds on import; from tmp, not the source tree
                code, out = run([str(python), "-c", "import sparsedp"], cwd=tmp,
                                timeout=timeout, log=logs / f"{m.name}.build.log")
                if code != 0:
                    result, failing = f"error: build failed ({reason(out)})", "-"
                else:
                    result, failing = test_mutation(python, pytest_args, src, timeout,
                                                    logs, m.name, seeds)
            finally:
                path.write_text(original)
            seconds = time.monotonic() - start
            say(f"   {result}: {failing} ({seconds:.0f} s)")
            rows.append((m.name, result, failing, seconds))

        say("")
        say(table(rows))
        caught = [r for r in rows if r[1] == "caught"]
        others = {}
        for r in rows:
            if r[1] != "caught":
                others.setdefault(r[1].split(":")[0], []).append(r[0])
        summary = f"caught {len(caught)} of {len(rows)}"
        if others:
            summary += " (" + "; ".join(f"{kind}: {', '.join(names)}"
                                        for kind, names in others.items()) + ")"
        say(summary)
        return 0 if len(caught) == len(rows) else 1
    finally:
        if args.keep:
            say(f"kept: worktree {src}, venv {venv}, logs {logs} "
                f"(git -C {ROOT} worktree remove --force {src} removes the worktree)")
        else:
            if worktree:
                run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(src)])
            shutil.rmtree(tmp, ignore_errors=True)
            if worktree:  # in case the removal failed: forget the deleted folder
                run(["git", "-C", str(ROOT), "worktree", "prune"])


if __name__ == "__main__":
    sys.exit(main())
