"""Two-column PDF pages read column by column, running headers and page numbers still out:
pages printed by Chromium from CSS columns (drawn a column after the other) and pages whose
text layer runs each baseline across both columns (``convert_samples.make_interleaved_pdf``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from narezka.convert import convert, locate
from narezka.types import SourceLocation

import convert_samples as samples

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
pytestmark = pytest.mark.skipif(not DEJAVU.exists(), reason="DejaVu fonts draw the pages")

LEFT = [
    "Первый абзац левой колонки рассказывает о возврате товара надлежащего качества.",
    "Второй абзац левой колонки продолжает тему и уходит в правую колонку без точки и",
]
RIGHT = [
    "продолжается в правой колонке строчными буквами до конца предложения.",
    "Последний абзац правой колонки говорит о доставке по городу и области.",
]
LEFT2 = [
    "Слева на второй странице: самовывоз из пункта выдачи в день заказа бесплатно, "
    "а хранится заказ в пункте выдачи семь дней."
]
RIGHT2 = [
    "Справа на второй странице: оплата картой или наличными при получении заказа, "
    "а для юридических лиц по счёту."
]


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def test_a_page_written_across_both_columns_reads_column_by_column() -> None:
    data = samples.make_interleaved_pdf(
        [(LEFT, RIGHT), (LEFT2, RIGHT2)], title="Правила магазина", header="Магазин · правила"
    )
    result = convert(data, ".pdf", "columns.pdf")
    md = result.markdown
    assert md.startswith("# Правила магазина\n\n")
    body = _words(md)
    order = [*LEFT, *RIGHT, *LEFT2, *RIGHT2]
    at = [body.index(_words(p)[:60]) for p in order]
    assert at == sorted(at)
    # The sentence broken by the column break is one paragraph again.
    assert "уходит в правую колонку без точки и продолжается в правой колонке" in md
    assert "Магазин" not in md and not re.search(r"^\d+$", md, re.MULTILINE)
    assert result.meta["running_text"] == ["Магазин · правила", "1"]
    at = md.index("Справа на второй")
    assert locate(result.provenance, at, at + 6) == (SourceLocation(page=2),) * 2


def test_a_two_column_table_with_short_cells_stays_a_table() -> None:
    rows = (["Курьер", "Самовывоз", "Почта", "Пункт выдачи"], ["500 ₽", "0 ₽", "350 ₽", "0 ₽"])
    data = samples.make_interleaved_pdf([rows])
    md = convert(data, ".pdf", "table.pdf").markdown
    assert "| Курьер | 500 ₽ |" in md and "| Пункт выдачи | 0 ₽ |" in md


def test_a_single_column_page_keeps_its_order() -> None:
    text = "Строка номер {} одного столбца, длинная как обычный абзац текста."
    lines = [(11.0, text.format(n)) for n in range(8)]
    md = convert(samples.make_pdf([lines]), ".pdf", "one.pdf").markdown
    at = [md.index(f"номер {n} ") for n in range(8)]
    assert at == sorted(at)


def _chromium() -> str | None:
    return os.environ.get("NAREZKA_CHROMIUM") or shutil.which("chromium")


@pytest.mark.skipif(_chromium() is None, reason="Chromium prints the test pages")
def test_a_chromium_print_of_css_columns_reads_column_by_column(tmp_path: Path) -> None:
    # Paragraphs that differ in their words, not only their numbers (lines alike but for
    # digits on every page are what a running header is).
    things = ["чай", "кофе", "посуда", "сладости", "подарки", "специи", "мёд", "варенье"]
    acts = ["возврат", "обмен", "доставка", "самовывоз", "оплата"]
    paragraphs = [
        f"{act.capitalize()} товара «{thing}»: правило о том, как {act} оформляется в "
        f"магазине, записанное длинно, чтобы занять строки колонки: {thing}, {act}."
        for act in acts
        for thing in things
    ]
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    page = tmp_path / "columns.html"
    page.write_text(
        '<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8"><title>Правила</title>'
        "<style>body{columns:2;column-gap:2em;font:11pt DejaVu Sans}</style></head>"
        f"<body><h1 style='column-span:all'>Правила магазина</h1>{body}</body></html>",
        encoding="utf-8",
    )
    pdf = tmp_path / "columns.pdf"
    subprocess.run(
        [
            *(str(_chromium()), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"),
            *(f"--print-to-pdf={pdf}", page.as_uri()),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    result = convert(pdf.read_bytes(), ".pdf", "columns.pdf")
    md = result.markdown
    assert result.meta["pages"] >= 2
    assert md.startswith("# Правила магазина\n\n")
    words = _words(md)
    at = [words.index(_words(p)) for p in paragraphs]  # each paragraph whole, in order
    assert at == sorted(at)
    # Chromium's running header (date, title) and footer (address, page n/m) are out.
    assert "file:" not in md and not re.search(r"\b\d+/\d+\b", md)
    assert any("file:" in t for t in result.meta["running_text"])
