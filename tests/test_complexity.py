"""No function over cyclomatic complexity 20 without a one-line reason beside it.

A hot loop of the scanner or the packer may keep its branches inline (a call per case costs
measurable time there): it says so in a ``# complexity:`` comment on the line above its
``def``. Everything else is cut into named steps. ``STILL_TO_CUT`` is the ratchet of #34:
functions known to be over the bar and not yet cut; it may only shrink.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from radon.visitors import ComplexityVisitor, Function

from conftest import REPO

BAR = 20
REASON = "# complexity:"
SRC = REPO / "src" / "narezka"

STILL_TO_CUT = {
    "api/evaluating.py:evaluate",
    "cli/chunk.py:chunk",
    "convert/html.py:_Renderer.walk",
    "convert/odt.py:_Reader.blocks",
    "convert/pdf/columns.py:_reading_order",
    "convert/pdf/writer.py:_write",
    "convert/slides.py:_write_slide",
    "discover/walk.py:_walk",
    "index/handle.py:Index._fill",
    "index/syncing.py:_survey",
    "index/syncing.py:Syncer.apply",
    "runs/chunking.py:chunk_documents",
    "search/engine.py:SearchEngine.search",
    "split/code_treesitter.py:_Walker._path",
}


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
