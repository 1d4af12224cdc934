"""The files of the built-in real data sets: where each comes from, its sha256.

Every file is fetched from the public GitHub repository and commit that hold the
exact bytes of ``shared/data`` (its MANIFEST.md), so the sha256 below checks the
download.  The upstream (UCI, StatLib, MOA) distributes the same data in other
encodings (uncompressed, zipped), with other checksums: the loaders read those
too when placed in the data folder by hand.
"""

_NIPS2003 = ("https://raw.githubusercontent.com/Tuyki/TT_RNN/"
             "58238425ca1dfa02070a2aa0de95c8fff52228aa/Datasets/NIPS2003/")

#: sha256 of the NIPS 2003 files, all downloaded from the same folder
_NIPS2003_SHA256 = {
    "dorothea/dorothea_train.data.gz":
        "e1e4806763b6fbe2d2d26e5f6304b566ea2941e908fadfc25dff2d92552b0264",
    "dorothea/dorothea_train.labels.gz":
        "070e9c25b5802aafcd86c5b2f69a8d3435553dd1e8a31aa99549de360d116423",
    "dorothea/dorothea_valid.data.gz":
        "01b21a1026aaeef711b517ca5f503cccd83df4e6c3861a6b30bd9e4372881bba",
    "dorothea/dorothea_valid.labels.gz":
        "bb58f18bc3667bbf1a4bed87ecac35f5470cfc331ee927255636c911f72ce374",
    "madelon/madelon_train.data.gz":
        "de3a893a69edf7d1b9034473e07467bd6806ae45a14948679371913b2029e0be",
    "madelon/madelon_train.labels.gz":
        "15d9bcd5dbfe7c5702d3186dc5811370434cc44b5d346e8ceb713739168942b7",
    "madelon/madelon_valid.data.gz":
        "7458685dfb63f657e11a4d598ac3821ae8208df4d86439027baac94719657562",
    "madelon/madelon_valid.labels.gz":
        "adda92dcc273e7124cccf7e4cf50b4fd271e02c0cdfb14eec10aa96a768443cc",
    "dexter/dexter_train.data.gz":
        "924b133cd50daa5cf0152131f7b9e6c0bcc191ce2494ceffe6135d226af2fe4d",
    "dexter/dexter_train.labels.gz":
        "45b101aa0fa26a2eb02b76221ee420962ceb22cae77b807e75fd13384ca6968a",
    "dexter/dexter_valid.data.gz":
        "5c094f74df571f32e92136c37fabcf9c5c2ab0e7ee2917473c57a65facf8f587",
    "dexter/dexter_valid.labels.gz":
        "45792a82624a928dce51ed4163417ec129f662e47947a981a6efca33b9c2bb61",
}

#: relative path in the data folder -> (download URL, sha256)
FILES = {path: (_NIPS2003 + path, sha) for path, sha in _NIPS2003_SHA256.items()}
FILES.update({
    "california_housing/cal_housing.data": (
        "https://raw.githubusercontent.com/lapets/course-data-science/"
        "de59926b097817c130050161bee9d276c850f0ef/cal_housing.data",
        "d3d8a1a722ae78f91134862727d27a70b1415e7d512a89140406248687f4b902"),
    "electricity/elecNormNew.arff": (
        "https://raw.githubusercontent.com/diegomarron/ElasticSwapRandomForest/"
        "446130248d9b7ff1ad46d1889e7afab960674924/datasets/elecNormNew.arff",
        "2d86fbc74c69a5c04bcde0119bce280dd6d8efa0115987edc75b77ccf024d7f2"),
})

_NIPS_LICENSE = ("CC BY 4.0 (UCI policy); cite Guyon, Gunn, Ben-Hur, Dror, "
                 "NIPS 2003 feature selection challenge (NIPS 2004)")


def _nips(name, splits, uci_id, description):
    """What :data:`REAL` says of a NIPS 2003 set: two gzipped files a split, from UCI."""
    return dict(
        task="binary classification",
        splits=splits,
        files=[f"{name}/{name}_{{split}}.data.gz", f"{name}/{name}_{{split}}.labels.gz"],
        source=f"https://archive.ics.uci.edu/dataset/{uci_id}/{name}",
        license=_NIPS_LICENSE,
        description=description)


#: name -> what list_datasets reports about each real data set
REAL = {
    "dorothea": _nips("dorothea", {"train": (800, 100_000), "valid": (350, 100_000)}, 169,
                      "NIPS 2003 DOROTHEA (drug discovery), sparse binary features"),
    "madelon": _nips("madelon", {"train": (2_000, 500), "valid": (600, 500)}, 171,
                     "NIPS 2003 MADELON (synthetic XOR-like), dense integer features"),
    "dexter": _nips("dexter", {"train": (300, 20_000), "valid": (300, 20_000)}, 168,
                    "NIPS 2003 DEXTER (text classification), sparse integer features"),
    "california": dict(
        task="regression",
        splits={"train": (20_640, 8)},
        files=["california_housing/cal_housing.data"],
        source="https://lib.stat.cmu.edu/datasets/ (houses.zip; Pace & Barry 1997)",
        license="no license stated; redistributed by StatLib and scikit-learn",
        description="California housing (StatLib cal_housing), raw features"),
    "electricity": dict(
        task="binary classification",
        splits={"train": (45_312, 8)},
        files=["electricity/elecNormNew.arff"],
        source="https://www.openml.org/d/151 (MOA elecNormNew.arff; Harries 1999)",
        license="no license stated; distributed with MOA and on OpenML",
        description="Electricity (Elec2, normalized), NSW market price goes UP or DOWN"),
}
