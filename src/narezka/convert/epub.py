"""EPUB → Markdown through zipfile and lxml: the spine's XHTML chapters in reading order, each
read by the HTML converter (headings, lists, tables, code, links)."""

from __future__ import annotations

import io
import posixpath
import zipfile
from typing import Any
from urllib.parse import unquote

from narezka.convert.guard import ZIP_ERRORS, check_office_zip, parse_xml
from narezka.convert.html import convert_html
from narezka.convert.markdown import Converted
from narezka.errors import ConvertError
from narezka.types import ProvenanceSpan, SourceLocation

__all__ = ["convert_epub"]

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_PAGES = ("application/xhtml+xml", "text/html")


def _xml(archive: zipfile.ZipFile, name: str, path: str) -> Any:
    """A package XML file, parsed without DTDs, entities or the network."""
    try:
        data = archive.read(name)
    except KeyError as exc:
        raise ConvertError(path, f"not a valid EPUB ({name} is missing)") from exc
    except ZIP_ERRORS as exc:
        raise ConvertError(path, f"broken EPUB member {name}: {exc}") from exc
    return parse_xml(data, path, name, "not a valid EPUB")


def _spine(archive: zipfile.ZipFile, path: str) -> tuple[list[str], str]:
    """The chapters' names in the zip in reading order, and the book's title."""
    container = _xml(archive, "META-INF/container.xml", path)
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    package = rootfile.get("full-path") if rootfile is not None else None
    if not package:
        raise ConvertError(path, "not a valid EPUB (container.xml names no package)")
    opf = _xml(archive, package, path)
    base = posixpath.dirname(package)
    items = {
        item.get("id"): item
        for item in opf.iter(f"{_OPF}item")
        if item.get("media-type") in _PAGES and item.get("href")
    }
    chapters = []
    for ref in opf.iter(f"{_OPF}itemref"):
        item = items.get(ref.get("idref"))
        if item is None or ref.get("linear") == "no":
            continue
        name = posixpath.normpath(posixpath.join(base, unquote(item.get("href"))))
        if name not in chapters:
            chapters.append(name)
    title = opf.find(f".//{_DC}title")
    return chapters, (title.text or "").strip() if title is not None else ""


def convert_epub(data: bytes, path: str) -> Converted:
    """Convert an EPUB's chapters to one Markdown text; each block's location is its
    chapter and the nearest id (``text/ch02.xhtml#intro``).

    Raises ``UnsafeFileError`` (zip bomb, a DTD in the container or package file, an entity
    DTD in a chapter) or ``ConvertError``. Chapters are HTML to the HTML converter, whose
    notes (a charset it could not follow) come back in ``meta["notes"]`` under their names.
    """
    check_office_zip(data, path, every_member=False)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:  # checked above; for mypy's sake
        raise ConvertError(path, f"not a valid EPUB ({exc})") from exc
    parts: list[str] = []
    spans: list[ProvenanceSpan] = []
    notes: list[str] = []
    length = 0
    with archive:
        chapters, title = _spine(archive, path)
        if not chapters:
            raise ConvertError(path, "EPUB has no chapters in its spine")
        for name in chapters:
            try:
                page = archive.read(name)
            except (KeyError, *ZIP_ERRORS) as exc:
                raise ConvertError(path, f"broken EPUB chapter {name}: {exc}") from exc
            try:
                chapter = convert_html(page, f"{path}:{name}", book=True)
            except ConvertError as exc:
                if "empty" in str(exc):  # a cover or a blank page
                    continue
                raise
            notes.extend(f"{name}: {note}" for note in chapter.meta.get("notes", ()))
            text = chapter.markdown.rstrip("\n")
            if not text.strip():
                continue
            if parts:
                parts.append("\n\n")
                length += 2
            for span in chapter.provenance:
                element = f"{name}#{span.where.element}" if span.where.element else name
                start, end = length + span.start, length + min(span.end, len(text))
                if start < end:
                    spans.append(ProvenanceSpan(start, end, SourceLocation(element=element)))
            parts.append(text)
            length += len(text)
    markdown = "".join(parts)
    if not markdown.strip():
        raise ConvertError(path, "EPUB has no text")
    meta: dict[str, Any] = {"title": title, "chapters": len(chapters)}
    if notes:
        meta["notes"] = notes
    return Converted(markdown + "\n", tuple(spans), meta)
