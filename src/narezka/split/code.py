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
from pathlib import PurePosixPath
from typing import ClassVar

from narezka.errors import MissingDependencyError, NarezkaWarning
from narezka.split.base import SplitParams, context_for
from narezka.split.code_outline import Item, LineIndex, Outline, blank_row, comment_row, indent
from narezka.split.code_treesitter import treesitter_outline
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
    return treesitter_outline(text, language)


class CodeStrategy:
    """Source code by definitions: functions, classes, methods, impl blocks, interfaces."""

    name: ClassVar[str] = "code"
    breadcrumbs: ClassVar[bool] = True
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
