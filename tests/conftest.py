import importlib.util
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import sysconfig

import pytest

import sparsedp


def pytest_report_header(config):
    return f"sparsedp {sparsedp.__version__} from {pathlib.Path(sparsedp.__file__).parent}"


def pytest_sessionstart(session):
    # The tests must exercise the built package with its compiled kernels.
    import sparsedp._kernels._cd_fast  # noqa: F401  (fails loudly if extensions are missing)


EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "cython"

# The tests run from a checkout: its real data (../shared/data beside it) when present,
# also for an installed (non-editable) sparsedp, whose default folder is the user's
# cache (docs/datasets.rst).  $SPARSEDP_DATA, when set, wins.
_CHECKOUT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
if not os.environ.get("SPARSEDP_DATA") and _CHECKOUT_DATA.is_dir():
    os.environ["SPARSEDP_DATA"] = str(_CHECKOUT_DATA)


def c_compiler():
    """The C compiler setuptools would call ($CC, else Python's build CC), or None."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC")
    if not cc:
        return None
    return shutil.which(shlex.split(cc)[0])


@pytest.fixture(scope="session")
def example(tmp_path_factory):
    """The example compiled in a temporary directory (``setup.py build_ext
    --inplace`` in a fresh process, so only the installed sparsedp is seen)."""
    if c_compiler() is None:
        pytest.skip("no C compiler found ($CC or sysconfig's CC): cannot build the "
                    "Cython API example")
    build = tmp_path_factory.mktemp("cython_api")
    for name in ("noisy_sum.pyx", "setup.py"):
        shutil.copy(EXAMPLE / name, build / name)
    proc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=build,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    (path,) = build.glob("noisy_sum" + sysconfig.get_config_var("EXT_SUFFIX"))
    spec = importlib.util.spec_from_file_location("noisy_sum", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the tests left out of the quick run (``pytest``): one ``file::function`` (every
#: parametrisation) or ``file`` (every test of it) per line; the full suite is
#: ``pytest -m "not audit_long"``
SLOW_LIST = pathlib.Path(__file__).with_name("slow_tests.txt")


def _slow_tests():
    if not SLOW_LIST.exists():
        return frozenset()
    lines = (line.split("#")[0].strip() for line in SLOW_LIST.read_text().splitlines())
    return frozenset(line for line in lines if line)


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` the tests listed in ``tests/slow_tests.txt`` (by file, or file and
    function)."""
    slow = _slow_tests()
    root = pathlib.Path(__file__).resolve().parent
    for item in items:
        path = pathlib.Path(str(item.path)).resolve()
        try:
            name = path.relative_to(root).as_posix()
        except ValueError:
            continue
        function = getattr(item, "originalname", None) or item.name.split("[")[0]
        if name in slow or f"{name}::{function}" in slow:
            item.add_marker(pytest.mark.slow)
