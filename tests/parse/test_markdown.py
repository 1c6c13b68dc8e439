"""Tests for narezka.parse.markdown: headings, atoms, offsets, front matter, invariants."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.parse.markdown import (
    heading_title,
    parse_blocks,
    parse_document,
    slugify,
    split_front_matter,
)
from narezka.types import Block, BlockKind, RawDocument

ATX_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")


def kinds(blocks: list[Block]) -> list[BlockKind]:
    return [b.kind for b in blocks]


def headings(blocks: list[Block] | tuple[Block, ...]) -> list[Block]:
    return [b for b in blocks if b.kind is BlockKind.HEADING]


def assert_whole_lines(text: str, blocks: list[Block] | tuple[Block, ...]) -> None:
    """Each block starts at a line start and ends at a line end (before '\\n' or at EOF)."""
    for b in blocks:
        assert 0 <= b.start <= b.end <= len(text), b
        assert b.start == 0 or text[b.start - 1] == "\n", b
        assert b.end == len(text) or text[b.end] == "\n", b


def assert_sorted_disjoint(blocks: list[Block] | tuple[Block, ...]) -> None:
    for prev, cur in pairwise(blocks):
        assert prev.start <= prev.end <= cur.start <= cur.end, (prev, cur)


# ---- headings ---------------------------------------------------------------------------


@pytest.mark.parametrize("level", range(1, 7))
def test_atx_heading_levels(level: int) -> None:
    text = f"{'#' * level} Раздел {level}\n\nТекст абзаца.\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.HEADING, BlockKind.PARAGRAPH]
    h = blocks[0]
    assert h.level == level
    assert h.title == f"Раздел {level}"
    assert h.anchor == f"раздел-{level}"
    assert (h.start, h.end) == (0, level + len(f" Раздел {level}"))


def test_seven_hashes_is_not_a_heading() -> None:
    blocks = parse_blocks("####### Семь\n")
    assert kinds(blocks) == [BlockKind.PARAGRAPH]


def test_all_six_levels_in_one_document() -> None:
    text = "\n".join(f"{'#' * n} H{n}" for n in range(1, 7)) + "\n"
    hs = headings(parse_blocks(text))
    assert [h.level for h in hs] == [1, 2, 3, 4, 5, 6]
    assert [h.title for h in hs] == [f"H{n}" for n in range(1, 7)]
    assert [text[h.start : h.end] for h in hs] == text.splitlines()


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ("# Заголовок #", "Заголовок"),
        ("## Заголовок ##", "Заголовок"),
        ("### Title ########", "Title"),
        ("## Title ##   ", "Title"),
        ("#   Spaced out   #", "Spaced out"),
    ],
)
def test_trailing_hashes_removed(line: str, title: str) -> None:
    (h,) = parse_blocks(line + "\n")
    assert h.kind is BlockKind.HEADING
    assert h.title == title
    assert h.end == len(line)


def test_hash_inside_title_is_kept() -> None:
    (h,) = parse_blocks("## Язык C# и F#\n")
    assert h.title == "Язык C# и F#"


@pytest.mark.parametrize(
    ("line", "title", "anchor"),
    [
        ("# Возврат товара {#refund}", "Возврат товара", "refund"),
        ("## Setup {#setup-guide}", "Setup", "setup-guide"),
        ("### Доставка {#dostavka} ###", "Доставка", "dostavka"),
        ("#### Оплата   {#pay}   ", "Оплата", "pay"),
        ("## Motivation { #motivation }", "Motivation", "motivation"),
    ],
)
def test_explicit_anchor(line: str, title: str, anchor: str) -> None:
    (h,) = parse_blocks(line + "\n")
    assert h.kind is BlockKind.HEADING
    assert h.title == title
    assert h.anchor == anchor


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Возврат товара", "возврат-товара"),
        ("Hello, World!", "hello-world"),
        ("Ёлка и ЁЖ", "ёлка-и-ёж"),
        ("  Много   пробелов  ", "много-пробелов"),
        ("Шаг 2: настройка (опционально)", "шаг-2-настройка-опционально"),
        ("already-hyphenated", "already-hyphenated"),
    ],
)
def test_slugify(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_slug_anchor_used_without_explicit_anchor() -> None:
    (h,) = parse_blocks("## Возврат товара\n")
    assert (h.title, h.anchor) == ("Возврат товара", "возврат-товара")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Title {#id}", ("Title", "id")),
        ("  Title  ", ("Title", "")),
        ("Title {#a b}", ("Title {#a b}", "")),
        ("{#only}", ("", "only")),
        ("Title {#id} tail", ("Title {#id} tail", "")),
        (
            "Python Types Intro { #python-types-intro }",
            ("Python Types Intro", "python-types-intro"),
        ),
        ("Title {#id .wide}", ("Title", "id")),
        ('Title { #id .wide data-x=1 lang="ru" }', ("Title", "id")),
        ("Title { # }", ("Title { # }", "")),
        ("Title {#id b}", ("Title {#id b}", "")),
    ],
)
def test_heading_title(raw: str, expected: tuple[str, str]) -> None:
    assert heading_title(raw) == expected


def test_setext_headings() -> None:
    text = "Главная\n===\n\nПодраздел\n---\n\nТекст.\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.HEADING, BlockKind.HEADING, BlockKind.PARAGRAPH]
    h1, h2, _ = blocks
    assert (h1.level, h1.title, h1.anchor) == (1, "Главная", "главная")
    assert (h2.level, h2.title, h2.anchor) == (2, "Подраздел", "подраздел")
    # A setext heading spans its text line and its underline.
    assert text[h1.start : h1.end] == "Главная\n==="
    assert text[h2.start : h2.end] == "Подраздел\n---"


def test_setext_heading_with_explicit_anchor() -> None:
    (h,) = parse_blocks("Настройка {#setup}\n=========\n")
    assert (h.level, h.title, h.anchor) == (1, "Настройка", "setup")


def test_thematic_break_after_blank_line_is_a_rule_not_a_heading() -> None:
    blocks = parse_blocks("Текст\n\n---\n")
    assert kinds(blocks) == [BlockKind.PARAGRAPH, BlockKind.RULE]


# ---- things that are not headings ---------------------------------------------------------


@pytest.mark.parametrize("marker", ["```", "~~~", "````", "~~~~~"])
def test_hash_lines_in_fences_are_not_headings(marker: str) -> None:
    text = f"# Real\n\n{marker}bash\n# comment\n## another\n{marker}\n\n## After\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.HEADING, BlockKind.CODE, BlockKind.HEADING]
    assert [h.title for h in headings(blocks)] == ["Real", "After"]
    code = blocks[1]
    assert text[code.start : code.end] == f"{marker}bash\n# comment\n## another\n{marker}"
    assert code.fence == f"{marker}bash"
    assert code.fence_close == marker


def test_hash_lines_in_indented_code_are_not_headings() -> None:
    text = "Абзац.\n\n    # not a heading\n    ## nor this\n\n# Yes\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.PARAGRAPH, BlockKind.CODE, BlockKind.HEADING]
    code = blocks[1]
    assert text[code.start : code.end] == "    # not a heading\n    ## nor this"
    assert code.fence == "" and code.fence_close == ""
    assert headings(blocks)[0].title == "Yes"


def test_hash_lines_in_html_block_are_not_headings() -> None:
    text = "<div>\n# not a heading\n</div>\n\n# Yes\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.HTML, BlockKind.HEADING]
    assert text[blocks[0].start : blocks[0].end] == "<div>\n# not a heading\n</div>"
    assert blocks[1].title == "Yes"


def test_hash_lines_in_html_comment_are_not_headings() -> None:
    text = "Текст\n<!--\n# закомментировано\n## тоже\n-->\n# Да\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.PARAGRAPH, BlockKind.HTML, BlockKind.HEADING]
    html = blocks[1]
    assert text[html.start : html.end] == "<!--\n# закомментировано\n## тоже\n-->"
    assert [h.title for h in headings(blocks)] == ["Да"]


def test_longer_outer_fence_contains_inner_fence() -> None:
    text = "````markdown\n```python\n# inside\n```\n# still inside\n````\n# Outside\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.CODE, BlockKind.HEADING]
    code = blocks[0]
    assert text[code.start : code.end] == (
        "````markdown\n```python\n# inside\n```\n# still inside\n````"
    )
    assert code.fence == "````markdown"
    assert code.fence_close == "````"
    assert blocks[1].title == "Outside"


def test_tilde_fence_not_closed_by_backticks() -> None:
    text = "~~~\n```\n# x\n```\n~~~\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.CODE]
    assert (blocks[0].fence, blocks[0].fence_close) == ("~~~", "~~~")


def test_unterminated_fence_runs_to_end_of_file() -> None:
    text = "# Title\n\n```python\n# comment\n\n## Not a heading\ntext"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.HEADING, BlockKind.CODE]
    code = blocks[1]
    assert code.end == len(text)
    assert code.fence == "```python"
    assert code.fence_close == ""


def test_unterminated_fence_with_trailing_newline() -> None:
    text = "~~~\nline\n# x\n"
    (code,) = parse_blocks(text)
    assert code.kind is BlockKind.CODE
    # An unterminated fence owns the rest of the file, its final newline included, so that
    # no chunk boundary can fall between its last line and the end of the file.
    assert code.end == len(text)
    assert code.fence_close == ""


def test_unterminated_outer_fence_is_not_closed_by_shorter_inner_fence() -> None:
    text = "````\n```\n# x\n```"
    (code,) = parse_blocks(text)
    assert code.kind is BlockKind.CODE
    assert code.end == len(text)
    assert code.fence == "````"
    assert code.fence_close == ""


def test_longer_closing_fence_is_reported() -> None:
    text = "```\ncode\n`````\n"
    (code,) = parse_blocks(text)
    assert (code.fence, code.fence_close) == ("```", "`````")


def test_lenient_fence_with_backticks_in_info_string() -> None:
    text = (
        "# Before\n\n"
        '```smart header="The `x` thing"\n'
        "# looks like a heading\n"
        "let x = 1;\n"
        "```\n\n"
        "# After\n"
    )
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.HEADING, BlockKind.CODE, BlockKind.HEADING]
    code = blocks[1]
    assert text[code.start : code.end] == (
        '```smart header="The `x` thing"\n# looks like a heading\nlet x = 1;\n```'
    )
    # The fence line is reported as written: offsets and text are not altered by masking.
    assert code.fence == '```smart header="The `x` thing"'
    assert code.fence_close == "```"
    assert [h.title for h in headings(blocks)] == ["Before", "After"]


def test_inline_triple_backtick_code_span_is_not_a_fence() -> None:
    text = "```rm -rf /``` is dangerous\n\n# Next\n\nText.\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.PARAGRAPH, BlockKind.HEADING, BlockKind.PARAGRAPH]
    assert headings(blocks)[0].title == "Next"


def test_closed_fence_in_blockquote_has_fence_close() -> None:
    text = "> ```py\n> # x\n> ```\n"
    (code,) = parse_blocks(text)
    assert code.kind is BlockKind.CODE
    assert code.fence_close.endswith("```")


def test_indented_backticks_do_not_close_a_fence() -> None:
    text = "```\ncode\n    ```"
    (code,) = parse_blocks(text)
    assert code.kind is BlockKind.CODE
    assert code.end == len(text)
    assert code.fence_close == ""


# ---- tables, lists, offsets ---------------------------------------------------------------


def test_gfm_table_is_one_block() -> None:
    table = "| Товар | Цена |\n|-------|-----:|\n| Чай | 100 |\n| Кофе | 250 |"
    text = f"Прайс:\n\n{table}\n\nПосле таблицы.\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.PARAGRAPH, BlockKind.TABLE, BlockKind.PARAGRAPH]
    t = blocks[1]
    assert text[t.start : t.end] == table
    assert t.is_atom


def test_list_items() -> None:
    text = "- первый\n- второй\n  - вложенный\n\n1. один\n2. два\n"
    blocks = parse_blocks(text)
    assert kinds(blocks) == [BlockKind.LIST_ITEM] * 5
    assert [text[b.start : b.end] for b in blocks] == [
        "- первый",
        "- второй",
        "  - вложенный",
        "1. один",
        "2. два",
    ]
    assert [b.level for b in blocks] == [1, 1, 2, 1, 1]


def test_paragraph_outside_list_is_not_a_list_item() -> None:
    blocks = parse_blocks("- item\n\nParagraph after.\n")
    assert kinds(blocks) == [BlockKind.LIST_ITEM, BlockKind.PARAGRAPH]
    assert blocks[1].level == 0


MIXED = (
    "# Заголовок {#top}\n"
    "\n"
    "Первый абзац,\nна двух строках.\n"
    "\n"
    "```js\n# not heading\n```\n"
    "\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n"
    "\n"
    "- x\n- y\n"
    "\n"
    "<!-- comment -->\n"
    "\n"
    "    indented code\n"
    "\n"
    "***\n"
    "\n"
    "Sub\n---\n"
    "last line without newline"
)


def test_mixed_document_block_kinds() -> None:
    blocks = parse_blocks(MIXED)
    assert kinds(blocks) == [
        BlockKind.HEADING,
        BlockKind.PARAGRAPH,
        BlockKind.CODE,
        BlockKind.TABLE,
        BlockKind.LIST_ITEM,
        BlockKind.LIST_ITEM,
        BlockKind.HTML,
        BlockKind.CODE,
        BlockKind.RULE,
        BlockKind.HEADING,
        BlockKind.PARAGRAPH,
    ]
    assert blocks[-1].end == len(MIXED)


def test_block_offsets_are_whole_lines_sorted_and_disjoint() -> None:
    blocks = parse_blocks(MIXED)
    assert_whole_lines(MIXED, blocks)
    assert_sorted_disjoint(blocks)
    # No block ends with a newline: the end is the last line's end, without its newline.
    assert all(not MIXED[b.start : b.end].endswith("\n") for b in blocks)


def test_parse_blocks_with_start_offset() -> None:
    prefix = "ignored # text\n# also ignored\n"
    body = "# Real\n\nText.\n"
    text = prefix + body
    blocks = parse_blocks(text, len(prefix))
    assert kinds(blocks) == [BlockKind.HEADING, BlockKind.PARAGRAPH]
    assert blocks[0].start == len(prefix)
    assert text[blocks[0].start : blocks[0].end] == "# Real"
    assert text[blocks[1].start : blocks[1].end] == "Text."


def test_empty_text_has_no_blocks() -> None:
    assert parse_blocks("") == []
    assert parse_blocks("\n\n\n") == []


# ---- front matter -------------------------------------------------------------------------

FRONT = "---\ntitle: X\ntags: [a, b]\narchived: true\nupdated: 2024-05-01\n---\n"


def test_front_matter_parsed() -> None:
    text = FRONT + "# Body\n"
    body_start, meta, problem = split_front_matter(text)
    assert problem == ""
    assert body_start == len(FRONT)
    assert dict(meta) == {
        "title": "X",
        "tags": ["a", "b"],
        "archived": True,
        "updated": "2024-05-01",
    }
    assert isinstance(meta["updated"], str)


def test_parse_document_with_front_matter() -> None:
    text = FRONT + "# Body\n\nText.\n"
    doc, warnings = parse_document(RawDocument(source="docs/a.md", text=text))
    assert warnings == []
    assert doc.body_start == len(FRONT)
    assert doc.meta["title"] == "X"
    assert doc.source == "docs/a.md"
    assert doc.text == text
    assert kinds(list(doc.blocks)) == [BlockKind.HEADING, BlockKind.PARAGRAPH]
    assert all(b.start >= doc.body_start for b in doc.blocks)
    assert doc.blocks[0].start == len(FRONT)


def test_front_matter_closed_by_dots_and_at_eof() -> None:
    body_start, meta, problem = split_front_matter("---\na: 1\n...\nbody")
    assert (body_start, dict(meta), problem) == (len("---\na: 1\n...\n"), {"a": 1}, "")
    text = "---\na: 1\n---"
    body_start, meta, problem = split_front_matter(text)
    assert (body_start, dict(meta), problem) == (len(text), {"a": 1}, "")


def test_empty_front_matter() -> None:
    body_start, meta, problem = split_front_matter("---\n---\nbody\n")
    assert (body_start, dict(meta), problem) == (8, {}, "")


def test_invalid_yaml_front_matter_is_excluded_and_warned() -> None:
    fm = "---\ntitle: [unclosed\n# Heading in broken yaml\n---\n"
    text = fm + "# Body\n"
    doc, warnings = parse_document(RawDocument(source="notes/broken.md", text=text))
    assert doc.body_start == len(fm)
    assert dict(doc.meta) == {}
    assert len(warnings) == 1
    assert "notes/broken.md" in warnings[0]
    assert "YAML" in warnings[0]
    assert [h.title for h in headings(doc.blocks)] == ["Body"]


def test_non_mapping_front_matter_warns() -> None:
    fm = "---\n- a\n- b\n---\n"
    doc, warnings = parse_document(RawDocument(source="list.md", text=fm + "Text\n"))
    assert doc.body_start == len(fm)
    assert dict(doc.meta) == {}
    assert len(warnings) == 1
    assert warnings[0].startswith("list.md: ")
    assert "mapping" in warnings[0]


def test_no_front_matter() -> None:
    text = "# Title\n\nText\n"
    assert split_front_matter(text) == (0, {}, "")
    doc, warnings = parse_document(RawDocument(source="x.md", text=text))
    assert doc.body_start == 0
    assert warnings == []
    assert doc.blocks[0].start == 0


def test_later_dashes_are_not_front_matter() -> None:
    text = "Intro\n\n---\ntitle: X\n---\n"
    assert split_front_matter(text) == (0, {}, "")
    doc, _ = parse_document(RawDocument(source="x.md", text=text))
    assert doc.body_start == 0
    assert dict(doc.meta) == {}


def test_unclosed_front_matter_is_not_front_matter() -> None:
    text = "---\ntitle: X\n\nBody text\n"
    assert split_front_matter(text)[0] == 0


def _alias_bomb(levels: int = 9) -> str:
    """A few hundred bytes of YAML whose aliases stand for 9**levels strings."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [" + ",".join([f"*l{n - 1}"] * 9) + "]")
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("yaml_text", "said"),
    [
        (_alias_bomb(), "expands to more than"),
        ("a: &a [*a]", "nests deeper than"),
        ("a: &a {b: *a}", "nests deeper than"),
        ("a: " + "[" * 800, "nests deeper than"),
    ],
    ids=["alias-bomb", "cyclic-list", "cyclic-map", "deep-brackets"],
)
def test_front_matter_that_would_expand_without_bound_is_refused(yaml_text: str, said: str) -> None:
    fm = f"---\n{yaml_text}\n---\n"
    doc, warnings = parse_document(RawDocument(source="bomb.md", text=fm + "# Body\n\nText.\n"))
    assert doc.body_start == len(fm)
    assert dict(doc.meta) == {}
    assert len(warnings) == 1 and warnings[0].startswith("bomb.md: front matter ")
    assert said in warnings[0]
    assert [h.title for h in headings(doc.blocks)] == ["Body"]


@pytest.mark.parametrize(
    ("yaml_text", "said"),
    [
        ("date: 2024-02-30", "day is out of range for month"),
        ("updated: 2024-01-01 25:61:00", "hour must be in 0..23"),
        ("n: " + "9" * 5_000, "cannot be read"),
    ],
    ids=["february-30", "hour-25", "5000-digits"],
)
def test_front_matter_with_a_value_that_cannot_be_built_is_named_and_the_body_kept(
    yaml_text: str, said: str
) -> None:
    # Well-formed YAML, but its date or number cannot be made: it refused the whole file.
    fm = f"---\n{yaml_text}\ntitle: T\n---\n"
    doc, warnings = parse_document(RawDocument(source="d.md", text=fm + "# Тело\n\nТекст.\n"))
    assert doc.body_start == len(fm) and dict(doc.meta) == {}
    assert len(warnings) == 1 and warnings[0].startswith("d.md: front matter holds a value")
    assert said in warnings[0]
    assert [h.title for h in headings(doc.blocks)] == ["Тело"]


def test_front_matter_aliases_within_the_budget_still_expand() -> None:
    _, meta, problem = split_front_matter(f"---\n{_alias_bomb(levels=3)}\n---\n")
    assert problem == ""
    assert len(meta["l2"]) == 9 and meta["l2"][0][0] == ["lol"] * 9


# ---- property test ------------------------------------------------------------------------

WORDS = st.sampled_from(
    ["Привет", "мир", "возврат", "товара", "hello", "world", "chunk", "текст", "42", "ёж"]
)
PHRASE = st.lists(WORDS, min_size=1, max_size=5).map(" ".join)
FENCE_LINE = st.one_of(
    PHRASE,
    PHRASE.map(lambda p: "# " + p),
    PHRASE.map(lambda p: "## " + p),
    st.just("#"),
    PHRASE.map(lambda p: "    # " + p),
    st.just(""),
    st.just("| a | b |"),
    st.just("<!-- x -->"),
)


@st.composite
def fence_piece(draw: st.DrawFn) -> tuple[str, list[int]]:
    """A closed fence, and the offsets (within the piece) of its content lines that start with #."""
    marker = draw(st.sampled_from(["```", "````", "~~~", "~~~~"]))
    info = draw(st.sampled_from(["", "python", "bash", 'smart header="The `x` thing"']))
    if marker[0] == "~" and "`" in info:
        info = "text"
    lines = draw(st.lists(FENCE_LINE, max_size=6))
    if len(marker) == 4 and draw(st.booleans()):
        # A shorter inner fence of the same kind inside the longer outer fence.
        inner = marker[:3]
        lines = [inner + "py", *lines, inner]
    all_lines = [marker + info, *lines, marker]
    hash_offsets = []
    pos = 0
    for line in all_lines:
        if line.startswith("#"):
            hash_offsets.append(pos)
        pos += len(line) + 1
    return "\n".join(all_lines), hash_offsets


PLAIN_PIECE = st.one_of(
    PHRASE.map(lambda p: "# " + p),
    st.tuples(st.integers(1, 6), PHRASE).map(lambda t: "#" * t[0] + " " + t[1] + " ##"),
    PHRASE.map(lambda p: "## " + p + " {#sec}"),
    PHRASE,
    st.lists(PHRASE, min_size=2, max_size=3).map("\n".join),
    st.just("| a | b |\n|---|---|\n| 1 | 2 |"),
    PHRASE.map(lambda p: "- " + p),
    PHRASE.map(lambda p: "1. " + p),
    st.just(""),
    st.just("==="),
    st.just("---"),
    st.just("<!--\n# commented out\n-->"),
)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, list[int]]]]:
    """Markdown text and, for each generated fence, (start, end, #-line offsets)."""
    pieces = draw(
        st.lists(
            st.one_of(PLAIN_PIECE.map(lambda s: (s, None)), fence_piece()), min_size=1, max_size=12
        )
    )
    parts: list[str] = []
    fences: list[tuple[int, int, list[int]]] = []
    pos = 0
    for piece, hashes in pieces:
        if hashes is not None:
            fences.append((pos, pos + len(piece), [pos + h for h in hashes]))
        parts.append(piece)
        pos += len(piece) + 1
    text = "\n".join(parts)
    if draw(st.booleans()):
        text += "\n"
    return text, fences


@settings(max_examples=200, deadline=None)
@given(documents())
def test_block_map_invariants(doc: tuple[str, list[tuple[int, int, list[int]]]]) -> None:
    text, fences = doc
    parsed, _ = parse_document(RawDocument(source="gen.md", text=text))
    blocks = parsed.blocks
    body_start = parsed.body_start
    assert 0 <= body_start <= len(text)

    assert_sorted_disjoint(blocks)
    for b in blocks:
        assert body_start <= b.start <= b.end <= len(text), b
    assert_whole_lines(text, blocks)

    atoms = [b for b in blocks if b.kind in (BlockKind.CODE, BlockKind.HTML)]
    heading_starts = set()
    for h in headings(blocks):
        lines = text[h.start : h.end].split("\n")
        assert ATX_LINE.match(lines[0]) or (
            len(lines) >= 2 and SETEXT_UNDERLINE.match(lines[-1])
        ), (h, lines)
        assert 1 <= h.level <= 6
        for a in atoms:
            assert not (a.start <= h.start < a.end or a.start < h.end <= a.end), (h, a)
        heading_starts.add(h.start)

    for f_start, f_end, hash_lines in fences:
        for line_start in hash_lines:
            assert line_start not in heading_starts, (line_start, text)
            if f_start >= body_start:
                # The #-line sits inside a CODE block that covers the whole generated fence.
                containing = [b for b in blocks if b.start <= line_start < b.end]
                assert len(containing) == 1, (line_start, text)
                code = containing[0]
                assert code.kind is BlockKind.CODE
                assert code.start == f_start and code.end == f_end, (code, f_start, f_end)
