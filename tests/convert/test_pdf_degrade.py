"""A PDF degrades, never refuses: a page that cannot be read is skipped and named once, a
file that yields no text says why, and no library's own message reaches the user."""

from __future__ import annotations

import pytest

import narezka.convert.pdf as pdf_module
from narezka.convert import convert
from narezka.discover.converted import conversion_notes
from narezka.errors import ConvertError, NoTextLayerError

import convert_samples as samples

THREE = [[(11, f"Page {n} text about parcels.")] for n in (1, 2, 3)]


def _breaking(pages: set[int], real: object) -> object:
    def page_lines(page: object, number: int, gutters: list[float] | None = None) -> object:
        if number in pages:
            raise RuntimeError("PDFium internal: bad xref stream at 0x3f")
        return real(page, number, gutters)  # type: ignore[operator]

    return page_lines


def test_a_page_that_cannot_be_read_is_skipped_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf_module, "_page_lines", _breaking({2}, pdf_module._page_lines))
    done = convert(samples.make_pdf(THREE), ".pdf", "three.pdf")
    assert "Page 1 text" in done.markdown and "Page 3 text" in done.markdown
    assert "Page 2 text" not in done.markdown
    notes = conversion_notes(done.meta, "three.pdf")
    assert [n for n in notes if "page 2" in n] == [
        "three.pdf: page 2 skipped: its content cannot be read (damaged)"
    ]
    assert not any("PDFium" in n for n in notes)


def test_a_file_none_of_whose_pages_can_be_read_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf_module, "_page_lines", _breaking({1, 2, 3}, pdf_module._page_lines))
    with pytest.raises(NoTextLayerError) as caught:
        convert(samples.make_pdf(THREE), ".pdf", "three.pdf")
    assert "three.pdf" in str(caught.value)
    assert "no page's content can be read" in str(caught.value)
    assert "PDFium" not in str(caught.value)


@pytest.mark.parametrize("data", [b"%PDF-1.4\n1 0 obj garbage", b"not a pdf at all", b""])
def test_a_file_that_is_not_a_pdf_is_named_without_the_library_s_message(data: bytes) -> None:
    with pytest.raises(ConvertError) as caught:
        convert(data, ".pdf", "broken.pdf")
    message = str(caught.value)
    assert "broken.pdf" in message and ("not a readable PDF" in message or "empty" in message)
    assert "PDFium" not in message and "Failed to load" not in message


def test_ocr_errors_are_said_in_words() -> None:
    import subprocess

    from narezka.convert.pdf import _ocr_error

    assert _ocr_error(subprocess.TimeoutExpired(["tesseract", "-l"], 300)) == (
        "tesseract took longer than 300 s"
    )
    assert _ocr_error(OSError("tesseract failed: Error: image unreadable")) == (
        "tesseract failed: Error: image unreadable"
    )
    assert _ocr_error(PermissionError(13, "Permission denied")) == "tesseract could not be run"
