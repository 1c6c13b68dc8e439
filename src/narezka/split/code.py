"""``code``: source code split by function and class, never mid-statement when avoidable.

A file's structure becomes an :class:`Outline`: candidate cuts at the line starts of its
items (definitions with the decorators and comments directly above them, statements, clause
headers such as ``else:``), each with a depth, and the section path of every part
(``("Repo", "Repo.save")`` for a method). The shared packer takes the shallowest cuts inside a
range first, so a definition that fits is never cut, a class that does not fit is cut between
its methods, and a long function between its statements, then inside its compound
statements; only a single statement too long alone falls back to lines and then words.

Python is read with the ``ast`` module. JavaScript, TypeScript, Go, Rust and Java use
tree-sitter grammars (the ``code`` extra, see :mod:`narezka.split.code_treesitter`). Other
languages, and files that do not parse, are packed like ``recursive``: blank lines, lines,
words.
"""

from __future__ import annotations

import ast
import gc
import warnings
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from pathlib import PurePosixPath
from typing import ClassVar

from narezka.errors import MissingDependencyError, NarezkaWarning
from narezka.split.base import SplitParams, context_for
from narezka.split.context import Section
from narezka.split.packer import Refiner
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document

_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}
_FALLBACK_ONLY = (
    ".c .h .cc .cpp .cxx .hpp .hh .cs .rb .php .kt .kts .swift .scala .sh .bash .zsh .sql "
    ".lua .pl .pm .dart .ex .exs .erl .hs .clj .groovy .ps1 .vue .svelte .m .r"
).split()
CODE_EXTENSIONS: frozenset[str] = frozenset(_LANGUAGES) | frozenset(_FALLBACK_ONLY)
"""File suffixes (lower case, with the dot) that the ``code`` strategy reads."""


def language_of(source: str) -> str | None:
    """The language whose structure ``code`` understands, by the file's extension.

    One of ``python``, ``javascript``, ``typescript``, ``tsx``, ``go``, ``rust``, ``java``;
    None for every other file, including the fallback-only languages in CODE_EXTENSIONS.
    """
    return _LANGUAGES.get(PurePosixPath(source).suffix.lower())


class MissingGrammarWarning(NarezkaWarning):
    """A tree-sitter grammar is not installed, so a file was split by lines instead."""


class LineIndex:
    """Line starts of a text, and parser positions (row, UTF-8 byte column) as offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.rows = text.split("\n")
        self.starts = [0, *accumulate(len(row) + 1 for row in self.rows[:-1])]
        self.ascii = text.isascii()

    def __len__(self) -> int:
        return len(self.rows)

    def line_start(self, row: int) -> int:
        """Offset of the 0-based row's first character (clamped to the text)."""
        if 0 <= row < len(self.starts):
            return self.starts[row]
        return 0 if row < 0 else self.starts[-1]

    def line(self, row: int) -> str:
        return self.rows[row] if 0 <= row < len(self.rows) else ""

    def offset(self, row: int, column: int) -> int:
        """Character offset of a byte column: parsers count UTF-8 bytes, Python strings
        count characters, and a Cyrillic comment would otherwise shift every later cut."""
        start = self.line_start(row)
        if self.ascii:
            return min(start + column, len(self.text))
        line = self.line(row)
        if line.isascii():
            return min(start + column, start + len(line))
        head = line.encode("utf-8", "surrogatepass")[:column]
        return start + len(head.decode("utf-8", "ignore"))

    def starts_line(self, row: int, column: int) -> bool:
        """Whether only whitespace precedes the position on its line."""
        start = self.line_start(row)
        return not self.text[start : self.offset(row, column)].strip()


@dataclass(frozen=True, slots=True)
class Item:
    """One thing inside a block, as a Python or tree-sitter walker found it."""

    row: int
    """0-based first row, with the comments, decorators or attributes attached above it."""
    starts_line: bool
    """False when something else precedes it on its row (``a = 1; b = 2``): no cut there."""
    path: tuple[str, ...] | None = None
    """A definition's section path, its qualified name last (``("Repo", "Repo.save")``);
    None for statements and comments, which belong to the enclosing definition."""


class Outline:
    """Where a source file may be cut, and the definition each part belongs to."""

    def __init__(self, lines: LineIndex) -> None:
        self.lines = lines
        self._cuts: dict[int, int] = {}
        self._sections: list[tuple[int, tuple[str, ...]]] = []
        self._glued: set[int] = set()

    def add_block(
        self, items: list[Item], level: int, path: tuple[str, ...], *, glued: bool = False
    ) -> None:
        """Record one block's items (a body, a clause), ``level`` blocks deep.

        Each definition, and each run of other items, starts a group: cuts between groups
        come before cuts inside a run, so a run of constants or class attributes stays
        together when it fits, the way a definition does. In a ``glued`` block (one under a
        header line) the first run continues the header: a lone ``if x:`` or ``class A:``
        line must not become a group, and so a chunk, of its own.
        """
        previous_named = not glued
        for k, item in enumerate(items):
            start = self.lines.line_start(item.row)
            group = item.path is not None or previous_named
            if item.starts_line:
                self.cut(start, 2 * level + (0 if group else 1))
                if glued and k == 0:
                    self._glued.add(start)
            self._sections.append((start, path if item.path is None else item.path))
            previous_named = item.path is not None

    def cut(self, offset: int, depth: int) -> None:
        if 0 < offset < len(self.lines.text):
            self._cuts[offset] = min(depth, self._cuts.get(offset, depth))

    def refiners(self) -> list[Refiner]:
        """One refiner per depth, each offering the shallowest cuts inside its range."""
        offsets = sorted(self._cuts)
        depths = [self._cuts[o] for o in offsets]

        def refine(start: int, end: int) -> list[int]:
            lo = bisect_right(offsets, start)
            hi = bisect_left(offsets, end)
            if lo >= hi:
                return []
            shallowest = min(depths[lo:hi])
            return [offsets[k] for k in range(lo, hi) if depths[k] == shallowest]

        # The packer moves one refiner further for each nested piece, and a piece between
        # cuts of one depth holds only deeper cuts, so one refiner per depth suffices.
        return [refine] * (max(depths, default=-1) + 1)

    def glue_headers(
        self, ranges: list[tuple[int, int]], fits: Callable[[int, int], bool]
    ) -> list[tuple[int, int]]:
        """Join a lone header line (``def f(...):``, ``class A:``) to the first piece of its
        body when the body's first item was too long to join it whole."""
        out: list[tuple[int, int]] = []
        glued = sorted(self._glued)
        for start, end in ranges:
            if out:
                prev_start, prev_end = out[-1]
                k = bisect_left(glued, prev_end)
                if k < len(glued) and glued[k] <= start and fits(prev_start, end):
                    out[-1] = (prev_start, end)
                    continue
            out.append((start, end))
        return out

    def sections(self) -> list[Section]:
        """Sections sorted by start, one per change of path (what DocumentContext wants)."""
        out: list[Section] = []
        # Equal starts: the later entry is the deeper one (a parent records before children).
        ordered = sorted(enumerate(self._sections), key=lambda e: (e[1][0], e[0]))
        for _, (start, path) in ordered:
            if out and out[-1].start == start:
                out.pop()
            if out and out[-1].path == path:
                continue
            if not out and not path:
                continue
            out.append(Section(start, path, path))
        return out


def comment_row(lines: LineIndex, row: int) -> bool:
    return lines.line(row).lstrip().startswith("#")


def blank_row(lines: LineIndex, row: int) -> bool:
    return not lines.line(row).strip()


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# ---- Python -------------------------------------------------------------------------------

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
Clause = tuple[int | None, list[ast.stmt]]
"""A header row (0-based; None: the statement's own first line) and the statements under it."""


def python_outline(text: str) -> Outline | None:
    """The outline of Python source, or None when it does not parse."""
    # The collector would traverse the whole syntax tree again and again while ast builds
    # it and while the walk allocates (half the time on a large file); the tree holds no
    # cycles, and it is freed as soon as the walk ends.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _walk_python(text)
    finally:
        if collecting:
            gc.enable()


def _walk_python(text: str) -> Outline | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = LineIndex(text)
    outline = Outline(lines)
    try:
        _PythonWalker(lines, outline).block(tree.body, -1, 0, (), module=True)
    except RecursionError:
        return None
    return outline


class _PythonWalker:
    def __init__(self, lines: LineIndex, outline: Outline) -> None:
        self.lines = lines
        self.outline = outline

    def block(
        self,
        body: list[ast.stmt],
        header_row: int,
        level: int,
        path: tuple[str, ...],
        *,
        module: bool = False,
        glued: bool = False,
    ) -> None:
        """Items of one statement list; ``header_row`` is the last row before it that is
        not part of it (the ``def`` or ``else:`` line; -1 for a module)."""
        lines = self.lines
        items: list[Item] = []
        prev_end = header_row
        for stmt in body:
            first = min([d.lineno for d in getattr(stmt, "decorator_list", ())] + [stmt.lineno])
            first -= 1
            row = first
            column = indent(lines.line(first))
            # Comments directly above (no blank line) and indented alike describe the item;
            # deeper ones trail the block before it.
            while (
                row - 1 > prev_end
                and comment_row(lines, row - 1)
                and indent(lines.line(row - 1)) == column
            ):
                row -= 1
            items.extend(self._gap_comments(prev_end, row, column))
            if first == stmt.lineno - 1:
                starts = lines.starts_line(first, stmt.col_offset)
            else:
                starts = lines.line(first).lstrip().startswith("@")
            items.append(Item(row, starts, self._path(stmt, path)))
            prev_end = (stmt.end_lineno or stmt.lineno) - 1
        if module:
            items.extend(self._gap_comments(prev_end, len(lines), 0))
        self.outline.add_block(items, level, path, glued=glued)
        for stmt in body:
            self.compound(stmt, level + 1, self._path(stmt, path) or path)

    def _gap_comments(self, prev_end: int, row: int, limit: int) -> list[Item]:
        """Standalone comment blocks between two items, at most as indented as the next:
        deeper ones trail the previous item. Only rows after the gap's last code row count,
        since the gap before a body's first statement also holds a multi-line signature."""
        lines = self.lines
        start = prev_end + 1
        for r in range(row - 1, prev_end, -1):
            if not blank_row(lines, r) and not comment_row(lines, r):
                start = r + 1
                break
        items = []
        previous = False
        for r in range(start, row):
            line = lines.line(r)
            standalone = line.lstrip().startswith("#") and indent(line) <= limit
            if standalone and not previous:
                items.append(Item(r, True))
            previous = standalone
        return items

    @staticmethod
    def _path(stmt: ast.stmt, path: tuple[str, ...]) -> tuple[str, ...] | None:
        if isinstance(stmt, _DEFS):
            return (*path, f"{path[-1]}.{stmt.name}" if path else stmt.name)
        return None

    def compound(self, stmt: ast.stmt, level: int, path: tuple[str, ...]) -> None:
        clauses = self._clauses(stmt)
        prev_end = stmt.lineno - 1
        for k, (header, body) in enumerate(clauses):
            if not body:
                continue
            if header is None:
                header = self._header_row(prev_end, body[0].lineno - 1) if k else prev_end
            if k or isinstance(stmt, ast.Match):
                self.outline.add_block([Item(header, True)], level, path)
            self.block(body, header, level, path, glued=True)
            prev_end = (body[-1].end_lineno or body[-1].lineno) - 1

    def _header_row(self, prev_end: int, first_row: int) -> int:
        """The ``else:`` / ``finally:`` line: the first code row after the previous clause."""
        for r in range(prev_end + 1, first_row + 1):
            if not blank_row(self.lines, r) and not comment_row(self.lines, r):
                return r
        return first_row

    def _clauses(self, stmt: ast.stmt) -> list[Clause]:
        if isinstance(stmt, (*_DEFS, ast.With, ast.AsyncWith)):
            return [(None, stmt.body)]
        if isinstance(stmt, ast.If):
            clauses: list[Clause] = [(None, stmt.body)]
            node = stmt
            # An ``elif`` is an If nested in ``orelse``: flatten the chain into one statement.
            while (
                len(node.orelse) == 1
                and isinstance(node.orelse[0], ast.If)
                and self.lines.line(node.orelse[0].lineno - 1).lstrip().startswith("elif")
            ):
                node = node.orelse[0]
                clauses.append((node.lineno - 1, node.body))
            clauses.append((None, node.orelse))
            return clauses
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            return [(None, stmt.body), (None, stmt.orelse)]
        if isinstance(stmt, (ast.Try, ast.TryStar)):
            handlers: list[Clause] = [(h.lineno - 1, h.body) for h in stmt.handlers]
            return [(None, stmt.body), *handlers, (None, stmt.orelse), (None, stmt.finalbody)]
        if isinstance(stmt, ast.Match):
            return [(case.pattern.lineno - 1, case.body) for case in stmt.cases]
        return []


# ---- the strategy -------------------------------------------------------------------------


def outline_for(text: str, source: str) -> Outline | None:
    """The outline of a source file by its extension; None means "pack it by lines".

    Raises MissingDependencyError when the file's tree-sitter grammar is not installed.
    """
    suffix = PurePosixPath(source).suffix
    language = language_of(source)
    if language == "python" or (language is None and not suffix):
        # A text without a file name ("<text>") is tried as Python.
        return python_outline(text)
    if language is None:
        return None
    # Imported here: the tree-sitter module builds on this one's Outline and LineIndex.
    from narezka.split.code_treesitter import treesitter_outline

    return treesitter_outline(text, language)


class CodeStrategy:
    """Source code by definitions: functions, classes, methods, impl blocks, interfaces."""

    name: ClassVar[str] = "code"
    breadcrumbs: ClassVar[bool] = True
    respects_atoms: ClassVar[bool] = True
    markdown: ClassVar[bool] = False
    include: ClassVar[tuple[str, ...]] = tuple(f"**/*{ext}" for ext in sorted(CODE_EXTENSIONS))

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        try:
            outline = outline_for(doc.text, doc.source)
        except MissingDependencyError as exc:
            # One message per language, not per file: a run may read hundreds of them.
            warnings.warn(
                f"{exc}; files in {language_of(doc.source)} are split by lines instead",
                MissingGrammarWarning,
                stacklevel=2,
            )
            outline = None
        if outline is None:
            ctx = context_for(self, doc, params, counter, sections=[])
            refiners = [ctx.separator_cuts("\n\n"), ctx.line_cuts, ctx.word_cuts]
        else:
            ctx = context_for(self, doc, params, counter, sections=outline.sections())
            refiners = [*outline.refiners(), ctx.line_cuts, ctx.word_cuts]
        packer = ctx.packer(refiners)
        ranges = packer.pack(doc.body_start, len(doc.text))
        if outline is not None:
            ranges = outline.glue_headers(ranges, packer.fits)
        return ctx.make_chunks(ranges)
