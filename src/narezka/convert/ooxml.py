"""What Word, PowerPoint and Excel packages share before a library opens them: Strict OOXML
read as Transitional, an encrypted package named as one, and the notes a converter leaves
about parts it skipped."""

from __future__ import annotations

import io
import re
import zipfile

from narezka.convert.guard import ZIP_ERRORS
from narezka.errors import ConvertError, PasswordProtectedError

__all__ = ["OLE_MAGIC", "Notes", "open_package"]

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
"""The first bytes of an OLE compound file: a legacy .doc/.xls/.ppt, or an Office file
encrypted with a password (its package sits inside as the ``EncryptedPackage`` stream)."""
_ENCRYPTED = "EncryptedPackage".encode("utf-16-le")

# Strict OOXML (ISO/IEC 29500 Strict) names every namespace and relationship type under
# purl.oclc.org; Transitional, which python-docx, python-pptx and openpyxl read, under
# schemas.openxmlformats.org with a year: ``…/ooxml/wordprocessingml/main`` is
# ``…/wordprocessingml/2006/main``. The element names are the same.
_STRICT = re.compile(rb"http://purl\.oclc\.org/ooxml/([A-Za-z]+)/")
_TRANSITIONAL = rb"http://schemas.openxmlformats.org/\1/2006/"
_STRICT_MARK = b"http://purl.oclc.org/ooxml/"
_XML_SUFFIXES = (".xml", ".rels", ".vml")


class Notes:
    """What a conversion skipped, one line each, in the order met (``meta["notes"]``; the
    run prints them after the file's name). A part that fails the same way many times is
    named once with its count."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def skip(self, element: str, kind: str) -> None:
        """Say that ``element`` (``block 12``, ``slide 3, shape 'Chart 2'``) of ``kind`` could
        not be read and was left out."""
        line = f"{element}: a {kind} that cannot be read was skipped"
        self._counts[line] = self._counts.get(line, 0) + 1

    def add(self, line: str) -> None:
        """A note of another kind (``no text: …``)."""
        self._counts.setdefault(line, 1)

    def lines(self) -> list[str]:
        return [line if n == 1 else f"{line} ({n} times)" for line, n in self._counts.items()]

    def __bool__(self) -> bool:
        return bool(self._counts)


def _strict_to_transitional(data: bytes, path: str) -> bytes:
    """The package rewritten with Transitional namespaces: every XML member whose bytes name
    a Strict namespace has it replaced; pictures and other members are copied as they are."""
    out = io.BytesIO()
    try:
        with (
            zipfile.ZipFile(io.BytesIO(data)) as source,
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
        ):
            for info in source.infolist():
                member = source.read(info)
                if info.filename.lower().endswith(_XML_SUFFIXES) and _STRICT_MARK in member:
                    member = _STRICT.sub(_TRANSITIONAL, member)
                target.writestr(info.filename, member)
    except ZIP_ERRORS as exc:
        raise ConvertError(path, "not a valid Office file (a damaged zip member)") from exc
    return out.getvalue()


def _is_strict(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            rels = archive.read("_rels/.rels")
    except (KeyError, *ZIP_ERRORS):
        return False
    return _STRICT_MARK in rels


def open_package(data: bytes, path: str, kind: str) -> bytes:
    """The bytes a library should open for an Office file of ``kind`` (``Word``…): Strict
    OOXML turned Transitional, others as they are. Raises ``PasswordProtectedError`` for
    an encrypted file and ``ConvertError`` for a legacy binary one (both OLE containers, not
    zips), before any zip check would call them broken."""
    if data.startswith(OLE_MAGIC):
        if _ENCRYPTED in data:
            raise PasswordProtectedError(
                path, f"the {kind} file is password-protected (encrypted): not read"
            )
        raise ConvertError(
            path, f"a legacy binary Office file, not a {kind} package (save it as one)"
        )
    if _is_strict(data):
        return _strict_to_transitional(data, path)
    return data
