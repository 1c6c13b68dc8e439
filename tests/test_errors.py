"""The error tree drawn in ``narezka.errors`` is the tree the code defines: every exception
and warning narezka raises on purpose is drawn under its real parent, and importable from
``narezka.errors``."""

from __future__ import annotations

import ast
import importlib
import pickle
import pkgutil
import re
from pathlib import Path

import pytest

import narezka
import narezka.errors as errors
from narezka.errors import DecodeError, NarezkaError, NarezkaWarning, SourceUnavailableError

ROOTS = (NarezkaError, NarezkaWarning)
SIGNALS = Exception
"""The drawing's third root: signals that cross a module boundary but are caught inside."""
_NAME = re.compile(r"^[\s│]*(?:[├└]──\s*)?([A-Z][A-Za-z]+)(?=\s|$)")


def drawn_tree() -> dict[str, str | None]:
    """Name -> parent name, read from the drawing in the module docstring (a name's parent is
    the nearest name above it that starts further left)."""
    doc = errors.__doc__ or ""
    drawing = doc.split("::", 1)[1]
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in drawing.splitlines():
        found = _NAME.match(line)
        if found is None:
            continue
        column, name = found.start(1), found.group(1)
        while stack and stack[-1][0] >= column:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((column, name))
    return parents


def _import_every_module() -> list[object]:
    modules = []
    for module in pkgutil.walk_packages(narezka.__path__, "narezka."):
        if module.name.endswith("__main__"):  # running it is running the CLI
            continue
        try:
            modules.append(importlib.import_module(module.name))
        except ImportError:  # an optional extra that is not installed defines none of these
            continue
    return modules


def defined_tree() -> dict[str, str | None]:
    """Name -> parent name of every exception class a narezka module defines: the roots'
    subclasses, and the public signals that subclass ``Exception`` directly."""
    parents: dict[str, str | None] = {SIGNALS.__name__: None}
    for module in _import_every_module():
        for name, cls in vars(module).items():
            if (
                isinstance(cls, type)
                and issubclass(cls, BaseException)
                and cls.__module__ == getattr(module, "__name__", "")
                and not issubclass(cls, ROOTS)
                and not name.startswith("_")
            ):
                parents[name] = ", ".join(b.__name__ for b in cls.__bases__)
    todo: list[type] = list(ROOTS)
    for root in ROOTS:
        parents[root.__name__] = None
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if not sub.__module__.startswith("narezka."):
                continue
            ours = [b for b in sub.__bases__ if issubclass(b, ROOTS)]
            parents[sub.__name__] = ours[0].__name__
            todo.append(sub)
    return parents


def test_the_drawing_is_the_tree_the_code_defines() -> None:
    drawn, defined = drawn_tree(), defined_tree()
    assert set(defined) - set(drawn) == set(), "defined but not drawn"
    assert set(drawn) - set(defined) == set(), "drawn but not defined"
    wrong = {name: (drawn[name], defined[name]) for name in drawn if drawn[name] != defined[name]}
    assert wrong == {}, "drawn under another parent (drawn, defined)"


def test_every_drawn_name_is_importable_from_narezka_errors() -> None:
    drawn = set(drawn_tree()) - {SIGNALS.__name__}
    for name in drawn:
        cls = getattr(errors, name)
        assert issubclass(cls, BaseException) and cls.__name__ == name
    assert drawn <= set(dir(errors))


def test_a_public_exception_outside_the_drawing_is_seen() -> None:
    # The completeness check can fail: a public signal class that is not drawn is defined.
    defined = defined_tree()
    assert defined["TransientError"] == "Exception"
    assert "_BadRequest" not in defined and "_Bail" not in defined


def test_the_drawing_reader_sees_a_misplaced_name() -> None:
    # The check above can fail: a drawing that puts a name one level off reads differently.
    drawn = drawn_tree()
    assert drawn["IndexDamagedError"] == "StoreError"
    assert drawn["UnknownStrategyError"] == "ConfigError"
    assert drawn["NarezkaError"] is None


def _exception_classes_in_the_source() -> dict[str, str]:
    """Name -> module of every class the source files define (read from the files, so a module
    whose optional extra is missing counts too) that is an exception or warning."""
    src = Path(narezka.__file__).parent
    found: dict[str, str] = {}
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.bases:
                try:
                    cls = getattr(importlib.import_module(module), node.name, None)
                except ImportError:
                    cls = None
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
                if (isinstance(cls, type) and issubclass(cls, BaseException)) or (
                    cls is None and bases & {"Exception", "Warning", *drawn_tree()}
                ):
                    found[node.name] = module
    return found


def test_every_exception_class_in_the_source_is_drawn_or_named_private() -> None:
    # Read from the source, not from the import graph: a class in a module nobody imports, or
    # whose extra is not installed, is still a class a caller may meet.
    drawn, doc = drawn_tree(), errors.__doc__ or ""
    found = _exception_classes_in_the_source()
    assert len(found) > 40  # the reader sees the tree at all
    public = {n: m for n, m in found.items() if not n.startswith("_")}
    private = {n: m for n, m in found.items() if n.startswith("_")}
    assert {n: m for n, m in public.items() if n not in drawn} == {}, "public, not drawn"
    assert {n: m for n, m in private.items() if f"``{n}``" not in doc} == {}, "private, unnamed"


@pytest.mark.parametrize(
    ("error", "name"),
    [
        (DecodeError("docs/old.txt", "not UTF-8"), "path"),
        (SourceUnavailableError("git+https://example.org/kb.git", "no git"), "source"),
    ],
)
def test_an_error_naming_its_file_or_source_crosses_a_process_boundary(
    error: DecodeError | SourceUnavailableError, name: str
) -> None:
    # A worker process sends these back: each is rebuilt from its name and problem, not from
    # its message (which its constructor would take for the name).
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error)
    assert getattr(back, name) == getattr(error, name) and back.problem == error.problem
