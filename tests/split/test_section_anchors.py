"""A chunk that covers several sections keeps every section's anchor (issue 10, item 10)."""

from __future__ import annotations

import json

import narezka
from narezka.enrich import Rules, chunk_payload
from narezka.enrich.anchors import anchor_for

FAQ = """# Вопросы и ответы {#faq}

## Доставка {#delivery}

Отправляем за два дня.

## Новый вопрос {#new-q}

Можно ли вернуть вскрытый чай? Да, в течение 14 дней.

## Оплата {#pay}

Картой или наличными.
"""


def merged_chunk() -> narezka.Chunk:
    chunks = narezka.chunk_text(FAQ, "headings", size=800, min_chars=150, source="kb/faq.md")
    assert len(chunks) == 1, "the short sections merge into one chunk"
    return chunks[0]


def test_a_merged_chunk_lists_the_anchor_of_every_section_it_covers() -> None:
    chunk = merged_chunk()
    # Its own anchor is the common parent's: the page, not the question.
    assert chunk.anchor == "faq"
    anchors = chunk.meta["anchors"]
    assert [a["anchor"] for a in anchors] == ["faq", "delivery", "new-q", "pay"]
    assert [a["title"] for a in anchors][2] == "Новый вопрос"
    for entry in anchors[1:]:
        heading = FAQ[entry["start"] :].split("\n", 1)[0]
        assert heading.startswith("## ") and heading.endswith("{#" + entry["anchor"] + "}")
    assert anchors[0]["start"] == chunk.start


def test_the_anchors_reach_the_jsonl_export_and_the_stored_payload() -> None:
    chunk = merged_chunk()
    exported = json.loads(json.dumps(chunk.to_json(), ensure_ascii=False))
    assert [a["anchor"] for a in exported["meta"]["anchors"]][2] == "new-q"
    payload = chunk_payload(chunk, Rules())
    assert [a["anchor"] for a in payload["anchors"]] == ["faq", "delivery", "new-q", "pay"]


def test_a_chunk_inside_one_section_carries_no_anchor_list() -> None:
    chunks = narezka.chunk_text(FAQ, "headings", size=800, min_chars=0, source="kb/faq.md")
    assert [c.anchor for c in chunks] == ["faq", "delivery", "new-q", "pay"]
    assert all("anchors" not in c.meta for c in chunks)
    assert chunk_payload(chunks[2], Rules())["anchors"] == []


def test_search_can_link_the_section_whose_text_matched() -> None:
    chunk = merged_chunk()
    anchors = chunk.meta["anchors"]

    def pick(query: str) -> str:
        return anchor_for(anchors, chunk.text, chunk.start, query, default=chunk.anchor)

    assert pick("можно ли вернуть вскрытый чай?") == "new-q"
    assert pick("чем оплатить: картой?") == "pay"
    assert pick("сколько дней идёт доставка") == "delivery"
    assert pick("гарантия на чайник") == "faq", "no shared word: the chunk's own anchor"


def test_chunks_spanning_headings_in_other_strategies_list_their_sections_too() -> None:
    chunks = narezka.chunk_text(FAQ, "recursive", size=800, source="kb/faq.md")
    assert len(chunks) == 1
    assert [a["anchor"] for a in chunks[0].meta["anchors"]] == ["faq", "delivery", "new-q", "pay"]
