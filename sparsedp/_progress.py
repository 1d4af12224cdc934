"""Progress bars that never fall silent: tqdm, refreshed every second while work runs."""
import sys
import threading

__all__ = ["progress_bar", "stderr_is_terminal"]

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
