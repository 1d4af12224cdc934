"""tests/audit: the statistical privacy audit (issue 17).

Its helper modules (``_audit``, ``_mechanisms``, ``_suite``, ``_checks``) are
imported by name from this directory (the test files and ``table.py``).
"""
import pathlib
import sys

HERE = str(pathlib.Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
