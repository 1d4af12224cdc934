"""Where the data sets live: ``data_home``, ``$SPARSEDP_DATA``, the defaults.

The rule depends neither on the working directory nor on how sparsedp was
installed, except for one case: imported from a source checkout (an editable
install), a ``shared/data`` folder beside the checkout is used when it exists.
"""
import os
from pathlib import Path


def _checkout_data():
    """``<checkout>/../shared/data`` when sparsedp is imported from a source checkout
    (the folder above the package holds ``pyproject.toml``), else None.

    An installed package (a wheel in site-packages) has no checkout: None.
    """
    checkout = Path(__file__).resolve().parents[2]
    if not (checkout / "pyproject.toml").is_file():
        return None
    return checkout.parent / "shared" / "data"


def _cache_home():
    """The per-user folder: ``$XDG_CACHE_HOME/sparsedp``, default ``~/.cache/sparsedp``."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "sparsedp"


def data_home(data_home=None):
    """The folder holding the data sets.

    Parameters
    ----------
    data_home : str or path-like, optional
        The folder to use.  When None, the first of:

        1. ``$SPARSEDP_DATA``, when set and not empty;
        2. ``shared/data`` beside the source checkout sparsedp is imported from
           (``<checkout>/../shared/data``), when sparsedp runs from a checkout (an
           editable install) and that folder exists;
        3. the per-user folder ``$XDG_CACHE_HOME/sparsedp`` (default
           ``~/.cache/sparsedp``), where downloads go.

        The working directory plays no part.

    Returns
    -------
    pathlib.Path
        The folder (``~`` expanded).  It may not exist yet: the loaders create
        it when they download into it, and say so when a file is missing.
    """
    if data_home is None:
        data_home = os.environ.get("SPARSEDP_DATA") or None
    if data_home is None:
        checkout = _checkout_data()
        if checkout is not None and checkout.is_dir():
            return checkout.resolve()
        return _cache_home()
    if not isinstance(data_home, (str, os.PathLike)):
        raise TypeError(f"data_home must be a path or None, got {type(data_home).__name__}")
    return Path(data_home).expanduser()
