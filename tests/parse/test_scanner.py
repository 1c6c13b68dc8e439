"""Differential tests: ``scan_blocks`` answers None or exactly what markdown-it returns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka.parse.markdown import parse_blocks_reference, split_front_matter
from narezka.parse.scanner import scan_blocks

from markdown_gen import markdown

SHARED = Path(os.environ.get("NAREZKA_SHARED", Path(__file__).resolve().parents[3] / "shared"))
CORPUS = SHARED / "data" / "md_corpus"
FULL = os.environ.get("NAREZKA_FULL") == "1"


def same_or_none(text: str, start: int = 0) -> bool:
    got = scan_blocks(text, start)
    if got is not None:
        assert got == parse_blocks_reference(text, start), text
    return got is not None


def handled(text: str) -> None:
    """The scanner must answer (not fall back) and agree with markdown-it."""
    assert same_or_none(text), f"scanner fell back on {text!r}"


# ---- the real corpus ----------------------------------------------------------------------


def corpus_files() -> list[Path]:
    files = sorted(CORPUS.rglob("*.md")) if CORPUS.is_dir() else []
    return files if FULL else files[::4]


def test_corpus_differential() -> None:
    files = corpus_files()
    if not files:
        pytest.skip(f"{CORPUS} not found; set NAREZKA_SHARED to the shared/ folder")
    # The fallback share is reported by benchmarks/bench_parse.py, not asserted here.
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
        start = split_front_matter(text)[0]
        got = scan_blocks(text, start)
        assert got is None or got == parse_blocks_reference(text, start), path


# ---- generated Markdown -------------------------------------------------------------------

# Single lines that, glued in random order, hit the interactions between block rules.
LINES = [
    "",
    "",
    "",
    "Обычный текст абзаца.",
    "plain text line",
    "  indented text",
    "# Заголовок",
    "## Title ##",
    "### x {#anchor}",
    "#5 not a heading",
    "#",
    "   ###### six",
    "Setext title",
    "===",
    "---",
    "- - -",
    "***",
    "___",
    "-",
    "```",
    "```python",
    "````",
    "~~~",
    "~~~ text",
    "```js`x`",
    "  ```",
    "# comment in code",
    "| Вес | Зона |",
    "|---|---:|",
    "| a | b |",
    "a | b",
    ":--|--:",
    "| only |",
    "- item",
    "- пункт",
    "* star item",
    "+ plus item",
    "  - nested",
    "    - deeper",
    "      - deepest",
    "1. first",
    "2. second",
    "1) paren",
    "10. ten",
    "   continued item text",
    "  - ```",
    "    code in item",
    "- [ ] task",
    "> quote",
    "> # heading in quote",
    ">",
    "> ```",
    "> - list in quote",
    "<!-- comment -->",
    "<!--",
    "-->",
    "<div>",
    "</div>",
    "<details>",
    "<summary>x</summary>",
    "<span>inline</span>",
    "<custom-tag>",
    "<br>",
    "    indented code",
    "        more code",
    "[ref]: https://example.com",
    "[ref]: /url 'title'",
    "[link](x)",
    "\tTab",
    "-\ttab item",
    "text with trailing spaces   ",
    "   ",
]


@st.composite
def line_soup(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.sampled_from(LINES), max_size=30))
    text = "\n".join(lines)
    return text + draw(st.sampled_from(["", "\n", "\n\n", "  "]))


@given(line_soup())
@settings(max_examples=400)
def test_line_soup_differential(text: str) -> None:
    same_or_none(text)


@given(markdown())
def test_generated_documents_differential(text: str) -> None:
    text = text.replace("\r\n", "\n")
    same_or_none(text, split_front_matter(text)[0])


@given(st.text(alphabet="-=#>`~|:*+_1.) \t\nab<![]", max_size=60))
@settings(max_examples=300)
def test_punctuation_noise_differential(text: str) -> None:
    same_or_none(text)


# ---- targeted cases -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "# A\n\n## B ##\n\n#5 no\n\n#\n\n   ### C {#c}",
        "Title\nmore\n===\n\npara\n---\n\n---\n\n- - -",
        "text\n```py\n# not heading\n\n````\nafter",
        "~~~\nunterminated\n\n",
        '```warn header="`x`"\nbody\n```',
        "para\n    lazy\n\n    code\n\n      more\ntext",
        "<!--\nmulti\n\nline -->\ntext\n\n<div>\nx\n\n<span>a</span>\npara\n<span>b</span>",
        "| a | b |\n|---|:-:|\n| 1 | 2 |\n- list ends table\n\ntext\n| h |\n|---|\nrow",
        "- a\n  - b\n    ```\n    code\n    ```\n  text\n- c\n\n  para in c\n\n1. one\n2) two",
        "- item\nlazy line\n* other list\n\n10. ten\n11. eleven",
        "> quote\n> # head\n>\n> ```rust\n> code\n> ```\n\nafter",
        "[a]: https://example.com\n[b]: ch1.html#x\n\ntext [a]",
        "Привет, мир.\n\n## Раздел\n\nТекст.",
    ],
)
def test_targeted_cases_are_handled(text: str) -> None:
    handled(text)


# Where the one-match path for top-level paragraphs and headings hands over to the rules:
# closing hashes with and without a space, seven hashes, blank lines holding blanks, a last
# line of blanks, no final newline, lines that may head a table or end a paragraph.
FAST_PATH = [
    "# A #\n\n## B#\n\n### C \\#\n\n#### D # #\n\n####### seven\n\n#no\n\n#\n\n",
    "# Title ##   \n \t\npara one\nline two\n   \npara\n\n",
    "para\nnext\n\n   \n\t",
    "para\n  indented continuation\n\nlast paragraph without newline",
    "a | b\n--|--\n\nhead | x\n:-: | -\n1 | 2\n\n",
    "text\n===\n\ntext\n- item\n\ntext\n> quote\n\ntext\n```\ncode\n```\n\n",
    "text\n1. one\n\ntext\n2. two\n\ntext\n    code-like\n\n",
    "# Заголовок {#anchor}\n\nАбзац.\n\n## {#only}\n\nЕщё.\n",
    "\u00a0nbsp para\n\n\x0cform feed\n\n",
    # items of one plain line, ended by the next marker (or not: lazy lines, tables, rules)
    "10.  x\n    - y\n\n100. x\n   * y\n\n1. x\n    2. y\n",
    "- a\n- b\n-c\n- d|e\n| f |\n|---|\n\n- a\n***\n- b\n- - -\n",
    "- a\n  - b\n    - c\n  - d\n- e\n\n1. a\n2) b\n3. c\n\n* a\n+ b\n* c\n",
    "- # head\n- `code`\n- [link]\n- <b>x</b>\n- 2. nested\n-   four\n-     five\n",
    "> - a\n> - b\n\n- a\n\n  b\n- c\n   - d\n",
    "- a\n\n- b\n\n  c\n- d\n\n\n   \n- e\n\nafter\n\n1. x\n\n   y\n\n2. z\n\n",
    "- a\n\n    code\n- b\n  \n",
    # fences in column 0: a first line that may be a table's, lenient info, none closed
    "```|x\n---|---\n\n```|x|\n|---|\n```\n",
    "```\n  indented\n```\n\n~~~\n- a\n~~~\ntext\n````\n```\n````\n",
    '```warn header="`x`"\nbody\n```\n\n``` `a` ```\n\n~~~ ~\nz\n~~~~\n\n```\nopen\n\n',
]


@pytest.mark.parametrize("text", FAST_PATH)
def test_the_fast_path_agrees_with_markdown_it(text: str) -> None:
    handled(text)
    for cut in range(len(text)):  # every prefix ends the document somewhere else
        same_or_none(text[:cut])


@pytest.mark.parametrize(
    "text",
    [
        "> quote\nlazy continuation",
        "- item\n\n\t- tab indented",
        '[a]: /url\n"title"',
        "[multi\nline]: /url",
    ],
)
def test_uncertain_constructs_fall_back(text: str) -> None:
    assert scan_blocks(text) is None


def test_offsets_follow_start() -> None:
    text = "---\ntitle: x\n---\n# Head\n\ntext\n"
    start = split_front_matter(text)[0]
    blocks = scan_blocks(text, start)
    assert blocks == parse_blocks_reference(text, start)
    assert blocks is not None and blocks[0].start == start


def test_a_huge_table_with_every_cell_is_scanned_not_handed_to_markdown_it() -> None:
    # 20,000 rows x 4 columns: main's scanner gave up past 60,000 cells and markdown-it took
    # ~500x longer (a 50k-row table cost 20 s). markdown-it only caps *missing* cells.
    rows = "\n".join(f"| {i} | зона {i % 9} | {i % 30} | да |" for i in range(20_000))
    text = "# Тарифы\n\n| № | зона | кг | ok |\n|---|---|---:|---|\n" + rows + "\n\nКонец.\n"
    got = scan_blocks(text, 0)
    assert got is not None
    assert got == parse_blocks_reference(text, 0)


def test_a_table_missing_more_cells_than_markdown_it_fills_in_falls_back() -> None:
    # 10 columns, rows of one cell: 9 missing a row, past markdown-it's 65,536 by row 7,282,
    # where markdown-it ends the table: the scanner must not claim the whole of it.
    header = "| " + " | ".join(f"c{i}" for i in range(10)) + " |\n|" + "---|" * 10 + "\n"
    text = header + "\n".join(f"| {i} |" for i in range(8_000)) + "\n"
    assert scan_blocks(text, 0) is None
