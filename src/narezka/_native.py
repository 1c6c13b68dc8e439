"""The one place that chooses between the native core and the pure-Python implementation.

``narezka._core`` (Rust, built by ``pip install .`` where a Rust toolchain and the crate
registry are reachable) implements parts of the hot path; the Python code stays the reference
and the fallback, and differential tests hold their outputs equal. ``NAREZKA_PURE=1`` forces
the fallback (read once, at import: a process never mixes the two).
"""

from __future__ import annotations

from types import ModuleType
from typing import Final


def _load() -> ModuleType | None:
    from narezka import environment

    if environment.current().pure:
        return None
    try:
        import narezka._core as _core
    except ImportError:  # not built here (no toolchain, or a source checkout)
        return None
    return _core


core: Final[ModuleType | None] = _load()
"""The native module, or None when running on pure Python."""


def implementation() -> str:
    """What runs the hot path, as ``narezka --version`` and ``narezka models`` say it."""
    return "native core" if core is not None else "pure Python"
