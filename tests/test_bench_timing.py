"""The epoch timer of the benchmark scripts: a difference of noisy totals is never
printed as a negative (or meaningless) time."""
import importlib.util
from pathlib import Path

import pytest

COMMON = Path(__file__).parents[1] / "asv_benchmarks" / "benchmarks" / "common.py"


@pytest.fixture(scope="module")
def common():
    """The asv suite's ``benchmarks/common.py``, loaded from its file."""
    if not COMMON.exists():
        pytest.skip("the asv suite is not beside the tests")
    spec = importlib.util.spec_from_file_location("bench_common", COMMON)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def EpochTime(common):
    return common.EpochTime


def test_a_clear_epoch_is_printed_in_ms(EpochTime):
    t = EpochTime([0.0100, 0.0102, 0.0098, 0.0101, 0.0099])
    assert t.reliable and t.median == pytest.approx(0.0100)
    assert t.spread == pytest.approx(0.0001)
    assert str(t).strip() == "10.000 ms"
    assert EpochTime([0.02] * 3).ratio(t) == "2.00x"


@pytest.mark.parametrize("rounds", [
    [-0.004021, -0.003, -0.005],            # dp_scd_epoch.py under load: all negative
    [0.001, -0.002, 0.004, -0.001, 0.003],  # median 0.001, spread 0.002
    [0.0, 0.0, 0.0],
])
def test_a_noisy_epoch_says_so(EpochTime, rounds):
    t = EpochTime(rounds)
    text = str(t)
    assert not t.reliable and text.startswith("too noisy to time")
    assert "rerun on a quiet machine" in text
    assert t.ratio(EpochTime([0.01] * 3)) == "n/a (too noisy)"
    assert EpochTime([0.01] * 3).ratio(t) == "n/a (too noisy)"


def test_peers_names_an_unknown_section():
    """``peers.py`` with a section it does not have: a usage error naming the
    sections, not a ``KeyError`` traceback."""
    import subprocess
    import sys
    script = COMMON.parents[1] / "peers.py"
    if not script.exists():
        pytest.skip("the asv suite is not beside the tests")
    proc = subprocess.run([sys.executable, str(script), "bogus"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert "unknown section 'bogus'; one of noise, cd, dp_cd" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_epoch_gaps_are_the_steps_since_each_touch(common):
    """dp_sgd_epoch.py's walk floor: on a dense matrix every step touches every column
    (gaps of 1); on the identity, a column's gap is the steps since its row was drawn."""
    import numpy as np
    import scipy.sparse as sp
    dense = sp.csc_array(np.ones((6, 4)))
    gaps = common.epoch_gaps(dense)
    assert gaps.shape == (6 * 4,) and np.all(gaps == 1)
    two = common.epoch_gaps(dense, batch_rows=2)  # 3 steps of two rows: columns once each
    assert two.shape == (3 * 4,) and np.all(two == 1)
    eye = common.epoch_gaps(sp.eye_array(50, format="csc"), seed=3)
    assert eye.shape == (50,) and eye.min() >= 1 and eye.max() <= 99
    _, per_touch = common.walk_floor(np.array([17, 16, 1, 255]), rounds=1)
    assert per_touch == (2 + 1 + 1 + 2) / 4  # nonzero base-16 digits
