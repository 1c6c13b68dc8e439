"""Hostile and broken files: each is a typed ConvertError naming the file, never a crash."""

from __future__ import annotations

import io
import itertools
import pickle
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from narezka.convert import convert
from narezka.errors import (
    ConvertError,
    NoTextLayerError,
    PasswordProtectedError,
    SourceError,
    UnsafeFileError,
)

import convert_samples as samples


def _encrypt(data: bytes, password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=password, owner_password="owner-secret", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _plain_pdf() -> bytes:
    return samples.make_pdf([[(11, "Confidential contract text.")]])


def test_password_protected_pdf_is_named_and_typed() -> None:
    with pytest.raises(PasswordProtectedError, match=r"^contract\.pdf: .*password"):
        convert(_encrypt(_plain_pdf(), "s3cret"), ".pdf", "contract.pdf")


def test_pdf_encrypted_with_the_empty_password_opens() -> None:
    result = convert(_encrypt(_plain_pdf(), ""), ".pdf", "open.pdf")
    assert "Confidential contract text." in result.markdown


def test_pdf_without_text_is_reported_as_no_text_layer() -> None:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out)
    pdf.rect(50, 50, 200, 200, fill=1)  # a page that is all picture, as a scan is
    pdf.showPage()
    pdf.save()
    with pytest.raises(NoTextLayerError, match=r"^scan\.pdf: no text layer"):
        convert(out.getvalue(), ".pdf", "scan.pdf")


def test_pdf_whose_text_is_unmapped_glyphs_is_not_indexed() -> None:
    # Glyph names no Unicode table knows and no ToUnicode map: PDFium falls back to the raw
    # codes, which read as Latin letters but mean nothing.
    names = b" ".join(b"/g%d" % i for i in range(60))
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Differences [65 "
    font += names + b"] >> >>"
    text = b"BT /F1 12 Tf 50 700 Td (" + bytes(range(65, 120)) + b") Tj ET"
    data = samples.raw_pdf(text, font)
    with pytest.raises(NoTextLayerError, match="no usable text layer"):
        convert(data, ".pdf", "garbage.pdf")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.9])
def test_truncated_pdf_is_a_convert_error(cut: float) -> None:
    data = samples.make_pdf([[(11, "Some text.")]] * 3)
    try:
        result = convert(data[: int(len(data) * cut)], ".pdf", "cut.pdf")
    except ConvertError as exc:
        assert exc.path == "cut.pdf"
    else:  # PDFium may rebuild a damaged cross-reference table: then text must be real
        assert "Some text." in result.markdown


def _rezip(data: bytes, extra: dict[str, bytes], replace: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = replace.get(info.filename, src.read(info))
            dst.writestr(info.filename, body, compress_type=zipfile.ZIP_DEFLATED)
        for name, body in extra.items():
            dst.writestr(name, body, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


@pytest.mark.parametrize(
    ("suffix", "make"),
    [(".docx", samples.make_docx), (".pptx", samples.make_pptx), (".xlsx", samples.make_xlsx)],
)
def test_zip_bomb_is_refused_before_parsing(suffix: str, make: object) -> None:
    bomb = _rezip(make(), {"customXml/item9.xml": b"\0" * (40 * 2**20)}, {})  # type: ignore[operator]
    assert len(bomb) < 2**20  # 40 MB of zeros deflate to about 40 KB
    with pytest.raises(UnsafeFileError, match="zip bomb"):
        convert(bomb, suffix, f"bomb{suffix}")


def test_declared_size_over_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from narezka.convert import guard

    monkeypatch.setattr(guard, "MAX_UNZIPPED", 1000)
    with pytest.raises(UnsafeFileError, match="decompresses to over"):
        convert(samples.make_docx(), ".docx", "big.docx")


_LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c SYSTEM "file:///etc/passwd">]>'
)


@pytest.mark.parametrize(
    ("suffix", "make", "member"),
    [
        (".docx", samples.make_docx, "word/document.xml"),
        (".pptx", samples.make_pptx, "ppt/slides/slide1.xml"),
        (".xlsx", samples.make_xlsx, "xl/workbook.xml"),
    ],
)
def test_xml_entities_in_office_files_are_refused(suffix: str, make: object, member: str) -> None:
    data = make()  # type: ignore[operator]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        body = archive.read(member)
    body = _LAUGHS + body.split(b"?>", 1)[-1]
    evil = _rezip(data, {}, {member: body})
    with pytest.raises(UnsafeFileError, match="DTD"):
        convert(evil, suffix, f"evil{suffix}")


def test_html_with_an_entity_dtd_is_refused() -> None:
    page = b"<!DOCTYPE html [<!ENTITY x SYSTEM 'file:///etc/passwd'>]><p>&x;</p>"
    with pytest.raises(UnsafeFileError, match=r"^evil\.html: "):
        convert(page, ".html", "evil.html")


def _nested(tag: str, depth: int) -> bytes:
    inner = f"<{tag}>" * depth + "deep text" + f"</{tag}>" * depth
    return f"<html><body><p>before</p>{inner}<p>after</p></body></html>".encode()


@pytest.mark.parametrize(("tag", "depth"), [("b", 262), ("div", 300), ("span", 1500)])
def test_html_nested_past_the_parsers_old_limit_keeps_all_its_text(tag: str, depth: int) -> None:
    # libxml2 stopped at 256 levels and the text after that point vanished without a word.
    result = convert(_nested(tag, depth), ".html", "deep.html")
    words = result.markdown.split()
    assert [w.strip("*") for w in words] == ["before", "deep", "text", "after"]
    assert "notes" not in result.meta
    if tag == "b":  # bold inside bold is one bold, not 262 pairs of stars
        assert "**deep text**" in result.markdown and "***" not in result.markdown


def test_html_nested_past_any_limit_keeps_what_came_before_and_says_so() -> None:
    result = convert(_nested("div", 3000), ".html", "deeper.html")
    assert result.markdown.split() == ["before"]
    assert any("nested deeper than 2048" in note for note in result.meta["notes"])


@pytest.mark.parametrize("suffix", [".pdf", ".docx", ".pptx", ".xlsx"])
def test_not_that_format_at_all(suffix: str) -> None:
    with pytest.raises(ConvertError, match=rf"^notes{suffix}: "):
        convert(b"just some text, not a document", suffix, f"notes{suffix}")


def test_unknown_suffix_and_empty_file() -> None:
    with pytest.raises(ConvertError, match="no converter"):
        convert(b"x", ".abc", "a.abc")
    with pytest.raises(ConvertError, match="empty"):
        convert(b"", ".pdf", "empty.pdf")


def test_convert_errors_are_source_errors_and_survive_pickling() -> None:
    error = NoTextLayerError("scan.pdf", "no text layer")
    assert isinstance(error, SourceError)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is NoTextLayerError and str(copy) == "scan.pdf: no text layer"


_VALID = {
    ".pdf": _plain_pdf(),
    ".docx": samples.make_docx(),
    ".pptx": samples.make_pptx(),
    ".xlsx": samples.make_xlsx(),
    ".html": b"<html><body><nav>m</nav><h1 id=a>T</h1><p>x <b>y</b></p><table><tr><td>1"
    b"</td></tr></table><ul><li>a<ul><li>b</li></ul></li></ul></body></html>",
    ".csv": b"a;b\n1;2\n",
    ".odt": samples.make_odt(),
    ".epub": samples.make_epub(),
}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    suffix=st.sampled_from(sorted(_VALID)),
    edits=st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255), st.sampled_from("sdi")),
        min_size=1,
        max_size=8,
    ),
    cut=st.floats(0.05, 1.0),
)
def test_mutated_files_only_ever_raise_convert_errors(
    suffix: str, edits: list[tuple[float, int, str]], cut: float
) -> None:
    data = bytearray(_VALID[suffix])
    for where, byte, op in edits:
        at = int(where * len(data))
        if op == "s" and data:
            data[at % len(data)] = byte
        elif op == "d" and data:
            del data[at % len(data)]
        else:
            data.insert(at, byte)
    data = data[: max(1, int(len(data) * cut))]
    try:
        result = convert(bytes(data), suffix, f"fuzz{suffix}")
    except ConvertError as exc:
        assert exc.path == f"fuzz{suffix}"
    else:  # whatever survives still has a sorted provenance map inside its text
        spans = result.provenance
        assert all(0 <= s.start < s.end <= len(result.markdown) for s in spans)
        assert all(a.end <= b.start for a, b in itertools.pairwise(spans))


def _damaged_members(data: bytes) -> list[tuple[str, bytes]]:
    """Each member of the zip damaged twice: its local header's name and its middle byte."""
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            at = info.header_offset
            name_len, extra_len = (
                int.from_bytes(data[at + 26 : at + 28], "little"),
                int.from_bytes(data[at + 28 : at + 30], "little"),
            )
            body = at + 30 + name_len + extra_len
            for spot in (at + 30, body + info.compress_size // 2):
                if spot < len(data):
                    damaged = bytearray(data)
                    damaged[spot] ^= 0x55
                    out.append((f"{info.filename}@{spot}", bytes(damaged)))
    return out


@pytest.mark.parametrize("suffix", [".docx", ".pptx", ".xlsx", ".odt", ".epub"])
def test_a_damaged_zip_member_is_a_convert_error(suffix: str) -> None:
    for where, data in _damaged_members(_VALID[suffix]):
        try:
            convert(data, suffix, f"damaged{suffix}")
        except ConvertError as exc:
            assert exc.path == f"damaged{suffix}", where
