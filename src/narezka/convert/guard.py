"""Checks made before a parser sees a file: zip bombs and XML DTDs in Office files."""

from __future__ import annotations

import io
import zipfile
import zlib
from typing import Any

from narezka.errors import ConvertError, UnsafeFileError

__all__ = ["MAX_MEMBERS", "MAX_UNZIPPED", "check_office_zip", "parse_xml", "refuse_dtd"]

MAX_UNZIPPED = 256 * 1024 * 1024
"""Decompressed bytes an Office file may hold in all: real documents of thousands of pages
stay under a tenth of it; a zip bomb declares gigabytes."""
MAX_MEMBERS = 20_000
MAX_RATIO = 200
"""A member compressed over this ratio and bigger than ``_RATIO_FLOOR`` is taken for a bomb
(XML compresses 10-30x; a run of one repeated byte, 1000x)."""
_RATIO_FLOOR = 16 * 1024 * 1024
_SNIFF = 4096


def refuse_dtd(head: bytes, path: str, what: str) -> None:
    """Raise ``UnsafeFileError`` when an XML prologue declares a DTD or an entity.

    Office XML never has one; a DTD is how entity expansion ("billion laughs") and external
    entities (reading local files) get in, so refusing it is simpler and safer than trusting
    each parser's settings.
    """
    lowered = head.lower()
    if b"<!doctype" in lowered or b"<!entity" in lowered:
        raise UnsafeFileError(path, f"{what} declares an XML DTD or entity (refused, not parsed)")


def parse_xml(data: bytes, path: str, name: str, invalid: str) -> Any:
    """``name``'s XML parsed without DTDs, entities or the network (a DTD is refused before
    the parser sees it); a syntax error is a ``ConvertError`` saying ``invalid`` and why."""
    from lxml import etree

    refuse_dtd(data[:_SNIFF], path, name)
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        return etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise ConvertError(path, f"{invalid} ({name}: {exc})") from exc


def check_office_zip(data: bytes, path: str) -> None:
    """Raise a ``ConvertError`` for a zip that is not one, or ``UnsafeFileError`` for one that
    would decompress past the caps or whose XML declares a DTD.

    Sizes are the ones the zip declares: ``zipfile`` never inflates a member past its declared
    size, so a lying header cannot get around the cap.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ConvertError(path, f"not a valid Office file (broken zip: {exc})") from exc
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise UnsafeFileError(path, f"zip holds {len(members)} files (over {MAX_MEMBERS})")
        total = 0
        for info in members:
            total += info.file_size
            if total > MAX_UNZIPPED:
                raise UnsafeFileError(
                    path, f"decompresses to over {MAX_UNZIPPED // 2**20} MB (a zip bomb?)"
                )
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > _RATIO_FLOOR and ratio > MAX_RATIO:
                raise UnsafeFileError(
                    path, f"{info.filename} compressed {ratio:.0f}:1 (a zip bomb?)"
                )
        for info in members:
            if info.filename.endswith((".xml", ".rels")):
                try:
                    with archive.open(info) as member:
                        head = member.read(_SNIFF)
                except (
                    zipfile.BadZipFile,
                    OSError,
                    ValueError,
                    EOFError,
                    zlib.error,
                    NotImplementedError,
                ) as exc:
                    raise ConvertError(path, f"broken zip member {info.filename}: {exc}") from exc
                refuse_dtd(head, path, info.filename)
