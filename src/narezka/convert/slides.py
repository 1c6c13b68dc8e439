"""PowerPoint .pptx → Markdown through python-pptx: a section per slide, its title the heading,
its text, tables and speaker notes below."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from narezka.convert.guard import check_office_zip
from narezka.convert.markdown import (
    Converted,
    MarkdownWriter,
    escape_line,
    inline_text,
    table_markdown,
)
from narezka.errors import ConvertError
from narezka.types import SourceLocation

__all__ = ["convert_pptx"]


def _shapes(shapes: Any) -> Iterator[Any]:
    """Shapes in reading order (top to bottom, then left to right), groups opened."""
    ordered = sorted(shapes, key=lambda s: ((s.top or 0) // 10000, s.left or 0))
    for shape in ordered:
        if shape.shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _write_slide(writer: MarkdownWriter, slide: Any, number: int) -> None:
    where = SourceLocation(slide=number)
    title_shape = slide.shapes.title
    title = inline_text(title_shape.text_frame.text) if title_shape is not None else ""
    writer.block("# " + (title or f"Slide {number}"), where)
    for shape in _shapes(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
            writer.block(table_markdown(rows), where)
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            bullets = shape.is_placeholder
            for paragraph in shape.text_frame.paragraphs:
                text = inline_text("".join(run.text for run in paragraph.runs) or paragraph.text)
                if not text:
                    continue
                if bullets:
                    writer.block("  " * paragraph.level + "- " + text, where)
                else:
                    writer.block(escape_line(text), where)
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        text = notes.text.strip() if notes is not None else ""
        if text:
            lines = [escape_line(inline_text(ln)) for ln in text.splitlines() if ln.strip()]
            writer.block("Speaker notes:\n\n" + "\n\n".join(lines), where)


def convert_pptx(data: bytes, path: str) -> Converted:
    """Convert a PowerPoint file to Markdown, located by slide number.

    Raises ``UnsafeFileError`` (zip bomb, DTD) or ``ConvertError`` (not a pptx, corrupt).
    """
    check_office_zip(data, path)
    import pptx

    writer = MarkdownWriter()
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
        seen: set[str] = set()
        for number, slide in enumerate(presentation.slides, 1):
            # A slide listed again (one slide part named thousands of times: a 146 KB file
            # grew to gigabytes) is written once, where it first appears.
            part = str(slide.part.partname)
            if part not in seen:
                seen.add(part)
                _write_slide(writer, slide, number)
    except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml errors…
        raise ConvertError(
            path, f"not a readable PowerPoint file ({type(exc).__name__}: {exc})"
        ) from exc
    return writer.result()
