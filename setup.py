"""Builds the optional native core (``narezka._core``, Rust through PyO3) beside the package.

Everything else is declared in pyproject.toml. The core is optional: without a Rust toolchain,
or without a crate registry to fetch its dependencies from, ``pip install .`` still succeeds
and narezka runs on its pure-Python implementation (``narezka --version`` says which).
"""

from __future__ import annotations

from setuptools import setup

try:
    from setuptools_rust import Binding, RustExtension
except ImportError:  # a build without setuptools-rust: pure Python
    rust_extensions = []
else:
    rust_extensions = [
        RustExtension(
            "narezka._core",
            path="native/Cargo.toml",
            binding=Binding.PyO3,
            py_limited_api=True,
            optional=True,  # no cargo, no registry: skip it, install the fallback
            # An editable install (the README's test command) would otherwise build cargo's
            # debug profile, whose regex engine ran the secret prefilter 27× slower.
            debug=False,
        )
    ]

setup(rust_extensions=rust_extensions)
