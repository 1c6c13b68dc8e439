"""A package's public names, each loaded from its module on first use (PEP 562).

A process that needs one stage of narezka (a ``--jobs`` worker chunks; it never stores) then
imports that stage alone, not numpy and the engines behind the package's other names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from typing import Any


def lazy_exports(
    namespace: MutableMapping[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package whose ``namespace`` (its ``globals()``)
    lacks the names of ``homes`` (a module -> the names it defines, space-separated) until
    asked.

    An unknown name raises ``AttributeError``, so ``from package import submodule`` still
    imports the submodule.
    """
    where = {name: module for module, names in homes.items() for name in names.split()}

    def __getattr__(name: str) -> Any:
        home = where.get(name)
        if home is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        namespace[name] = value  # the next lookup is a plain global
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__


def lazy_face(
    namespace: MutableMapping[str, Any], **submodules: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package face whose heavier names load on first
    use: each keyword names a submodule of the package and, space-separated, the names it
    defines (``lazy_face(globals(), html="html_report", report="refusal_table")``).

    Importing the face must not import what those names need (an extra, a store, an LLM
    client); the package keeps a ``TYPE_CHECKING`` import of them for the type checker.
    """
    package = namespace["__name__"]
    return lazy_exports(namespace, {f"{package}.{sub}": names for sub, names in submodules.items()})
