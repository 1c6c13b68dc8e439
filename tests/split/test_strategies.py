"""What each strategy promises beyond the contract: breadcrumbs, atoms, overlap, levels."""

from __future__ import annotations

import itertools

import pytest

import narezka
from narezka.errors import ConfigError, UnknownStrategyError
from narezka.split import get_strategy

KB_PAGE = """---
title: Доставка
category: delivery
---
# Доставка {#delivery}

Отправляем заказы по всей России. Сроки зависят от зоны.

## Курьером по России {#courier}

### Тарифы по весу и зоне {#tariffs}

| Вес, кг | Зона 1 | Зона 2 | Зона 3 |
|---|---|---|---|
| до 1 | 290 ₽ | 390 ₽ | 490 ₽ |
| 1–3 | 350 ₽ | 470 ₽ | 590 ₽ |
| 3–5 | 450 ₽ | 650 ₽ | 990 ₽ |

## Самовывоз {#pickup}

Пункты выдачи хранят заказ 7 дней.

```bash
# это комментарий, а не заголовок
curl https://example.com/api/pickup
```
"""


def test_headings_prefix_breadcrumbs_and_keep_anchors() -> None:
    chunks = narezka.chunk_text(KB_PAGE, "headings", size=400, min_chars=0, source="kb/d.md")
    table = next(c for c in chunks if "| до 1 |" in c.text)
    assert table.section == ("Доставка", "Курьером по России", "Тарифы по весу и зоне")
    assert table.embed_text.startswith("Доставка > Курьером по России > Тарифы по весу и зоне\n\n")
    assert table.url == "kb/d.md#tariffs"
    assert all("это комментарий" not in " ".join(c.section) for c in chunks)
    pickup = next(c for c in chunks if "curl" in c.text)
    assert pickup.section == ("Доставка", "Самовывоз") and pickup.anchor == "pickup"


def test_short_sections_merge_with_a_neighbour() -> None:
    apart = narezka.chunk_text(KB_PAGE, "headings", size=400, min_chars=0)
    merged = narezka.chunk_text(KB_PAGE, "headings", size=400, min_chars=150)
    assert len(merged) < len(apart)
    # A lone heading line never stands as a chunk of its own.
    assert not any(c.text.startswith("## Курьером") and c.text.count("\n") == 0 for c in merged)


def test_a_long_table_is_split_by_rows_with_its_header_repeated() -> None:
    rows = "\n".join(f"| {i} кг | {100 + i} ₽ | {200 + i} ₽ |" for i in range(60))
    text = f"# Тарифы\n\n| Вес | Зона 1 | Зона 2 |\n|---|---|---|\n{rows}\n"
    chunks = narezka.chunk_text(text, "headings", size=300)
    pieces = [c for c in chunks if "кг |" in c.text]
    assert len(pieces) > 3
    for c in pieces[1:]:
        body = c.embed_text.split("\n\n", 1)[1]
        assert body.startswith("| Вес | Зона 1 | Зона 2 |\n|---|---|---|\n")
        assert all(line.startswith("|") and line.endswith("|") for line in c.text.split("\n")[1:])
    assert pieces[0].text.startswith("# Тарифы\n\n| Вес"), "the heading opens the first piece"


def test_a_long_code_block_is_split_at_lines_with_fences_restored() -> None:
    code = "\n".join(f"x_{i} = compute({i})  # шаг {i}" for i in range(80))
    text = f"# Код\n\nПример:\n\n```python\n{code}\n```\n"
    chunks = narezka.chunk_text(text, "headings", size=400)
    pieces = [c for c in chunks if "x_" in c.text]
    assert len(pieces) > 2
    for c in pieces:
        body = c.embed_text.split("\n\n", 1)[1]
        assert "```python" in body and body.rstrip().endswith("```")
        assert c.text.startswith(("x_", "```", "Пример")) and "\n" in c.text


def test_levels_2_3_split_only_at_h2_and_h3() -> None:
    text = "# A\n\nintro.\n\n## B\n\nb text.\n\n#### B.1\n\nb1 text.\n\n### C\n\nc text.\n"
    chunks = narezka.chunk_text(text, "headings", size=1000, levels=(2, 3), min_chars=0)
    starts = [c.text.split("\n")[0] for c in chunks]
    assert starts == ["# A", "## B", "### C"]
    assert chunks[1].section == ("A", "B")


def test_overlap_repeats_the_tail_of_the_previous_chunk() -> None:
    text = " ".join(f"Предложение номер {i} про доставку." for i in range(60))
    chunks = narezka.chunk_text(text, "overlap", size=200, overlap=50)
    assert len(chunks) > 5
    for prev, cur in itertools.pairwise(chunks):
        shared = prev.end - cur.start
        assert 0 < shared <= 50, (prev.end, cur.start)
        assert cur.text[0].isupper(), "overlap starts at a sentence start"


def test_sentences_keep_russian_abbreviations_whole() -> None:
    text = "Оплата картой, т. е. онлайн, доступна с 2020 г. во всех регионах. " * 8
    chunks = narezka.chunk_text(text, "sentences", size=150)
    assert all(c.text.endswith("регионах.") for c in chunks)


def test_fixed_cuts_blindly_at_the_size() -> None:
    text = "абвгд" * 100
    chunks = narezka.chunk_text(text, "fixed", size=64)
    assert [len(c.text) for c in chunks] == [64] * 7 + [500 - 7 * 64]


def test_recursive_prefers_paragraphs_then_lines() -> None:
    paragraph = "строка один\nстрока два\nстрока три"
    text = "\n\n".join([paragraph] * 4)
    chunks = narezka.chunk_text(text, "recursive", size=len(paragraph) + 2)
    assert [c.text for c in chunks] == [paragraph] * 4


def test_recursive_separators_are_configurable() -> None:
    text = "a;b;c;d;e;f;g;h;i;j;k;l;m;n;o;p;q;r;s;t"
    chunks = narezka.chunk_text(text, "recursive", size=16, separators=[";"])
    assert all(c.text.endswith(";") or c.end == len(text) for c in chunks)


def test_tokens_unit_is_measured_in_the_named_tokenizer() -> None:
    text = "Курьер привозит заказ до двери в удобный интервал. " * 40
    chunks = narezka.chunk_text(text, "sentences", size=64, unit="tokens")
    assert all(c.tokenizer == "cl100k_base" and 0 < c.tokens <= 64 for c in chunks)
    assert any(c.tokens > 40 for c in chunks), "chunks are packed close to the budget"


def test_content_hash_depends_on_text_and_strategy_params() -> None:
    a = narezka.chunk_text(KB_PAGE, "headings", size=400)
    b = narezka.chunk_text(KB_PAGE, "headings", size=400)
    c = narezka.chunk_text(KB_PAGE, "headings", size=500)
    assert [x.content_hash for x in a] == [x.content_hash for x in b]
    assert a[0].content_hash != c[0].content_hash


@pytest.mark.parametrize(
    "params",
    [
        {"size": 0},
        {"overlap": 500, "size": 800},
        {"unit": "words"},
        {"levels": (3, 2)},
        {"min_chars": -1},
    ],
)
def test_bad_parameters_are_config_errors(params: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        narezka.chunk_text("# x\n\ntext", "headings", **params)


def test_unknown_strategy_names_the_choices() -> None:
    with pytest.raises(UnknownStrategyError, match="headings"):
        get_strategy("semantic-magic")


@pytest.mark.parametrize("strategy", ["overlap", "sentences", "recursive"])
def test_overlap_never_starts_inside_an_indented_fence(strategy: str) -> None:
    lead = "Some words before the list. " * 8
    text = f"{lead}We can use methods:\n\n  ```js run\n  alert(1); // one\n  ```\n\nAfter it. " * 6
    chunks = narezka.chunk_text(text, strategy, size=300, overlap=80)
    fence_line_starts = {i for i in range(len(text)) if text.startswith("  ```js", i)}
    for c in chunks:
        assert c.start - 2 not in fence_line_starts, "a chunk starts inside a fence's indentation"
