"""What the kernels keep per process for an immutable matrix, and when it is one.

A sweep fits the same data hundreds of times; the layouts a kernel derives from
``X`` (DP-GCD's column and row records, DP-CD's packed blocks) only depend on
``X``, so they can be built once per process, provided ``X`` cannot change in
the meantime (DP-GCD's clipped gradient at ``w = 0`` also depends on ``y``, the
loss and the thresholds: kept for the runs of a grid point).  :func:`immutable_key` says whether it cannot: every array of its
data, indices and indptr, and every array they view, read-only (a read-only
memory map, :class:`sparsedp.experiments.Problem`'s copy).  The cache holds
weak references to the arrays' owners: an entry whose owners died is stale.

The same holds for the public constants a fit derives from a read-only array of
them (a sweep's smoothness constants ``M``: the steps ``gamma / M_j``, the
thresholds ``C_j``, their grids): :func:`kept_derived` computes each once per
process and hands out the same read-only value.
"""
import threading
import weakref
from collections import OrderedDict

import numpy as np

__all__ = ["immutable_key", "is_alive", "kept_derived"]

#: values kept by :func:`kept_derived`, at most this many and this many bytes of
#: arrays (the least recently used go first: a sweep's grid points come in order)
DERIVED_KEPT = 64
DERIVED_BYTES = 64 * 2 ** 20
_DERIVED = OrderedDict()   # key -> (weak reference to the array's owner, value, bytes)
_DERIVED_LOCK = threading.Lock()


def immutable_key(X, *extra, also=()):
    """``(key, roots)`` for an immutable CSC or CSR ``X``, else None.

    ``roots``: the objects owning the memory of X's three arrays (to be weakly
    referenced by a cache); ``key``: their identities, the arrays' addresses,
    lengths and dtypes, X's shape, and ``extra`` (what else the cached layout
    depends on, hashable).  ``also``: more arrays the cached value depends on (y),
    which must be immutable too (their roots follow X's).
    """
    parts, roots = [X.shape, *extra], []
    for a in (X.data, X.indices, X.indptr, *also):
        root = _read_only_root(a)
        if root is None:
            return None
        roots.append(root)
        parts += [id(root), a.__array_interface__["data"][0], a.shape, a.strides,
                  a.dtype.str]
    return tuple(parts), roots


def _read_only_root(a):
    """The object owning the memory of array ``a`` when ``a`` and every array it
    views are read-only (and the owner can be weakly referenced), else None."""
    if not isinstance(a, np.ndarray):
        return None
    root = a
    while True:
        if isinstance(root, np.ndarray):
            if root.flags.writeable:
                return None
            if root.base is None:
                break
            root = root.base
        else:  # a read-only memory map's mmap, bytes
            break
    try:
        weakref.ref(root)
    except TypeError:
        return None
    return root


def is_alive(refs, roots):
    """Whether the weak references ``refs`` (of a cache entry) still point at ``roots``
    (the owners :func:`immutable_key` found now): the entry is for this very X."""
    return all(ref() is root for ref, root in zip(refs, roots))


def kept_derived(a, what, compute):
    """``compute()``, kept per process while the array ``a`` it is derived from is immutable.

    ``a``: the array the value is computed from; ``what``: hashable, the
    computation and everything else it depends on (scalars).  When ``a`` and
    every array it views are read-only (:func:`immutable_key`), the value of
    ``compute()`` (an array, or a tuple of arrays) is made read-only and kept
    (:data:`DERIVED_KEPT` values and :data:`DERIVED_BYTES` at most, each while
    ``a``'s owner lives; a value over a quarter of the bytes is not kept) and later
    calls with the same ``a`` and ``what`` return it; otherwise every call computes
    afresh.  Only for values that are functions of ``a`` and ``what`` alone
    (public constants: nothing random, nothing from the data).
    """
    root = _read_only_root(a)
    if root is None:
        return compute()
    key = (id(root), a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str,
           what)
    with _DERIVED_LOCK:
        entry = _DERIVED.get(key)
        if entry is not None and entry[0]() is root:
            _DERIVED.move_to_end(key)
            return entry[1]
    value = compute()
    size = 0
    for array in (value if isinstance(value, tuple) else (value,)):
        if isinstance(array, np.ndarray):
            array.setflags(write=False)
            size += array.nbytes
    if size > DERIVED_BYTES // 4:  # too large to keep without crowding out the rest
        return value
    with _DERIVED_LOCK:
        _DERIVED[key] = (weakref.ref(root), value, size)
        for stale in [k for k, (ref, _, _) in _DERIVED.items() if ref() is None]:
            del _DERIVED[stale]
        total = sum(entry[2] for entry in _DERIVED.values())
        while len(_DERIVED) > DERIVED_KEPT or total > DERIVED_BYTES:
            total -= _DERIVED.popitem(last=False)[1][2]
    return value
