"""Build the example: ``python setup.py build_ext --inplace`` (needs Cython,
setuptools and a C compiler; sparsedp and numpy installed)."""
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

import sparsedp.random

# numpy.random's C library: the samplers call its bounded-integer and normal draws
npyrandom = os.path.join(os.path.dirname(np.__file__), "random", "lib")

extension = Extension(
    "noisy_sum",
    ["noisy_sum.pyx"],
    include_dirs=[np.get_include()],
    library_dirs=[npyrandom],
    libraries=["npyrandom"] + (["m"] if os.name == "posix" else []),
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
)

setup(
    name="sparsedp-cython-example",
    ext_modules=cythonize([extension], include_path=[sparsedp.random.get_include()]),
)
