"""anchor_for: the section of a chunk that a query matched."""

from __future__ import annotations

from narezka.enrich.anchors import anchor_for, prefix_terms

# A chunk at offset 100 of its document: text before the first heading, then two sections.
TEXT = "Вступление про магазин.\n\n## Возврат\n\nВернуть чай можно.\n\n## Оплата\n\nКартой."
START = 100
ANCHORS = [
    {"start": 100, "anchor": "", "title": ""},
    {"start": 100 + TEXT.index("## Возврат"), "anchor": "return", "title": "Возврат"},
    {"start": 100 + TEXT.index("## Оплата"), "anchor": "pay", "title": "Оплата"},
]


def pick(query: str, anchors: list[dict[str, object]] = ANCHORS) -> str:
    return anchor_for(anchors, TEXT, START, query, default="page")


def test_the_section_sharing_most_query_words_wins_whatever_their_form() -> None:
    assert pick("как вернуть чаи") == "return"  # «вернуть», «чаи» ~ «чай»: prefixes meet
    assert pick("оплата картой") == "pay"


def test_text_before_the_first_heading_and_no_match_fall_back_to_the_default() -> None:
    assert pick("магазин вступление") == "page"
    assert pick("доставка курьером") == "page"
    assert pick("") == "page"
    assert pick("возврат", anchors=[]) == "page"


def test_a_tie_in_the_text_goes_to_the_section_whose_title_matched() -> None:
    text = "## Оплата\n\nЧай оплачивают заранее.\n\n## Чай\n\nЧай оплачивают заранее."
    anchors = [
        {"start": 0, "anchor": "pay", "title": "Оплата"},
        {"start": text.index("## Чай"), "anchor": "tea", "title": "Чай"},
    ]
    assert anchor_for(anchors, text, 0, "чай", default="page") == "tea"
    assert anchor_for(anchors, text, 0, "оплачивают", default="page") == "pay"


def test_custom_terms_replace_the_prefix_stemmer() -> None:
    upper = anchor_for(ANCHORS, TEXT, START, "КАРТОЙ", default="page", terms=str.split)
    assert upper == "page", "exact-case terms: «КАРТОЙ» is not «Картой.»"
    assert prefix_terms("Ёлка, ёж и Вопросы") == ["елка", "вопро"]
