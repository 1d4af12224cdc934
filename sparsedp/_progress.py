"""Progress that never falls silent: tqdm bars refreshed every second while work runs, and a
watch that names a script's stage after a few seconds without output."""
import sys
import threading
import time

__all__ = ["progress_bar", "set_stage", "stderr_is_terminal", "watch"]

#: the watches running, innermost last (set_stage names the innermost one's stage)
_WATCHES = []

#: seconds between two refreshes of a bar whose count has not moved
HEARTBEAT = 1.0


def stderr_is_terminal():
    """Whether stderr is a terminal (progress is shown by default only then)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Heartbeat:
    """A tqdm bar and a daemon thread that refreshes it (its elapsed time) every second."""

    def __init__(self, bar):
        self.bar = bar
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)
        self._thread.start()

    def _beat(self):
        while not self._stop.wait(HEARTBEAT):
            self.bar.refresh()

    def __getattr__(self, name):  # update, set_postfix_str, n, ...
        return getattr(self.bar, name)

    def close(self):
        self._stop.set()
        self._thread.join()
        self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress_bar(enabled, *, total=None, desc, unit):
    """A tqdm progress bar on stderr that refreshes every second, or None.

    Parameters
    ----------
    enabled : bool
        False: None (no output).
    total : int, optional
        None: a counter without a known end.
    desc, unit : str
        The stage's name and the unit counted.

    Returns
    -------
    object or None
        tqdm's interface (``update``, ``set_postfix_str``, ``close``; a context
        manager); None when disabled or tqdm is not installed.
    """
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return _Heartbeat(tqdm(total=total, desc=desc, unit=unit, file=sys.stderr))


class _Watched:
    """A text stream that records when it was last written to."""

    def __init__(self, stream, watch):
        self._stream, self._watch = stream, watch

    def write(self, text):
        self._watch.last = time.monotonic()
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class watch:
    """Name the running stage on stderr whenever ``every`` seconds pass in silence.

    For scripts whose steps run long without printing: inside the block, a
    daemon thread prints ``... <stage> (<elapsed> s)`` to stderr each time
    nothing was written to stdout or stderr for ``every`` seconds.  Set
    :attr:`stage` as the work moves on.

    Parameters
    ----------
    stage : str
        What is running (the script's name, then each step's).
    every : float, default=4.0
        Seconds of silence before a line.
    enabled : bool, optional
        Default: when stderr is a terminal (logs stay clean).
    """

    def __init__(self, stage, every=4.0, enabled=None):
        self.stage, self.every = stage, every
        self.enabled = stderr_is_terminal() if enabled is None else bool(enabled)
        self.start = self.last = time.monotonic()
        self._stop = threading.Event()
        self._thread = None
        self._streams = None

    def __enter__(self):
        if self.enabled:
            self._streams = sys.stdout, sys.stderr
            sys.stdout, sys.stderr = _Watched(sys.stdout, self), _Watched(sys.stderr, self)
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        _WATCHES.append(self)
        return self

    def _run(self):
        while not self._stop.wait(min(0.5, self.every / 4)):
            now = time.monotonic()
            if now - self.last >= self.every:
                print(f"... {self.stage} ({now - self.start:.0f} s)", file=sys.stderr,
                      flush=True)

    def __exit__(self, *exc):
        _WATCHES.remove(self)
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            sys.stdout, sys.stderr = self._streams


def set_stage(text):
    """Name the stage of the innermost running :class:`watch` (nothing when none runs)."""
    if _WATCHES:
        _WATCHES[-1].stage = text
