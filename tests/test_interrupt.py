"""Ctrl-C interrupts the long nogil kernels (DP-CD, exact CD epochs, DP-GCD, DP-SCD, DP-SGD).

Each case runs in its own process: it prints "ready" just before the long call,
receives SIGINT one second later and must exit with KeyboardInterrupt within
``LIMIT`` seconds (without the checks it would run for hours).
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

LIMIT = 10.0

# The child installs Python's own SIGINT handler: it inherits the disposition of the
# test process, where an earlier test's worker pool (loky, dask) may have left SIGINT
# ignored (SIG_IGN is kept across exec, and Python then never raises KeyboardInterrupt).
SETUP = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np, scipy.sparse as sp, sys, warnings
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = sp.random(50, 40, density=0.3, format="csc", rng=rng)
y = np.where(rng.random(50) < 0.5, -1.0, 1.0)
"""

CASES = {
    "dp_cd": """
from sparsedp.datafits import Logistic
from sparsedp.solvers import dp_cd
print("ready", flush=True)
dp_cd(X, y, Logistic(), epsilon=1.0, delta=1e-5, passes=1e8, clip=1.0,
      smoothness=np.full(40, 0.25), random_state=0)
""",
    "cd_epochs": """
from sparsedp._kernels import kernel_id
from sparsedp._kernels._cd_fast import cd_epochs
from sparsedp.datafits import Logistic
w, z = np.zeros(40), np.zeros(50)
print("ready", flush=True)
cd_epochs(kernel_id(Logistic()), X.data, X.indices, X.indptr, y, w, z,
          np.full(40, 1.0), 0.0, 0.0, 10**12)
""",
    "dp_gcd": """
from sparsedp._kernels import kernel_id
from sparsedp._kernels._dp_gcd_fast import GreedyKernel
from sparsedp.datafits import Logistic
p = 40
ones, zeros = np.ones(p), np.zeros(p)
kernel = GreedyKernel(X, y, kernel_id(Logistic()), ones, ones, ones, 0.0, 0.0, "gs-r",
                      "exponential", 1.0, "none", None, zeros, zeros,
                      np.random.default_rng(0))
print("ready", flush=True)
kernel.run(10**8)
""",
    # without noise: the kernel alone (a private run of this length spends minutes calibrating)
    "dp_scd": """
from sparsedp.datafits import Logistic
from sparsedp.penalties import L2
from sparsedp.solvers import dp_scd
print("ready", flush=True)
dp_scd(X, y, Logistic(), L2(0.1), epsilon=float("inf"), delta=1e-5, passes=1e7,
       clip=float("inf"), batch_size=1, random_state=0)
""",
    # 1,000 columns: the run lasts about 12 s on 2 cores (on the 40 columns above it
    # lasted 1.2 s, and could end between the check and the signal); the steps' memory
    # (16 bytes each) is what bounds passes
    "dp_sgd": """
from sparsedp.datafits import Logistic
from sparsedp.solvers import dp_sgd
X = sp.random(50, 1000, density=0.3, format="csc", rng=rng)
print("ready", flush=True)
dp_sgd(X, y, Logistic(), epsilon=float("inf"), delta=1e-5, passes=2e5, clip=float("inf"),
       global_smoothness=0.25, random_state=0)
""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_ctrl_c_interrupts_the_kernel_with_keyboard_interrupt(case, tmp_path):
    code = textwrap.dedent(SETUP) + textwrap.dedent(CASES[case])
    # -P and a neutral working directory: import the installed package, not the source tree
    proc = subprocess.Popen([sys.executable, "-P", "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(1.0)
        assert proc.poll() is None, "the run ended before the signal: make it longer"
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=LIMIT)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "KeyboardInterrupt" in err, err[-2000:]
    assert proc.returncode != 0
    assert elapsed < LIMIT
