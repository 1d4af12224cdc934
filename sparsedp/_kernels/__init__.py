"""The compiled kernels: one Cython module per algorithm and the shared primitives.

* :mod:`._cd_fast`: non-private proximal coordinate descent (the exact reference);
* :mod:`._dp_cd_fast`: DP-CD (noisy randomized coordinate steps);
* :mod:`._dp_gcd_fast`: DP-GCD (the greedy iterations);
* :mod:`._noisy_max`: the noisy max (exponential mechanism, report-noisy-max);
* :mod:`._noise`: the floating-point-safe integer noise of every release;
* :mod:`._random`: numpy.random's Cython API (bit generators, batch fills);
* :mod:`._immutable`: when a matrix cannot change, so that what a kernel derives
  from it (DP-GCD's records, DP-CD's blocks) is built once per process;
* ``_core.pxd``: the shared ``nogil`` maths (datafits on the margin, prox,
  clipped coordinate gradients, subdifferential distance).

Python code selects a kernel's loss through the datafit's declared kernel id
(:func:`sparsedp.datafits.kernel_id`), never through a default.
"""
import enum

__all__ = ["KernelId", "kernel_id"]


class KernelId(enum.IntEnum):
    """What a compiled kernel computes for a datafit or a penalty.

    The values are those of ``KernelId`` in ``_core.pxd``: the kernels branch on
    them explicitly and refuse any other value.
    """

    #: loss(z, y) = (z - y)^2
    SQUARED = 0
    #: loss(z, y) = log(1 + exp(-y z))
    LOGISTIC = 1
    #: the separable elastic net l1 |w_j| + l2 / 2 w_j^2 (none, L1, L2, elastic net)
    ELASTIC_NET = 2
    #: loss(z, y) = max(0, 1 - y z)^2 (smooth: the primal kernels)
    SQUARED_HINGE = 3
    #: loss(z, y) = max(0, 1 - y z) (non-smooth: dual solvers only; the primal kernels refuse it)
    HINGE = 4


def kernel_id(obj):
    """The :class:`KernelId` that ``obj``'s own class declares.

    A datafit or a penalty runs in the compiled kernels only if its class itself
    declares ``kernel_id``: a subclass that does not (a hinge loss derived from
    ``Logistic``, an ``L1`` with its own ``prox``) would otherwise run the
    parent's maths without a word.

    Parameters
    ----------
    obj : datafit or penalty instance

    Returns
    -------
    KernelId

    Raises
    ------
    TypeError
        If ``type(obj)`` does not declare a ``KernelId`` of its own.
    """
    cls = type(obj)
    declared = cls.__dict__.get("kernel_id")
    if not isinstance(declared, KernelId):
        raise TypeError(
            f"{cls.__qualname__} has no compiled kernel: the solvers run only classes that "
            f"declare their own kernel_id (sparsedp._kernels.KernelId); a subclass does not "
            f"inherit it. Declare kernel_id in {cls.__qualname__} only if it computes "
            f"exactly that kernel's maths.")
    return declared
