"""Files a glob such as ``*`` offers whose names are of formats narezka does not read
(``.doc``, ``.ppt``, ``.xls``, ``.rtf``): an Office Open XML package under such a name is read
by what it holds, anything else is named as not read, never indexed as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from narezka.discover.converted import ooxml_suffix
from narezka.discover.walk import read_document
from narezka.errors import RefusedFileError

import convert_samples as samples


@pytest.mark.parametrize(
    ("name", "make", "needle"),
    [
        ("policy.doc", samples.make_docx, "Товар можно вернуть в течение 14 дней."),
        ("deck.ppt", samples.make_pptx, None),
        ("book.xls", samples.make_xlsx, None),
    ],
)
def test_an_ooxml_package_under_a_legacy_name_is_read_by_its_content(
    tmp_path: Path, name: str, make: object, needle: str | None
) -> None:
    data = make()  # type: ignore[operator]
    (tmp_path / name).write_bytes(data)
    doc, warnings = read_document(tmp_path, tmp_path / name)
    actual = ooxml_suffix(data)
    assert actual == "." + {"doc": "docx", "ppt": "pptx", "xls": "xlsx"}[name[-3:]]
    assert doc.source == name and doc.text.strip() and doc.provenance
    assert f"named {name[-4:]}: read as {actual}" in warnings[0] and name in warnings[0]
    if needle:
        assert needle in doc.text


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("letter.rtf", rb"{\rtf1\ansi\deff0 {\fonttbl {\f0 Times;}} Hello \b world\b0 .}"),
        ("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600),
        ("zipped.xls", b"PK\x03\x04" + b"\x00" * 100),  # a zip that is no Office package
    ],
)
def test_a_legacy_format_is_named_not_read_never_indexed_as_text(
    tmp_path: Path, name: str, data: bytes
) -> None:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(
        RefusedFileError, match=r"does not read \.\w+ files: save it as \.(docx|xlsx)"
    ):
        read_document(tmp_path, tmp_path / name)


def test_a_zip_without_an_office_main_part_is_no_office_package() -> None:
    assert ooxml_suffix(b"PK\x03\x04broken") is None
    assert ooxml_suffix(b"plain text") is None


def test_pictures_narezka_does_not_read_are_named_by_their_kind() -> None:
    from narezka.discover.decode import binary_signature

    bmp = b"BM" + (70).to_bytes(4, "little") + b"\x00" * 4 + (54).to_bytes(4, "little")
    bmp += (40).to_bytes(4, "little") + b"\x00" * 40
    heic = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"
    assert binary_signature(bmp) == "BMP image"
    assert binary_signature(heic) == "HEIF/AVIF image"
    assert binary_signature(b"\x00\x00\x00\x18ftypisom") == "MP4/QuickTime media"
    assert binary_signature(b"BMW drivers: 40 of them\n") is None
