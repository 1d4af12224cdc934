"""run_grid: every (problem, solver, grid point, run) as one task, in parallel, resumable."""
import atexit
import collections
import ctypes
import hashlib
import io
import math
import os
import pickle
import shutil
import sys
import tempfile
import threading
import uuid
import warnings
import weakref
from pathlib import Path

import numpy as np

from .._kernels._immutable import kept_derived
from .._validation import check_bool, check_instances, check_integer, check_privacy_budget
from .._warnings import find_stack_level
from ..exceptions import PrivacyLeakWarning
from ._grid import expand_grid, params_json, run_task, task_seed
from ._problem import Problem
from ._summary import best_points
from ._results import append_rows, as_rows, load_finished, sort_key, task_key, write_header

__all__ = ["rerun_best", "run_grid"]


def _problems(problems):
    if isinstance(problems, Problem):
        problems = [problems]
    problems = check_instances(problems, Problem, "problems",
                               kind="sparsedp.experiments.Problem",
                               empty="run_grid needs at least one Problem")
    names = [problem.name for problem in problems]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"problem names must be unique (they identify the tasks), "
                         f"repeated: {', '.join(map(repr, repeated))}")
    return problems


def _check_n_jobs(n_jobs):
    """joblib's ``n_jobs``: a nonzero integer or None."""
    if n_jobs is not None:
        n_jobs = check_integer(n_jobs, "n_jobs", low=None)
        if n_jobs == 0:
            raise ValueError("n_jobs must be a nonzero integer (or None), got 0")
    return n_jobs


def _joblib(n_jobs):
    """joblib, or None to run in a plain loop (``n_jobs=1``, or joblib not installed
    and ``n_jobs`` 1 or None; otherwise ImportError)."""
    try:
        import joblib
    except ImportError:
        if n_jobs not in (1, None):
            raise ImportError(f"n_jobs={n_jobs} needs joblib: pip install "
                              f"'sparsedp[experiments]'") from None
        return None
    return None if n_jobs == 1 else joblib


def _executor(n_jobs):
    """``(tasks -> iterator of lists of task results)``: joblib's Parallel over chunks of
    tasks, or a plain loop (one task a chunk) with ``n_jobs=1`` or without joblib.

    With local worker processes (joblib's loky or multiprocessing backend) each
    problem is written once to a memory-mapped file (:class:`_SharedProblem`, kept
    for the next sweeps of the same problem: :func:`_shared_problem`) and a chunk
    carries only its handle: a worker loads the problem once for the whole sweep,
    instead of joblib hashing and pickling its arrays for every chunk.
    On Dask each problem is scattered to every worker once (:func:`_broadcast`) and
    a chunk carries its future; other backends (threads, which share memory) get
    the problem itself.
    """
    joblib = _joblib(n_jobs)
    if joblib is None:
        return lambda calls: ([run_task(*args)] for args in calls)
    parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")

    def run(calls):
        workers = max(1, joblib.effective_n_jobs(n_jobs))
        local = _local_processes(joblib)
        chunks = _chunks(calls, workers, guided=local)
        caller = os.getpid()
        if not local:
            # one worker thread: joblib runs the chunks here, in sequence
            sent = _broadcast(joblib, [problem for problem, _ in chunks]) if workers > 1 else {}
            try:
                yield from parallel(
                    joblib.delayed(_run_chunk)(*sent.get(id(problem), (problem, None)), tails,
                                               caller)
                    for problem, tails in chunks)
            finally:
                sent.clear()  # the sweep's references (the kept ones stay in _SCATTERED)
            return
        shared = {}
        try:
            for problem, _ in chunks:
                if id(problem) not in shared:
                    shared[id(problem)] = _shared_problem(problem)
            yield from parallel(
                joblib.delayed(_run_chunk)(shared[id(problem)], None, tails, caller)
                for problem, tails in chunks)
        finally:
            for handle in shared.values():
                if handle.owned:  # not kept for later sweeps
                    handle.remove()
    return run


def _broadcast(joblib, problems):
    """On joblib's Dask backend, ``{id(problem): (future, token)}``: each problem
    scattered to every worker at once (``broadcast=True``), and its content's digest
    (:func:`_fingerprint`: a worker keeps the first copy it gets of a problem, with
    what the kernels keep for its arrays, for the later sweeps), else ``{}``.

    Left to itself, joblib scatters a large argument to one worker and lets the
    others steal from it: the scheduler sends the tasks where their data is, and
    on a two-worker ``LocalCluster`` the second worker started its first chunk half
    a second into a one-second sweep.  A chunk that carries the future gets the
    worker's own copy (Dask resolves futures among a task's arguments).

    A problem whose content was scattered by an earlier sweep on the same client
    goes as that sweep's future (kept: :data:`SCATTERED_KEPT` at most, the most
    recent), not sent again: the workers already hold it (45-75 ms saved a sweep on
    the dorothea-shaped problem and two workers).
    """
    backend, _ = joblib.parallel.get_active_backend()
    if type(backend).__name__ != "DaskDistributedBackend":
        return {}
    client = backend.client
    sent = {}
    for problem in problems:
        if id(problem) not in sent:
            token = _fingerprint(problem)
            sent[id(problem)] = (_scattered(client, token, problem), token)
    return sent


#: problems kept scattered on a Dask client for the later sweeps (the most recent)
SCATTERED_KEPT = 4
_SCATTERED = collections.OrderedDict()   # (id(client), token) -> (weakref to client, future)


def _scattered(client, token, problem):
    """The future of ``problem`` (content ``token``) on every worker of ``client``:
    the one an earlier sweep scattered while it is still there, else a new one."""
    key = (id(client), token)
    kept = _SCATTERED.get(key)
    if kept is not None and kept[0]() is client and kept[1].status == "finished":
        _SCATTERED.move_to_end(key)
        return kept[1]
    future = client.scatter(problem, broadcast=True, hash=False)
    _SCATTERED[key] = (weakref.ref(client), future)
    for stale in [k for k, (ref, f) in _SCATTERED.items()
                  if ref() is None or f.status != "finished"]:
        del _SCATTERED[stale]
    while len(_SCATTERED) > SCATTERED_KEPT:
        _SCATTERED.popitem(last=False)
    return future


def _local_processes(joblib):
    """Whether joblib's active backend runs worker processes on this machine."""
    backend, _ = joblib.parallel.get_active_backend()
    return type(backend).__name__ in ("LokyBackend", "MultiprocessingBackend")


def _shared_folder():
    """Where the sweep's problems are written: joblib's temporary folder (the
    ``JOBLIB_TEMP_FOLDER`` variable, else ``/dev/shm`` where it is writable, else
    the system's)."""
    folder = os.environ.get("JOBLIB_TEMP_FOLDER")
    if folder:
        return folder
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        return shm
    return None


#: problems whose file a sweep leaves for the next sweeps (the most recent ones,
#: each at most SHARED_KEPT_BYTES; the rest are removed as their sweep ends)
SHARED_KEPT = 2
SHARED_KEPT_BYTES = 256 << 20
_SHARED = collections.OrderedDict()   # token -> _SharedProblem
_SHARED_LOCK = threading.Lock()


def _shared_problem(problem):
    """The :class:`_SharedProblem` of ``problem`` for a sweep: the one an earlier
    sweep wrote for the same content (its token) while its file exists, else a new
    one, in a folder of its own under :func:`_shared_folder`.

    Writing and removing the file took 7 ms of a sweep's 18 ms fixed cost on two
    loky workers (dorothea's shape); a warm worker does not even read it (it holds
    the problem for the token).  Kept files are removed when evicted, at exit
    (:func:`_remove_shared`), and a file over :data:`SHARED_KEPT_BYTES` when the
    sweep that wrote it ends (:attr:`_SharedProblem.owned`); the folders of a
    process killed before its exit hook ran go with the next sweep's
    (:func:`_remove_orphans`: each folder's name holds its writer's process id).
    """
    token = _fingerprint(problem)
    with _SHARED_LOCK:
        kept = _SHARED.get(token)
        if kept is not None and os.path.exists(kept.path):
            _SHARED.move_to_end(token)
            return kept
    root = _shared_folder()
    _remove_orphans(root)
    shared = _SharedProblem(problem, tempfile.mkdtemp(
        prefix=f"{SHARED_PREFIX}{os.getpid()}-", dir=root), token=token)
    if os.path.getsize(shared.path) <= SHARED_KEPT_BYTES:
        with _SHARED_LOCK:
            old = _SHARED.pop(token, None)
            _SHARED[token] = shared
            evicted = [_SHARED.popitem(last=False)[1] for _ in range(len(_SHARED) - SHARED_KEPT)]
        for handle in evicted + ([old] if old is not None else []):
            handle.remove()
    else:
        shared.owned = True  # the sweep removes it as it ends
    return shared


#: a kept file's folder: this prefix, the writing process's id, a dash, a random part
SHARED_PREFIX = "sparsedp-sweep-"


def _remove_orphans(root):
    """Remove the sweep folders under ``root`` (None: the system's temporary folder)
    whose writing process has ended without removing them (killed: no exit hook)."""
    root = tempfile.gettempdir() if root is None else root
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        pid = name[len(SHARED_PREFIX):].split("-", 1)[0]
        if not (name.startswith(SHARED_PREFIX) and pid.isdigit()):
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        except (OSError, OverflowError):  # alive (another user's), or not a pid
            pass


@atexit.register
def _remove_shared():
    """Remove the kept problems' files (at exit)."""
    with _SHARED_LOCK:
        handles = list(_SHARED.values())
        _SHARED.clear()
    for handle in handles:
        handle.remove()


#: problems a worker keeps loaded (the most recent sweeps' ones)
WORKER_PROBLEMS = 4
_LOADED = collections.OrderedDict()
_LOADED_LOCK = threading.Lock()


class _SharedProblem:
    """A problem written once (``joblib.dump``) for the workers of a sweep (and of
    the next sweeps of the same problem, :func:`_shared_problem`).

    A chunk of tasks carries this handle (a path and a token); a worker loads the
    problem the first time (its arrays memory-mapped read-only, so the workers
    share one copy in memory) and keeps it for the sweep's later chunks
    (:data:`WORKER_PROBLEMS` at most, the most recent).  The token is a digest of
    the problem's content (:func:`_fingerprint`): a later sweep of the same problem
    finds it loaded in a warm worker, with what the kernels keep for its arrays
    (DP-GCD's records and starts, DP-CD's blocks), instead of loading a copy and
    building them again.
    """

    def __init__(self, problem, folder, token=None):
        import joblib
        self.token = _fingerprint(problem) if token is None else token
        self.path = os.path.join(folder, uuid.uuid4().hex + ".joblib")
        self.owned = False  # True: the sweep that wrote it removes it (not kept)
        joblib.dump(problem, self.path)

    def remove(self):
        """Remove the file, and its folder once empty (a worker that mapped the file
        keeps its mapping)."""
        for remove, path in ((os.remove, self.path), (os.rmdir, os.path.dirname(self.path))):
            try:
                remove(path)
            except OSError:
                pass

    def load(self):
        import joblib
        return _held(self.token, lambda: joblib.load(self.path, mmap_mode="r"))


def _held(token, load):
    """The problem this worker process holds for ``token``, else ``load()``, then held
    (:data:`WORKER_PROBLEMS` at most, the most recently used; a lock: a Dask
    worker's threads share them)."""
    with _LOADED_LOCK:
        problem = _LOADED.get(token)
        if problem is None:
            problem = _LOADED[token] = load()
            while len(_LOADED) > WORKER_PROBLEMS:
                _LOADED.popitem(last=False)
        _LOADED.move_to_end(token)
        return problem


def _fingerprint(problem):
    """SHA-256 of the problem's pickle, its arrays' bytes included: equal for equal
    problems, whatever object holds them, and different when anything a fit reads
    differs.

    A read-only array (a :class:`Problem`'s X, y and smoothness) goes in as the
    SHA-256 of its bytes, computed once per process (:func:`_array_digest`): on the
    dorothea-shaped problem a sweep's token then costs 0.1 ms instead of 5 ms.
    """
    buffers = []
    stream = io.BytesIO()
    _DigestPickler(stream, protocol=5, buffer_callback=buffers.append).dump(problem)
    digest = hashlib.sha256(stream.getbuffer())
    for buffer in buffers:
        digest.update(buffer.raw())
    return digest.hexdigest()


class _DigestPickler(pickle.Pickler):
    """A pickler that writes a read-only array as its digest (never unpickled)."""

    def persistent_id(self, obj):
        if isinstance(obj, np.ndarray) and not obj.flags.writeable:
            return ("array", obj.dtype.str, obj.shape, _array_digest(obj))
        return None


def _array_digest(a):
    """SHA-256 of a read-only array's bytes (C order), kept while it is immutable
    (:func:`~sparsedp._kernels._immutable.kept_derived`), else computed afresh."""
    return kept_derived(a, ("sha256",), lambda: hashlib.sha256(
        memoryview(np.ascontiguousarray(a)).cast("B")).hexdigest())


#: a worker receives its tasks in chunks of at most this many (of one problem)
CHUNK_MAX = 16


def _chunks(calls, workers, guided=True):
    """``[(problem, [task arguments after the problem])]``, each problem's tasks in
    order, in chunks of at most :data:`CHUNK_MAX`.

    ``guided``: chunks shrink as the sweep nears its end (guided scheduling), a
    chunk is a ``4 workers``-th of the tasks not yet chunked (at least 1), so that
    the last chunks are single tasks and no worker waits long for another at the
    end.  Otherwise (a backend whose every chunk costs a scheduler's round trip,
    dask) all chunks have a ``4 workers``-th of all the tasks."""
    by_problem = {}
    for args in calls:
        by_problem.setdefault(id(args[0]), (args[0], []))[1].append(args[1:])
    remaining = sum(len(tails) for _, tails in by_problem.values())
    fixed = -(-remaining // (4 * workers))
    chunks = []
    for problem, tails in by_problem.values():
        k = 0
        while k < len(tails):
            size = max(1, min(CHUNK_MAX, remaining // (4 * workers) if guided else fixed,
                              len(tails) - k))
            chunks.append((problem, tails[k:k + size]))
            k += size
            remaining -= size
    return chunks


def _run_chunk(problem, token, tails, caller=None):
    """Run a chunk of one problem's tasks in a worker: a list of their rows.

    ``problem``: the problem or its :class:`_SharedProblem` handle; ``token``: None,
    or the problem's content digest (Dask: the worker runs on the first copy of it
    it got).  ``caller``: the process id of run_grid's process; a worker in another
    process settles its allocator (:func:`_settle_allocator`), threads of the
    caller's own process leave it as it is.
    """
    if caller is not None and os.getpid() != caller:
        _settle_allocator()
    if isinstance(problem, _SharedProblem):
        problem = problem.load()
    elif token is not None:
        if type(problem).__name__ == "Future":  # run here by joblib (a worker left)
            problem = problem.result()
        problem = _held(token, lambda: problem)
    return [run_task(problem, *tail) for tail in tails]


#: glibc's malloc settings in a sweep's local worker processes (see _settle_allocator)
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
TOP_PAD = 64 << 20
_ALLOCATOR_SETTLED = []


def _settle_allocator():
    """In a sweep's worker process, on glibc: serve blocks below 32 MB from the heap
    and keep up to 64 MB of freed heap (once per process).

    A fit makes a few dozen temporary arrays of one value per feature (800 kB on
    dorothea's 100,000 columns).  glibc maps each block above its mmap threshold
    afresh, and a fresh mapping costs a page fault per 4 kB page: up to 9 ms a
    DP-GCD fit, more than its kernel.  glibc raises the threshold itself (to at most
    32 MB, the trim threshold to twice that) once a large mapped block is freed,
    which the parent process of a sweep has long done, but a new worker may not for
    many fits: a DP-GCD sweep ran 0.92 s on two loky workers against 0.61 s with
    these settings, 1.06 s on one, and the 240-fit sweep on a two-worker Dask
    ``LocalCluster`` 2.00 s against 1.09 s.  These are the values glibc's own
    adjustment reaches; they only change where memory comes from, never a value
    computed.  Nothing is done elsewhere (no glibc, ``mallopt`` missing) or in the
    caller's process (threads).

    A worker that runs its tasks in a thread (Dask's) allocates from that thread's
    own arena, whose 64 MB heaps glibc unmaps as soon as one empties, whatever the
    trim threshold: the 240-fit sweep faulted 156,000 pages a round (0.8 s against
    0.57 s) where the caller's thread faulted none.  A top pad of 64 MB (what glibc
    keeps beyond a heap's top when it trims) keeps those heaps: 10 faults a round.
    (Since the DP-GCD set-up stopped allocating zero-filled temporaries, that
    sweep's fits fault about as rarely without the pad; it stays for fits that
    churn more.)
    """
    if _ALLOCATOR_SETTLED:
        return
    _ALLOCATOR_SETTLED.append(True)
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3  # glibc's malloc.h
    mallopt(m_mmap_threshold, MMAP_THRESHOLD)
    mallopt(m_trim_threshold, TRIM_THRESHOLD)
    mallopt(m_top_pad, TOP_PAD)


def _progress(total, enabled, desc):
    from .._progress import progress_bar
    return progress_bar(enabled, total=total, desc=desc, unit="fit")


def _run_tasks(problems, tasks, *, n_jobs, results, resume, progress, desc="grid"):
    """Run ``tasks`` (tuples of :func:`run_task`'s arguments), resuming from ``results``.

    Returns the rows of the tasks (read back or computed), unsorted.
    """
    by_name = {problem.name: problem for problem in problems}
    for problem in problems:
        # computed once here, pickled with the problem to the workers (and a problem
        # then pickles the same in every sweep: its token, _SharedProblem)
        problem.optimum
        problem.support

    previous = []
    if results is not None:
        path = Path(results)
        if resume and path.exists():
            previous = load_finished(path)
        else:
            write_header(path)
    wanted = {task_key({"problem": t[0].name, "solver": t[1], "params": t[2], "run": t[3],
                        "seed": t[4], "epsilon": t[5], "delta": t[6]}): t for t in tasks}
    kept = [row for row in previous if task_key(row) in wanted]
    for row in kept:
        f_star = by_name[row["problem"]].f_star
        if not math.isclose(row["optimum"], f_star, rel_tol=1e-9, abs_tol=1e-300):
            raise ValueError(
                f"{results}: its rows for problem {row['problem']!r} were computed with "
                f"F* = {row['optimum']!r}, this problem has F* = {f_star!r} (other data or "
                f"penalty): use another results file, or resume=False to replace it")
    finished = {task_key(row) for row in kept if row["final"]}
    todo = [t for key, t in wanted.items() if key not in finished]

    rows = list(kept)
    bar = _progress(len(todo), progress, desc)
    try:
        for chunk in _executor(n_jobs)(todo):
            for task_rows in chunk:
                if results is not None:
                    append_rows(results, task_rows)
                rows.extend(task_rows)
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    return rows


def run_grid(problems, grid, *, epsilon, delta, n_runs=5, n_jobs=1, results=None,
             resume=True, progress=True, seed=0, trace=False):
    """Run every (problem, solver, grid point, run) of an experiment.

    Each combination is one task: a fit of ``sparsedp.solvers.<solver>`` at
    ``(epsilon, delta)`` with the grid point's parameters and the task's own
    seed (:func:`task_seed`: a hash of ``seed`` and the task's identity), so
    the rows do not depend on ``n_jobs`` or on the order the tasks run in.
    Tasks run through joblib (``n_jobs`` workers; inside ``with
    joblib.parallel_config(backend="dask"): ...`` on a Dask cluster), and each
    finished task is appended to the ``results`` CSV at once; with ``resume``
    the tasks already in that file are read back, not recomputed.

    Parameters
    ----------
    problems : Problem or list of Problem
        Names must be unique.  ``F*`` and ``w*`` are computed here, once per
        problem, before any task is sent.
    grid : dict
        ``{solver: {param: list of values}}``, solver in ``"dp_cd"``,
        ``"dp_gcd"``, ``"dp_sgd"``, ``"dp_scd"`` (see :func:`expand_grid`).
        A solver that cannot run on a problem (DP-SCD without an L2 penalty) is
        skipped there, with a warning.
    epsilon : float
        Privacy budget of each fit (``inf``: the same algorithms without noise).
    delta : float in (0, 1)
    n_runs : int, default=5
        Runs (seeds) per grid point.
    n_jobs : int or None, default=1
        joblib's ``n_jobs`` (-1: all cores, or all Dask workers; None: joblib's
        active default).  Without joblib only 1 is accepted.
    results : str or os.PathLike, optional
        CSV file the rows are appended to as tasks finish (columns
        :data:`COLUMNS`).  None: rows are only returned.
    resume : bool, default=True
        Read the finished tasks back from ``results`` and run only the others
        (a cut last line or an unfinished task's rows are dropped first).  False
        starts the file afresh, replacing it.
    progress : bool, default=True
        A tqdm progress bar (none if tqdm is not installed).
    seed : int, default=0
        Base seed of every task's seed.
    trace : bool, default=False
        Also write one row per solver checkpoint (the non-private objective
        along the run: every pass for DP-CD, DP-SGD and DP-SCD, every iteration
        for DP-GCD) before each task's final row.  Tasks already finished in
        ``results`` are not rerun to add them.

    Returns
    -------
    list of dict
        The rows of the requested tasks (read back or computed), in canonical
        order (problem, solver, params, run, ...; a task's checkpoints, then its
        final row).  ``objective``, ``optimum``, ``rel_error`` and the support
        counts are non-private diagnostics computed on the training data.

    Raises
    ------
    ValueError
        Bad grid, repeated problem names, no task to run, or a results file
        made on other data (its ``optimum`` differs from the problem's ``F*``).
    """
    problems = _problems(problems)
    epsilon, delta = check_privacy_budget(epsilon, delta)
    n_runs = check_integer(n_runs, "n_runs")
    seed = check_integer(seed, "seed", low=0)
    resume, progress, trace = (check_bool(resume, "resume"), check_bool(progress, "progress"),
                               check_bool(trace, "trace"))
    n_jobs = _check_n_jobs(n_jobs)
    points = expand_grid(grid)

    tasks, skipped = [], {}
    for problem in problems:
        for solver, params in points:
            reason = problem.applicable(solver)
            if reason is not None:
                skipped[problem.name, solver] = reason
                continue
            params = params_json(params)
            for run in range(n_runs):
                s = task_seed(seed, problem.name, solver, params, run, epsilon, delta)
                tasks.append((problem, solver, params, run, s, epsilon, delta, trace))
    for reason in skipped.values():
        warnings.warn(f"not run: {reason}", UserWarning, stacklevel=find_stack_level())
    if not tasks:
        raise ValueError("no task to run: every solver of the grid was skipped on every "
                         "problem")

    rows = _run_tasks(problems, tasks, n_jobs=n_jobs, results=results, resume=resume,
                      progress=progress)
    _warn_leaks(rows)
    return sorted(rows, key=sort_key)


def _warn_leaks(rows):
    leaky = sorted({(row["problem"], row["solver"]) for row in rows
                    if row["final"] and math.isinf(row["ledger_epsilon"])
                    and math.isfinite(row["epsilon"])})
    for name, solver in leaky:
        warnings.warn(
            f"{solver} on {name!r}: the fits used constants computed from the data (no "
            f"public smoothness given), their privacy reports say epsilon = inf: not "
            f"private", PrivacyLeakWarning, stacklevel=find_stack_level())


def rerun_best(problems, results, *, n_runs=10, seed=1, by_passes=False, n_jobs=1,
               fresh_results=None, resume=True, progress=True):
    """Re-run each best grid point on fresh seeds: the honest figure of a best of grid.

    The best point of a grid (:func:`summarize`'s choice: the lowest mean
    objective over its runs) looks better on the runs that chose it than it
    is: the minimum of several noisy means is biased low.  Its error on runs
    whose seeds took no part in the choice is an unbiased estimate of the
    error of that configuration; pass the rows returned here to
    ``summarize(results, fresh=...)``.

    Parameters
    ----------
    problems : Problem or list of Problem
        The problems of ``results`` (the same data: ``F*`` is checked).
    results : str, os.PathLike or list of dict
        The grid's results (a CSV of :func:`run_grid` or its rows).
    n_runs : int, default=10
        Fresh runs of each best point.
    seed : int, default=1
        Base seed of the fresh tasks (:func:`task_seed`).  It must differ from
        the grid's: a fresh task whose seed is one of the grid's is refused.
    by_passes : bool, default=False
        The best point per budget value too (as in ``summarize``).
    n_jobs, progress
        As in :func:`run_grid`.
    fresh_results : str or os.PathLike, optional
        A CSV for the fresh rows (resumable with ``resume``), apart from the
        grid's: in one file they would join the runs that choose the point.

    Returns
    -------
    list of dict
        The fresh final rows, in canonical order.
    """
    problems = _problems(problems)
    rows = as_rows(results)
    n_runs = check_integer(n_runs, "n_runs")
    seed = check_integer(seed, "seed", low=0)
    resume, progress = check_bool(resume, "resume"), check_bool(progress, "progress")
    n_jobs = _check_n_jobs(n_jobs)
    by_name = {problem.name: problem for problem in problems}
    used = {row["seed"] for row in rows}
    tasks = []
    for group, (params, _, _, _) in sorted(best_points(rows, by_passes).items()):
        name, solver, epsilon, delta = group[:4]
        if name not in by_name:
            raise ValueError(f"results hold problem {name!r}, not among the problems given "
                             f"({', '.join(map(repr, by_name))})")
        for run in range(n_runs):
            s = task_seed(seed, name, solver, params, run, epsilon, delta)
            if s in used:
                raise ValueError(f"seed={seed} gives the fresh runs the seeds of the grid's "
                                 f"runs (the runs that chose the point): choose another seed")
            tasks.append((by_name[name], solver, params, run, s, epsilon, delta, False))
    if not tasks:
        raise ValueError("no best point to re-run: results hold no final row")
    fresh = _run_tasks(problems, tasks,
                       n_jobs=n_jobs, results=fresh_results, resume=resume, progress=progress,
                       desc="fresh seeds")
    _warn_leaks(fresh)
    return sorted((row for row in fresh if row["final"]), key=sort_key)
