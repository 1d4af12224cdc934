"""The compiled kernels: one Cython module per algorithm and the shared primitives.

* :mod:`._cd_fast`: non-private proximal coordinate descent (the exact reference);
* :mod:`._dp_cd_fast`: DP-CD (noisy randomized coordinate steps);
* :mod:`._dp_gcd_fast`: DP-GCD (the noisy max and the greedy iterations);
* :mod:`._noise`: the floating-point-safe integer noise of every release;
* :mod:`._random`: numpy.random's Cython API (bit generators, batch fills);
* ``_core.pxd``: the shared ``nogil`` maths (datafits on the margin, prox,
  clipped coordinate gradients, subdifferential distance).

Python code selects a kernel's loss through the datafit's declared kernel id
(:func:`sparsedp.datafits.kernel_id`), never through a default.
"""
