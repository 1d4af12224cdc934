"""Finding a data file locally, or downloading it with pooch, checked by sha256.

When a file is missing and not downloaded, :class:`DataNotFoundError` says what
to do, in the words of the interface in use: Python's arguments (``data_home=``,
``download=True``) by default, the command line's options (``--data-home``,
``--no-download``) within :func:`command_line_messages`.
"""
import contextlib
import contextvars
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

from . import _registry


class DataNotFoundError(FileNotFoundError):
    """A data file is neither in the data folder nor downloadable; the message says what to do."""


def _local_versions(path):
    """The names a file may have on disk: as registered, and uncompressed if registered gzipped."""
    return [path, path.with_suffix("")] if path.suffix == ".gz" else [path]


def _copy_local(url, output_file, pooch_instance, check_only=False):
    """A pooch downloader for ``file://`` URLs (local mirrors): copies the file."""
    source = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    if check_only:
        return source.is_file()
    shutil.copyfile(source, output_file)
    return None


def _retrieve(url, sha256, target):
    """Download ``url`` to ``target`` with pooch; pooch refuses a file whose sha256 differs."""
    import pooch  # optional: pip install 'sparsedp[data]'

    downloader = _copy_local if url.startswith("file:") else None
    return pooch.retrieve(url, known_hash=f"sha256:{sha256}", fname=target.name,
                          path=target.parent, downloader=downloader, progressbar=False)


#: "python" or "cli": whose words the missing-data messages use (:func:`command_line_messages`)
_INTERFACE = contextvars.ContextVar("sparsedp_data_interface", default="python")


@contextlib.contextmanager
def command_line_messages():
    """Within this context, the missing-data messages speak of the command line.

    ``sparsedp compare`` loads its data set within it: the messages then name
    ``--data-home`` and ``--no-download`` instead of ``data_home=`` and
    ``download=True``.
    """
    token = _INTERFACE.set("cli")
    try:
        yield
    finally:
        _INTERFACE.reset(token)


def _pooch_installed():
    """Whether pooch, the optional dependency that downloads, can be imported."""
    try:
        import pooch  # noqa: F401
    except ImportError:
        return False
    return True


def _not_downloaded():
    """Why a missing file was not fetched when downloads are off."""
    if _INTERFACE.get() == "cli":
        return "and --no-download was given"
    return "and download=False"


def _advice(relpath, folder, url, source):
    """The ways out of a missing file: a folder holding it, a download, a copy by hand."""
    cli = _INTERFACE.get() == "cli"
    where = "give --data-home" if cli else "pass data_home="
    online = ("run the command again without --no-download, online" if cli
              else "load it again with download=True (the default), online")
    if not _pooch_installed():
        online = f"pip install 'sparsedp[data]' (pooch, which downloads) and {online}"
    return (f"To fix it: set SPARSEDP_DATA (or {where}) to a folder holding {relpath}; "
            f"or {online}; or download it by hand from {url} into "
            f"{(folder / relpath).parent} (upstream: {source}).")


def fetch(relpath, folder, source, download=True):
    """The local path of a data file, downloaded into ``folder`` first if missing.

    Parameters
    ----------
    relpath : str
        The file's path in the data folder, as in ``_registry.FILES``
        (e.g. ``"dorothea/dorothea_train.data.gz"``).  A gzipped file may also be
        present uncompressed (its name without ``.gz``), as the upstream serves it.
    folder : pathlib.Path
        The data folder.
    source : str
        The upstream page, quoted in the error message.
    download : bool, default=True
        Download a missing file (needs pooch and the network).  False: never
        touch the network.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DataNotFoundError
        The file is missing and was not downloaded; the message says why and what to do.
    ValueError
        The downloaded file's sha256 differs from the registry's (nothing is kept).
    """
    path = folder / relpath
    for candidate in _local_versions(path):
        if candidate.is_file():
            return candidate
    url, sha256 = _registry.FILES[relpath]
    where = (f"{relpath} not found in {folder}" if folder.is_dir()
             else f"{relpath} not found: the data folder {folder} does not exist")
    if not download:
        raise DataNotFoundError(f"{where}, {_not_downloaded()}. "
                                + _advice(relpath, folder, url, source))
    created = [d for d in (folder, path.parent) if not d.is_dir()]
    try:
        return Path(_retrieve(url, sha256, path))
    except (ImportError, ValueError, OSError) as exc:  # ValueError: pooch's hash check
        for d in reversed(created):  # leave no empty folders behind a failed download
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        advice = _advice(relpath, folder, url, source)
        if isinstance(exc, ImportError):
            raise DataNotFoundError(f"{where}, and pooch (needed to download it) is not "
                                    f"installed. {advice}") from None
        if isinstance(exc, ValueError) and "hash" in str(exc).lower():
            raise ValueError(f"checksum mismatch: the file downloaded from {url} is not the "
                             f"registered one (sha256 {sha256}); it was not kept ({exc})"
                             ) from None
        raise DataNotFoundError(f"{where}, and downloading it from {url} failed "
                                f"({type(exc).__name__}: {exc}). {advice}") from None
