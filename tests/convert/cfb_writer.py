"""A minimal writer of OLE compound files ([MS-CFB] version 3) and of Outlook ``.msg`` files
inside them, so that the ``.msg`` tests make their files instead of committing binaries.

Only what a reader needs: 512-byte sectors, one FAT (up to 109 FAT sectors, no DIFAT), the
mini stream for streams under 4096 bytes, and a directory whose siblings hang as a chain of
right children (a valid, if unbalanced, tree; every node black).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

SECTOR = 512
MINI = 64
CUTOFF = 4096
FREE, END, FATSECT, NOSTREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF


@dataclass(eq=False)  # nodes are told apart by identity: two equal streams are two entries
class Node:
    """A storage (``children``) or a stream (``data``)."""

    name: str
    data: bytes | None = None
    children: list[Node] = field(default_factory=list)


def _pad(data: bytes, size: int) -> bytes:
    return data + b"\x00" * (-len(data) % size)


def compound_file(root: list[Node]) -> bytes:
    """The bytes of a compound file whose root storage holds ``root``."""
    entries: list[tuple[Node, int]] = []  # (node, object type) in directory order
    next_sibling: dict[int, Node] = {}

    def number(nodes: list[Node]) -> None:
        for at, node in enumerate(nodes):
            entries.append((node, 2 if node.data is not None else 1))
            if at + 1 < len(nodes):
                next_sibling[id(node)] = nodes[at + 1]
            number(node.children)

    root_node = Node("Root Entry", children=root)
    entries.append((root_node, 5))
    number(root)
    ids = {id(node): n for n, (node, _) in enumerate(entries)}

    mini = bytearray()
    minifat: list[int] = []
    big: list[tuple[Node, bytes]] = []
    start: dict[int, int] = {}
    for node, kind in entries:
        if kind != 2:
            continue
        data = node.data or b""
        if len(data) >= CUTOFF:
            big.append((node, data))
            continue
        if not data:
            start[id(node)] = END
            continue
        first = len(minifat)
        count = -(-len(data) // MINI)
        minifat.extend(range(first + 1, first + count))
        minifat.append(END)
        start[id(node)] = first
        mini += _pad(data, MINI)

    sectors: list[bytes] = []
    fat: list[int] = []

    def chain(data: bytes) -> int:
        if not data:
            return END
        first = len(sectors)
        count = -(-len(data) // SECTOR)
        padded = _pad(data, SECTOR)
        for n in range(count):
            sectors.append(padded[n * SECTOR : (n + 1) * SECTOR])
            fat.append(first + n + 1 if n < count - 1 else END)
        return first

    mini_start = chain(bytes(mini))
    minifat_bytes = b"".join(struct.pack("<I", v) for v in minifat)
    minifat_start = chain(minifat_bytes)
    for node, data in big:
        start[id(node)] = chain(data)

    directory = bytearray()
    for node, kind in entries:
        name = node.name.encode("utf-16-le")
        children = node.children
        after = next_sibling.get(id(node))
        sibling = ids[id(after)] if after is not None else NOSTREAM
        child = ids[id(children[0])] if children else NOSTREAM
        if kind == 5:
            first, size = (mini_start, len(mini)) if mini else (END, 0)
        elif kind == 2:
            first, size = start[id(node)], len(node.data or b"")
        else:
            first, size = 0, 0
        directory += struct.pack(
            "<64sHBBIII16sIQQIQ",
            name,
            len(name) + 2,
            kind,
            1,
            NOSTREAM,
            sibling,
            child,
            b"\x00" * 16,
            0,
            0,
            0,
            first,
            size,
        )
    directory_start = chain(bytes(_pad(bytes(directory), SECTOR)))

    # The FAT covers every sector, its own included.
    fat_count = 1
    while (len(sectors) + fat_count) > fat_count * (SECTOR // 4):
        fat_count += 1
    fat_first = len(sectors)
    fat.extend([FATSECT] * fat_count)
    fat.extend([FREE] * (fat_count * (SECTOR // 4) - len(fat)))
    fat_bytes = b"".join(struct.pack("<I", v) for v in fat)
    for n in range(fat_count):
        sectors.append(fat_bytes[n * SECTOR : (n + 1) * SECTOR])

    difat = [fat_first + n for n in range(fat_count)] + [FREE] * (109 - fat_count)
    header = struct.pack(
        "<8s16sHHHHH6sIIIIIIIII",
        bytes.fromhex("D0CF11E0A1B11AE1"),
        b"\x00" * 16,
        0x3E,
        3,
        0xFFFE,
        9,
        6,
        b"\x00" * 6,
        0,
        fat_count,
        directory_start,
        0,
        CUTOFF,
        minifat_start if minifat else END,
        -(-len(minifat_bytes) // SECTOR),
        END,
        0,
    ) + b"".join(struct.pack("<I", v) for v in difat)
    return header + b"".join(sectors)


# --- .msg ----------------------------------------------------------------------------------


def _unicode(prop: int, text: str) -> Node:
    return Node(f"__substg1.0_{prop:04X}001F", text.encode("utf-16-le"))


def _binary(prop: int, data: bytes) -> Node:
    return Node(f"__substg1.0_{prop:04X}0102", data)


def _properties(header: int, fixed: dict[int, tuple[int, int]]) -> Node:
    """The fixed-size property table: ``{id: (type, value)}`` after a ``header``-byte head."""
    rows = b"".join(
        struct.pack("<IIQ", (prop << 16) | kind, 6, value) for prop, (kind, value) in fixed.items()
    )
    return Node("__properties_version1.0", b"\x00" * header + rows)


@dataclass
class MsgAttachment:
    name: str
    data: bytes = b""
    mime: str = ""
    mail: MsgMail | None = None
    """An attached mail (attach method 5) instead of ``data``."""


@dataclass
class MsgMail:
    subject: str = ""
    sender: tuple[str, str] = ("", "")
    to: list[tuple[str, str]] = field(default_factory=list)
    cc: list[tuple[str, str]] = field(default_factory=list)
    body: str | None = None
    html: bytes | None = None
    rtf: bytes | None = None
    message_class: str = "IPM.Note"
    transport_headers: str = ""
    submit_time: int = 0
    """A FILETIME (100 ns since 1601)."""
    attachments: list[MsgAttachment] = field(default_factory=list)
    codepage: int = 65001


def _mail_nodes(mail: MsgMail, header: int) -> list[Node]:
    nodes = [_unicode(0x001A, mail.message_class)]
    if mail.subject:
        nodes.append(_unicode(0x0037, mail.subject))
    if mail.sender[0]:
        nodes.append(_unicode(0x0C1A, mail.sender[0]))
    if mail.sender[1]:
        nodes.append(_unicode(0x0C1F, mail.sender[1]))
    if mail.body is not None:
        nodes.append(_unicode(0x1000, mail.body))
    if mail.html is not None:
        nodes.append(_binary(0x1013, mail.html))
    if mail.rtf is not None:
        nodes.append(_binary(0x1009, mail.rtf))
    if mail.transport_headers:
        nodes.append(_unicode(0x007D, mail.transport_headers))
    fixed: dict[int, tuple[int, int]] = {0x3FDE: (0x0003, mail.codepage)}
    if mail.submit_time:
        fixed[0x0039] = (0x0040, mail.submit_time)
    nodes.append(_properties(header, fixed))
    recipients = [(1, r) for r in mail.to] + [(2, r) for r in mail.cc]
    for n, (kind, (name, address)) in enumerate(recipients):
        nodes.append(
            Node(
                f"__recip_version1.0_#{n:08X}",
                children=[
                    _unicode(0x3001, name),
                    _unicode(0x3003, address),
                    _properties(8, {0x0C15: (0x0003, kind)}),
                ],
            )
        )
    for n, attachment in enumerate(mail.attachments):
        parts = [_unicode(0x3707, attachment.name)]
        if attachment.mime:
            parts.append(_unicode(0x370E, attachment.mime))
        if attachment.mail is not None:
            inner = _mail_nodes(attachment.mail, 24)
            parts.append(Node("__substg1.0_3701000D", children=inner))
            parts.append(_properties(8, {0x3705: (0x0003, 5)}))
        else:
            parts.append(_binary(0x3701, attachment.data))
            parts.append(_properties(8, {0x3705: (0x0003, 1)}))
        nodes.append(Node(f"__attach_version1.0_#{n:08X}", children=parts))
    return nodes


def msg_file(mail: MsgMail) -> bytes:
    """An Outlook ``.msg`` file holding ``mail``."""
    return compound_file(_mail_nodes(mail, 32))
