"""Notion and Confluence exports, read straight from their zip into a folder narezka indexes.

A **Notion** export (Markdown & CSV) names every page and database with its id: ``Handbook
1a2b…(32 hex).md``, its child pages in a folder of the same name, a database as ``Tasks
3c4d….csv`` (and ``Tasks 3c4d…_all.csv`` with every row). The ids leave the names and the links
between pages (so paths read as the page tree: the breadcrumbs), a database becomes its CSV (a
table, with the full export preferred), and each page's link is its Notion URL,
``https://www.notion.so/<id>``, which Notion resolves.

A **Confluence** space export (HTML) holds one file per page (``Title_123456.html`` or
``123456.html``) with the site's navigation around the page's ``#main-content``, its place in
the page tree as a breadcrumb list, and its attachments under ``attachments/<page id>/``. Each
page is staged as a plain HTML page (title and content; navigation, breadcrumbs and the
attachment table dropped) at the path its breadcrumbs make, its attachments beside it; its link
comes from a template the user gives (``{id}`` is the page id), else none.

An archive is refused by name when it would unpack outside the folder (``../``, an absolute
path: a zip slip) or past the caps (a zip bomb). Nothing outside ``dest`` is written.
"""

from __future__ import annotations

import html
import posixpath
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote, unquote

from narezka.errors import UnsafeFileError

__all__ = [
    "MAX_EXPORT_FILES",
    "MAX_EXPORT_UNZIPPED",
    "ExportReport",
    "export_kind",
    "stage_export",
]

MAX_EXPORT_UNZIPPED = 4 << 30
"""Bytes an export may unpack to in all: a large wiki with its attachments stays far below."""
MAX_EXPORT_FILES = 200_000
MAX_EXPORT_RATIO = 200
"""A member compressed past this ratio (and over ``_RATIO_FLOOR``) is taken for a bomb."""
_RATIO_FLOOR = 16 << 20
_NOTION_ID = re.compile(r"\s+([0-9a-f]{32})(?=(\.[A-Za-z0-9]+)?$|_all\.csv$)")
_CONFLUENCE_PAGE = re.compile(r"(?:^|_)(\d+)\.html$")
_MD_LINK = re.compile(r"(\]\()([^)\s]+)(\))")
_READ_SUFFIXES = frozenset(
    ".md .markdown .txt .csv .tsv .pdf .docx .pptx .xlsx .xlsm .odt .epub .html .htm".split()
)
"""Attachments staged: what narezka reads. Images and other files stay in the archive."""


@dataclass(slots=True)
class ExportReport:
    """What ``stage_export`` wrote: file paths (relative to ``dest``) and the URL each opens."""

    kind: str
    links: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(member, why): what was left in the archive."""


def _safe_name(name: str) -> PurePosixPath | None:
    """A member's path inside the export, or None when it would land outside it."""
    name = name.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or "\x00" in name:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return PurePosixPath(*parts)


def _open(archive: Path) -> zipfile.ZipFile:
    """The archive, checked against zip slips and bombs before anything is unpacked."""
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UnsafeFileError(str(archive), f"not a readable zip archive ({exc})") from exc
    members = zf.infolist()
    if len(members) > MAX_EXPORT_FILES:
        zf.close()
        raise UnsafeFileError(str(archive), f"holds {len(members):,} files (over the cap)")
    total = 0
    for info in members:
        if _safe_name(info.filename) is None:
            zf.close()
            raise UnsafeFileError(
                str(archive), f"member {info.filename[:200]!r} would unpack outside the folder"
            )
        total += info.file_size
        ratio = info.file_size / max(info.compress_size, 1)
        if total > MAX_EXPORT_UNZIPPED or (
            info.file_size > _RATIO_FLOOR and ratio > MAX_EXPORT_RATIO
        ):
            zf.close()
            raise UnsafeFileError(
                str(archive), f"{info.filename[:200]} unpacks too large (a zip bomb?)"
            )
    return zf


def export_kind(archive: Path) -> str | None:
    """``"notion"``, ``"confluence"`` or None for a zip that is neither."""
    with _open(archive) as zf:
        names = [i.filename for i in zf.infolist() if not i.is_dir()]
        return _kind(zf, names)


def _kind(zf: zipfile.ZipFile, names: list[str]) -> str | None:
    if any(_NOTION_ID.search(PurePosixPath(n).name) for n in names if n.endswith((".md", ".csv"))):
        return "notion"
    pages = [n for n in names if _CONFLUENCE_PAGE.search(PurePosixPath(n).name)]
    for name in pages[:5]:
        head = zf.read(name)[:65536]
        if b'id="main-content"' in head or b"id='main-content'" in head:
            return "confluence"
    return None


def stage_export(archive: Path, dest: Path, link_template: str = "") -> ExportReport:
    """Write the export's pages and attachments under ``dest`` as files narezka reads.
    ``link_template`` (Confluence: ``https://wiki/pages/viewpage.action?pageId={id}``) makes
    each page's link. Raises ``UnsafeFileError`` for a hostile archive, naming it."""
    with _open(archive) as zf:
        names = [i.filename for i in zf.infolist() if not i.is_dir()]
        kind = _kind(zf, names)
        if kind == "notion":
            return _stage_notion(zf, names, dest)
        if kind == "confluence":
            return _stage_confluence(zf, names, dest, link_template)
    raise UnsafeFileError(str(archive), "neither a Notion nor a Confluence export")


def _write(dest: Path, relative: str, data: bytes, report: ExportReport) -> str:
    """Write ``data`` at ``relative`` under ``dest`` (a taken name gets `` (2)``); return the
    path used. The path was checked by ``_safe_name``; resolving it again keeps it inside."""
    path = PurePosixPath(relative)
    candidate, n = path, 1
    while str(candidate) in report.files:
        n += 1
        candidate = path.with_name(f"{path.stem} ({n}){path.suffix}")
    target = (dest / candidate).resolve()
    if not target.is_relative_to(dest.resolve()):  # pragma: no cover - _safe_name refuses these
        raise UnsafeFileError(relative, "would be written outside the staging folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    report.files.append(str(candidate))
    return str(candidate)


# ---- Notion ---------------------------------------------------------------------------------


def _clean(part: str) -> str:
    """A path component without its Notion id (``Handbook 1a2b….md`` → ``Handbook.md``)."""
    if part.endswith("_all.csv"):
        part = part.removesuffix("_all.csv") + ".csv"
    return _NOTION_ID.sub("", part)


def _notion_id(name: str) -> str:
    found = _NOTION_ID.search(PurePosixPath(name).name)
    return found.group(1) if found else ""


def _stage_notion(zf: zipfile.ZipFile, names: list[str], dest: Path) -> ExportReport:
    report = ExportReport("notion")
    cleaned = {n: "/".join(_clean(p) for p in PurePosixPath(n).parts) for n in names}
    full_tables = {cleaned[n] for n in names if n.endswith("_all.csv")}
    for name in names:
        target = cleaned[name]
        suffix = PurePosixPath(name).suffix.lower()
        if suffix not in _READ_SUFFIXES:
            report.skipped.append((name, f"{suffix or 'no suffix'}: not a format narezka reads"))
            continue
        if suffix == ".csv" and not name.endswith("_all.csv") and target in full_tables:
            continue  # the partial view of a database exported in full beside it
        data = zf.read(name)
        if suffix == ".md":
            data = _relink(data.decode("utf-8", "replace"), name, cleaned).encode()
        written = _write(dest, target, data, report)
        page_id = _notion_id(name)
        if page_id:
            report.links[written] = f"https://www.notion.so/{page_id}"
    return report


def _relink(text: str, name: str, cleaned: dict[str, str]) -> str:
    """Links between pages pointing at the cleaned names (Notion writes them URL-encoded)."""
    folder = posixpath.dirname(name)

    def fix(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("#", "mailto:")):
            return match.group(0)
        path, _, anchor = target.partition("#")
        joined = posixpath.normpath(posixpath.join(folder, unquote(path)))
        if joined not in cleaned:
            return match.group(0)
        here = posixpath.dirname(cleaned[name])
        relative = posixpath.relpath(cleaned[joined], here or ".")
        new = quote(relative) + (f"#{anchor}" if anchor else "")
        return f"{match.group(1)}{new}{match.group(3)}"

    return _MD_LINK.sub(fix, text)


# ---- Confluence -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Page:
    member: str
    page_id: str
    title: str
    trail: tuple[str, ...]
    body: str
    attachments: tuple[tuple[str, str], ...]
    """(member, file name) of the attachments the page lists."""


def _text(el: Any) -> str:
    return " ".join((el.text_content() or "").split())


def _read_page(zf: zipfile.ZipFile, member: str) -> _Page | None:
    from lxml import html as lxml_html

    from narezka.convert.html import parse_page
    from narezka.errors import ConvertError

    try:
        root, _ = parse_page(zf.read(member), member)
    except ConvertError:
        return None
    main = root.get_element_by_id("main-content", None)
    if main is None:
        return None
    found = _CONFLUENCE_PAGE.search(PurePosixPath(member).name)
    page_id = found.group(1) if found else ""
    heading = root.get_element_by_id("title-text", None)
    title = _text(heading) if heading is not None else PurePosixPath(member).stem
    title = title.split(" : ", 1)[1] if " : " in title else title  # "SPACE : Page title"
    crumbs = root.get_element_by_id("breadcrumbs", None)
    trail = tuple(_text(a) for a in crumbs.iter("a")) if crumbs is not None else ()
    folder = posixpath.dirname(member)
    attachments = tuple(
        (posixpath.normpath(posixpath.join(folder, unquote(a.get("href", "")))), _text(a))
        for a in root.iter("a")
        if "attachments/" in (a.get("href") or "") and _text(a)
    )
    body = lxml_html.tostring(main, encoding="unicode")
    return _Page(member, page_id, title, trail, body, attachments)


def _component(text: str) -> str:
    """A page title as one path component."""
    text = re.sub(r'[\\/:*?"<>|\x00-\x1f]', "_", text).strip(" .") or "untitled"
    return text[:120]


def _stage_confluence(
    zf: zipfile.ZipFile, names: list[str], dest: Path, template: str
) -> ExportReport:
    report = ExportReport("confluence")
    for member in _page_members(names):
        page = _read_page(zf, member)
        if page is None:
            report.skipped.append((member, "no page content (#main-content) in it"))
            continue
        # The first crumb is the space's own home: the tree starts below it.
        folder = "/".join(_component(c) for c in page.trail[1:])
        base = f"{folder}/{_component(page.title)}" if folder else _component(page.title)
        document = (
            "<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(page.title)}</title></head><body><main>"
            f"<h1>{html.escape(page.title)}</h1>{_without_attachment_table(page.body)}"
            "</main></body></html>"
        )
        written = _write(dest, base + ".html", document.encode(), report)
        if template and page.page_id:
            report.links[written] = template.replace("{id}", page.page_id)
        for attachment, filename in page.attachments:
            suffix = PurePosixPath(filename).suffix.lower()
            if attachment not in names or suffix not in _READ_SUFFIXES:
                continue
            _write(dest, f"{base}/{_component(filename)}", zf.read(attachment), report)
    return report


def _page_members(names: list[str]) -> Iterator[str]:
    for name in sorted(names):
        if _CONFLUENCE_PAGE.search(PurePosixPath(name).name) and "/attachments/" not in name:
            yield name


def _without_attachment_table(body: str) -> str:
    """The page's content without the list of attachments Confluence appends to it."""
    cut = re.search(r"<h2[^>]*id=\"attachments\"", body)
    return body[: cut.start()] if cut else body
