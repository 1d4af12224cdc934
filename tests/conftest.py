import pathlib

import sparsedp


def pytest_report_header(config):
    return f"sparsedp {sparsedp.__version__} from {pathlib.Path(sparsedp.__file__).parent}"


def pytest_sessionstart(session):
    # The tests must exercise the built package with its compiled kernels.
    import sparsedp._kernels._cd_fast  # noqa: F401  (fails loudly if extensions are missing)
