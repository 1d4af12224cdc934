"""No kernel relies on Cython's ``wraparound`` (or ``boundscheck``) being on.

The kernels are compiled with ``wraparound=False`` (``sparsedp/_kernels/meson.build``):
a negative index there is not counted from the end. On a memoryview or a pointer it
reads before the buffer; on a Python object (``self.start[-1]`` on a numpy array, the
DP-SGD crash on Python 3.12+ with numpy 2.5) its meaning depends on how Cython and
the object's type slots happen to meet. The debug build (``-Ddebug-checks=true``)
turns a negative index on a memoryview into an IndexError; this test finds the
pattern in the source itself: a unary minus at the top level of a subscript or a
slice bound (``a[-1]``, ``a[:-1]``, ``a[i, -k]``), in every Cython file.
"""
import io
import keyword
import tokenize
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "sparsedp"
CYTHON_FILES = sorted(SOURCE.rglob("*.pyx")) + sorted(SOURCE.rglob("*.pxd"))
#: tokens after which ``[`` opens a subscript (not a list display)
SUBSCRIPTED = {")", "]"}
#: tokens after which ``-`` is a binary operator
OPERANDS = {")", "]"}


def negative_subscripts(text):
    """``[(line, source line)]`` of each unary minus at a subscript's top level."""
    found = []
    stack = []          # one entry per open bracket: "sub", "list", "(" or "{"
    previous = None     # the previous significant token
    lines = text.splitlines()
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    for tok in tokens:
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                        tokenize.DEDENT, tokenize.ENCODING):
            continue
        s = tok.string
        if tok.type == tokenize.OP and s == "[":
            is_sub = previous is not None and (
                (previous.type == tokenize.NAME and not keyword.iskeyword(previous.string))
                or (previous.type == tokenize.OP and previous.string in SUBSCRIPTED)
                or previous.type == tokenize.STRING)
            stack.append("sub" if is_sub else "list")
        elif tok.type == tokenize.OP and s in "({":
            stack.append(s)
        elif tok.type == tokenize.OP and s in ")]}":
            if stack:
                stack.pop()
        elif tok.type == tokenize.OP and s == "-" and stack and stack[-1] == "sub":
            unary = previous.type == tokenize.OP and previous.string not in OPERANDS
            if unary:
                found.append((tok.start[0], lines[tok.start[0] - 1].strip()))
        previous = tok
    return found


def test_the_scan_sees_the_cython_sources():
    names = {f.name for f in CYTHON_FILES}
    assert {"_dp_sgd_fast.pyx", "_dp_scd_fast.pyx", "_core.pxd"} <= names, names


@pytest.mark.parametrize("text, hits", [
    ("x = a[-1]\n", 1),                   # the DP-SGD crash's pattern
    ("x = self.start[-1] <= steps\n", 1),
    ("x = a[:-1]\n", 1),
    ("x = a[i, -k]\n", 1),
    ("x = a[0][-2]\n", 1),
    ("x = a[n - 1]\n", 0),                # a binary minus
    ("x = a[f(-1)]\n", 0),                # inside a call: not an index
    ("x = [-1, 2]\n", 0),                 # a list display
    ("x = a[len(a) - 1] - b[-0 + i]\n", 1),
    ("# a[-1] in a comment\ns = 'a[-1]'\n", 0),
    ("cdef double[:, ::1] v = w\n", 0),
])
def test_the_scan_finds_the_pattern(text, hits):
    assert len(negative_subscripts(text)) == hits


@pytest.mark.parametrize("path", CYTHON_FILES, ids=lambda f: f.name)
def test_no_negative_index_in_a_kernel(path):
    found = negative_subscripts(path.read_text())
    assert not found, (
        f"{path.name}: negative index in code compiled with wraparound=False (counts "
        "from the start, or crashes): " + "; ".join(f"line {n}: {s}" for n, s in found))


# ---- lengths: a kernel given arrays that disagree refuses them (never reads past one) --
def _csc():
    import numpy as np
    import scipy.sparse as sp
    X = sp.random(20, 6, density=0.4, format="csc", rng=0)
    return X, np.ones(20), np.zeros(20), np.zeros(6), np.ones(6)


def _one_short(arrays, name):
    """``arrays`` with the one named ``name`` one entry short."""
    return {key: a[:-1] if key == name else a for key, a in arrays.items()}


@pytest.mark.parametrize("bad", ["lipschitz", "indptr", "margin", "indices"])
def test_exact_cd_kernels_check_their_lengths(bad):
    from sparsedp._kernels._cd_fast import cd_epochs, kkt_violation
    X, y, margin, w, lipschitz = _csc()
    a = _one_short(dict(data=X.data, indices=X.indices, indptr=X.indptr, margin=margin,
                        lipschitz=lipschitz), bad)
    with pytest.raises(ValueError, match="inconsistent array shapes"):
        cd_epochs(0, a["data"], a["indices"], a["indptr"], y, w, a["margin"], a["lipschitz"],
                  0.0, 0.0, 1)
    if bad != "lipschitz":
        with pytest.raises(ValueError, match="inconsistent array shapes"):
            kkt_violation(0, a["data"], a["indices"], a["indptr"], y, w, a["margin"], 0.0, 0.0)


@pytest.mark.parametrize("bad", ["norms", "indptr", "indices"])
def test_sgd_kernel_checks_its_lengths(bad):
    import numpy as np
    from sparsedp._kernels._dp_sgd_fast import sgd_eager
    from sparsedp._kernels._noise import IntegerNoise
    from sparsedp._kernels._sampling import Batches
    X, y, _, w, _ = _csc()
    R = X.tocsr()
    a = _one_short(dict(indptr=R.indptr.astype(np.int64), indices=R.indices.astype(np.int32),
                        norms=np.ones(20)), bad)
    with pytest.raises(ValueError, match="inconsistent array shapes"):
        sgd_eager(a["indptr"], a["indices"], R.data, y, a["norms"], 0, 1.0, w, 1, 0.1, 0.1,
                  0.0, 0.0, Batches(20, 0.1, 0), IntegerNoise("gaussian", 8192.0), 0.0, 0.0,
                  np.random.default_rng(0), np.zeros((0, 6)), 0)
