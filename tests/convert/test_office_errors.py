"""The error paths of the office converters: the wrong package for its suffix, a damaged
part of a file skipped with a note, an OpenDocument file with no content (issue 35)."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import office_samples as office
import pytest
from office_samples import p

from narezka.convert import convert
from narezka.convert.odf_sheets import convert_ods
from narezka.convert.odf_slides import convert_odp
from narezka.errors import ConvertError

ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"


@pytest.mark.parametrize(
    ("suffix", "kind"), [(".pptx", "PowerPoint"), (".xlsx", "Excel"), (".docx", "Word")]
)
def test_another_packages_zip_is_named_for_the_kind_it_is_not(suffix: str, kind: str) -> None:
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("[Content_Types].xml", '<Types xmlns="x"/>')
        z.writestr("readme.xml", "<a/>")
    with pytest.raises(ConvertError, match=f"not a readable {kind} file") as caught:
        convert(other.getvalue(), suffix, f"x{suffix}")
    assert "KeyError" not in str(caught.value)


def test_a_damaged_footnotes_part_costs_its_notes_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> list[tuple[str, str]]:
        raise ValueError("parser internals")

    monkeypatch.setattr("narezka.convert.docx._notes_of", broken)
    body = '<w:p><w:r><w:t>Текст</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r></w:p>'
    result = convert(
        office.docx(body, footnotes='<w:footnote w:id="1">' + p("Сноска") + "</w:footnote>"),
        ".docx",
        "t.docx",
    )
    assert result.markdown == "Текст[^1]\n"
    assert result.meta["notes"] == ["footnotes: a notes part that cannot be read was skipped"]


def test_a_damaged_comments_part_costs_its_comments_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> list[dict[str, str]]:
        raise KeyError("parser internals")

    monkeypatch.setattr("narezka.convert.docx._comments", broken)
    result = convert(
        office.docx(p("Текст"), comments='<w:comment w:id="0">' + p("x") + "</w:comment>"),
        ".docx",
        "t.docx",
    )
    assert result.markdown == "Текст\n"
    assert result.meta["notes"] == ["comments: a comments part that cannot be read was skipped"]


def test_damaged_speaker_notes_and_a_damaged_slide_are_skipped_with_notes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pptx

    from narezka.convert import slides

    deck = pptx.Presentation()
    for title in ("Первый", "Второй", "Третий"):
        deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = title
    out = io.BytesIO()
    deck.save(out)
    real = slides._write_slide

    def flaky(writer: Any, slide: Any, number: int, path: str, notes: Any) -> None:
        if number == 2:
            raise AttributeError("python-pptx internals")
        real(writer, slide, number, path, notes)

    def no_notes(*_: Any) -> None:
        raise ValueError("notes part")

    monkeypatch.setattr(slides, "_write_slide", flaky)
    monkeypatch.setattr(slides, "_speaker_notes", no_notes)
    result = convert(out.getvalue(), ".pptx", "d.pptx")
    assert result.markdown == "# Первый\n\n# Третий\n"
    assert result.meta["notes"] == [
        "slide 1: a speaker notes part that cannot be read was skipped",
        "slide 2: a slide that cannot be read was skipped",
        "slide 3: a speaker notes part that cannot be read was skipped",
    ]


def test_an_opendocument_file_without_content_is_named() -> None:
    data = office.without(office.odf(ODS, ""), "content.xml")
    with pytest.raises(ConvertError, match=r"no content\.xml"):
        convert_ods(data, "x.ods")
    with pytest.raises(ConvertError, match="broken zip"):
        convert_odp(b"PK\x03\x04 not really", "x.odp")


def test_an_unreadable_ods_sheet_and_odp_shape_are_skipped_with_notes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from narezka.convert import odf_sheets, odf_slides

    sheets = (
        '<office:spreadsheet><table:table table:name="A"><table:table-row><table:table-cell>'
        "<text:p>x</text:p></table:table-cell></table:table-row></table:table>"
        '<table:table table:name="B"/></office:spreadsheet>'
    )
    real = odf_sheets.write_sheet

    def flaky(writer: Any, title: str, *rest: Any, **named: Any) -> list[dict[str, Any]]:
        if title == "A":
            raise ValueError("bad")
        return real(writer, title, *rest, **named)

    monkeypatch.setattr(odf_sheets, "write_sheet", flaky)
    result = convert_ods(office.odf(ODS, sheets), "s.ods")
    assert result.markdown == "# B\n"
    assert "sheet 'A': a sheet that cannot be read was skipped" in result.meta["notes"]

    def broken(*_: Any) -> None:
        raise ValueError("bad")

    monkeypatch.setattr(odf_slides._Slide, "shape", broken)
    deck = (
        '<office:presentation><draw:page draw:name="p"><draw:frame presentation:class="title">'
        "<draw:text-box><text:p>Заголовок</text:p></draw:text-box></draw:frame>"
        "<draw:custom-shape><text:p>x</text:p></draw:custom-shape></draw:page></office:presentation>"
    )
    result = convert_odp(office.odf(ODP, deck), "d.odp")
    assert result.markdown == "# Заголовок\n"
    assert result.meta["notes"] == ["slide 1: a shape that cannot be read was skipped"]
