"""The Markdown one mail becomes, whatever its format: the ``Mail`` both readers fill
(``narezka.convert.mail`` for ``.eml``, ``narezka.convert.msg`` for Outlook ``.msg``) and
``render``, which writes it with its provenance map (see ``narezka.convert.mail`` for the
shape: title, front matter, body, one section per attachment).
"""

from __future__ import annotations

import contextvars
import mimetypes
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from narezka.convert import anchored_comments, ocr
from narezka.convert.capability import lacking
from narezka.convert.charset import bom_codec, decode_table_text, whatwg_codec
from narezka.convert.limits import human_bytes, max_file_bytes
from narezka.convert.markdown import Converted, MarkdownWriter, escape_line, inline_text
from narezka.convert.options import ConvertOptions
from narezka.errors import ConvertError, NoTextLayerError
from narezka.types import SourceLocation

__all__ = [
    "HEADER_KEYS",
    "MARKDOWN_TYPES",
    "MAX_DEPTH",
    "NO_SUBJECT",
    "Attachment",
    "Mail",
    "attachment_name",
    "current_depth",
    "decode_text",
    "render",
]

HEADER_KEYS = ("subject", "from", "to", "cc", "date", "message_id")
"""The headers a mail keeps as metadata, in this order."""
MAX_DEPTH = 4
"""Mails nested in mails (forwarded as attachments) read below the first: deeper ones are
named, not read; a mail that attaches itself over and over ends here."""
NO_SUBJECT = "(no subject)"

_MARKDOWN = frozenset({".md", ".markdown", ".mdx"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
_UTF16 = {"utf-16": "utf_16", "utf-16le": "utf_16_le", "utf-16be": "utf_16_be"}
# Plain text that Markdown would read as structure: headings, fences, a setext underline
# ("--" under a signature's first line), an HTML block. Lists and quotes stay as they are.
_PLAIN_BLOCK = re.compile(r"^(\s{0,3})(#{1,6}(?=\s|$)|```|~~~|=+\s*$|-+\s*$|<)")
_depth: contextvars.ContextVar[int] = contextvars.ContextVar("mail_depth", default=0)


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file carried by a mail: its name (as the mail gives it, else made up), bytes and
    MIME type."""

    name: str
    data: bytes
    mime: str = "application/octet-stream"


@dataclass(slots=True)
class Mail:
    """One mail, whatever its format: headers, body parts and attachments in order.

    ``bodies`` holds ``(text, kind)`` with kind ``plain``, ``html`` or ``markdown``;
    ``attachments`` holds files and attached mails (``(name, Mail)``)."""

    headers: dict[str, str] = field(default_factory=dict)
    bodies: list[tuple[str, str]] = field(default_factory=list)
    attachments: list[Attachment | tuple[str, Mail]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def decode_text(data: bytes, label: str | None) -> tuple[str, str]:
    """``data`` as text in the charset ``label`` names (a BOM wins, and bytes the label does
    not fit are read as they look), and a note when the label was not followed (else "")."""
    found = bom_codec(data)
    if found is not None:
        return data[found[1] :].decode(found[0], errors="replace"), ""
    name = (label or "").strip().strip("\"'").lower().replace("_", "-")
    codec: str | None = _UTF16.get(name) or (whatwg_codec(name) if name else None)
    if codec is not None:
        try:
            return data.decode(codec), ""
        except UnicodeDecodeError:
            pass
    text, charset = decode_table_text(data)
    if not name or (name in ("us-ascii", "ascii") and charset == "utf-8"):
        return text, ""
    return text, f"declares charset {name[:40]!r} but is not: read as {charset}"


def attachment_name(raw: str | None, mime: str, number: int) -> str:
    """A safe, one-line name for the ``number``-th attachment: the file name the mail gives,
    without folders, or ``attachment-3.pdf`` made from its type."""
    name = inline_text(raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = name.strip(". ")[:200]
    if name:
        return name
    ext = mimetypes.guess_extension(mime, strict=False) or ".bin"
    return f"attachment-{number}{ext}"


def current_depth() -> int:
    """How many mails deep the conversion running now is (0: a mail file of the corpus)."""
    return _depth.get()


# --- Markdown -------------------------------------------------------------------------------


def _plain_blocks(text: str) -> Iterator[str]:
    """Plain text as Markdown paragraphs: its lines kept, any that Markdown would read as a
    heading, fence or HTML escaped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for para in re.split(r"\n[ \t]*\n", text):
        lines = [_PLAIN_BLOCK.sub(r"\1\\\2", line.rstrip()) for line in para.split("\n")]
        block = "\n".join(lines).strip("\n")
        if block.strip():
            yield block


def _front_matter(headers: dict[str, str]) -> str:
    dumped = yaml.safe_dump(headers, allow_unicode=True, sort_keys=False, width=10_000)
    return f"---\n{dumped}---"


def _element(base: str | None, inner: str | None) -> str | None:
    if base is None:
        return inner
    return base if inner is None else f"{base} › {inner}"


def _where(base: str | None, inner: SourceLocation | None = None) -> SourceLocation:
    if inner is None:
        return SourceLocation(element=base)
    return SourceLocation(inner.page, inner.slide, inner.sheet, _element(base, inner.element))


class _Renderer:
    def __init__(self, path: str, options: ConvertOptions) -> None:
        self.path = path
        self.options = options
        self.writer = MarkdownWriter()
        self.notes: list[str] = []
        self.comments: list[dict[str, Any]] = []
        self.lacks_ocr = False
        self.parts: list[int] = []

    def mail(self, mail: Mail, level: int, base: str | None) -> None:
        prefix = f"{base}: " if base else ""
        self.notes.extend(prefix + note for note in mail.notes)
        where = _where(base)
        if level > 1:
            lines = [f"{k.replace('_', '-').capitalize()}: {v}" for k, v in mail.headers.items()]
            shown = [escape_line(line) for line in lines if not line.startswith("Subject:")]
            self.writer.block("  \n".join(shown), where)
        for text, kind in mail.bodies:
            if kind == "plain":
                for block in _plain_blocks(text):
                    self.writer.block(block, where)
            else:
                # The BOM makes the HTML reader keep the mail's charset over any <meta>.
                data = ("\ufeff" + text).encode("utf-8")
                # The body's own HTML ids mean nothing to a reader: it is located as the mail.
                self.embedded(data, ".html" if kind == "html" else ".md", "body", None, where)
        for item in mail.attachments:
            name = item.name if isinstance(item, Attachment) else item[0]
            inner = _element(base, name)
            # Each attachment (an attached mail too) is a document of its own: the splitter
            # packs nothing across the offset where its heading starts.
            self.parts.append(self.writer.length + (0 if self.writer.empty() else 2))
            if isinstance(item, Attachment):
                self.writer.block("#" * min(level + 1, 6) + " " + inline_text(name), _where(inner))
                named = self.writer.length
                self.attachment(item, inner or name)
                if self.writer.length == named:
                    # Nothing read (a sound, a picture without text): its name stays in the
                    # mail's text, but a chunk of a lone heading would be no document.
                    self.parts.pop()
            else:
                subject = item[1].headers.get("subject") or NO_SUBJECT
                self.writer.block(
                    "#" * min(level + 1, 6) + " " + inline_text(subject), _where(inner)
                )
                self.mail(item[1], level + 1, inner)

    def attachment(self, item: Attachment, element: str) -> None:
        from narezka.convert import SUFFIXES

        suffix = _suffix(item)
        limit = max_file_bytes(suffix, self.options)
        if len(item.data) > limit:
            self.notes.append(
                f"{element}: {human_bytes(len(item.data))}, over the limit of "
                f"{human_bytes(limit)} for {suffix or 'such'} files (not read)"
            )
            return
        if suffix in _MARKDOWN or suffix == ".txt" or suffix in SUFFIXES:
            self.embedded(item.data, suffix, element, element, _where(element))
        else:
            what = f"{suffix} files" if suffix else f"type {item.mime}"
            self.notes.append(f"{element}: not read (narezka does not read {what})")

    def embedded(
        self, data: bytes, suffix: str, label: str, base: str | None, where: SourceLocation
    ) -> None:
        """Write a file of the mail converted on its own, its provenance kept under ``base``."""
        if suffix in _MARKDOWN or suffix == ".txt":
            text, note = decode_text(data, None)
            if note:
                self.notes.append(f"{label}: {note}")
            if suffix == ".txt":
                for block in _plain_blocks(text):
                    self.writer.block(block, where)
            else:
                self.writer.block(text.replace("\r\n", "\n").strip("\n"), where)
            return
        from narezka.convert import convert

        if not data.strip():
            self.notes.append(f"{label}: empty, nothing to read")
            return
        token = _depth.set(_depth.get() + 1)
        try:
            if _depth.get() > MAX_DEPTH:
                self.notes.append(f"{label}: a mail nested more than {MAX_DEPTH} deep, not read")
                return
            done = convert(data, suffix, f"{self.path} › {label}", options=self.options)
        except ConvertError as exc:
            self.notes.append(f"{label}: not read ({exc.problem})")
            # A scan or an image left unread for want of OCR: the mail is read again once
            # tesseract is there (narezka.convert.capability), as a scanned PDF is.
            self.lacks_ocr |= isinstance(exc, NoTextLayerError) and ocr.engine(self.options) is None
            return
        finally:
            _depth.reset(token)
        self.notes.extend(f"{label}: {note}" for note in _inner_notes(done.meta))
        self.lacks_ocr |= bool(lacking(done.meta))
        self.comments.extend(self._moved_comments(done, label))
        if base is None:
            self.writer.block(done.markdown.rstrip("\n"), where)
        else:
            self.writer.pieces(list(_pieces(done, base, where)))

    def _moved_comments(self, done: Converted, label: str) -> Iterator[dict[str, Any]]:
        """An attachment's comments (Word, cells, slides) anchored where its text is about to
        be written in the mail's Markdown, each ``on`` named under the attachment
        (``report.docx › 14 дней``): the metadata of the mail's chunks holding that text."""
        offset = self.writer.length + (0 if self.writer.empty() else 2)
        size = len(done.markdown.rstrip("\n"))
        for note in anchored_comments(done.meta):
            start, end = (min(int(x), size) for x in note["at"])
            on = f"{label} › {note['on']}" if note.get("on") else label
            yield {**note, "on": on, "at": [offset + start, offset + end]}


def _inner_notes(meta: Any) -> list[str]:
    notes = [str(n) for n in meta.get("notes", ())]
    if meta.get("no_text_pages"):
        pages = ", ".join(str(p) for p in meta["no_text_pages"])
        notes.append(f"page(s) {pages}: no text layer, not indexed")
    return notes


def _pieces(
    done: Converted, base: str | None, where: SourceLocation
) -> Iterator[tuple[str, SourceLocation]]:
    """The converted text in pieces, each located as the attachment's own map says, under
    the attachment's name (the gaps between spans belong to the attachment)."""
    text = done.markdown.rstrip("\n")
    at = 0
    for span in done.provenance:
        start, end = max(span.start, at), min(span.end, len(text))
        if start > at:
            yield text[at:start], where
        if end > start:
            yield text[start:end], _where(base, span.where)
            at = end
    if at < len(text):
        yield text[at:], where


def _suffix(item: Attachment) -> str:
    """The attachment's suffix, or one its type names when its name has none."""
    dot = item.name.rfind(".")
    suffix = item.name[dot:].lower() if dot > 0 else ""
    if suffix:
        return suffix
    if item.mime in MARKDOWN_TYPES:
        return ".md"
    if item.mime == "text/plain":
        return ".txt"
    if item.mime == "message/rfc822":
        return ".eml"
    return (mimetypes.guess_extension(item.mime, strict=False) or "").lower()


def render(mail: Mail, path: str, options: ConvertOptions) -> Converted:
    """A ``Mail`` as Markdown with its provenance map, ``meta["headers"]`` and the notes; its
    attachments converted under the run's ``options``."""
    renderer = _Renderer(path, options)
    headers = {k: mail.headers[k] for k in HEADER_KEYS if mail.headers.get(k)}
    top = SourceLocation()
    if headers:
        renderer.writer.block(_front_matter(headers), top)
    subject = inline_text(mail.headers.get("subject", "")) or NO_SUBJECT
    renderer.writer.block("# " + subject, top)
    renderer.mail(mail, 1, None)
    meta: dict[str, Any] = {"headers": headers}
    if renderer.comments:
        meta["comments"] = renderer.comments
    if renderer.notes:
        meta["notes"] = renderer.notes
    if renderer.lacks_ocr:
        meta["lacks_ocr"] = True
    done = renderer.writer.result(meta)
    # An attachment that wrote nothing leaves no part: no empty document, no repeated offset.
    parts = sorted({p for p in renderer.parts if 0 < p < len(done.markdown.rstrip())})
    if parts:
        return Converted(done.markdown, done.provenance, {**done.meta, "parts": parts})
    return done
