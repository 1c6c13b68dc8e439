"""Outlook ``.msg`` → Markdown: the OLE compound file read with ``olefile`` into the same
``Mail`` an ``.eml`` becomes (``narezka.convert.mail``), then rendered the same way.

A ``.msg`` keeps each MAPI property of the mail in a stream named ``__substg1.0_PPPPTTTT``
(property id, type: ``001F`` UTF-16, ``001E`` the mail's code page, ``0102`` bytes) and the
fixed-size ones (dates, numbers) in a ``__properties_version1.0`` table; recipients and
attachments are storages of their own, and a mail attached to the mail is a storage holding
a whole mail again. Layout per [MS-OXMSG]; property ids per [MS-OXPROPS].

Read: subject, sender, recipients (To, Cc), the submit date, message id, the plain body (else
the HTML body), attachments with their long file names and data, and attached mails. An
encrypted mail is named with why; a signed one (S/MIME multipart/signed) is read from its
signed MIME content. A body kept only as compressed RTF is named, not read.
"""

from __future__ import annotations

import codecs
import email.parser
import email.policy
import io
import struct
from datetime import UTC, datetime, timedelta
from typing import Any

from narezka.convert.mail import (
    MAX_DEPTH,
    MAX_PARTS,
    Attachment,
    Mail,
    attachment_name,
    current_depth,
    decode_text,
    eml_mail,
    headers_of,
    render,
)
from narezka.convert.markdown import Converted, inline_text
from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.errors import ConvertError

__all__ = ["convert_msg"]

_SUBJECT = 0x0037
_MESSAGE_CLASS = 0x001A
_HEADERS = 0x007D
_SENDER_NAME, _SENDER_EMAIL = 0x0C1A, 0x0C1F
_REPRESENTING_NAME, _REPRESENTING_EMAIL = 0x0042, 0x0065
_SENDER_SMTP = 0x5D01
_BODY, _HTML, _RTF = 0x1000, 0x1013, 0x1009
_MESSAGE_ID = 0x1035
_SUBMIT_TIME, _DELIVERY_TIME = 0x0039, 0x0E06
_CODEPAGE, _INTERNET_CPID = 0x3FFD, 0x3FDE
_DISPLAY_NAME, _EMAIL, _SMTP = 0x3001, 0x3003, 0x39FE
_RECIPIENT_TYPE = 0x0C15
_LONG_NAME, _SHORT_NAME, _ATTACH_DATA, _ATTACH_MIME = 0x3707, 0x3704, 0x3701, 0x370E
_ATTACH_METHOD = 0x3705
_EMBEDDED_MESSAGE = 5
_RECIPIENT_FIELDS = {1: "to", 2: "cc"}  # 3, Bcc, is not shown to the mail's readers
_PROPERTIES = "__properties_version1.0"
_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)
# Windows code pages whose Python codec is not simply "cp<number>".
_CODE_PAGES = {
    65001: "utf_8",
    20127: "ascii",
    1200: "utf_16_le",
    1201: "utf_16_be",
    20866: "koi8_r",
    21866: "koi8_u",
    28591: "latin_1",
    28592: "iso8859_2",
    28595: "iso8859_5",
    28597: "iso8859_7",
    28599: "iso8859_9",
    28605: "iso8859_15",
    50220: "iso2022_jp",
    51932: "euc_jp",
    936: "gbk",
    54936: "gb18030",
    10007: "mac_cyrillic",
}
_ENCRYPTED_TYPES = frozenset(
    {"application/pgp-encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime"}
)
_OLE_ERRORS = (
    OSError,
    ValueError,
    struct.error,
    IndexError,
    KeyError,
    EOFError,
    TypeError,
    RecursionError,
    OverflowError,
)
"""What olefile raises on a damaged compound file (its own errors are ``OSError``s; a
directory whose siblings loop runs its tree walk out of stack; a sector count past any
index overflows one)."""


def _codec(page: int | None) -> str:
    if page is None:
        return "cp1252"
    name = _CODE_PAGES.get(page, f"cp{page}")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return "cp1252"


class _Storage:
    """One mail's storage in the compound file: its properties by id."""

    def __init__(self, ole: Any, prefix: list[str], header: int) -> None:
        self.ole = ole
        self.prefix = prefix
        self.fixed = self._fixed(header)
        self.names: dict[int, list[str]] = {}
        for entry in ole.listdir(streams=True, storages=True):
            if len(entry) != len(prefix) + 1 or entry[: len(prefix)] != prefix:
                continue
            name = entry[-1]
            if name.startswith("__substg1.0_") and len(name) == 20:
                try:
                    self.names.setdefault(int(name[12:16], 16), []).append(name)
                except ValueError:
                    continue
        cpid = self.fixed.get(_INTERNET_CPID) or self.fixed.get(_CODEPAGE)
        self.codepage = _codec(cpid)

    def _fixed(self, header: int) -> dict[int, int]:
        """The fixed-size properties (numbers, dates) from the properties table."""
        path = [*self.prefix, _PROPERTIES]
        if not self.ole.exists("/".join(path)):
            return {}
        table = self.ole.openstream(path).read()
        found = {}
        for at in range(header, len(table) - 15, 16):
            tag, _flags, value = struct.unpack_from("<IIQ", table, at)
            found[tag >> 16] = value if tag & 0xFFFF in (0x0040, 0x0014) else value & 0xFFFFFFFF
        return found

    def raw(self, prop: int) -> tuple[str, bytes] | None:
        """``(type, bytes)`` of a variable-size property's stream, or None."""
        for name in self.names.get(prop, ()):
            kind = name[16:]
            if kind in ("001F", "001E", "0102"):
                return kind, self.ole.openstream([*self.prefix, name]).read()
        return None

    def text(self, prop: int) -> str:
        found = self.raw(prop)
        if found is None:
            return ""
        kind, data = found
        if kind == "001F":
            return data.decode("utf_16_le", errors="replace").rstrip("\x00")
        return data.decode(self.codepage, errors="replace").rstrip("\x00")

    def has_storage(self, prop: int) -> list[str] | None:
        for name in self.names.get(prop, ()):
            if name.endswith("000D"):
                return [*self.prefix, name]
        return None

    def children(self, kind: str) -> list[list[str]]:
        """The recipient or attachment storages right under this one, in order."""
        found = []
        for entry in self.ole.listdir(streams=False, storages=True):
            if (
                len(entry) == len(self.prefix) + 1
                and entry[: len(self.prefix)] == self.prefix
                and entry[-1].startswith(f"__{kind}_version1.0_#")
            ):
                found.append(entry)
        return sorted(found)


def _address(name: str, address: str) -> str:
    name, address = inline_text(name), inline_text(address)
    if not address or address in name:
        return name or address
    return f"{name} <{address}>" if name and name != address else address


def _date(value: int | None) -> str:
    if not value:
        return ""
    try:
        return (_FILETIME_EPOCH + timedelta(microseconds=value // 10)).isoformat()
    except OverflowError:
        return ""


class _MsgReader:
    def __init__(self, ole: Any, path: str) -> None:
        self.ole = ole
        self.path = path
        self.parts = 0

    def read(self, prefix: list[str], depth: int) -> Mail:
        # The top mail's properties table has a 32-byte header, an attached mail's 24.
        store = _Storage(self.ole, prefix, 32 if not prefix else 24)
        mail = Mail(headers=self.headers(store))
        kind = store.text(_MESSAGE_CLASS).lower()
        transport = store.text(_HEADERS).lower()
        if ".smime" in kind and "multipartsigned" not in kind:
            mail.notes.append("encrypted (S/MIME): its content cannot be read without the key")
            return mail
        if "multipart/encrypted" in transport:
            mail.notes.append("encrypted (PGP): its content cannot be read without the key")
            return mail
        body = store.text(_BODY)
        if body.strip():
            mail.bodies.append((body, "plain"))
        else:
            html = store.raw(_HTML)
            if html is not None:
                text = (
                    html[1].decode("utf_16_le", errors="replace")
                    if html[0] == "001F"
                    else decode_text(html[1], store.codepage)[0]
                )
                mail.bodies.append((text, "html"))
            elif store.raw(_RTF) is not None and "multipartsigned" not in kind:
                mail.notes.append("body kept only as RTF, not read")
        for number, attach in enumerate(store.children("attach"), 1):
            self.parts += 1
            if self.parts > MAX_PARTS:
                mail.notes.append(f"attachments after the first {MAX_PARTS:,} not read")
                break
            self.attachment(attach, number, mail, depth, signed="multipartsigned" in kind)
        return mail

    def headers(self, store: _Storage) -> dict[str, str]:
        transport = store.text(_HEADERS)
        headers = (
            headers_of(
                email.parser.HeaderParser(policy=email.policy.default).parsestr(
                    transport, headersonly=True
                )
            )
            if transport.strip()
            else {}
        )
        subject = inline_text(store.text(_SUBJECT))
        sender = _address(
            store.text(_REPRESENTING_NAME) or store.text(_SENDER_NAME),
            store.text(_REPRESENTING_EMAIL)
            or store.text(_SENDER_SMTP)
            or store.text(_SENDER_EMAIL),
        )
        recipients: dict[str, list[str]] = {}
        for prefix in store.children("recip"):
            recip = _Storage(self.ole, prefix, 8)
            field = _RECIPIENT_FIELDS.get(recip.fixed.get(_RECIPIENT_TYPE, 1))
            if field is not None:
                who = _address(recip.text(_DISPLAY_NAME), recip.text(_SMTP) or recip.text(_EMAIL))
                if who:
                    recipients.setdefault(field, []).append(who)
        date = _date(store.fixed.get(_SUBMIT_TIME) or store.fixed.get(_DELIVERY_TIME))
        found = {
            "subject": subject,
            "from": sender,
            "to": ", ".join(recipients.get("to", ())),
            "cc": ", ".join(recipients.get("cc", ())),
            "date": date,
            "message_id": inline_text(store.text(_MESSAGE_ID)),
        }
        if headers.get("date"):  # the date it was sent, not when Outlook saved it
            found["date"] = headers["date"]
        return {**headers, **{k: v for k, v in found.items() if v}}

    def attachment(
        self, prefix: list[str], number: int, mail: Mail, depth: int, *, signed: bool
    ) -> None:
        store = _Storage(self.ole, prefix, 8)
        mime = inline_text(store.text(_ATTACH_MIME)).lower() or "application/octet-stream"
        raw = store.text(_LONG_NAME) or store.text(_SHORT_NAME) or store.text(_DISPLAY_NAME)
        name = attachment_name(raw, mime, number)
        inner = store.has_storage(_ATTACH_DATA)
        if inner is not None:
            if store.fixed.get(_ATTACH_METHOD) != _EMBEDDED_MESSAGE:
                mail.notes.append(f"{name}: an embedded OLE object, not read")
            elif depth + 1 > MAX_DEPTH:
                mail.notes.append(f"{name}: a mail nested more than {MAX_DEPTH} deep, not read")
            else:
                attached = self.read(inner, depth + 1)
                title = attached.headers.get("subject") or name
                mail.attachments.append((attachment_name(title, mime, number), attached))
            return
        found = store.raw(_ATTACH_DATA)
        data = found[1] if found is not None else b""
        if mime in _ENCRYPTED_TYPES:
            mail.notes.append(f"{name}: encrypted ({mime}), cannot be read without the key")
            return
        if signed and mime == "multipart/signed":
            # S/MIME signed: the attachment is the whole signed MIME mail; its parts are read.
            signed_mail = eml_mail(data, self.path, depth)
            mail.bodies.extend(signed_mail.bodies)
            mail.attachments.extend(signed_mail.attachments)
            mail.notes.extend(signed_mail.notes)
            return
        mail.attachments.append(Attachment(name, data, mime))


def convert_msg(data: bytes, path: str, options: ConvertOptions = DEFAULT) -> Converted:
    """Convert an Outlook ``.msg`` mail to Markdown as ``convert_eml`` converts an ``.eml``.

    Raises ``ConvertError`` naming ``path`` when the file is not a readable compound file. An
    encrypted mail keeps its headers and says why its content is not read.
    """
    import olefile

    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            mail = _MsgReader(ole, path).read([], current_depth())
    except _OLE_ERRORS as exc:
        raise ConvertError(path, "not a readable Outlook .msg file (damaged?)") from exc
    return render(mail, path, options)
