"""The stack level that makes a warning name the user's line.

A warning raised deep inside sparsedp (an estimator calls the functional API,
which calls a helper that warns) should point at the line of the user's code
that made the call, not at the helper.  A fixed ``stacklevel=N`` breaks as soon
as the call depth varies; :func:`find_stack_level` counts the frames instead::

    warnings.warn(message, PrivacyLeakWarning, stacklevel=find_stack_level())
"""
import os
import sys

__all__ = ["find_stack_level"]

#: the package's folder, with a trailing separator (``sparsedp_extra/`` is not inside)
PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")


def find_stack_level():
    """The ``stacklevel`` of the first frame outside the sparsedp package.

    To be called in the argument list of ``warnings.warn``, from the function
    that warns: ``stacklevel=find_stack_level()``.

    Returns
    -------
    int
        The number of consecutive sparsedp frames from the caller of
        :func:`find_stack_level` up, plus one: given to ``warnings.warn`` from
        that caller, the warning names the first frame outside the package and
        the import machinery (the user's line, their ``import`` statement for a
        warning at import time, a joblib worker's frame under a parallel run).
        Called from compiled code (no frame of its own), the count starts at the
        innermost Python frame.  When every
        frame of the stack is sparsedp's (a script inside the package), the
        outermost one.
    """
    frame = sys._getframe(1)  # the caller, the level-1 frame of warnings.warn
    level = 1
    while frame.f_back is not None and (_import_machinery(frame.f_code.co_filename) or
                                        os.path.abspath(frame.f_code.co_filename)
                                        .startswith(PACKAGE_DIR)):
        frame = frame.f_back
        # warnings.warn does not count the import machinery's frames either
        level += not _import_machinery(frame.f_code.co_filename)
    return level


def _import_machinery(filename):
    """A frame of importlib's bootstrap (running an import: a warning at import time
    then names the user's ``import`` line), as ``warnings`` tells them."""
    return "importlib" in filename and "_bootstrap" in filename
