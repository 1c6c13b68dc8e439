"""OpenDocument text and EPUB, read with zipfile and lxml: structure, provenance, bad files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from narezka.convert import convert, locate
from narezka.errors import ConvertError, UnsafeFileError
from narezka.types import SourceLocation

import convert_samples as samples


def test_odt_structure() -> None:
    result = convert(samples.make_odt(), ".odt", "policy.odt")
    assert result.markdown == (
        "# Возврат товара\n\n## Сроки\n\n"
        "Вернуть можно за 14 дней [Со дня получения.], см. [справку](https://example.org/help).\n\n"
        "1. Откройте заказ.\n\n2. Выберите способ:\n\n   - пункт выдачи;\n\n   - курьер.\n\n"
        "3. Отправьте.\n\n| Тариф | Цена |\n|---|---|\n| Курьер | 290 ₽ |\n\n"
        "```\nprint('hello')\nprint('bye')\n```\n"
    )
    at = result.markdown.index("## Сроки")
    assert locate(result.provenance, at, at + 3) == (SourceLocation(element="p2"),) * 2


def test_epub_chapters_in_spine_order_located_by_chapter_and_id() -> None:
    result = convert(samples.make_epub(), ".epub", "book.epub")
    assert result.markdown == (
        "# Глава 1\n\nПервый абзац.\n\n- пункт\n\n# Глава 2\n\n```\nx = 1\n```\n"
    )
    assert result.meta == {"title": "Книга", "chapters": 2}  # the nav page is not read
    at = result.markdown.index("# Глава 2")
    first, _ = locate(result.provenance, at, at + 5) or (None, None)
    assert first == SourceLocation(element="OEBPS/text/ch2.xhtml#two")


def test_a_books_chapter_keeps_what_only_a_class_or_id_calls_boilerplate() -> None:
    # Project Gutenberg's licence sits in id "pg-footer"; a book has no site chrome, so
    # only landmark tags and ARIA roles mark what is not its text.
    body = (
        '<h1 id="one">Глава 1</h1><div class="pg-boilerplate" id="pg-footer">'
        "<p>Лицензия книги.</p></div><footer><p>Конец главы.</p></footer>"
        '<nav><p>Меню</p></nav><div role="contentinfo"><p>Подвал сайта</p></div>'
    )
    chapters = {"ch1.xhtml": body, "ch2.xhtml": "<p>Два.</p>", "nav.xhtml": "<nav/>"}
    result = convert(samples.make_epub(chapters=chapters), ".epub", "book.epub")
    assert result.markdown == "# Глава 1\n\nЛицензия книги.\n\nКонец главы.\n\nДва.\n"
    page = convert(f"<html><body>{body}</body></html>".encode(), ".html", "page.html")
    assert page.markdown == "# Глава 1\n"  # a web page's footer by name is still left out


@pytest.mark.parametrize("writer", ["odt", "epub3"])
def test_pandocs_renderings_read_back(writer: str, tmp_path: Path) -> None:
    if shutil.which("pandoc") is None:
        pytest.skip("pandoc is not installed: it writes the files")
    source = tmp_path / "page.md"
    source.write_text(
        "# Доставка\n\nКурьером за 1–2 дня.\n\n1. Закажите.\n2. Оплатите.\n\n"
        "| Зона | Цена |\n|---|---|\n| 1 | 300 ₽ |\n\n```\ncode()\n```\n",
        encoding="utf-8",
    )
    out = tmp_path / f"page.{writer[:4]}"
    subprocess.run(["pandoc", str(source), "-t", writer, "-o", str(out)], check=True)
    md = convert(out.read_bytes(), out.suffix, out.name).markdown
    for part in ("# Доставка", "Курьером за 1–2 дня.", "1. Закажите.", "2. Оплатите.",
                 "| 1 | 300 ₽ |", "```\ncode()\n```"):  # fmt: skip
        assert part in md, (part, md)


@pytest.mark.parametrize(
    ("data", "suffix", "error", "message"),
    [
        (b"PK\x03\x04 not really", ".odt", ConvertError, "broken zip"),
        (b"PK\x03\x04 not really", ".epub", ConvertError, "broken zip"),
        (samples.make_epub(opf="<package/>"), ".epub", ConvertError, "no chapters"),
        (
            samples.make_odt('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>'),
            ".odt",
            UnsafeFileError,
            "DTD",
        ),
        (
            samples.make_epub(opf='<!DOCTYPE p [<!ENTITY a SYSTEM "file:///etc/passwd">]><p/>'),
            ".epub",
            UnsafeFileError,
            "DTD",
        ),
        (samples.make_odt("<office:document-content"), ".odt", ConvertError, "content.xml"),
        (
            samples.make_epub(chapters={"ch1.xhtml": "", "ch2.xhtml": " "}),
            ".epub",
            ConvertError,
            "no text",
        ),
    ],
)
def test_bad_files_are_named(
    data: bytes, suffix: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=rf"^bad{suffix.replace('.', '[.]')}: .*{message}"):
        convert(data, suffix, f"bad{suffix}")


def test_an_epub_without_its_container_is_named() -> None:
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as epub:
        epub.writestr("mimetype", "application/epub+zip")
    with pytest.raises(ConvertError, match=r"container\.xml is missing"):
        convert(out.getvalue(), ".epub", "bad.epub")
