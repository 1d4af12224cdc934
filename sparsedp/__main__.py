"""``python -m sparsedp``: the ``sparsedp`` command (:mod:`sparsedp.cli`)."""
import sys

from .cli import main

sys.exit(main())
