"""Obsidian notes read as data: wikilinks with headings and aliases, embeds, tags from front
matter and text (never from code or links), callouts; the note's text itself untouched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from narezka.parse.markdown import parse_document
from narezka.parse.obsidian import (
    callout_spans,
    callouts,
    display_text,
    inline_tags,
    note_meta,
    wikilinks,
    with_callout_blocks,
)
from narezka.types import BlockKind, RawDocument

NOTE = """# Возврат

См. [[Доставка#Сроки|сроки доставки]] и [[Оплата]], а также ![[Чек#^abc]].
Теги: #возврат #Чай/улун, не тег: #2024, C#, a#b, [[x#y]].

```python
# comment #notatag [[NotALink]]
```

Код `#inline [[Nope]]` тоже не тег.

> [!warning] Осторожно
> Вскрытый чай.
"""


def test_links_read_target_heading_alias_and_embed() -> None:
    found = wikilinks(NOTE)
    assert [(lk.target, lk.heading, lk.alias, lk.embed) for lk in found] == [
        ("Доставка", "Сроки", "сроки доставки", False),
        ("Оплата", "", "", False),
        ("Чек", "^abc", "", True),
        ("x", "y", "", False),
    ]
    assert all(NOTE[lk.start : lk.end].endswith("]]") for lk in found)
    assert [lk.display for lk in found] == ["сроки доставки", "Оплата", "Чек > ^abc", "x > y"]


def test_tags_come_from_text_outside_code_and_links_lowercased() -> None:
    assert inline_tags(NOTE) == ["возврат", "чай/улун"]


def test_note_meta_merges_front_matter_tags_aliases_and_links() -> None:
    meta = note_meta({"tags": ["Чай", "#возврат"], "aliases": "Refund, Возврат товара"}, NOTE)
    assert meta["tags"] == ["чай", "возврат", "чай/улун"]
    assert meta["aliases"] == ["Refund", "Возврат товара"]
    assert meta["links"] == ["Доставка", "Оплата", "Чек", "x"]
    assert note_meta({"tags": "a, b c"}, "")["tags"] == ["a", "b", "c"]
    assert note_meta({"tags": None, "aliases": 3}, "text") == {"tags": []}


def test_callouts_are_found_with_kind_and_title() -> None:
    assert [(k, t) for k, t, _ in callouts(NOTE)] == [("warning", "Осторожно")]


def test_display_text_shows_links_as_a_reader_sees_them() -> None:
    assert display_text("a [[b#c|d]] e [[f]]") == "a d e f"


@given(st.text(alphabet="[]#|!ab\n `", max_size=60))
def test_links_lie_inside_the_text_and_never_overlap(text: str) -> None:
    found = wikilinks(text)
    ends = [0]
    for link in found:
        assert ends[-1] <= link.start < link.end <= len(text)
        assert text[link.start : link.end].lstrip("!").startswith("[[")
        ends.append(link.end)


def test_a_callout_spans_its_marker_line_and_the_quote_lines_after_it() -> None:
    text = "Текст.\n\n> [!tip]+ Совет\n> один\n>\n> два\n\n> обычная цитата\n"
    assert callout_spans(text) == [(8, 38, "tip")]
    assert text[8:38] == "> [!tip]+ Совет\n> один\n>\n> два"


def test_a_callout_becomes_one_block_unless_it_holds_an_atom() -> None:
    text = "# H\n\n> [!note] Заголовок\n> абзац один\n>\n> - пункт\n\nПосле.\n"
    doc = with_callout_blocks(parse_document(RawDocument("n.md", text))[0])
    quote = [b for b in doc.blocks if b.kind is BlockKind.QUOTE]
    assert [(text[b.start : b.end]) for b in quote] == [
        "> [!note] Заголовок\n> абзац один\n>\n> - пункт"
    ]
    assert [b.kind for b in doc.blocks] == [BlockKind.HEADING, BlockKind.QUOTE, BlockKind.PARAGRAPH]
    fenced = "> [!example] Код\n> ```\n> x = 1\n> ```\n"
    kept = parse_document(RawDocument("n.md", fenced))[0]
    assert with_callout_blocks(kept).blocks == kept.blocks
