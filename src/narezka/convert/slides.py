"""PowerPoint .pptx → Markdown through python-pptx: a section per slide under its title
placeholder's text (else ``Slide N``); its text with line breaks kept, tables, charts (title
and data table), SmartArt, group shapes opened; speaker notes after the body under a
``## Speaker notes`` heading, located as the slide's ``notes`` (``formats.SLIDE_NOTES``);
comments as the metadata of the slide's chunks (``narezka.convert.slide_comments``), never
their text. A shape that cannot be read is skipped with a note naming the slide and shape."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from narezka.convert.charts import chart_markdown
from narezka.convert.guard import check_office_zip, parse_xml
from narezka.convert.markdown import (
    Converted,
    MarkdownWriter,
    escape_line,
    inline_text,
    table_markdown,
)
from narezka.convert.ooxml import Notes, open_package
from narezka.convert.slide_comments import (
    SlideComment,
    SlideSpans,
    anchor_slide_comments,
    pptx_authors,
    pptx_comments,
)
from narezka.errors import ConvertError
from narezka.formats import SLIDE_NOTES
from narezka.types import SourceLocation

__all__ = ["convert_pptx"]

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_TITLES = ("title", "ctrTitle")
_COMMENTS = ("/comments", "/relationships/comments")
_LINE_BREAK = "\x0b"
"""How python-pptx writes a line break (``a:br``) inside a paragraph's text."""


def _placeholder(shape: Any) -> str | None:
    """The placeholder type of ``shape`` (``title``, ``body``… ``obj`` when unnamed), or
    None for a shape that is no placeholder."""
    ph = shape.element.find(f".//{_P}nvPr/{_P}ph")
    return None if ph is None else ph.get("type", "obj")


def _shapes(shapes: Any) -> Iterator[Any]:
    """Shapes in reading order (top to bottom, then left to right), groups opened."""
    ordered = sorted(shapes, key=lambda s: ((s.top or 0) // 10000, s.left or 0))
    for shape in ordered:
        if shape.element.tag == _P + "grpSp":
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _lines(text: str) -> list[str]:
    """A paragraph's lines: its line breaks kept (joining them glued words together)."""
    return [line for line in (inline_text(x) for x in text.split(_LINE_BREAK)) if line]


def _text_frame(writer: MarkdownWriter, shape: Any, where: SourceLocation) -> None:
    bullets = _placeholder(shape) is not None
    for paragraph in shape.text_frame.paragraphs:
        lines = _lines(paragraph.text)
        if not lines:
            continue
        if bullets:
            indent = "  " * paragraph.level
            rest = "".join(f"\n{indent}  {escape_line(line)}" for line in lines[1:])
            writer.block(f"{indent}- {lines[0]}{rest}", where)
        else:
            writer.block("\n".join(escape_line(line) for line in lines), where)


def _related(slide: Any, rid: str, path: str) -> Any:
    part = slide.part.related_part(rid)
    element = getattr(part, "_element", None)
    if element is not None:
        return element
    return parse_xml(part.blob, path, str(part.partname), "not a readable PowerPoint part")


def _graphic(writer: MarkdownWriter, slide: Any, shape: Any, path: str, where: Any) -> None:
    """A table, chart or SmartArt in a graphic frame."""
    if shape.has_table:
        rows = [
            [cell.text.replace(_LINE_BREAK, " ") for cell in row.cells] for row in shape.table.rows
        ]
        writer.block(table_markdown(rows), where)
        return
    data = shape.element.find(f".//{_A}graphicData")
    uri = data.get("uri", "") if data is not None else ""
    if uri.endswith("/chart"):
        ref = data.find(_C + "chart")
        writer.block(chart_markdown(_related(slide, ref.get(_R + "id"), path)), where)
    elif uri.endswith("/diagram"):
        ids = data.find(_DGM + "relIds")
        root = _related(slide, ids.get(_R + "dm"), path)
        for p in root.iter(_A + "p"):
            text = inline_text("".join(t.text or "" for t in p.iter(_A + "t")))
            if text:
                writer.block("- " + text, where)


def _shape(writer: MarkdownWriter, slide: Any, shape: Any, path: str, where: Any) -> None:
    if shape.element.tag == _P + "graphicFrame":
        _graphic(writer, slide, shape, path, where)
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        _text_frame(writer, shape, where)


def _name(shape: Any) -> str:
    try:
        return f"shape {shape.name!r}"
    except Exception:  # a shape too damaged to name itself
        return "a shape"


def _shape_text(shape: Any) -> str:
    """What a comment marking ``shape`` is ``on``: its text, else its name."""
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        text = inline_text(shape.text_frame.text.replace(_LINE_BREAK, " "))
        if text:
            return text
    return str(shape.name or "")


def _write_slide(
    writer: MarkdownWriter, slide: Any, number: int, path: str, notes: Notes
) -> SlideSpans:
    """Write one slide; where it and each of its shapes lie, for its comments."""
    where = SourceLocation(slide=number)
    spans = SlideSpans(writer)
    spans.start = spans.begin()
    title_shape = next((s for s in slide.shapes if _placeholder(s) in _TITLES), None)
    title = ""
    if title_shape is not None and title_shape.has_text_frame:
        title = inline_text(title_shape.text_frame.text.replace(_LINE_BREAK, " "))
    writer.block("# " + (title or f"Slide {number}"), where)
    if title_shape is not None:
        spans.shape(str(title_shape.shape_id), spans.start, title)
    for shape in _shapes(slide.shapes):
        if title_shape is not None and shape.element is title_shape.element:
            continue
        try:
            start = spans.begin()
            _shape(writer, slide, shape, path, where)
            spans.shape(str(shape.shape_id), start, _shape_text(shape))
        except (ConvertError, MemoryError, RecursionError):
            raise
        except Exception:  # one shape python-pptx cannot read must not cost the deck
            notes.skip(f"slide {number}, {_name(shape)}", "shape")
    try:
        _speaker_notes(writer, slide, number)
    except Exception:  # a damaged notes part costs its notes only
        notes.skip(f"slide {number}", "speaker notes part")
    return spans


def _speaker_notes(writer: MarkdownWriter, slide: Any, number: int) -> None:
    """The slide's speaker notes under their own heading, located as its ``notes``: kept
    searchable (they often hold the explanation) and told apart from the slide's text."""
    if not slide.has_notes_slide:
        return
    frame = slide.notes_slide.notes_text_frame
    text = frame.text.replace(_LINE_BREAK, "\n") if frame is not None else ""
    lines = [escape_line(inline_text(ln)) for ln in text.splitlines() if ln.strip()]
    if lines:
        where = SourceLocation(slide=number, element=SLIDE_NOTES)
        writer.block("## Speaker notes\n\n" + "\n\n".join(lines), where)


def _comments(slide: Any, path: str, authors: dict[str, str]) -> list[SlideComment]:
    """The slide's comments, old (``p:cm``) and modern (``p188:cm``) alike."""
    found = []
    for rel in slide.part.rels.values():
        if not rel.is_external and rel.reltype.endswith(_COMMENTS):
            found.extend(pptx_comments(_related(slide, rel.rId, path), authors))
    return found


def convert_pptx(data: bytes, path: str) -> Converted:
    """Convert a PowerPoint file to Markdown, located by slide number.

    Raises ``UnsafeFileError`` (zip bomb, DTD), ``PasswordProtectedError`` (encrypted) or
    ``ConvertError`` (not a PowerPoint package). A shape or slide that cannot be read is
    skipped and named in ``meta["notes"]``.
    """
    data = open_package(data, path, "PowerPoint")
    check_office_zip(data, path)
    import pptx

    try:
        slides = list(pptx.Presentation(io.BytesIO(data)).slides)
    except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml errors…
        raise ConvertError(path, "not a readable PowerPoint file (no slides it can open)") from exc
    writer = MarkdownWriter()
    notes = Notes()
    comments: list[dict[str, Any]] = []
    seen: set[str] = set()
    try:
        authors = pptx_authors(data, path)
    except ConvertError:
        raise
    except Exception:  # a damaged authors part costs the comments their authors only
        authors = {}
    for number, slide in enumerate(slides, 1):
        try:
            # A slide listed again (one slide part named thousands of times: a 146 KB file
            # grew to gigabytes) is written once, where it first appears.
            part = str(slide.part.partname)
            if part in seen:
                continue
            seen.add(part)
            spans = _write_slide(writer, slide, number, path, notes)
            found = _comments(slide, path, authors)
            comments.extend(anchor_slide_comments(found, number, spans))
        except (ConvertError, MemoryError, RecursionError):
            raise
        except Exception:
            notes.skip(f"slide {number}", "slide")
    meta: dict[str, Any] = {"comments": comments} if comments else {}
    if not any(line and not line.startswith("# Slide ") for line in _body_lines(writer)):
        notes.add("no text: the slides hold only pictures or shapes without text")
    if notes:
        meta["notes"] = notes.lines()
    return writer.result(meta)


def _body_lines(writer: MarkdownWriter) -> list[str]:
    return writer.result().markdown.splitlines()
