"""Where the data sets live: ``data_home``, ``$SPARSEDP_DATA``, the defaults."""
import os
from pathlib import Path

def _default_homes():
    """The folders tried, in order, when neither ``data_home`` nor ``$SPARSEDP_DATA`` is set."""
    return [Path.cwd() / ".." / "shared" / "data",
            Path(__file__).resolve().parents[3] / "shared" / "data",
            Path.cwd() / "shared" / "data"]


def _cache_home():
    """The per-user cache folder downloads go to when no data folder is found."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "sparsedp"


def data_home(data_home=None):
    """The folder holding the data sets.

    Parameters
    ----------
    data_home : str or path-like, optional
        The folder to use.  When None: ``$SPARSEDP_DATA`` if set, else the first
        existing ``shared/data`` folder (``../shared/data`` from the working
        directory, then beside the checkout, then ``./shared/data``), else the
        per-user cache ``$XDG_CACHE_HOME/sparsedp`` (default
        ``~/.cache/sparsedp``), where downloads go.

    Returns
    -------
    pathlib.Path
        The folder.  It may not exist yet: the loaders create it when they
        download into it, and say so when a file is missing.
    """
    if data_home is None:
        data_home = os.environ.get("SPARSEDP_DATA") or None
    if data_home is None:
        for candidate in _default_homes():
            if candidate.is_dir():
                return candidate.resolve()
        return _cache_home()
    if not isinstance(data_home, (str, os.PathLike)):
        raise TypeError(f"data_home must be a path or None, got {type(data_home).__name__}")
    return Path(data_home).expanduser()

