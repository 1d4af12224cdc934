"""Load a script of ``experiments/`` as a module, for the tests of its functions."""
import importlib.util
import sys
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def load_script(name):
    """``experiments/<name>.py`` as a fresh module (``sys.path`` left as it was)."""
    spec = importlib.util.spec_from_file_location(f"{name}_script", EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)  # auto_boundary.py puts experiments/ on sys.path
    finally:
        sys.path[:] = path
    return module
