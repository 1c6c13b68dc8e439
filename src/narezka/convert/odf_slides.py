"""OpenDocument presentations (.odp) → Markdown through zipfile and lxml: a section per slide
under its title frame's text (else ``Slide N``); its text boxes and shapes with line breaks
kept, lists nested, tables, groups opened; speaker notes after the body under a
``## Speaker notes`` heading, located as the slide's ``notes`` (``formats.SLIDE_NOTES``);
annotations as the metadata of the slide's chunks, or of the shape's whose text holds one
(``narezka.convert.slide_comments``), never their text. A shape that cannot be read is
skipped with a note naming the slide."""

from __future__ import annotations

from typing import Any

from narezka.convert.markdown import (
    Converted,
    MarkdownWriter,
    escape_line,
    inline_text,
    table_markdown,
)
from narezka.convert.odf_sheets import odf_content
from narezka.convert.ooxml import Notes
from narezka.convert.slide_comments import SlideComment, SlideSpans, anchor_slide_comments
from narezka.errors import ConvertError
from narezka.formats import SLIDE_NOTES
from narezka.types import SourceLocation

__all__ = ["convert_odp"]

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_PRES = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_TITLES = ("title",)


def _text(node: Any) -> str:
    """A paragraph's text: ``text:s`` as spaces, a line break as a new line, annotations out."""
    out = [node.text or ""]
    for child in node:
        tag = child.tag
        if tag == f"{_TEXT}s":
            count = child.get(f"{_TEXT}c") or "1"
            out.append(" " * min(int(count) if count.isdigit() else 1, 100))
        elif tag == f"{_TEXT}tab":
            out.append(" ")
        elif tag == f"{_TEXT}line-break":
            out.append("\n")
        elif tag != f"{_OFFICE}annotation":
            out.append(_text(child))
        out.append(child.tail or "")
    return "".join(out)


def _lines(p: Any) -> list[str]:
    return [line for line in (inline_text(x) for x in _text(p).split("\n")) if line]


class _Slide:
    def __init__(self, writer: MarkdownWriter, where: SourceLocation) -> None:
        self.writer = writer
        self.where = where

    def paragraph(self, p: Any, marker: str = "") -> None:
        lines = _lines(p)
        if not lines:
            return
        if marker:
            pad = " " * len(marker)
            rest = "".join(f"\n{pad}{escape_line(line)}" for line in lines[1:])
            self.writer.block(f"{marker}{lines[0]}{rest}", self.where)
        else:
            self.writer.block("\n".join(escape_line(line) for line in lines), self.where)

    def items(self, lst: Any, depth: int) -> None:
        for item in lst:
            if item.tag not in (f"{_TEXT}list-item", f"{_TEXT}list-header"):
                continue
            for child in item:
                if child.tag == f"{_TEXT}list":
                    self.items(child, depth + 1)
                elif child.tag in (f"{_TEXT}p", f"{_TEXT}h"):
                    self.paragraph(child, "  " * depth + "- ")

    def blocks(self, parent: Any) -> None:
        """Paragraphs, lists and tables of a text box or shape."""
        for child in parent:
            if child.tag in (f"{_TEXT}p", f"{_TEXT}h"):
                self.paragraph(child)
            elif child.tag == f"{_TEXT}list":
                self.items(child, 0)
            elif child.tag == f"{_TABLE}table":
                rows = [
                    [
                        " ".join(inline_text(_text(p)) for p in cell.iter(f"{_TEXT}p"))
                        for cell in row
                        if cell.tag in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell")
                    ]
                    for row in child.iter(f"{_TABLE}table-row")
                ]
                if any(any(c for c in row) for row in rows):
                    self.writer.block(table_markdown(rows), self.where)

    def shape(self, shape: Any) -> None:
        if shape.tag == f"{_DRAW}g":
            for child in shape:
                self.shape(child)
        elif shape.tag == f"{_DRAW}frame":
            for child in shape:
                if child.tag == f"{_DRAW}text-box":
                    self.blocks(child)
                elif child.tag == f"{_TABLE}table":
                    self.blocks(shape)
                    break
        elif shape.tag == f"{_DRAW}custom-shape" or shape.tag.startswith(_DRAW):
            self.blocks(shape)


def _title(page: Any) -> tuple[Any, str]:
    for frame in page.iter(f"{_DRAW}frame"):
        if frame.get(f"{_PRES}class") in _TITLES:
            return frame, _shape_text(frame)
    return None, ""


def _annotation(node: Any, shape: str = "") -> SlideComment:
    text = inline_text(" ".join(_text(p) for p in node.iter(f"{_TEXT}p")))
    author = inline_text(node.findtext(f"{_DC}creator") or "")
    return SlideComment(author, text, shape)


def _shape_text(shape: Any) -> str:
    """A shape's text, its annotations' out (what a comment on it is ``on``)."""
    paragraphs = (
        p
        for p in shape.iter(f"{_TEXT}p")
        if not any(a.tag == f"{_OFFICE}annotation" for a in p.iterancestors())
    )
    return inline_text(" ".join(" ".join(_lines(p)) for p in paragraphs))


def _speaker_notes(writer: MarkdownWriter, speaker: Any, number: int) -> None:
    lines = [
        escape_line(line)
        for box in speaker.iter(f"{_DRAW}text-box")
        for p in box.iter(f"{_TEXT}p")
        for line in _lines(p)
    ]
    if lines:
        where = SourceLocation(slide=number, element=SLIDE_NOTES)
        writer.block("## Speaker notes\n\n" + "\n\n".join(lines), where)


def _page(writer: MarkdownWriter, page: Any, number: int, notes: Notes) -> list[dict[str, Any]]:
    where = SourceLocation(slide=number)
    spans = SlideSpans(writer)
    spans.start = spans.begin()
    title_frame, title = _title(page)
    writer.block("# " + (title or f"Slide {number}"), where)
    slide = _Slide(writer, where)
    found: list[SlideComment] = []
    for index, shape in enumerate(page):
        key = f"s{index}"
        if shape.tag == f"{_OFFICE}annotation":
            found.append(_annotation(shape))
            continue
        if shape.tag == f"{_PRES}notes":
            continue
        # An annotation in a shape's text marks that shape (its text is never the body's).
        found.extend(_annotation(a, key) for a in shape.iter(f"{_OFFICE}annotation"))
        if shape is title_frame:
            spans.shape(key, spans.start, title)
            continue
        try:
            start = spans.begin()
            slide.shape(shape)
            spans.shape(key, start, _shape_text(shape))
        except (ConvertError, MemoryError, RecursionError):
            raise
        except Exception:  # one odd shape must not cost the deck
            notes.skip(f"slide {number}", "shape")
    speaker = page.find(f"{_PRES}notes")
    if speaker is not None:
        _speaker_notes(writer, speaker, number)
    return anchor_slide_comments([c for c in found if c.text], number, spans)


def convert_odp(data: bytes, path: str) -> Converted:
    """Convert an OpenDocument presentation to Markdown, located by slide number.

    Raises ``UnsafeFileError`` (zip bomb, DTD), ``PasswordProtectedError`` or
    ``ConvertError``; a shape that cannot be read is skipped with a note."""
    root = odf_content(data, path, "presentation")
    writer = MarkdownWriter()
    notes = Notes()
    comments: list[dict[str, Any]] = []
    for number, page in enumerate(root.iter(f"{_DRAW}page"), 1):
        comments.extend(_page(writer, page, number, notes))
    meta: dict[str, Any] = {"comments": comments} if comments else {}
    lines = writer.result().markdown.splitlines()
    if not any(line and not line.startswith("# Slide ") for line in lines):
        notes.add("no text: the slides hold only pictures or shapes without text")
    if notes:
        meta["notes"] = notes.lines()
    return writer.result(meta)
