"""A page's run texts from one index of its characters are PDFium's own, to the character."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from narezka.convert import convert
from narezka.convert.pdf import lines as pdf_module
from narezka.convert.pdf_bounded import BoundedText

import convert_samples as samples

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "trust"))
import trust_bombs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kb" / "returns.pdf"


def _documents() -> list[tuple[str, bytes]]:
    return [
        ("returns.pdf", EXAMPLE.read_bytes()),
        (
            "interleaved",
            samples.make_interleaved_pdf(
                [(["Left column words " * 12] * 3, ["Right column text " * 12] * 3)],
                title="Over both columns",
                header="Running head 1",
            ),
        ),
        ("two pages", samples.make_pdf([[(18, "Title"), (11, "Body text here.")], [(11, "x")]])),
        ("many objects", trust_bombs.many_text_objects(1500)),
        ("emoji", samples.make_emoji_table_pdf()),
    ]


@pytest.mark.parametrize(("name", "data"), _documents(), ids=lambda v: str(v)[:20])
def test_every_rectangle_reads_as_pdfium_reads_it(name: str, data: bytes) -> None:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    checked = 0
    try:
        for page in pdf:
            tp = page.get_textpage()
            count = tp.count_chars()
            index = BoundedText(tp, count)
            rects = [tp.get_rect(i) for i in range(tp.count_rects(0, count))]
            rnd = random.Random(7)
            width, height = page.get_width(), page.get_height()
            for _ in range(100):  # rectangles over several lines and parts of words
                x0, x1 = sorted(rnd.uniform(0, width) for _ in range(2))
                y0, y1 = sorted(rnd.uniform(0, height) for _ in range(2))
                rects.append((x0, y0, x1, y1))
            for rect in rects:
                assert index.text(*rect) == tp.get_text_bounded(*rect), (name, rect)
                checked += 1
            tp.close()
            page.close()
    finally:
        pdf.close()
    assert checked > 100


def test_the_indexed_path_converts_as_pdfium_calls_do(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, data in _documents():
        monkeypatch.setattr(pdf_module, "_INDEXED_CHARS", 10**9)
        monkeypatch.setattr(pdf_module, "_PDFIUM_CALLS", 10**9)
        by_pdfium = convert(data, ".pdf", "a.pdf").markdown
        monkeypatch.setattr(pdf_module, "_INDEXED_CHARS", 0)
        monkeypatch.setattr(pdf_module, "_PDFIUM_CALLS", 0)
        assert convert(data, ".pdf", "a.pdf").markdown == by_pdfium
