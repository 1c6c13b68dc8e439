"""Differential tests: the native core's block scanner gives the Python scanner's blocks.

The core may leave a document to Python (None: quotes, reference definitions);
whenever it answers, its blocks must equal the Python scanner's, offsets, titles, anchors
and fence lines included.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from narezka._native import core
from narezka.parse.core_blocks import core_blocks
from narezka.parse.markdown import split_front_matter
from narezka.parse.scanner import scan_blocks
from narezka.types import Block

from markdown_gen import adversarial_markdown, markdown
from test_scanner import FAST_PATH, line_soup

pytestmark = pytest.mark.skipif(core is None, reason="the native core is not built here")

SHARED = Path(os.environ.get("NAREZKA_SHARED", Path(__file__).resolve().parents[3] / "shared"))
CORPUS = SHARED / "data" / "md_corpus"


def by_core(text: str, start: int = 0) -> list[Block] | None:
    """What the core alone answers (scan_blocks would hand a None on to Python)."""
    body = text[start:]
    if "\r" in body or "\0" in body:
        return None
    tail = body.rfind("\n") + 1
    stop = tail if not body[tail:].strip(" \t") else len(body) + 1
    end = len(body)
    while end and body[end - 1] == "\n":
        end -= 1
    return core_blocks(text, start, body + "\n", stop, start + end)


def agree(text: str, start: int = 0) -> bool:
    got = by_core(text, start)
    if got is not None:
        assert got == scan_blocks(text, start, native=False), text
    return got is not None


@given(line_soup())
@settings(max_examples=600)
def test_line_soup(text: str) -> None:
    agree(text)


@given(markdown())
def test_generated_documents(text: str) -> None:
    agree(text, split_front_matter(text)[0])


@given(adversarial_markdown())
@settings(max_examples=300)
def test_adversarial_documents(text: str) -> None:
    agree(text)


@given(st.text(alphabet="-=#>`~|:*+_1.) \t\nab<![]Яё", max_size=80))
@settings(max_examples=600)
def test_punctuation_noise(text: str) -> None:
    agree(text)


TAG_BITS = st.sampled_from(
    ["<", ">", "/", "=", '"', "'", " ", "\t", "\x1c", "\u3000", "a", "Div", "h1", "header",
     "script", "PRE", "x-y", ":", ".", "_", "!", "?", "--", "[CDATA[", "]]", "`", "\n", "\n\n"]
)  # fmt: skip


@given(st.lists(st.lists(TAG_BITS, max_size=12).map("".join), max_size=6))
@settings(max_examples=800)
def test_html_lines(lines: list[str]) -> None:
    # markdown-it's seven HTML block kinds: tags alone on a line, attributes, closers
    agree("\n".join("<" + line for line in lines) + "\n\ntext\n")


@pytest.mark.parametrize("text", FAST_PATH)
def test_every_prefix_of_the_fast_path_cases(text: str) -> None:
    for cut in range(len(text) + 1):
        agree(text[:cut])


@pytest.mark.parametrize(
    "text",
    [
        "# Доставка {#dostavka}\n\nКурьером по России.\n\n## Тарифы ##\n\nТекст.\n",
        "Title\n===\n\n| Вес | Зона |\n|---|---:|\n| 1 | 2 |\n\n- a\n  - b\n1. c\n",
        "```py\n# not a heading\n```\n\n    indented code\n\n~~~\nleft open\n",
        "- item\n\n  ```\n  code in item\n  ```\n- next\n\n***\n\n- x\n- - -\n",
        "<!--\nmulti\n\nline -->\ntext\n\n<div>\nx\n\n<span>a</span>\npara\n<span>b</span>",
        "<details>\n<summary>x</summary>\n\ntext\n</details>\n\n<img src=\"a.png\" alt='b'/>\n",
        "- <br>\n  <div class=x>\n  y\n\n<script>\nif (a < b) {}\n</SCRIPT>\n<?php ?>\n",
    ],
)
def test_the_core_answers_plain_documents(text: str) -> None:
    # Not vacuous: these hold none of the constructs the core leaves to Python.
    assert agree(text), "the core left a plain document to Python"


@pytest.mark.parametrize("text", ["> quote\n", "[a]: /url\n\ntext\n", "para\n> quote\n"])
def test_the_core_leaves_what_python_models_with_markdown_it(text: str) -> None:
    assert by_core(text) is None
    assert scan_blocks(text) == scan_blocks(text, native=False)


def test_corpus() -> None:
    files = sorted(CORPUS.rglob("*.md")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip(f"{CORPUS} not found; set NAREZKA_SHARED to the shared/ folder")
    answered = 0
    for path in files[:: 1 if os.environ.get("NAREZKA_FULL") == "1" else 3]:
        text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        answered += agree(text, split_front_matter(text)[0])
    assert answered > 0
