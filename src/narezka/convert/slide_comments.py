"""Slide comments as metadata of the slide's chunks, never their text (issue 35).

A deck's comments are read from its parts (PowerPoint's ``p:cm`` of ``ppt/comments/*.xml``
and the modern ``p188:cm`` with its replies, their authors in ``ppt/commentAuthors.xml`` and
``ppt/authors.xml``; an ODP page's ``office:annotation``) and anchored like a Word comment
(``narezka.convert.docx_comments``): ``on`` names what it is on (the text of the shape a
modern comment marks, else ``slide 3``) and ``at`` is that shape's span of the Markdown, else
the whole slide's, so every chunk of the slide (or the shape's) carries it."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from narezka.convert.docx_comments import ON_CHARS
from narezka.convert.guard import parse_xml
from narezka.convert.markdown import MarkdownWriter, inline_text

__all__ = ["SlideComment", "SlideSpans", "anchor_slide_comments", "pptx_authors", "pptx_comments"]

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_P188 = "{http://schemas.microsoft.com/office/powerpoint/2018/8/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_AUTHOR_PARTS = ("ppt/commentAuthors.xml", "ppt/authors.xml")
_NOT_SHAPES = ("docMk", "sldMk", "txMk", "sldMkLst", "deMkLst", "txMkLst")
"""Local names of a modern comment's marks that name no shape (the deck, the slide, a range
of characters inside the shape named beside them)."""


@dataclass(frozen=True, slots=True)
class SlideComment:
    """One comment as its part says it: author, text, and the shape it marks ("" if none)."""

    author: str
    text: str
    shape: str = ""


@dataclass(slots=True)
class SlideSpans:
    """Where one slide lies in the Markdown: its whole span and each of its shapes' (by id),
    with the shape's text; filled as the slide is written."""

    writer: MarkdownWriter
    start: int = 0
    shapes: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    def begin(self) -> int:
        """Where the next block's text will start."""
        return self.writer.length + (0 if self.writer.empty() else 2)

    def shape(self, key: str, start: int, text: str) -> None:
        """Record that the shape ``key`` wrote from ``start`` up to now (if it wrote)."""
        end = self.writer.length
        if key and end > start:
            self.shapes.setdefault(key, (start, end, text))


def pptx_authors(data: bytes, path: str) -> dict[str, str]:
    """The deck's comment authors by id, old (``0``) and modern (``{GUID}``) alike."""
    authors: dict[str, str] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        for name in _AUTHOR_PARTS:
            if name not in names:
                continue
            root = parse_xml(archive.read(name), path, name, "not a readable authors part")
            for author in root.iter(_P + "cmAuthor", _P188 + "author"):
                authors[author.get("id", "")] = inline_text(author.get("name") or "")
    return authors


def _text(node: Any) -> str:
    return inline_text(" ".join(t.text or "" for t in node.iter(_A + "t", _P + "text")))


def _marked_shape(comment: Any) -> str:
    """The id of the shape a modern comment marks (``ac:spMk id="3"``), else ""."""
    for node in comment.iter():
        tag = node.tag if isinstance(node.tag, str) else ""
        local = tag.rsplit("}", 1)[-1]
        if local.endswith("Mk") and local not in _NOT_SHAPES and node.get("id"):
            return str(node.get("id"))
    return ""


def pptx_comments(root: Any, authors: Mapping[str, str]) -> list[SlideComment]:
    """The comments of one comments part, a modern comment's replies after it."""
    found = []
    for comment in root:
        if comment.tag == _P + "cm":
            found.append(SlideComment(authors.get(comment.get("authorId", ""), ""), _text(comment)))
        elif comment.tag == _P188 + "cm":
            shape = _marked_shape(comment)
            body = comment.find(_P188 + "txBody")
            text = _text(body) if body is not None else ""
            found.append(SlideComment(authors.get(comment.get("authorId", ""), ""), text, shape))
            for reply in comment.iter(_P188 + "reply"):
                author = authors.get(reply.get("authorId", ""), "")
                found.append(SlideComment(author, _text(reply), shape))
    return [c for c in found if c.text]


def anchor_slide_comments(
    comments: Iterable[SlideComment], number: int, spans: SlideSpans
) -> list[dict[str, Any]]:
    """The comments as ``meta["comments"]`` entries: ``author``, ``text``, ``on`` (the
    marked shape's text, else ``slide N``) and ``at`` (the shape's span, else the
    slide's, up to where the writer is now: the slide's end)."""
    out = []
    for comment in comments:
        shape = spans.shapes.get(comment.shape) if comment.shape else None
        if shape is not None:
            start, end, on = shape[0], shape[1], shape[2][:ON_CHARS] or f"slide {number}"
        else:
            start, end, on = spans.start, spans.writer.length, f"slide {number}"
        out.append({"author": comment.author, "text": comment.text, "on": on, "at": [start, end]})
    return out
