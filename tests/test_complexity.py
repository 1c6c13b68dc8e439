"""No function over cyclomatic complexity 20 without a one-line reason beside it.

A hot loop of the scanner or the packer may keep its branches inline (a call per case costs
measurable time there): it says so in a ``# complexity:`` comment on the line above its
``def``. Everything else is cut into named steps. ``STILL_TO_CUT`` is the ratchet of #34:
functions known to be over the bar and not yet cut; it may only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from radon.visitors import ComplexityVisitor, Function

from conftest import REPO

BAR = 20
REASON = "# complexity:"
SRC = REPO / "src" / "narezka"

STILL_TO_CUT: set[str] = set()


def _functions(path: Path) -> list[Function]:
    visitor = ComplexityVisitor.from_code(path.read_text(encoding="utf-8"))
    found = list(visitor.functions)
    for cls in visitor.classes:
        found.extend(cls.methods)
    return found


def over_the_bar() -> dict[str, tuple[Path, int]]:
    """``file:Class.function`` -> (file, line of its def) for each function at ``BAR`` or over."""
    over = {}
    for path in sorted(SRC.rglob("*.py")):
        for f in _functions(path):
            if f.complexity >= BAR:
                name = f"{f.classname}.{f.name}" if f.classname else f.name
                over[f"{path.relative_to(SRC).as_posix()}:{name}"] = (path, f.lineno)
    return over


def _reasoned(path: Path, line: int) -> bool:
    lines = path.read_text(encoding="utf-8").splitlines()
    # The def may follow decorators: the reason sits on the line above the first of them.
    k = line - 2
    while k >= 0 and lines[k].lstrip().startswith("@"):
        k -= 1
    return k >= 0 and lines[k].strip().startswith(REASON)


def test_no_function_over_the_bar_without_a_reason() -> None:
    unexplained = sorted(
        name
        for name, (path, line) in over_the_bar().items()
        if name not in STILL_TO_CUT and not _reasoned(path, line)
    )
    assert unexplained == [], f"complexity >= {BAR}: cut it, or say why above its def"


def test_the_ratchet_only_shrinks() -> None:
    # A function cut below the bar leaves the list, so the list says what is left to do.
    cut = sorted(STILL_TO_CUT - set(over_the_bar()))
    assert cut == [], "below the bar now: remove from STILL_TO_CUT"


@pytest.mark.parametrize("name", ["parse/scanner.py:_Scan.list"])
def test_the_measure_sees_a_known_hot_loop(name: str) -> None:
    # The check can fail: the scanner's list rules are over the bar and carry their reason.
    path, line = over_the_bar()[name]
    assert _reasoned(path, line)


MODULE_LINES = 400
"""The index package's modules stay under this many lines: ``Index`` is a face over rooms
(lifecycle, sync steps, maintenance, querying, publishing), not a god class (#34)."""


def _lines_over(folder: Path, limit: int) -> dict[str, int]:
    counts = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in folder.glob("*.py")}
    return {name: n for name, n in counts.items() if n > limit}


def test_no_index_module_is_a_god_module() -> None:
    assert _lines_over(SRC / "index", MODULE_LINES) == {}


def test_the_line_count_sees_a_long_module(tmp_path: Path) -> None:
    # The check can fail: a module one line past the limit is named.
    (tmp_path / "long.py").write_text("x = 1\n" * (MODULE_LINES + 1), encoding="utf-8")
    (tmp_path / "short.py").write_text("x = 1\n" * MODULE_LINES, encoding="utf-8")
    assert _lines_over(tmp_path, MODULE_LINES) == {"long.py": MODULE_LINES + 1}


FACE_STATEMENTS = 3
"""How many statements a method of ``Index`` may hold: it hands the open index to a room."""


def _fat_methods(source: str, cls: str, limit: int) -> dict[str, int]:
    tree = ast.parse(source)
    face = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    fat = {}
    for node in face.body:
        if isinstance(node, ast.FunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring
            if len(body) > limit:
                fat[node.name] = len(body)
    return fat


def test_index_is_a_thin_face() -> None:
    source = (SRC / "index" / "handle.py").read_text(encoding="utf-8")
    assert _fat_methods(source, "Index", FACE_STATEMENTS) == {}


def test_the_face_check_sees_a_fat_method() -> None:
    source = 'class Index:\n    def sync(self):\n        "Doc."\n' + "        x = 1\n" * 4
    assert _fat_methods(source, "Index", FACE_STATEMENTS) == {"sync": 4}
