"""Sphinx configuration for sparsedp."""
import sparsedp

project = "sparsedp"
author = "The sparsedp developers"
copyright = "2026, The sparsedp developers"
version = release = sparsedp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
]
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
autodoc_default_options = {"members": True, "inherited-members": False}
exclude_patterns = ["_build", "generated"]
html_theme = "pydata_sphinx_theme"
html_title = "sparsedp"
html_theme_options = {"navigation_with_keys": False}
nitpicky = False
