"""The ``code`` strategy: definitions stay whole, sections are qualified names, spans exact."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import narezka
from narezka.cli import cli
from narezka.errors import MissingDependencyError
from narezka.parse.sanitize import sanitize
from narezka.split import get_strategy
from narezka.split.code import CODE_EXTENSIONS, LineIndex, MissingGrammarWarning, language_of
from narezka.split.code_treesitter import GRAMMARS, parser_for
from narezka.tokens import get_counter
from narezka.types import Chunk

from conftest import TEST_DATA
from contract import assert_contract

CODE = TEST_DATA / "code"
CHARS = get_counter("chars")
SHARE = 0.2  # a breadcrumb never takes more of the budget than this


def chunks_of(text: str, source: str = "mod.py", size: int = 400, **params: object) -> list[Chunk]:
    return narezka.chunk_text(text, "code", source=source, size=size, **params)


def boundaries(chunks: list[Chunk]) -> set[int]:
    return {b for c in chunks for b in (c.start, c.end)}


# ---- generated Python modules -------------------------------------------------------------

WORDS = ["склад", "остаток", "заказ", "price", "total", "резерв", "item", "доставка", "sku"]


def phrase(draw: st.DrawFn, most: int, least: int = 0) -> str:
    # Two draws per phrase, not one per word: generation, not chunking, bounds these tests.
    count, seed = draw(st.integers(least, most)), draw(st.integers(0, 8))
    return " ".join(WORDS[(seed + k * k) % len(WORDS)] for k in range(count))


@st.composite
def comment(draw: st.DrawFn, pad: str) -> str:
    return f"{pad}# {phrase(draw, 12, 1)}\n"


@st.composite
def simple(draw: st.DrawFn, pad: str) -> str:
    name = draw(st.sampled_from(["x", "итог", "total", "qty", "items"]))
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return f'{pad}{name} = "{phrase(draw, 30)}"\n'
    if kind == 1:
        inner = "".join(f'{pad}    "{w}",\n' for w in phrase(draw, 6, 1).split())
        return f"{pad}{name} = call(\n{inner}{pad})\n"
    if kind == 2:
        return f"{pad}return {name}\n"
    return f"{pad}{name} += {draw(st.integers(0, 10**6))}\n"


@st.composite
def statement(draw: st.DrawFn, pad: str, depth: int) -> str:
    above = draw(comment(pad)) if draw(st.integers(0, 4)) == 0 else ""
    kind = draw(st.integers(0, 9)) if depth < 3 else 0
    if kind <= 5:
        return above + draw(simple(pad))
    inner = pad + "    "

    def body() -> str:
        count = draw(st.integers(1, 4))
        return "".join(draw(statement(inner, depth + 1)) for _ in range(count))

    if kind == 6:
        text = f"{pad}if x > {draw(st.integers(0, 9))}:\n{body()}"
        if draw(st.booleans()):
            text += f"{pad}elif x:\n{body()}"
        if draw(st.booleans()):
            text += f"{pad}else:\n{body()}"
        return above + text
    if kind == 7:
        return above + f"{pad}for x in items:\n{body()}"
    if kind == 8:
        text = f"{pad}try:\n{body()}{pad}except ValueError as exc:\n{body()}"
        return above + text + (f"{pad}finally:\n{body()}" if draw(st.booleans()) else "")
    return above + draw(function(pad, depth + 1))


@st.composite
def decorators(draw: st.DrawFn, pad: str) -> str:
    names = ["staticmethod", "retry(times=3)", "cache", 'route("/склад", methods=["GET"])']
    chosen = draw(st.lists(st.sampled_from(names), max_size=3))
    return "".join(f"{pad}@{name}\n" for name in chosen)


@st.composite
def function(draw: st.DrawFn, pad: str, depth: int = 0) -> str:
    name = draw(st.sampled_from(["save", "load", "итого", "reserve", "total", "move"]))
    head = draw(comment(pad)) if draw(st.booleans()) else ""
    head += draw(decorators(pad))
    head += f"{pad}{draw(st.sampled_from(['def', 'async def']))} {name}(self, x):\n"
    inner = pad + "    "
    if draw(st.booleans()):
        head += f'{inner}"""{phrase(draw, 15)}."""\n'
    count = draw(st.integers(1, 6))
    return head + "".join(draw(statement(inner, depth + 1)) for _ in range(count))


@st.composite
def klass(draw: st.DrawFn, pad: str, depth: int = 0) -> str:
    name = draw(st.sampled_from(["Repo", "Склад", "Cart", "Order"]))
    head = draw(comment(pad)) if draw(st.booleans()) else ""
    head += draw(decorators(pad)) + f"{pad}class {name}(Base):\n"
    inner = pad + "    "
    parts = [f'{inner}"""Класс {name}."""\n'] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0 if parts else 1, 4))):
        kind = draw(st.integers(0, 5))
        if kind == 0:
            parts.append(draw(simple(inner)))
        elif kind == 1 and depth < 2:
            parts.append(draw(klass(inner, depth + 1)))
        else:
            parts.append(draw(function(inner, depth + 1)))
    return head + "\n".join(parts)


@st.composite
def python_module(draw: st.DrawFn) -> str:
    prelude = []
    if draw(st.booleans()):
        prelude.append(f'"""Модуль: {phrase(draw, 20)}."""\n')
    prelude += [f"import {m}\n" for m in draw(st.lists(st.sampled_from(["os", "json", "re"])))]
    prelude += [draw(simple("")) for _ in range(draw(st.integers(0, 3)))]
    items = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 5))
        if kind == 0:
            items.append(draw(simple("")))
        elif kind == 1:
            items.append(draw(comment("")))
        elif kind == 2:
            items.append(draw(klass("")))
        else:
            items.append(draw(function("")))
    gap = "\n" * draw(st.integers(1, 3))
    return gap.join(["".join(prelude), *items])


# ---- an independent reading of the module, for the properties ----------------------------


class Reference:
    """Spans of a module's definitions and statements, with the comments above them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)
        # (start, end, qualified path, is a definition) for every statement
        self.nodes: list[tuple[int, int, tuple[str, ...], bool]] = []
        self._walk(ast.parse(text).body, ())

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode()[:col].decode())

    def _walk(self, body: list[ast.stmt], path: tuple[str, ...]) -> None:
        for node in body:
            first = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
            row = first - 1
            pad = len(self.lines[row]) - len(self.lines[row].lstrip())
            while row > 0 and self.lines[row - 1].strip().startswith("#"):
                above = self.lines[row - 1]
                if len(above) - len(above.lstrip()) != pad:
                    break
                row -= 1
            start = self.starts[row] + pad
            end = self.offset(node.end_lineno or node.lineno, node.end_col_offset or 0)
            is_def = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            name = ".".join([*path[-1:], getattr(node, "name", "")])
            own = (*path, name) if is_def else path
            # An ``elif`` (an If inside ``orelse``) is a clause of its ``if``, not a statement.
            if not self.lines[first - 1].lstrip().startswith("elif"):
                self.nodes.append((start, end, own, is_def))
            for field in ("body", "orelse", "finalbody"):
                self._walk(getattr(node, field, []), own)
            for handler in getattr(node, "handlers", []):
                self._walk(handler.body, own)

    def expected_section(self, start: int, end: int) -> tuple[str, ...]:
        """The path every visible character of the span is in, by name: the longest path
        the innermost definitions of its characters share (the innermost definition holding
        the whole span; a span over two definitions of one qualified name, a redefinition,
        is in that name, unless a statement of the enclosing scope lies between them)."""
        shared: tuple[str, ...] | None = None
        for pos in range(start, end):
            if self.text[pos].isspace():
                continue
            path = self.innermost(pos)
            if shared is None:
                shared = path
                continue
            n = 0
            while n < min(len(shared), len(path)) and shared[n] == path[n]:
                n += 1
            shared = shared[:n]
            if not shared:
                break
        return shared or ()

    def innermost(self, pos: int) -> tuple[str, ...]:
        inside = [path for s, e, path, is_def in self.nodes if is_def and s <= pos < e]
        return max(inside, key=len, default=())


# ---- properties on generated modules ------------------------------------------------------


@settings(max_examples=40)
@given(text=python_module(), size=st.sampled_from([40, 90, 250, 1000]))
def test_contract_in_chars_on_generated_modules(text: str, size: int) -> None:
    assert_contract(text, chunks_of(text, size=size), size, CHARS, atoms=False)


@settings(max_examples=30)
@given(text=python_module(), size=st.sampled_from([24, 64, 300]))
def test_contract_in_cl100k_tokens_on_generated_modules(text: str, size: int) -> None:
    chunks = chunks_of(text, size=size, unit="tokens")
    assert_contract(text, chunks, size, get_counter("tokens", "cl100k_base"), atoms=False)


FRAGMENTS = [
    *("def f(x):", "    return 1", "class A:", "  # коммент", "", "@dec", "if x:", "else:"),
    *("    pass", "\t", "  ", "}", "fn main() {", "func (s *S) M() {", "x = 'а' * 3"),
]


@given(
    text=st.one_of(st.text(max_size=600), st.lists(st.sampled_from(FRAGMENTS)).map("\n".join)),
    size=st.sampled_from([16, 50, 300]),
    source=st.sampled_from(["x.py", "<text>", "x.js", "x.tsx", "x.go", "x.rs", "x.java", "x.c"]),
)
def test_contract_on_arbitrary_text(text: str, size: int, source: str) -> None:
    assert_contract(text, chunks_of(text, source, size), size, CHARS, atoms=False)


@settings(max_examples=40)
@given(text=python_module(), size=st.sampled_from([120, 250, 600]))
def test_what_fits_is_never_cut(text: str, size: int) -> None:
    """A definition or statement that fits its chunk with a breadcrumb is never cut, and the
    decorators and comments directly above it stay in the same chunk."""
    chunks = chunks_of(text, size=size)
    cuts = boundaries(chunks)
    for start, end, path, _ in Reference(text).nodes:
        crumb = len(" > ".join(path)) + 2 if path else 0
        if end - start + min(crumb, int(size * SHARE)) <= size:
            inside = sorted(b for b in cuts if start < b < end)
            assert not inside, f"{text[start:end]!r} cut at {inside}"


@settings(max_examples=40)
@given(text=python_module(), size=st.sampled_from([60, 150, 400, 2000]))
def test_sections_are_the_innermost_definition(text: str, size: int) -> None:
    reference = Reference(text)
    for chunk in chunks_of(text, size=size):
        expected = reference.expected_section(chunk.start, chunk.end)
        assert chunk.section == expected, chunk.text
        assert chunk.anchor == (expected[-1] if expected else "")


# ---- the Python sample --------------------------------------------------------------------

INVENTORY = (CODE / "inventory.py").read_text(encoding="utf-8")


def test_qualified_names_anchor_and_breadcrumb() -> None:
    chunks = chunks_of(INVENTORY, "lib/inventory.py", size=160)
    render = next(c for c in chunks if "def render" in c.text)
    path = ("Warehouse", "Warehouse.Cell", "Warehouse.Cell.Label", "Warehouse.Cell.Label.render")
    assert render.section == path
    assert render.anchor == "Warehouse.Cell.Label.render"
    assert render.url == "lib/inventory.py#Warehouse.Cell.Label.render"
    save = next(c for c in chunks if "def save" in c.text)
    assert save.section == ("Repo", "Repo.save")
    assert save.embed_text.startswith("Repo > Repo.save\n\n")
    assert next(c for c in chunks if "if __name__" in c.text).section == ()


def test_breadcrumbs_can_be_turned_off() -> None:
    chunks = chunks_of(INVENTORY, size=300, breadcrumbs=False)
    assert all(c.embed_text == sanitize(c.text) for c in chunks)
    assert any(c.section for c in chunks)


@pytest.mark.parametrize("size", [150, 250, 400, 800, 1500])
def test_decorators_and_comments_above_stay_with_their_def(size: int) -> None:
    chunks = chunks_of(INVENTORY, size=size)
    for marker, above in [
        ("def normalize_sku", "@staticmethod"),
        ("def normalize_sku", "@lru_cache(maxsize=128)"),
        ("def save", "@retry(times=5, exceptions=(OSError, TimeoutError))"),
        ("class Item:", "@dataclass(frozen=True)"),
        ("def reserve", "# Резерв снимается автоматически"),
        ("def format_price", "def format_price"),
    ]:
        at = INVENTORY.index(marker)
        holder = next(c for c in chunks if c.start <= at < c.end)
        assert above in holder.text, (size, marker, holder.text)


def prelude_end(text: str) -> int:
    tree = ast.parse(text)
    first_def = next(
        n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    )
    last = [n for n in tree.body if n.lineno < first_def.lineno][-1]
    end = Reference(text).offset(last.end_lineno or last.lineno, last.end_col_offset or 0)
    return text.index("\n", end)  # with the comment that ends its line


def test_prelude_is_its_own_chunk() -> None:
    end = prelude_end(INVENTORY)
    # The prelude fits, the prelude with the class after it does not: it is one chunk.
    first = chunks_of(INVENTORY, size=end + 20)[0]
    assert (first.start, first.end) == (0, end)
    assert first.section == ()
    # Too long as a whole, it is cut only between its statements.
    reference = Reference(INVENTORY)
    starts = {reference.offset(n.lineno, n.col_offset) for n in ast.parse(INVENTORY).body}
    starts |= {INVENTORY.index("# Склад по умолчанию")}
    for chunk in chunks_of(INVENTORY, size=200):
        if chunk.start < end:
            assert chunk.start in starts | {0}, chunk.text


CLAUSE = re.compile(r"\s*(else|elif|except|finally|case)\b")


@pytest.mark.parametrize("size", [200, 350, 600, 900])
def test_a_long_function_is_cut_only_at_statement_starts(size: int) -> None:
    tree = ast.parse(INVENTORY)
    func = next(n for n in tree.body if getattr(n, "name", "") == "transfer_report")
    reference = Reference(INVENTORY)
    start = reference.offset(func.lineno, func.col_offset)
    end = reference.offset(func.end_lineno or 0, func.end_col_offset or 0)
    statement_starts = {
        reference.offset(n.lineno, n.col_offset)
        for n in ast.walk(func)
        if isinstance(n, (ast.stmt, ast.ExceptHandler))
    }
    chunks = chunks_of(INVENTORY, size=size)
    crumb = len("transfer_report\n\n")
    too_long = []  # simple statements that cannot fit a chunk alone: cut by lines
    for n in ast.walk(func):
        if isinstance(n, ast.stmt) and not hasattr(n, "body"):
            s = reference.offset(n.lineno, n.col_offset)
            e = reference.offset(n.end_lineno or 0, n.end_col_offset or 0)
            if e - s + crumb > size:
                too_long.append((s, e))
            else:
                # A statement that fits is never cut.
                assert not [b for b in boundaries(chunks) if s < b < e]
    pieces = [c for c in chunks if start <= c.start < end]
    assert len(pieces) > 1
    for chunk in pieces[1:]:
        line = INVENTORY[INVENTORY.rfind("\n", 0, chunk.start) + 1 :]
        line = line[: line.index("\n")]
        assert (
            chunk.start in statement_starts
            or line.lstrip().startswith("#")
            or CLAUSE.match(line)
            or any(s < chunk.start < e for s, e in too_long)
        ), chunk.text
    assert bool(too_long) == (size == 200)  # the docstring, at the smallest size


def test_text_without_a_file_name_is_read_as_python() -> None:
    chunks = narezka.chunk_text(INVENTORY, "code", size=300)
    assert any(c.section == ("Repo", "Repo.save") for c in chunks)


def test_a_statement_too_long_alone_falls_back_to_lines_then_words() -> None:
    words = " ".join(["склад"] * 120)
    text = f'def f():\n    x = (\n        "{words}"\n        "{words}"\n    )\n    return x\n'
    chunks = chunks_of(text, size=200)
    assert_contract(text, chunks, 200, CHARS, atoms=False)
    assert len(chunks) > 6
    assert all(c.section == ("f",) for c in chunks)


# ---- tree-sitter languages ----------------------------------------------------------------

SAMPLES = {
    "cart.js": [
        ("total(promo = null)", ("Cart", "Cart.total")),
        ("constructor(sku", ("CartItem", "CartItem.constructor")),
        ("async function checkPromo", ("checkPromo",)),
    ],
    "cart.ts": [
        ("total(promo?: Promo", ("Cart", "Cart.total")),
        ("export function toOrder", ("Checkout", "Checkout.toOrder")),
        ("export interface Promo", ("Promo",)),
    ],
    "store.go": [
        ("func (s *Store) Add", ("Store", "Store.Add")),
        ("func (s *Store) Take", ("Store", "Store.Take")),
        ("func New()", ("New",)),
    ],
    "lib.rs": [
        ("pub fn total(&self)", ("Cart", "Cart.total")),
        ('write!(f, "Итого', ("Cart", "Cart.fmt")),
        ("use super::*", ("tests",)),
    ],
    "Order.java": [
        ("public BigDecimal total()", ("Order", "Order.total")),
        ("public BigDecimal amount()", ("Order", "Order.Line", "Order.Line.amount")),
        ("public Order(String id)", ("Order", "Order.Order")),
    ],
}
DEFINITION = {
    "cart.js": "class_declaration method_definition function_declaration".split(),
    "cart.ts": "class_declaration method_definition function_declaration interface_declaration "
    "enum_declaration internal_module".split(),
    "store.go": "function_declaration method_declaration type_declaration".split(),
    "lib.rs": "function_item impl_item struct_item enum_item trait_item".split(),
    "Order.java": "class_declaration method_declaration constructor_declaration "
    "record_declaration interface_declaration".split(),
}
LANGUAGE = dict(zip(SAMPLES, ["javascript", "typescript", "go", "rust", "java"], strict=True))


def definition_spans(name: str, text: str) -> list[tuple[int, int]]:
    """Definitions with the comments and attributes directly above them, read straight
    from the syntax tree (byte offsets decoded one by one)."""
    data = text.encode()
    tree = parser_for(LANGUAGE[name]).parse(data)
    spans = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type not in DEFINITION[name]:
            continue
        first = node.parent if node.parent and node.parent.type == "export_statement" else node
        while (
            (above := first.prev_named_sibling) is not None
            and ("comment" in above.type or above.type == "attribute_item")
            and above.end_point.row >= first.start_point.row - 1
        ):
            first = above
        spans.append((len(data[: first.start_byte].decode()), len(data[: node.end_byte].decode())))
    return spans


@pytest.mark.parametrize("name", list(SAMPLES))
@pytest.mark.parametrize("size", [150, 300, 600])
def test_tree_sitter_cuts_fall_between_units(name: str, size: int) -> None:
    text = (CODE / name).read_text(encoding="utf-8")
    chunks = chunks_of(text, name, size)
    assert_contract(text, chunks, size, CHARS, atoms=False)
    cuts = boundaries(chunks)
    room = size - int(size * SHARE)
    for start, end in definition_spans(name, text):
        if end - start <= room:
            assert not [b for b in cuts if start < b < end], text[start:end]
    for chunk in chunks:
        # Every cut is a line start: a statement, a definition or its comment.
        assert not text[text.rfind("\n", 0, chunk.start) + 1 : chunk.start].strip()


@pytest.mark.parametrize("name", list(SAMPLES))
def test_tree_sitter_qualified_names(name: str) -> None:
    text = (CODE / name).read_text(encoding="utf-8")
    chunks = chunks_of(text, name, 150)
    for marker, path in SAMPLES[name]:
        at = text.index(marker)
        holder = next(c for c in chunks if c.start <= at < c.end)
        assert holder.section == path, holder.text
        assert holder.anchor == path[-1]


@pytest.mark.parametrize("name", ["inventory.py", *SAMPLES])
def test_cyrillic_does_not_shift_offsets(name: str) -> None:
    """Parsers count UTF-8 bytes; with every non-ASCII character swapped for one ASCII
    character the spans must not move at all."""
    text = (CODE / name).read_text(encoding="utf-8")
    ascii_text = "".join(ch if ch.isascii() else "x" for ch in text)
    assert ascii_text != text
    for size in (150, 400):
        russian = chunks_of(text, name, size)
        plain = chunks_of(ascii_text, name, size)
        assert [(c.start, c.end, c.section) for c in russian] == [
            (c.start, c.end, c.section) for c in plain
        ]


def test_line_index_maps_byte_columns_to_characters() -> None:
    lines = LineIndex("x\n# Привет, мир\ny = 1  # ещё\n")
    assert lines.offset(1, len("# Привет".encode())) == 2 + len("# Привет")
    assert lines.offset(2, len("y = 1  # ещё".encode())) == len("x\n# Привет, мир\ny = 1  # ещё")
    assert lines.starts_line(2, 0) and not lines.starts_line(2, 4)


# ---- fallbacks ----------------------------------------------------------------------------

BROKEN = "def broken(:\n    return 1\n\n\nclass A:\n    x = 'склад'\n" * 20


@pytest.mark.parametrize("source", ["x.py", "x.c", "Makefile.am", "x.unknown"])
def test_unparsable_or_unknown_falls_back_to_lines(source: str) -> None:
    chunks = chunks_of(BROKEN, source, size=70)
    assert_contract(BROKEN, chunks, 70, CHARS, atoms=False)
    assert all(c.section == () for c in chunks)
    # Blank lines first: no chunk straddles one when its two sides fit apart.
    assert all("\n\n" not in c.text for c in chunks)


@pytest.mark.parametrize("source", ["deep.js", "deep.py"])
def test_nesting_too_deep_to_walk_still_chunks(source: str) -> None:
    depth = 1200 if source.endswith(".js") else 95  # Python allows 100 indentation levels
    opener = "if (x) {" if source.endswith(".js") else "if x:"
    text = "".join("  " * k + opener + "\n" for k in range(depth)) + "  " * depth + "f()\n"
    text += "}\n" * depth if source.endswith(".js") else ""
    assert_contract(text, chunks_of(text, source, 200), 200, CHARS, atoms=False)


@pytest.mark.parametrize("module", ["tree_sitter_go", "tree_sitter"])
def test_missing_grammar_warns_and_falls_back(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (CODE / "store.go").read_text(encoding="utf-8")
    monkeypatch.setitem(sys.modules, module, None)  # the import now raises ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install 'narezka\[code\]'"):
        parser_for("go")
    with pytest.warns(MissingGrammarWarning, match=r"pip install 'narezka\[code\]'"):
        chunks = chunks_of(text, "store.go", 300)
    assert_contract(text, chunks, 300, CHARS, atoms=False)
    assert all(c.section == () for c in chunks)


def test_languages_and_extensions() -> None:
    assert language_of("src/app/Main.JAVA") == "java"
    languages = "python python javascript typescript tsx go rust".split()
    assert [language_of(f"a.{e}") for e in "py pyi mjs ts tsx go rs".split()] == languages
    assert language_of("a.c") is None and language_of("<text>") is None
    assert {".py", ".js", ".go", ".rs", ".java", ".c", ".sql", ".lua"} <= CODE_EXTENSIONS
    strategy = get_strategy("code")
    assert "**/*.py" in strategy.include and "**/*.kt" in strategy.include
    assert not strategy.markdown
    assert set(GRAMMARS) == {"javascript", "typescript", "tsx", "go", "rust", "java"}


# ---- command line and the shared checker --------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [["--size", "400", "--unit", "chars"], ["--size", "128", "--unit", "tokens"]],
    ids=["chars", "tokens"],
)
def test_shared_checker_accepts_code_output(
    options: list[str], tmp_path: Path, check_chunks_tool: Path
) -> None:
    tokenizer = ["--tokenizer", "cl100k_base"] if "tokens" in options else []
    result = CliRunner().invoke(
        cli, ["chunk", str(CODE), "--strategy", "code", "--format", "jsonl", *options, *tokenizer]
    )
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["source"] for r in rows} == {p.name for p in CODE.iterdir()}
    assert any(r["url"] == "store.go#Store.Add" for r in rows)
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(result.stdout, encoding="utf-8")
    check = [sys.executable, str(check_chunks_tool), str(CODE), str(chunks), *options]
    result = subprocess.run([*check, *tokenizer], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("ok:")


def test_a_missing_grammar_lands_in_the_run_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(CODE / "store.go", tmp_path / "store.go")
    monkeypatch.setitem(sys.modules, "tree_sitter_go", None)
    report = narezka.chunk_documents([tmp_path], "code", size=300)
    assert report.chunks and not report.skipped
    assert any(w.startswith("store.go: ") and "narezka[code]" in w for w in report.warnings)
