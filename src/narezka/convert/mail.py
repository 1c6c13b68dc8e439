"""E-mail → Markdown: one mail's headers, body and attachments, each attachment converted as
its own document.

A mail becomes ``# Subject`` (or ``# (no subject)``), its body, then one section
``## <file name>`` per attachment holding that file as ``narezka.convert.convert`` reads it;
the provenance of an attachment's text names the attachment in ``SourceLocation.element``
(``report.pdf``, or ``report.docx › p12`` with the attachment's own element) and keeps its
page, slide or sheet. A mail attached to a mail (``message/rfc822``, a ``.eml`` or ``.msg``
file) is a section of its own, nested up to ``MAX_DEPTH`` mails deep.

The headers (subject, from, to, cc, date, message id) are ``meta["headers"]`` and also the
Markdown's YAML front matter, so that they reach every chunk's metadata the way a note's front
matter does (the front matter is metadata, not body: no chunk holds it).

Nothing in a mail stops its conversion: a part that cannot be read (an unknown type, a damaged
attachment, one over its size limit, an encrypted body) is left out with one note naming it in
``meta["notes"]``, which the run prints as a warning naming the mail.

``convert_eml`` reads RFC 5322 / MIME files with the standard library's ``email`` package;
``narezka.convert.msg`` reads Outlook's ``.msg`` into the same ``Mail`` shape.
"""

from __future__ import annotations

import contextvars
import email
import email.errors
import email.header
import email.parser
import email.policy
import email.utils
import mimetypes
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

import yaml

from narezka.convert.charset import bom_codec, decode_table_text, whatwg_codec
from narezka.convert.limits import human_bytes, max_file_bytes
from narezka.convert.markdown import Converted, MarkdownWriter, escape_line, inline_text
from narezka.errors import ConvertError
from narezka.types import SourceLocation

__all__ = [
    "HEADER_KEYS",
    "MAX_DEPTH",
    "MAX_PARTS",
    "Attachment",
    "Mail",
    "attachment_name",
    "convert_eml",
    "current_depth",
    "decode_text",
    "eml_mail",
    "headers_of",
    "render",
]

HEADER_KEYS = ("subject", "from", "to", "cc", "date", "message_id")
"""The headers a mail keeps as metadata, in this order."""
MAX_DEPTH = 4
"""Mails nested in mails (forwarded as attachments) read below the first: deeper ones are
named, not read; a mail that attaches itself over and over ends here."""
MAX_PARTS = 2000
"""MIME parts of one mail walked: a real mail has tens; a generated one with millions of
empty parts would cost its whole time limit."""
NO_SUBJECT = "(no subject)"

_HEADER_NAMES = {"message_id": "message-id"}
_SIGNATURES = frozenset(
    {"application/pkcs7-signature", "application/x-pkcs7-signature", "application/pgp-signature"}
)
_ENCRYPTED = frozenset(
    {"multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime"}
)
_MARKDOWN = frozenset({".md", ".markdown", ".mdx"})
_MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
_UTF16 = {"utf-16": "utf_16", "utf-16le": "utf_16_le", "utf-16be": "utf_16_be"}
# Plain text that Markdown would read as structure: headings, fences, a setext underline
# ("--" under a signature's first line), an HTML block. Lists and quotes stay as they are.
_PLAIN_BLOCK = re.compile(r"^(\s{0,3})(#{1,6}(?=\s|$)|```|~~~|=+\s*$|-+\s*$|<)")
# What the policy's header parser raises on some malformed headers (besides its defects).
_HEADER_ERRORS = (
    ValueError,
    IndexError,
    TypeError,
    AttributeError,
    LookupError,
    email.errors.MessageError,
)
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


# --- .eml ---------------------------------------------------------------------------------


def _header(msg: Message, name: str) -> str:
    """One header decoded (RFC 2047 words, folded lines), tolerant of malformed ones: a header
    the policy's parser chokes on is decoded word by word from its raw text instead."""
    try:
        values = msg.get_all(name) or []
        return inline_text(", ".join(str(v) for v in values))
    except (
        ValueError,
        IndexError,
        TypeError,
        AttributeError,
        LookupError,
        email.errors.MessageError,
    ):
        pass
    raw = [v for k, v in msg.raw_items() if k.lower() == name]
    parts = []
    for value in raw:
        try:
            words = email.header.decode_header(value)
            parts.append(str(email.header.make_header(words)))
        except (ValueError, LookupError, UnicodeError, email.errors.HeaderParseError):
            parts.append(value)
    return inline_text(", ".join(parts))


def _date(text: str) -> str:
    """A Date header as ISO 8601 when it parses, else as written."""
    try:
        return email.utils.parsedate_to_datetime(text).isoformat()
    except (ValueError, TypeError, IndexError, OverflowError):
        return text


def headers_of(msg: Message) -> dict[str, str]:
    """The kept headers (``HEADER_KEYS``) of a parsed message, decoded; the date in ISO 8601
    when it parses."""
    found = {}
    for key in HEADER_KEYS:
        value = _header(msg, _HEADER_NAMES.get(key, key))
        if value:
            found[key] = _date(value) if key == "date" else value
    return found


def _mime(part: Message) -> str:
    try:
        return part.get_content_type()
    except (ValueError, IndexError, TypeError, AttributeError):
        return "application/octet-stream"


def _filename(part: Message) -> str | None:
    try:
        return part.get_filename()
    except (ValueError, IndexError, TypeError, AttributeError, LookupError):
        return None


def _charset(part: Message) -> str | None:
    try:
        value = part.get_param("charset")
    except (ValueError, IndexError, TypeError, AttributeError):
        return None
    # A malformed parameter runs into the next header ('UTF-8"Content-Transfer-…').
    return value.split('"')[0].split(";")[0] if isinstance(value, str) else None


def _payload(part: Message) -> bytes:
    try:
        data = part.get_payload(decode=True)
    except (ValueError, TypeError, AttributeError, LookupError):
        return b""
    return data if isinstance(data, bytes) else b""


def _is_attachment(part: Message) -> bool:
    try:
        disposition = part.get_content_disposition()
    except (ValueError, IndexError, TypeError, AttributeError):
        disposition = None
    return disposition == "attachment" or _filename(part) is not None


class _EmlReader:
    """Walks one message's MIME tree into a ``Mail``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.parts = 0

    def read(self, msg: Message, depth: int) -> Mail:
        mail = Mail(headers=headers_of(msg))
        self.walk(msg, mail, depth)
        return mail

    def walk(self, part: Message, mail: Mail, depth: int) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            if self.parts == MAX_PARTS + 1:
                mail.notes.append(f"parts after the first {MAX_PARTS:,} not read")
            return
        mime = _mime(part)
        if mime in _ENCRYPTED:
            mail.notes.append(f"encrypted ({mime}): its content cannot be read without the key")
            return
        if mime in _SIGNATURES:
            return  # the signature of a signed mail: its signed parts are read, it is not text
        if mime == "message/rfc822" or (mime.startswith("message/") and part.is_multipart()):
            self.attached_mail(part, mail, depth)
            return
        if part.is_multipart():
            children = part.get_payload()
            if not isinstance(children, list):
                return
            if mime == "multipart/alternative":
                children = _preferred(children)
            for child in children:
                if isinstance(child, Message):
                    self.walk(child, mail, depth)
            return
        if mime in ("text/plain", "text/html") and not _is_attachment(part):
            text, note = decode_text(_payload(part), _charset(part))
            if note:
                mail.notes.append(f"body: {note}")
            mail.bodies.append((text, "html" if mime == "text/html" else "plain"))
            return
        number = sum(1 for a in mail.attachments if isinstance(a, Attachment)) + 1
        name = attachment_name(_filename(part), mime, number)
        data = _payload(part)
        if mime in _MARKDOWN_TYPES or mime == "text/plain":
            # Decoded here, where the part's charset is known: a text file carries no label.
            text, note = decode_text(data, _charset(part))
            if note:
                mail.notes.append(f"{name}: {note}")
            data = text.encode("utf-8")
        mail.attachments.append(Attachment(name, data, mime))

    def attached_mail(self, part: Message, mail: Mail, depth: int) -> None:
        inner = part.get_payload()
        messages = [m for m in inner if isinstance(m, Message)] if isinstance(inner, list) else []
        for message in messages:
            name = _filename(part) or _header(message, "subject") or "attached mail"
            name = attachment_name(name, "message/rfc822", len(mail.attachments) + 1)
            if depth + 1 > MAX_DEPTH:
                mail.notes.append(f"{name}: a mail nested more than {MAX_DEPTH} deep, not read")
                continue
            mail.attachments.append((name, self.read(message, depth + 1)))


def _preferred(children: Sequence[Any]) -> list[Message]:
    """The one alternative of a ``multipart/alternative`` to read: plain text when there is
    one, else HTML, else the richest (last) one, as a reader's mail program would fall back."""
    parts = [c for c in children if isinstance(c, Message)]
    for wanted in ("text/plain", "text/html"):
        for child in parts:
            if _mime(child) == wanted and not _is_attachment(child):
                return [child]
    return parts[-1:]


def _eml_bytes(data: bytes) -> bytes:
    """A mail saved as UTF-16 (with or without its byte order mark) as the bytes a MIME parser
    reads; any other file as it is."""
    found = bom_codec(data)
    codec = found[0] if found is not None and found[0].startswith("utf_16") else None
    head = data[:200]
    if codec is None and len(head) >= 8:
        if head[1::2].count(0) > len(head) // 3 and head[0::2].count(0) == 0:
            codec = "utf_16_le"
        elif head[0::2].count(0) > len(head) // 3 and head[1::2].count(0) == 0:
            codec = "utf_16_be"
    if codec is None:
        return data
    text = data.decode(codec, errors="replace").lstrip("\ufeff")
    return text.encode("utf-8", errors="replace")


def current_depth() -> int:
    """How many mails deep the conversion running now is (0: a mail file of the corpus)."""
    return _depth.get()


def eml_mail(data: bytes, path: str, depth: int) -> Mail:
    """The ``Mail`` in an RFC 5322 / MIME file ``depth`` mails deep (a ``.msg`` file's signed
    content is one). Raises ``ConvertError`` naming ``path`` for bytes no parser takes."""
    parser = email.parser.BytesParser(policy=email.policy.default)
    try:
        msg = parser.parsebytes(_eml_bytes(data))
    except (ValueError, IndexError, TypeError, LookupError, email.errors.MessageError) as exc:
        raise ConvertError(path, f"not a readable e-mail ({type(exc).__name__})") from exc
    return _EmlReader(path).read(msg, depth)


def convert_eml(data: bytes, path: str) -> Converted:
    """Convert an RFC 5322 / MIME mail (``.eml``) to Markdown: subject, headers as front matter
    and ``meta["headers"]``, body, then each attachment as its own section (module docstring).

    Raises ``ConvertError`` naming ``path`` only when the file holds no mail at all.
    """
    mail = eml_mail(data, path, _depth.get())
    if not mail.headers and not any(t.strip() for t, _ in mail.bodies) and not mail.attachments:
        raise ConvertError(path, "not an e-mail: no headers, no body, no attachments")
    return render(mail, path)


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
    def __init__(self, path: str) -> None:
        self.path = path
        self.writer = MarkdownWriter()
        self.notes: list[str] = []

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
            if isinstance(item, Attachment):
                self.writer.block("#" * min(level + 1, 6) + " " + inline_text(name), _where(inner))
                self.attachment(item, inner or name)
            else:
                subject = item[1].headers.get("subject") or NO_SUBJECT
                self.writer.block(
                    "#" * min(level + 1, 6) + " " + inline_text(subject), _where(inner)
                )
                self.mail(item[1], level + 1, inner)

    def attachment(self, item: Attachment, element: str) -> None:
        from narezka.convert import SUFFIXES

        suffix = _suffix(item)
        limit = max_file_bytes(suffix)
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
            done = convert(data, suffix, f"{self.path} › {label}")
        except ConvertError as exc:
            self.notes.append(f"{label}: not read ({exc.problem})")
            return
        finally:
            _depth.reset(token)
        self.notes.extend(f"{label}: {note}" for note in _inner_notes(done.meta))
        if base is None:
            self.writer.block(done.markdown.rstrip("\n"), where)
        else:
            self.writer.pieces(list(_pieces(done, base, where)))


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
    if item.mime in _MARKDOWN_TYPES:
        return ".md"
    if item.mime == "text/plain":
        return ".txt"
    if item.mime == "message/rfc822":
        return ".eml"
    return (mimetypes.guess_extension(item.mime, strict=False) or "").lower()


def render(mail: Mail, path: str) -> Converted:
    """A ``Mail`` as Markdown with its provenance map, ``meta["headers"]`` and the notes."""
    renderer = _Renderer(path)
    headers = {k: mail.headers[k] for k in HEADER_KEYS if mail.headers.get(k)}
    top = SourceLocation()
    if headers:
        renderer.writer.block(_front_matter(headers), top)
    subject = inline_text(mail.headers.get("subject", "")) or NO_SUBJECT
    renderer.writer.block("# " + subject, top)
    renderer.mail(mail, 1, None)
    meta: dict[str, Any] = {"headers": headers}
    if renderer.notes:
        meta["notes"] = renderer.notes
    return renderer.writer.result(meta)
