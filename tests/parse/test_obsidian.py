"""Obsidian notes read as data: wikilinks with headings and aliases, embeds, tags from front
matter and text (never from code or links), callouts; the note's text itself untouched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from narezka.parse.obsidian import callouts, display_text, inline_tags, note_meta, wikilinks

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
