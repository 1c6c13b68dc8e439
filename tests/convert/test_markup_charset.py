"""A page's charset (narezka.convert.charset) and the XML DTD guard (narezka.convert.guard):
no bytes and no label ever raise anything but a ConvertError."""

from __future__ import annotations

import encodings.aliases
import io
import zipfile
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka.convert import convert
from narezka.convert.charset import decode_page, whatwg_codec
from narezka.convert.guard import declares_dtd
from narezka.convert.html import convert_html
from narezka.errors import ConvertError, UnsafeFileError

import convert_samples as samples

_PYTHON_LABELS = sorted(set(encodings.aliases.aliases) | set(encodings.aliases.aliases.values()))
_ODD_LABELS = ["undefined", "idna", "rot13", "zlib", "uu", "base64", "hex", "punycode", "utf-7"]
_ODD_LABELS += ["x-user-defined", "replacement", "utf-16", "utf-32", "mbcs", "", "ut\u0444-8"]


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("latin1", "cp1252"),
        ("ISO-8859-1", "cp1252"),
        (" ascii ", "cp1252"),
        ("x-user-defined", "cp1252"),
        ("utf-16", "utf_8"),
        ("Windows-1251", "cp1251"),
        ("shift_jis", "cp932"),
        ("undefined", None),
        ("utf-7", None),
        ("iso-2022-kr", None),
    ],
)
def test_labels_mean_what_they_mean_to_a_browser(label: str, codec: str | None) -> None:
    assert whatwg_codec(label) == codec


def test_latin1_label_reads_windows_1252_bytes() -> None:
    decoded = decode_page(b'<meta charset="iso-8859-1"><p>\x93quoted\x94 \x80</p>')
    assert "\u201cquoted\u201d \u20ac" in decoded.text and decoded.notes == ()


@pytest.mark.parametrize(
    "page",
    [
        "\ufeff<p>Доставка</p>".encode("utf-16-le"),
        "\ufeff<p>Доставка</p>".encode("utf-16-be"),
        '\ufeff<meta charset="koi8-r"><p>Доставка</p>'.encode("utf-8"),
    ],
)
def test_a_bom_wins_over_any_label(page: bytes) -> None:
    assert "Доставка" in convert(page, ".html", "bom.html").markdown


@pytest.mark.parametrize(
    ("page", "charset"),
    [
        (
            '<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><p>Тест</p>',
            "koi8-r",
        ),
        ('<?xml version="1.0" encoding="windows-1251"?><p>Тест</p>', "windows-1251"),
        ("<!-- <meta charset=koi8-r> --><p>Доставка по России курьером</p>", "windows-1251"),
    ],
)
def test_declared_and_detected_charsets(page: str, charset: str) -> None:
    decoded = decode_page(page.encode(charset))
    assert "Тест" in decoded.text or "Доставка" in decoded.text
    assert decoded.charset == charset


def test_bytes_no_charset_fits_are_replaced_and_named() -> None:
    result = convert(b"\xef\xbb\xbf<p>ok \xff\xfe</p>", ".html", "broken.html")
    assert "ok" in result.markdown
    assert result.meta["notes"] == ["bytes not valid utf-8 (its byte order mark) were replaced"]


_LABEL = st.one_of(st.sampled_from(_PYTHON_LABELS + _ODD_LABELS), st.text(max_size=12))
_WHERE = st.sampled_from(
    [
        b'<meta charset="%s">',
        b"<meta http-equiv=content-type content='text/html; charset=%s'>",
        b'<?xml version="1.0" encoding="%s"?>',
    ]
)


@given(label=_LABEL, where=_WHERE, body=st.binary(max_size=300), bom=st.booleans())
def test_no_bytes_and_no_label_raise_anything_but_a_convert_error(
    label: str, where: bytes, body: bytes, bom: bool
) -> None:
    declared = where % label.encode("utf-8", "surrogateescape")
    data = (b"\xff\xfe" if bom else b"") + declared + b"<p>" + body
    for run in (lambda: convert_html(data, "fuzz.html"), lambda: convert(data, ".html", "f.html")):
        try:
            result = run()
        except ConvertError as exc:
            assert exc.path in ("fuzz.html", "f.html")
        else:
            assert all(isinstance(n, str) for n in result.meta.get("notes", ()))


# The DTD guard --------------------------------------------------------------------------


def _blocks(data: bytes, size: int, taken: list[int]) -> Iterator[bytes]:
    for at in range(0, len(data), size):
        taken.append(at)
        yield data[at : at + size]


def test_the_guard_stops_reading_at_the_root_element() -> None:
    data = b'<?xml version="1.0"?><root>' + b"<p>text</p>" * 500_000 + b"</root>"
    taken: list[int] = []
    assert not declares_dtd(_blocks(data, 64 * 1024, taken))
    assert len(taken) == 1  # one block of a 5.5 MB member


@pytest.mark.parametrize(
    "data",
    [
        b'<?xml version="1.0"?>' + b"<!--" + b"x" * 200_000 + b"-->" + b"<!DOCTYPE r><r/>",
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE r SYSTEM "x.dtd"><r/>'.encode("utf-16"),
        '<!DOCTYPE r [<!ENTITY a "b">]><r>&a;</r>'.encode("utf-16-be"),
        b'<?xml version="1.0" encoding="UTF-7"?>+ADw-!DOCTYPE r+AD4-<r/>',
        b"\n\n  <!DOCTYPE r><r/>",
    ],
)
def test_the_guard_finds_a_dtd_in_any_encoding_at_any_depth(data: bytes) -> None:
    assert declares_dtd(_blocks(data, 7, []))


@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40, b"", b"<r><!DOCTYPE r></r>", b"plain text"],
)
def test_the_guard_passes_what_is_no_dtd_in_a_prolog(data: bytes) -> None:
    assert not declares_dtd(_blocks(data, 64, []))


def _rezip(data: bytes, replace: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, replace.get(info.filename, src.read(info)))
        for name in set(replace) - set(src.namelist()):
            dst.writestr(name, replace[name])
    return out.getvalue()


def test_a_dtd_after_the_root_element_is_a_convert_error() -> None:
    data = samples.make_docx()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        body = archive.read("word/document.xml") + b"<!DOCTYPE r [<!ENTITY a 'b'>]>"
    with pytest.raises(ConvertError, match=r"^late\.docx: "):
        convert(_rezip(data, {"word/document.xml": body}), ".docx", "late.docx")


def test_an_office_part_with_any_name_is_checked() -> None:
    evil = _rezip(samples.make_pptx(), {"ppt/media/blob.bin": b"<!DOCTYPE x><x/>"})
    with pytest.raises(UnsafeFileError, match=r"ppt/media/blob\.bin declares an XML DTD"):
        convert(evil, ".pptx", "evil.pptx")


def test_an_unread_manifest_doctype_does_not_refuse_an_odt() -> None:
    manifest = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE manifest:manifest PUBLIC '
        b'"-//OpenOffice.org//DTD Manifest 1.0//EN" "Manifest.dtd">\n<manifest:manifest '
        b'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>'
    )
    data = _rezip(samples.make_odt(), {"META-INF/manifest.xml": manifest})
    assert "Откройте заказ." in convert(data, ".odt", "old.odt").markdown


def test_xhtml_chapters_with_a_public_doctype_still_convert() -> None:
    data = samples.make_epub()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        chapter = archive.read("OEBPS/text/ch1.xhtml").replace(
            b"<!DOCTYPE html>",
            b'<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
            b'"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">',
        )
    md = convert(_rezip(data, {"OEBPS/text/ch1.xhtml": chapter}), ".epub", "b.epub").markdown
    assert "# Глава 1" in md


def _typed(data: bytes, extra: dict[str, bytes], default: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        types = archive.read("[Content_Types].xml").replace(b"</Types>", default + b"</Types>")
    return _rezip(data, {"[Content_Types].xml": types, **extra})


_SVG = (
    b'<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
    b'"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg xmlns="http://www.w3.org/2000/svg"/>'
)


def test_an_svg_picture_with_its_doctype_does_not_refuse_a_deck() -> None:
    svg = b'<Default Extension="svg" ContentType="image/svg+xml"/>'
    data = _typed(samples.make_pptx(), {"ppt/media/image9.svg": _SVG}, svg)
    assert "Доставка" in convert(data, ".pptx", "deck.pptx").markdown
    untyped = _rezip(samples.make_pptx(), {"ppt/media/image9.svg": _SVG})
    with pytest.raises(UnsafeFileError, match=r"ppt/media/image9\.svg declares"):
        convert(untyped, ".pptx", "deck.pptx")


def test_a_part_typed_as_a_picture_is_not_read_as_xml_either() -> None:
    data = samples.make_docx()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        body = archive.read("word/document.xml").split(b"?>", 1)[1]
    retyped = _typed(
        data,
        {"word/document.xml": b"<!DOCTYPE w [<!ENTITY a 'PLANTED'>]>" + body},
        b'<Override PartName="/word/document.xml" ContentType="image/png"/>',
    )
    with pytest.raises(ConvertError, match=r"^retyped\.docx: ") as caught:
        convert(retyped, ".docx", "retyped.docx")
    assert "PLANTED" not in str(caught.value)


def test_a_page_naming_an_external_dtd_never_loads_it() -> None:
    page = b'<!DOCTYPE html SYSTEM "file:///etc/hostname"><html><body><p>Text.</p></body></html>'
    result = convert(page, ".html", "ext.html")
    assert result.markdown == "Text.\n"


def test_the_html_parser_itself_never_expands_a_declared_entity() -> None:
    # Why a DTD in a page is refused as a belt only: libxml2's HTML parser reads no internal
    # subset, so even a page that got past the refusal could not expand or fetch anything.
    import lxml.html

    page = '<!DOCTYPE html [<!ENTITY x "EXPANDED"><!ENTITY y SYSTEM "file:///etc/hostname">]>'
    root = lxml.html.document_fromstring(page + "<p>a &x; b &y; c</p>")
    text = root.text_content()
    assert "EXPANDED" not in text and "&x;" in text
