"""Synthetic data sets: the laws they are documented to follow."""
import numpy as np
import pytest

from sparsedp.datasets import make_sparse_lasso


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
    import hashlib

    from problems import data_dir

    from sparsedp.datasets import ELECTRICITY_FEATURES, load_electricity

    path = data_dir() / "electricity" / "elecNormNew.arff"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == ELECTRICITY_SHA256
    X, y = load_electricity(home=data_dir())
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
    from sparsedp.datasets import load_electricity

    (tmp_path / "electricity").mkdir()
    (tmp_path / "electricity" / "elecNormNew.arff").write_text(body)
    with pytest.raises(ValueError, match=match):
        load_electricity(home=tmp_path)


def test_load_electricity_reads_a_small_file_and_follows_sparsedp_data(tmp_path, monkeypatch):
    from sparsedp.datasets import load_electricity

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
        load_electricity()
