"""sparsedp.datasets: the loaders against shared/data/MANIFEST.md, svmlight files, the data
folder, downloads (from local file:// URLs: no network), the offline message, the
synthetic generators' documented laws, the catalogue, preprocessing."""
import gzip
import hashlib
import inspect
import re
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from problems import data_dir

from sparsedp import datasets
from sparsedp.datasets import (DataNotFoundError, data_home, describe, list_datasets, load,
                               load_california, load_dexter, load_dorothea, load_electricity,
                               load_madelon, load_svmlight, make_dorothea_like,
                               make_quasi_sparse, make_sparse_lasso, make_square, standardize)
from sparsedp.datasets import _home, _registry


def test_sparse_lasso_weights():
    X, y, w = make_sparse_lasso(50, 40, 6, noise=0.5, random_state=3)
    rng = np.random.default_rng(3)  # the documented draws, in order
    X_ref = rng.standard_normal((50, 40))
    support = rng.choice(40, 6, replace=False)
    w_ref = np.zeros(40)
    w_ref[support] = rng.standard_normal(6)
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(w, w_ref)
    np.testing.assert_array_equal(y, X_ref @ w_ref + 0.5 * rng.standard_normal(50))
    for law, low, high in (("sign", 1.0, 1.0), ("uniform", 0.5, 1.5)):
        _, _, w = make_sparse_lasso(50, 400, 200, random_state=4, weights=law)
        magnitudes = np.abs(w[w != 0])
        assert magnitudes.size == 200
        assert magnitudes.min() >= low and magnitudes.max() <= high
        assert 60 < np.sum(w > 0) < 140  # random signs (binomial(200, 1/2): +-5.6 sd)
    with pytest.raises(ValueError, match="weights must be"):
        make_sparse_lasso(weights="laplace")


ELECTRICITY_SHA256 = "2d86fbc74c69a5c04bcde0119bce280dd6d8efa0115987edc75b77ccf024d7f2"


def test_load_electricity_matches_the_manifest():
    """MANIFEST.md: 45,312 x 8, DOWN 26,075 and UP 19,237, no missing values, the
    numeric attributes in [0, 1] and day in 1..7."""
    from sparsedp.datasets import ELECTRICITY_FEATURES

    path = data_dir() / "electricity" / "elecNormNew.arff"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == ELECTRICITY_SHA256
    X, y = load_electricity(data_home=data_dir(), download=False)
    assert X.shape == (45_312, 8) and X.dtype == np.float64 and len(ELECTRICITY_FEATURES) == 8
    assert np.sum(y == 1.0) == 19_237 and np.sum(y == -1.0) == 26_075
    assert np.all(np.isfinite(X))
    day = X[:, ELECTRICITY_FEATURES.index("day")]
    np.testing.assert_array_equal(np.unique(day), np.arange(1.0, 8.0))
    others = np.delete(X, ELECTRICITY_FEATURES.index("day"), axis=1)
    assert others.min() >= 0.0 and others.max() <= 1.0
    # the file's first record: 0,2,0,0.056443,0.439155,0.003467,0.422915,0.414912,UP
    np.testing.assert_array_equal(X[0], [0, 2, 0, 0.056443, 0.439155, 0.003467, 0.422915,
                                         0.414912])
    assert y[0] == 1.0 and y[4] == -1.0


@pytest.mark.parametrize("body, match", [
    ("@relation x\n", "no @data"),
    ("@data\n", "no records"),
    ("@data\n0,2,0,0,0,0,0,0,UP\n0,2,0,0,0,0,0,UP\n", "record 2 has 8 fields"),
    ("@data\n0,2,0,0,0,0,0,0,SIDEWAYS\n", "UP or DOWN"),
    ("@data\n0,2,?,0,0,0,0,0,UP\n", "non-numeric"),
])
def test_load_electricity_rejects_malformed_files(tmp_path, body, match):
    (tmp_path / "electricity").mkdir()
    (tmp_path / "electricity" / "elecNormNew.arff").write_text(body)
    with pytest.raises(ValueError, match=match):
        load_electricity(data_home=tmp_path)


def test_load_electricity_reads_a_small_file_and_follows_sparsedp_data(tmp_path, monkeypatch):
    (tmp_path / "electricity").mkdir()
    (tmp_path / "electricity" / "elecNormNew.arff").write_text(
        "@relation e\n@attribute date numeric\n% a comment\n@data\n"
        "0.5,7,0.25,0,1,0,1,0.5,DOWN\n\n1,1,0,0,0,0,0,0,UP\n")
    monkeypatch.setenv("SPARSEDP_DATA", str(tmp_path))
    X, y = load_electricity()
    np.testing.assert_array_equal(X, [[0.5, 7, 0.25, 0, 1, 0, 1, 0.5], [1, 1, 0, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(y, [-1.0, 1.0])
    monkeypatch.setenv("SPARSEDP_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_electricity(download=False)


# --- the real data sets, exactly as MANIFEST.md ------------------------------------------

def _shared_data():
    folder = data_dir()
    if not (folder / "MANIFEST.md").is_file():
        pytest.skip(f"{folder}/MANIFEST.md not found (set SPARSEDP_DATA)")
    return folder


def _manifest_sha256(folder):
    """path -> sha256 from the manifest's file tables (``| path | bytes | sha256 |``)."""
    rows = re.findall(r"^\| ([\w/.]+) \| (\d+) \| ([0-9a-f]{64}) \|$",
                      (folder / "MANIFEST.md").read_text(), flags=re.M)
    return {path: (int(size), sha) for path, size, sha in rows}


def test_registry_is_the_manifest_and_the_files_match_it():
    folder = _shared_data()
    manifest = _manifest_sha256(folder)
    assert len(manifest) == 19  # "Total: 19 data files"
    assert set(_registry.FILES) <= set(manifest)
    for relpath, (url, sha) in _registry.FILES.items():
        assert manifest[relpath][1] == sha, relpath
        assert url.startswith("https://raw.githubusercontent.com/") and url.endswith(
            relpath.split("/")[-1])
        data = (folder / relpath).read_bytes()
        assert len(data) == manifest[relpath][0] and hashlib.sha256(data).hexdigest() == sha
    # every file a loader reads is registered, so every missing file can be downloaded
    for info in _registry.REAL.values():
        for split in info["splits"]:
            for pattern in info["files"]:
                assert pattern.format(split=split) in _registry.FILES


# split -> shape, nnz, non-empty columns, (+1, -1) counts (MANIFEST.md section 1)
DOROTHEA = {"train": ((800, 100_000), 727_760, 88_119, (78, 722)),
            "valid": ((350, 100_000), 317_752, 72_113, (34, 316))}


@pytest.mark.parametrize("split", DOROTHEA)
def test_load_dorothea_matches_the_manifest(split):
    shape, nnz, columns, (pos, neg) = DOROTHEA[split]
    X, y = load_dorothea(split, data_home=_shared_data(), download=False)
    assert isinstance(X, sp.csc_array) and X.shape == shape and X.nnz == nnz
    assert X.dtype == np.float64 and X.indices.dtype == np.int32 and X.has_sorted_indices
    assert np.all(X.data == 1.0)
    assert np.count_nonzero(np.diff(X.indptr)) == columns
    assert (np.sum(y == 1.0), np.sum(y == -1.0)) == (pos, neg)


def test_train_plus_valid_stacks_the_splits_in_order():
    home = _shared_data()
    X, y = load_dorothea("train+valid", data_home=home, download=False)
    Xt, yt = load_dorothea("train", data_home=home, download=False)
    assert X.shape == (1_150, 100_000) and X.nnz == 727_760 + 317_752  # OpenML 4137
    assert (X[:800] != Xt).nnz == 0 and np.array_equal(y[:800], yt)
    X, y = load_madelon("train+valid", data_home=home, download=False)
    assert X.shape == (2_600, 500) and np.sum(y == 1.0) == 1_300  # OpenML 1485
    with pytest.raises(ValueError, match="split must be"):
        load_madelon("test", data_home=home)


# split -> shape, nnz, sum of values, value range, (+1, -1) (MANIFEST.md section 2)
MADELON = {"train": ((2_000, 500), 999_999, 488_083_511, (0, 999), (1_000, 1_000)),
           "valid": ((600, 500), None, None, (37, 822), (300, 300))}


@pytest.mark.parametrize("split", MADELON)
def test_load_madelon_matches_the_manifest(split):
    shape, nnz, total, (low, high), (pos, neg) = MADELON[split]
    X, y = load_madelon(split, data_home=_shared_data(), download=False)
    assert isinstance(X, np.ndarray) and X.shape == shape and X.dtype == np.float64
    assert (X.min(), X.max()) == (low, high)
    if nnz is not None:
        assert np.count_nonzero(X) == nnz and X.sum() == total
    assert (np.sum(y == 1.0), np.sum(y == -1.0)) == (pos, neg)


# split -> nnz, sum of values (dexter.param's check-sums), (+1, -1) (MANIFEST.md section 5)
DEXTER = {"train": (28_218, 2_816_528, (150, 150)), "valid": (27_949, 2_820_952, (150, 150))}


@pytest.mark.parametrize("split", DEXTER)
def test_load_dexter_matches_the_manifest(split):
    nnz, total, (pos, neg) = DEXTER[split]
    X, y = load_dexter(split, data_home=_shared_data(), download=False)
    assert isinstance(X, sp.csc_array) and X.shape == (300, 20_000) and X.nnz == nnz
    assert X.sum() == total and np.all(X.data > 0) and X.has_sorted_indices
    assert (np.sum(y == 1.0), np.sum(y == -1.0)) == (pos, neg)


def test_load_california_matches_the_manifest():
    X, y = load_california(data_home=_shared_data(), download=False)
    assert X.shape == (20_640, 8) and y.shape == (20_640,) and X.dtype == np.float64
    assert np.all(np.isfinite(X)) and (y.min(), y.max()) == (14_999.0, 500_001.0)
    # the file's columns: longitude, latitude, ..., medianIncome (sklearn's MedInc)
    assert -125 < X[:, 0].min() < X[:, 0].max() < -114 and 32 < X[:, 1].min() < 42


def test_sparse_readers_read_plain_and_gzipped_files_alike(tmp_path):
    for name, data, labels in (("dorothea", "1 5\n2 100000\n", "1\n-1\n"),
                               ("dexter", "1:3 5:2\n20000:7\n", "-1\n1\n")):
        plain, zipped = tmp_path / "plain" / name, tmp_path / "gz" / name
        plain.mkdir(parents=True), zipped.mkdir(parents=True)
        for kind, text in (("data", data), ("labels", labels)):
            (plain / f"{name}_train.{kind}").write_text(text)
            with gzip.open(zipped / f"{name}_train.{kind}.gz", "wt") as f:
                f.write(text)
        loader = load_dorothea if name == "dorothea" else load_dexter
        Xp, yp = loader(data_home=tmp_path / "plain", download=False)
        Xz, yz = loader(data_home=tmp_path / "gz", download=False)
        assert (Xp != Xz).nnz == 0 and np.array_equal(yp, yz)
    np.testing.assert_array_equal(Xz[:, [0, 4, 19_999]].toarray(), [[3, 2, 0], [0, 0, 7]])


@pytest.mark.parametrize("data, match", [
    ("1:3 5\n", "index:value pairs"),
    ("1:x\n", "non-numeric"),
    ("20001:1\n", r"feature indices must lie in \[1, 20000\]"),
    ("0:1\n", "feature indices"),
])
def test_load_dexter_rejects_malformed_files(tmp_path, data, match):
    (tmp_path / "dexter").mkdir()
    (tmp_path / "dexter" / "dexter_train.data").write_text(data)
    (tmp_path / "dexter" / "dexter_train.labels").write_text("1\n")
    with pytest.raises(ValueError, match=match):
        load_dexter(data_home=tmp_path, download=False)


# --- svmlight ----------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_load_svmlight_round_trips_a_file(tmp_path, suffix):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    X = sp.random(30, 50, density=0.1, format="csr", rng=rng)
    y = rng.choice([-1.0, 1.0], 30)
    path = tmp_path / f"problem.svm{suffix}"
    if suffix:
        with gzip.open(path, "wb") as f:
            dump_svmlight_file(X, y, f, zero_based=False)
    else:
        dump_svmlight_file(X, y, str(path), zero_based=False)
    Xl, yl = load_svmlight(path, n_features=50)
    assert isinstance(Xl, sp.csc_array) and Xl.has_sorted_indices and Xl.shape == (30, 50)
    np.testing.assert_allclose(Xl.toarray(), X.toarray(), rtol=1e-15)
    np.testing.assert_array_equal(yl, y)
    Xn, yn = load(str(path), n_features=50)  # load() takes a path too
    assert (Xn != Xl).nnz == 0 and np.array_equal(yn, yl)


def test_load_svmlight_bad_paths(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_svmlight(tmp_path / "missing.svm")
    with pytest.raises(TypeError, match="path must be a file path"):
        load_svmlight(3)
    (tmp_path / "empty.svm").write_text("")
    with pytest.raises(ValueError):
        load_svmlight(tmp_path / "empty.svm")


@pytest.mark.parametrize("line, reason", [
    ("-1 2:0.5 7:abc", "the value of '7:abc' is not a number"),
    ("-1 2:0.5 abc", "'abc' is not index:value"),
    ("up 2:0.5", "the label 'up' is not a number"),
    ("-1 x:0.5", "the index of 'x:0.5' is not an integer"),
    ("-1 7:1 2:0.5", "the indices are not increasing ('2:0.5' after index 7)"),
    ("-1 -2:0.5", "the index of '-2:0.5' is below 0"),
])
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_malformed_svmlight_file_names_its_file_and_line(tmp_path, line, reason, suffix):
    """Comments, blank lines and qid are read; the first bad line is line 3."""
    body = f"# a comment\n1 qid:4 1:2.5 3:1e-3 # and another\n{line}\n\n1 4:1\n"
    path = tmp_path / f"bad.svm{suffix}"
    if suffix:
        with gzip.open(path, "wt") as f:
            f.write(body)
    else:
        path.write_text(body)
    with pytest.raises(ValueError) as info:
        load(str(path))
    assert str(info.value).startswith(f"malformed svmlight file {path}, line 3: {reason}")


def test_a_one_based_file_read_as_such_refuses_index_zero(tmp_path):
    path = tmp_path / "zero.svm"
    path.write_text("1 1:2\n-1 0:1\n")
    with pytest.raises(ValueError, match=r"zero.svm, line 2: the index of '0:1' is below 1"):
        load_svmlight(path, zero_based=False)


def test_an_svmlight_error_of_no_line_names_the_file(tmp_path):
    path = tmp_path / "wide.svm"
    path.write_text("1 1:2 9:1\n")
    with pytest.raises(ValueError, match=f"malformed svmlight file {re.escape(str(path))}: "
                                         f".*n_features"):
        load_svmlight(path, n_features=3)


def test_the_cli_reports_a_malformed_file_in_one_line(tmp_path, capsys):
    from sparsedp.cli import main
    path = tmp_path / "bad.svm"
    path.write_text("1 1:2\n-1 2:1\n1 3:abc\n")
    assert main(["compare", "--dataset", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"sparsedp: error: malformed svmlight file {path}, line 3: ")


# --- the data folder ---------------------------------------------------------------------

def _small_dorothea(folder):
    (folder / "dorothea").mkdir(parents=True)
    (folder / "dorothea" / "dorothea_train.data").write_text("1 5\n2\n")
    (folder / "dorothea" / "dorothea_train.labels").write_text("1\n-1\n")


def test_data_home_order_argument_then_environment_then_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSEDP_DATA", str(tmp_path / "env"))
    assert data_home(tmp_path / "arg") == tmp_path / "arg"
    assert data_home() == tmp_path / "env"
    monkeypatch.setenv("SPARSEDP_DATA", "")  # empty: unset
    monkeypatch.setattr(_home, "_checkout_data", lambda: tmp_path)
    assert data_home() == tmp_path.resolve()
    monkeypatch.setattr(_home, "_checkout_data", lambda: tmp_path / "no")  # not there
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert data_home() == tmp_path / "cache" / "sparsedp"
    monkeypatch.setattr(_home, "_checkout_data", lambda: None)  # an installed package
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_home() == tmp_path / "home" / ".cache" / "sparsedp"
    with pytest.raises(TypeError, match="data_home must be a path"):
        data_home(3)


def test_data_home_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    """A shared/data folder near the working directory is not the data folder."""
    monkeypatch.delenv("SPARSEDP_DATA", raising=False)
    before = data_home()
    (tmp_path / "work" / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert data_home() == before


def test_the_checkout_data_is_beside_a_source_checkout_only():
    """From a checkout (pyproject.toml above the package): <checkout>/../shared/data."""
    import pathlib
    package = pathlib.Path(datasets.__file__).resolve().parents[1]
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file():
        assert _home._checkout_data() == checkout.parent / "shared" / "data"
    else:  # an installed package has no checkout
        assert _home._checkout_data() is None


def test_loaders_follow_data_home_and_sparsedp_data(tmp_path, monkeypatch):
    _small_dorothea(tmp_path / "a")
    X, y = load_dorothea(data_home=tmp_path / "a", download=False)
    assert X.shape == (2, 100_000) and X.nnz == 3 and y.tolist() == [1.0, -1.0]
    monkeypatch.setenv("SPARSEDP_DATA", str(tmp_path / "a"))
    Xe, ye = load_dorothea(download=False)
    assert (Xe != X).nnz == 0 and np.array_equal(ye, y)
    with pytest.raises(DataNotFoundError, match="not found in"):
        load_dorothea("valid", download=False)


@pytest.mark.parametrize("loader, args", [
    (load_dorothea, ("train",)), (load_dexter, ("train",)), (load_madelon, ("train",)),
    (load_california, ()), (load_electricity, ()),
])
def test_data_home_is_the_only_keyword_for_the_folder(loader, args):
    # home= was removed before any release: it is refused, not carried
    assert "home" not in inspect.signature(loader).parameters
    with pytest.raises(TypeError, match="home"):
        loader(*args, home=_shared_data(), download=False)


# --- downloads (file:// URLs stand for the network) and the offline message ---------------

ARFF = "@relation e\n@data\n0.5,7,0.25,0,1,0,1,0.5,DOWN\n1,1,0,0,0,0,0,0,UP\n"
ELEC = "electricity/elecNormNew.arff"


def _serve(tmp_path, monkeypatch, body, sha=None):
    """Put ``body`` at a file:// URL and register it (with ``sha``, default its own) for ELEC."""
    source = tmp_path / "upstream" / "elecNormNew.arff"
    source.parent.mkdir()
    source.write_text(body)
    sha = sha or hashlib.sha256(body.encode()).hexdigest()
    url = source.as_uri()
    monkeypatch.setitem(_registry.FILES, ELEC, (url, sha))
    return url


def test_a_missing_file_is_downloaded_and_checked(tmp_path, monkeypatch):
    pytest.importorskip("pooch")
    _serve(tmp_path, monkeypatch, ARFF)
    home = tmp_path / "fresh" / "data"  # does not exist yet
    X, y = load_electricity(data_home=home)
    assert (home / ELEC).read_text() == ARFF
    np.testing.assert_array_equal(y, [-1.0, 1.0])
    assert X.shape == (2, 8)
    (tmp_path / "upstream" / "elecNormNew.arff").unlink()  # now read locally, not fetched
    assert np.array_equal(load_electricity(data_home=home)[1], y)


def test_a_download_whose_checksum_differs_is_rejected_and_not_kept(tmp_path, monkeypatch):
    pytest.importorskip("pooch")
    url = _serve(tmp_path, monkeypatch, ARFF, sha="0" * 64)
    home = tmp_path / "data"
    with pytest.raises(ValueError, match="checksum mismatch") as info:
        load_electricity(data_home=home)
    assert url in str(info.value) and "0" * 64 in str(info.value)
    assert not home.exists()  # no file, no empty folder left behind


def _assert_says_what_to_do(message, url, folder, pooch=True):
    """The three ways out, naming the file and its folder; pip install only without pooch."""
    assert "set SPARSEDP_DATA (or pass data_home=) to a folder holding " + ELEC in message
    assert "load it again with download=True" in message
    assert f"download it by hand from {url} into {folder / 'electricity'}" in message
    assert ("pip install 'sparsedp[data]'" in message) == (not pooch)


def test_offline_message_says_what_to_do(tmp_path, monkeypatch):
    pytest.importorskip("pooch")
    url = _serve(tmp_path, monkeypatch, ARFF)
    (tmp_path / "upstream" / "elecNormNew.arff").unlink()  # the "network" is down
    home = tmp_path / "data"
    with pytest.raises(DataNotFoundError, match="downloading it from .* failed") as info:
        load_electricity(data_home=home)
    message = str(info.value)
    assert "the data folder" in message and "does not exist" in message
    _assert_says_what_to_do(message, url, home)
    assert not home.exists()


def test_download_false_never_fetches(tmp_path, monkeypatch):
    url = _serve(tmp_path, monkeypatch, ARFF)
    monkeypatch.setattr("sparsedp.datasets._download._retrieve",
                        lambda *a: pytest.fail("download=False fetched a file"))
    (tmp_path / "data").mkdir()
    with pytest.raises(DataNotFoundError, match="not found in .*download=False") as info:
        load_electricity(data_home=tmp_path / "data", download=False)
    _assert_says_what_to_do(str(info.value), url, tmp_path / "data")


def test_without_pooch_the_message_says_to_install_it(tmp_path, monkeypatch):
    url = _serve(tmp_path, monkeypatch, ARFF)
    monkeypatch.setitem(sys.modules, "pooch", None)  # import pooch raises ImportError
    with pytest.raises(DataNotFoundError, match="pooch .* is not installed") as info:
        load_electricity(data_home=tmp_path / "data")
    _assert_says_what_to_do(str(info.value), url, tmp_path / "data", pooch=False)
    with pytest.raises(DataNotFoundError, match="download=False") as info:
        load_electricity(data_home=tmp_path / "data", download=False)
    _assert_says_what_to_do(str(info.value), url, tmp_path / "data", pooch=False)


def test_download_false_message_without_pip_when_pooch_is_installed(tmp_path, monkeypatch):
    pytest.importorskip("pooch")
    url = _serve(tmp_path, monkeypatch, ARFF)
    with pytest.raises(DataNotFoundError) as info:
        load_electricity(data_home=tmp_path / "data", download=False)
    message = str(info.value)
    assert message.startswith(f"{ELEC} not found: the data folder {tmp_path / 'data'} "
                              f"does not exist, and download=False.")
    assert "pip install" not in message and "pooch" not in message
    _assert_says_what_to_do(message, url, tmp_path / "data")


@pytest.mark.parametrize("pooch", [True, False])
def test_command_line_messages_name_the_options(tmp_path, monkeypatch, pooch):
    """Within command_line_messages (sparsedp compare): --data-home and --no-download,
    not Python's arguments."""
    from sparsedp.datasets._download import command_line_messages
    if pooch:
        pytest.importorskip("pooch")
    else:
        monkeypatch.setitem(sys.modules, "pooch", None)
    url = _serve(tmp_path, monkeypatch, ARFF)
    with command_line_messages(), pytest.raises(DataNotFoundError) as info:
        load_electricity(data_home=tmp_path / "data", download=False)
    message = str(info.value)
    assert "and --no-download was given." in message
    assert "set SPARSEDP_DATA (or give --data-home) to a folder holding " + ELEC in message
    assert "run the command again without --no-download, online" in message
    assert f"download it by hand from {url} into {tmp_path / 'data' / 'electricity'}" in message
    assert "download=" not in message and "data_home=" not in message
    assert ("pip install 'sparsedp[data]'" in message) == (not pooch)
    with pytest.raises(DataNotFoundError, match="download=False"):  # Python's words again
        load_electricity(data_home=tmp_path / "data", download=False)


# --- the synthetic problems --------------------------------------------------------------

def test_quasi_sparse_follows_its_documented_draws():
    X, y, w = make_quasi_sparse(40, 7, sigma=2.0, noise=0.5, task="regression",
                                random_state=5)
    rng = np.random.default_rng(5)
    X_ref = rng.standard_normal((40, 7))
    w_ref = rng.lognormal(0.0, 2.0, 7)
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(w, w_ref)
    np.testing.assert_array_equal(y, X_ref @ w_ref + 0.5 * rng.standard_normal(40))
    _, yc, wc = make_quasi_sparse(40, 7, sigma=2.0, noise=0.5, random_state=5)
    np.testing.assert_array_equal(wc, w)
    np.testing.assert_array_equal(yc, np.where(y >= 0.0, 1.0, -1.0))


@pytest.mark.parametrize("name, sigma", [("log1", 1.0), ("log2", 2.0)])
def test_log1_log2_shapes_seeds_and_quasi_sparsity(name, sigma):
    X, y, w = make_quasi_sparse(sigma=sigma, random_state=0)
    assert X.shape == (1_000, 100) and y.shape == (1_000,) and np.all(w > 0)
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert 440 < np.sum(y == 1.0) < 560  # sign of a symmetric law: binomial(1000, 1/2), 3.8 sd
    np.testing.assert_allclose(X.std(axis=0), 1.0, atol=0.1)  # unit-variance columns
    # log-normal: the median weight is exp(0) = 1; seed 0's five largest weights hold
    # more of the l1 mass for sigma 2 than for sigma 1 (the quasi-sparsity the paper plants)
    top5 = np.sort(w)[-5:].sum() / w.sum()
    assert (top5 > 0.4) if sigma == 2.0 else (0.1 < top5 < 0.3)
    Xl, yl = load(name)
    assert np.array_equal(Xl, X) and np.array_equal(yl, y)
    assert not np.array_equal(load(name, random_state=1)[0], X)


def test_square_has_ten_positive_weights_and_real_labels():
    X, y, w = make_square(random_state=3)
    assert X.shape == (1_000, 1_000) and np.count_nonzero(w) == 10 and np.all(w >= 0)
    Xq, yq, wq = make_quasi_sparse(1_000, 1_000, n_nonzero=10, task="regression",
                                   random_state=3)
    assert np.array_equal(X, Xq) and np.array_equal(y, yq) and np.array_equal(w, wq)
    assert np.unique(y).size == 1_000  # regression labels
    with pytest.raises(ValueError, match="n_nonzero"):
        make_square(n_features=5, n_nonzero=6)


def test_sparse_lasso_is_the_dp_cd_papers_shape():
    X, y, w = make_sparse_lasso()
    assert X.shape == (1_000, 1_000) and np.count_nonzero(w) == 10
    Xl, yl = load("sparse_lasso")
    assert np.array_equal(X, Xl) and np.array_equal(y, yl)


def test_dorothea_like_follows_its_documented_draws_and_dorotheas_shape():
    X, y, w = make_dorothea_like(n_samples=80, n_features=5_000, density=0.01,
                                 n_informative=7, positive_fraction=0.25, random_state=2)
    rng = np.random.default_rng(2)
    X_ref = sp.random(80, 5_000, density=0.01, format="csc", rng=rng, data_rvs=np.ones)
    w_ref = np.zeros(5_000)
    w_ref[rng.choice(5_000, 7, replace=False)] = rng.normal(size=7)
    z = X_ref @ w_ref + 0.1 * rng.normal(size=80)
    assert (X != X_ref).nnz == 0 and np.array_equal(w, w_ref)
    assert X.nnz == 4_000 and np.all(X.data == 1.0) and X.has_sorted_indices
    np.testing.assert_array_equal(y, np.where(z >= np.quantile(z, 0.75), 1.0, -1.0))
    assert np.sum(y == 1.0) == 20
    _, yr, _ = make_dorothea_like(80, 5_000, 0.01, 7, task="regression", random_state=2)
    np.testing.assert_allclose(yr, z, rtol=1e-15)
    X, y, w = make_dorothea_like()  # the defaults: dorothea's train shape and density
    assert isinstance(X, sp.csc_array) and X.shape == (800, 100_000)
    assert X.nnz == round(0.0091 * 800 * 100_000) and X.indices.dtype == np.int32
    assert np.sum(y == 1.0) == 400 and np.count_nonzero(w) == 50
    assert (load("dorothea_like", n_samples=80, n_features=5_000)[0].shape == (80, 5_000))


@pytest.mark.parametrize("call, error, match", [
    (lambda: make_quasi_sparse(sigma=0.0), ValueError, "sigma"),
    (lambda: make_quasi_sparse(task="ranking"), ValueError, "task must be one of"),
    (lambda: make_quasi_sparse(n_samples=0), ValueError, "n_samples"),
    (lambda: make_dorothea_like(density=1.5), ValueError, "density"),
    (lambda: make_dorothea_like(positive_fraction=1.0), ValueError, "positive_fraction"),
    (lambda: make_dorothea_like(n_features="10"), TypeError, "n_features"),
    (lambda: make_sparse_lasso(noise=-1.0), ValueError, "noise"),
])
def test_generators_reject_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- the catalogue -----------------------------------------------------------------------

def test_list_datasets_names_shapes_tasks_and_presence(tmp_path):
    names = ["dorothea", "madelon", "dexter", "california", "electricity",
             "log1", "log2", "square", "sparse_lasso", "dorothea_like"]
    empty = list_datasets(tmp_path)
    assert [d["name"] for d in empty] == names
    for d in empty:
        assert d["task"] in ("regression", "binary classification") and d["source"]
        assert d["present"] == (d["kind"] == "synthetic")
    shapes = {d["name"]: d["shape"] for d in empty}
    assert shapes["dorothea"] == (800, 100_000) and shapes["electricity"] == (45_312, 8)
    assert shapes["square"] == load("square")[0].shape
    _small_dorothea(tmp_path)  # the train split alone is not the whole data set
    assert not list_datasets(tmp_path)[0]["present"]
    home = _shared_data()
    assert all(d["present"] for d in list_datasets(home))
    text = describe(tmp_path)
    assert text.splitlines()[0] == f"data folder: {tmp_path}"
    assert re.search(r"^dorothea +800 x 100,000 +binary classification +download +https://",
                     text, flags=re.M)
    assert re.search(r"^california +20,640 x 8 +regression +yes", describe(home), flags=re.M)


def test_load_by_name_is_the_loader():
    home = _shared_data()
    X, y = load("dexter", split="valid", data_home=home, download=False)
    Xd, yd = load_dexter("valid", data_home=home, download=False)
    assert (X != Xd).nnz == 0 and np.array_equal(y, yd)
    X, y = load("california", data_home=home, download=False)
    assert X.shape == (20_640, 8)
    with pytest.raises(ValueError, match="california has one split"):
        load("california", split="valid", data_home=home)
    with pytest.raises(ValueError, match="its only split is 'train'"):
        load("log1", split="valid")
    with pytest.raises(ValueError, match="unknown data set 'mtp': neither a built-in name"):
        load("mtp")
    with pytest.raises(TypeError, match="takes no extra arguments"):
        load("dorothea", n_samples=3)
    with pytest.raises(TypeError, match="name_or_path must be"):
        load(3)


# --- preprocessing -----------------------------------------------------------------------

def test_standardize_on_the_data_and_with_public_statistics():
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, (50, 4))
    X[:, 3] = 7.0  # a constant column keeps scale 1
    Z = standardize(X)
    np.testing.assert_allclose(Z[:, :3].mean(axis=0), 0.0, atol=1e-14)
    np.testing.assert_allclose(Z[:, :3].std(axis=0), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(Z[:, 3], 0.0)
    mean, scale = np.array([3.0, 3.0, 3.0, 0.0]), np.array([2.0, 2.0, 2.0, 7.0])
    np.testing.assert_array_equal(standardize(X, mean=mean, scale=scale), (X - mean) / scale)
    # public statistics: one record's change moves only its own row
    X2 = X.copy()
    X2[0] += 100.0
    changed = np.any(standardize(X2, mean=mean, scale=scale)
                     != standardize(X, mean=mean, scale=scale), axis=1)
    assert changed.tolist() == [True] + [False] * 49
    assert np.all(np.any(standardize(X2) != standardize(X), axis=1)[:3])  # the data's: all rows
    with pytest.raises(ValueError, match="scale must be positive"):
        standardize(X, scale=np.zeros(4))
    with pytest.raises(ValueError, match=r"mean must have shape \(4,\)"):
        standardize(X, mean=np.zeros(3))
    with pytest.raises(ValueError, match="scale contains NaN or infinite values"):
        standardize(X, scale=np.full(4, np.inf))


def test_the_module_re_exports_every_public_name():
    for name in datasets.__all__:
        assert getattr(datasets, name) is not None
    assert set(datasets.__all__) >= {"data_home", "load_dorothea", "load_madelon",
                                     "load_california", "load_electricity",
                                     "make_sparse_lasso", "normalize_rows", "standardize"}
