"""Checks made before a parser sees a file: zip bombs and XML DTDs in Office files.

A DTD is how entity expansion ("billion laughs") and external entities (reading local files)
get into XML; Office, OpenDocument and EPUB package files never need one. It is refused by a
parser, not by looking for ``<!DOCTYPE`` in the first bytes: libxml2 (which python-docx,
python-pptx, openpyxl and ``parse_xml`` read with) and expat (openpyxl's worksheets and shared
strings, through defusedxml) each read the member up to its root element, in whatever encoding
the member declares (UTF-16, UTF-7, a BOM…), and a DOCTYPE either of them meets refuses the
file. A DOCTYPE cannot legally come after the root element: the non-recovering parsers those
libraries use fail on one there, and the file is a ``ConvertError``. The check streams: a
member is read in blocks until its root element opens, never whole.

HTML pages are not XML: ``<!DOCTYPE html>`` is normal there, and the HTML parser never loads
a DTD nor expands an entity one declares (``narezka.convert.html``).
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterable
from typing import Any
from xml.parsers import expat

from narezka.errors import ConvertError, UnsafeFileError

__all__ = [
    "MAX_MEMBERS",
    "MAX_UNZIPPED",
    "ZIP_ERRORS",
    "check_office_zip",
    "declares_dtd",
    "parse_xml",
]

MAX_UNZIPPED = 256 * 1024 * 1024
"""Decompressed bytes an Office file may hold in all: real documents of thousands of pages
stay under a tenth of it; a zip bomb declares gigabytes."""
MAX_MEMBERS = 20_000
MAX_RATIO = 200
"""A member compressed over this ratio and bigger than ``_RATIO_FLOOR`` is taken for a bomb
(XML compresses 10-30x; a run of one repeated byte, 1000x)."""
_RATIO_FLOOR = 16 * 1024 * 1024
_BLOCK = 64 * 1024
_MEDIA_TYPES = ("image/", "audio/", "video/", "font/")
ZIP_ERRORS = (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error, NotImplementedError)
"""What reading a damaged zip member raises (a bad CRC or header, an unknown compression)."""


class _Stop(Exception):
    """Raised from a parser's callback: the prolog has been read, ``dtd`` says how it ended."""

    def __init__(self, dtd: bool) -> None:
        super().__init__()
        self.dtd = dtd


class _Prolog:
    """An lxml parser target that stops at the DOCTYPE or at the root element's start."""

    def doctype(self, *_: object) -> None:
        raise _Stop(dtd=True)

    def start(self, *_: object) -> None:
        raise _Stop(dtd=False)

    def end(self, *_: object) -> None:  # pragma: no cover - never reached: start stops first
        pass

    def data(self, *_: object) -> None:
        pass

    def close(self) -> None:
        pass


class _Reader:
    """One parser reading the blocks of a member until it can tell whether a DTD comes first;
    ``verdict`` is True (a DTD), False (the root element first) or None (not XML to it)."""

    def __init__(self, feed: Any) -> None:
        self._feed = feed
        self.done = False
        self.verdict: bool | None = None

    def read(self, block: bytes, final: bool) -> None:
        if self.done:
            return
        try:
            self._feed(block, final)
        except _Stop as stop:
            self.done, self.verdict = True, stop.dtd
        except Exception:  # a syntax error, an unknown encoding: not XML to this parser
            self.done = True
        else:
            self.done = final


def _libxml2() -> _Reader:
    from lxml import etree

    parser = etree.XMLParser(
        target=_Prolog(),
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
    )

    def feed(block: bytes, final: bool) -> None:
        if block:
            parser.feed(block)
        if final:
            parser.close()

    return _Reader(feed)


def _expat() -> _Reader:
    parser = expat.ParserCreate()

    def doctype(*_: object) -> None:
        raise _Stop(dtd=True)

    def start(*_: object) -> None:
        raise _Stop(dtd=False)

    parser.StartDoctypeDeclHandler = doctype
    parser.StartElementHandler = start
    return _Reader(parser.Parse)


def declares_dtd(blocks: Iterable[bytes]) -> bool:
    """Whether the XML whose bytes come in ``blocks`` declares a DTD before its root element,
    as libxml2 or expat reads it. Bytes neither reads as XML (a picture) declare none.
    Reading stops as soon as both parsers can tell."""
    readers = (_libxml2(), _expat())
    for block in blocks:
        for reader in readers:
            reader.read(block, final=False)
        if any(r.verdict for r in readers) or all(r.done for r in readers):
            break
    else:
        for reader in readers:
            reader.read(b"", final=True)
    return any(r.verdict for r in readers)


def _blocks(data: bytes) -> Iterable[bytes]:
    return (data[i : i + _BLOCK] for i in range(0, len(data), _BLOCK))


def parse_xml(data: bytes, path: str, name: str, invalid: str) -> Any:
    """``name``'s XML parsed without DTDs, entities or the network: a DTD anywhere before the
    root element is an ``UnsafeFileError``, a syntax error a ``ConvertError`` saying
    ``invalid`` and why."""
    from lxml import etree

    if declares_dtd(_blocks(data)):
        raise UnsafeFileError(path, f"{name} declares an XML DTD (refused, not parsed)")
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise ConvertError(path, f"{invalid} ({name}: {exc})") from exc
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:  # the parser's own word, to be sure
        raise UnsafeFileError(path, f"{name} declares an XML DTD (refused, not parsed)")
    return root


def _member_declares_dtd(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> bool:
    try:
        with archive.open(info) as member:
            return declares_dtd(iter(lambda: member.read(_BLOCK), b""))
    except ZIP_ERRORS as exc:
        raise ConvertError(path, f"broken zip member {info.filename} (damaged data)") from exc


def _media(archive: zipfile.ZipFile, path: str) -> frozenset[str]:
    """The members ``[Content_Types].xml`` types as pictures, sound, video or fonts (lower
    case): python-docx and python-pptx keep those as bytes, never parse them, and an SVG
    picture often carries a harmless ``<!DOCTYPE svg PUBLIC …>``."""
    try:
        data = archive.read("[Content_Types].xml")
    except KeyError:
        return frozenset()
    except ZIP_ERRORS as exc:
        raise ConvertError(path, "broken zip member [Content_Types].xml (damaged data)") from exc
    types = parse_xml(data, path, "[Content_Types].xml", "not a valid Office file")
    defaults: dict[str, str] = {}
    overrides: dict[str, str] = {}
    for entry in types:
        tag = entry.tag if isinstance(entry.tag, str) else ""
        kind = (entry.get("ContentType") or "").lower()
        if tag.endswith("}Default"):
            defaults[(entry.get("Extension") or "").lower()] = kind
        elif tag.endswith("}Override"):
            overrides[(entry.get("PartName") or "").lstrip("/").lower()] = kind
    media = set()
    for name in archive.namelist():
        lowered = name.lower()
        kind = overrides.get(lowered) or defaults.get(lowered.rpartition(".")[2], "")
        if kind.startswith(_MEDIA_TYPES):
            media.add(lowered)
    return frozenset(media)


def check_office_zip(data: bytes, path: str, *, every_member: bool = True) -> None:
    """Raise a ``ConvertError`` for a zip that is not one, or ``UnsafeFileError`` for one that
    would decompress past the caps or one of whose members declares an XML DTD.

    With ``every_member`` each member is checked, whatever its name (python-docx, python-pptx
    and openpyxl read a part as XML by its content type, not its name), but for those typed
    as pictures, sound, video or fonts, which no library parses (openpyxl reads worksheets
    by path whatever their type, through defusedxml, which refuses entities itself). A
    converter that reads
    its XML only through ``parse_xml`` (OpenDocument, EPUB: their XHTML chapters go to the
    HTML parser, and old OpenOffice manifests carry a harmless DOCTYPE) passes False.

    Sizes are the ones the zip declares: ``zipfile`` never inflates a member past its declared
    size, so a lying header cannot get around the cap.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        # zipfile's own words ("File is not a zip file") say nothing a reader can act on.
        problem = "not a valid Office file (broken zip, or a truncated one)"
        raise ConvertError(path, problem) from exc
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
        if not every_member:
            return
        media = _media(archive, path)
        for info in members:
            if info.is_dir() or info.filename.lower() in media:
                continue
            if _member_declares_dtd(archive, info, path):
                raise UnsafeFileError(
                    path, f"{info.filename} declares an XML DTD (refused, not parsed)"
                )
