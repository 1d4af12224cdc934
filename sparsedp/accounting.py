"""Alias of :mod:`sparsedp.privacy` (the public names of the privacy package).

Kept for the API contract; new code imports from :mod:`sparsedp.privacy`.
"""
from .privacy import *  # noqa: F401,F403
from .privacy import __all__  # noqa: F401
