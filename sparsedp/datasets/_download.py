"""Finding a data file locally, or downloading it with pooch, checked by sha256."""
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


def _advice(relpath, folder, url, source):
    return (f"To fix it: set SPARSEDP_DATA (or pass data_home=) to a folder holding "
            f"{relpath}; or pip install 'sparsedp[data]' and load again online "
            f"(download=True) to download it; or download it by hand from {url} into "
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
        raise DataNotFoundError(f"{where}, and download=False. "
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
