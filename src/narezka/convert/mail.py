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

import email
import email.errors
import email.header
import email.parser
import email.policy
import email.utils
from collections.abc import Sequence
from email.message import Message
from typing import Any

from narezka.convert.charset import bom_codec
from narezka.convert.mail_markdown import (
    HEADER_KEYS,
    MARKDOWN_TYPES,
    MAX_DEPTH,
    Attachment,
    Mail,
    attachment_name,
    current_depth,
    decode_text,
    render,
)
from narezka.convert.markdown import Converted, inline_text
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import ConvertError

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

MAX_PARTS = 2000
"""MIME parts of one mail walked: a real mail has tens; a generated one with millions of
empty parts would cost its whole time limit."""

_HEADER_NAMES = {"message_id": "message-id"}
_SIGNATURES = frozenset(
    {"application/pkcs7-signature", "application/x-pkcs7-signature", "application/pgp-signature"}
)
_ENCRYPTED = frozenset(
    {"multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime"}
)
# What the policy's header parser raises on some malformed headers (besides its defects).
_HEADER_ERRORS = (
    ValueError,
    IndexError,
    TypeError,
    AttributeError,
    LookupError,
    email.errors.MessageError,
)

# --- .eml ---------------------------------------------------------------------------------


def _header(msg: Message, name: str) -> str:
    """One header decoded (RFC 2047 words, folded lines), tolerant of malformed ones: a header
    the policy's parser chokes on is decoded word by word from its raw text instead."""
    try:
        values = msg.get_all(name) or []
        return inline_text(", ".join(str(v) for v in values))
    except _HEADER_ERRORS:
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
        elif mime in _SIGNATURES:
            pass  # the signature of a signed mail: its signed parts are read, it is not text
        elif mime == "message/rfc822" or (mime.startswith("message/") and part.is_multipart()):
            self.attached_mail(part, mail, depth)
        elif part.is_multipart():
            self.children(part, mime, mail, depth)
        elif mime in ("text/plain", "text/html") and not _is_attachment(part):
            text, note = decode_text(_payload(part), _charset(part))
            if note:
                mail.notes.append(f"body: {note}")
            mail.bodies.append((text, "html" if mime == "text/html" else "plain"))
        else:
            self.attachment(part, mime, mail)

    def children(self, part: Message, mime: str, mail: Mail, depth: int) -> None:
        children = part.get_payload()
        if not isinstance(children, list):
            return
        if mime == "multipart/alternative":
            children = _preferred(children)
        for child in children:
            if isinstance(child, Message):
                self.walk(child, mail, depth)

    def attachment(self, part: Message, mime: str, mail: Mail) -> None:
        number = sum(1 for a in mail.attachments if isinstance(a, Attachment)) + 1
        name = attachment_name(_filename(part), mime, number)
        data = _payload(part)
        if mime in MARKDOWN_TYPES or mime == "text/plain":
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


def eml_mail(data: bytes, path: str, depth: int) -> Mail:
    """The ``Mail`` in an RFC 5322 / MIME file ``depth`` mails deep (a ``.msg`` file's signed
    content is one). Raises ``ConvertError`` naming ``path`` for bytes no parser takes."""
    parser = email.parser.BytesParser(policy=email.policy.default)
    try:
        msg = parser.parsebytes(_eml_bytes(data))
    except (ValueError, IndexError, TypeError, LookupError, email.errors.MessageError) as exc:
        raise ConvertError(path, f"not a readable e-mail ({type(exc).__name__})") from exc
    return _EmlReader(path).read(msg, depth)


def convert_eml(data: bytes, path: str, options: ConvertOptions = DEFAULT) -> Converted:
    """Convert an RFC 5322 / MIME mail (``.eml``) to Markdown: subject, headers as front matter
    and ``meta["headers"]``, body, then each attachment as its own section (module docstring).

    Raises ``ConvertError`` naming ``path`` only when the file holds no mail at all.
    """
    mail = eml_mail(data, path, current_depth())
    if not mail.headers and not any(t.strip() for t, _ in mail.bodies) and not mail.attachments:
        raise ConvertError(path, "not an e-mail: no headers, no body, no attachments")
    return render(mail, path, options)
