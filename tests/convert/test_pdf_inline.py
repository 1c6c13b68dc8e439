"""What a printed page does to inline marks and code, undone: bold runs as **strong**, code
spans and bold runs cut by a line end joined, code lines a browser wrapped at the page's
width joined, a line-end hyphen before a capital kept, a number-holding code line at a page's
top not taken for a page number."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import pytest

from narezka.convert import convert

import convert_samples as samples

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
pytestmark = pytest.mark.skipif(
    not (DEJAVU / "DejaVuSans-Bold.ttf").exists(), reason="DejaVu fonts draw the pages"
)

Segment = tuple[str, str]
"""(font: "r" regular, "b" bold, "m" monospace; text)."""


def _pdf(lines: Sequence[Sequence[Segment]], size: float = 11) -> bytes:
    """One page whose lines are runs of text in several faces, drawn side by side."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    fonts = {"r": "DejaVu", "b": "DejaVu-Bold", "m": "DejaVuMono"}
    files = {"r": "DejaVuSans.ttf", "b": "DejaVuSans-Bold.ttf", "m": "DejaVuSansMono.ttf"}
    for key, name in fonts.items():
        pdfmetrics.registerFont(TTFont(name, str(DEJAVU / files[key])))
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    y = A4[1] - 80
    for line in lines:
        x = 50.0
        for face, text in line:
            pdf.setFont(fonts[face], size)
            pdf.drawString(x, y, text)
            x += pdfmetrics.stringWidth(text, fonts[face], size)
        y -= size * 1.25
    pdf.showPage()
    pdf.save()
    return out.getvalue()


def test_bold_runs_become_strong_emphasis_but_not_a_bold_line() -> None:
    md = convert(
        _pdf(
            [
                [("b", "Заголовок абзаца целиком жирный")],
                [],
                [("m", "name"), ("r", " ("), ("b", "обязательно"), ("r", "): имя тега.")],
            ]
        ),
        ".pdf",
        "bold.pdf",
    ).markdown
    assert "`name` (**обязательно**): имя тега." in md
    assert "**Заголовок" not in md and "Заголовок абзаца целиком жирный" in md


def test_a_code_span_or_bold_run_cut_by_the_line_end_is_one_again() -> None:
    md = convert(
        _pdf(
            [
                [("r", "Добавьте пакет командой "), ("m", "uv add")],
                [("m", "python-dotenv"), ("r", " и запустите "), ("b", "ещё")],
                [("b", "раз"), ("r", " приложение.")],
            ]
        ),
        ".pdf",
        "spans.pdf",
    ).markdown
    assert "командой `uv add python-dotenv` и запустите **ещё раз** приложение." in md


def test_code_lines_wrapped_at_the_page_width_are_joined() -> None:
    # The prose wraps at its right edge, a little right of where the import line ends: the
    # next line's first word could not have fitted after it.
    prose = "Чтобы не было конфликта имён, переименуем исключение Starlette."
    long = "from starlette.exceptions import HTTPException as"
    md = convert(
        _pdf(
            [
                [("r", prose)],
                [],
                [("m", long)],
                [("m", "StarletteHTTPException")],
                [("m", "x = 1")],
                [("m", "y = 2")],
            ],
            size=10,
        ),
        ".pdf",
        "wrapped.pdf",
    ).markdown
    assert f"```\n{long} StarletteHTTPException\nx = 1\ny = 2\n```" in md


def test_a_hyphen_at_a_line_end_before_a_capital_stays() -> None:
    data = samples.make_pdf(
        [[(11, "Имя файла попадёт в заголовок ответа Content-"), (11, "Disposition сервера.")]]
    )
    md = convert(data, ".pdf", "hyphen.pdf").markdown
    assert "Content-Disposition" in md


def test_a_code_line_with_a_number_at_a_page_top_is_not_a_page_number() -> None:
    pages = [
        [(11, "Запуск контейнера с воркерами:"), (10, 'MONO:CMD ["fastapi", "--workers",')],
        [(10, 'MONO:"4"]'), (11, "Здесь четыре воркера.")],
    ]
    md = convert(samples.make_pdf(pages, header="Docker"), ".pdf", "top.pdf").markdown
    assert '"4"]' in md and "Docker" not in md


def test_a_code_block_drawn_after_the_text_below_it_reads_in_its_place() -> None:
    """Chromium paints a scrolling ``pre`` box after the page's text: the stream order puts
    the code under the next section; the page is read top to bottom, indentation kept."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("DejaVu", str(DEJAVU / "DejaVuSans.ttf")))
    pdfmetrics.registerFont(TTFont("DejaVuMono", str(DEJAVU / "DejaVuSansMono.ttf")))
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    top = A4[1] - 80
    pdf.setFont("DejaVu", 11)
    pdf.drawString(50, top, "Тело запроса в формате:")
    pdf.drawString(50, top - 80, "Всё будет работать так же.")
    pdf.setFont("DejaVuMono", 10)  # drawn last, placed between the two sentences
    for n, line in enumerate(["{", '    "importance": 5', "}"]):
        pdf.drawString(60, top - 25 - 13 * n, line)
    pdf.showPage()
    pdf.save()
    md = convert(out.getvalue(), ".pdf", "late.pdf").markdown
    assert md == (
        "Тело запроса в формате:\n\n"
        '```\n{\n    "importance": 5\n}\n```\n\n'
        "Всё будет работать так же.\n"
    )
