"""What a crawled page says about other pages: its links, its canonical URL, its robots meta."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from narezka.errors import ConvertError

__all__ = ["PageLinks", "page_links"]

_SKIPPED_SCHEMES = ("mailto:", "javascript:", "tel:", "data:", "ftp:", "#")


@dataclass(frozen=True, slots=True)
class PageLinks:
    links: tuple[str, ...] = ()
    """Absolute URLs of the page's ``<a href>`` links, in page order, without repeats."""
    canonical: str = ""
    noindex: bool = False
    nofollow: bool = False


def page_links(data: bytes, base: str) -> PageLinks:
    """The links of an HTML page fetched from ``base`` (a ``<base href>`` moves them). The page
    is parsed as the HTML converter parses it, so a page it refuses yields no links."""
    from narezka.convert.html import parse_page

    try:
        root, _ = parse_page(data, base)
    except ConvertError:
        return PageLinks()
    base = _base(root, base)
    robots = " ".join(
        (meta.get("content") or "").lower()
        for meta in root.iter("meta")
        if (meta.get("name") or "").lower() in ("robots", "narezka")
    )
    return PageLinks(
        _hrefs(root, base),
        _canonical(root, base),
        "noindex" in robots or "none" in robots,
        "nofollow" in robots or "none" in robots,
    )


def _base(root: Any, base: str) -> str:
    for tag in root.iter("base"):
        if tag.get("href"):
            return urljoin(base, str(tag.get("href")))
    return base


def _canonical(root: Any, base: str) -> str:
    for link in root.iter("link"):
        if "canonical" in (link.get("rel") or "").lower().split() and link.get("href"):
            return urljoin(base, str(link.get("href")).strip())
    return ""


def _hrefs(root: Any, base: str) -> tuple[str, ...]:
    hrefs: dict[str, None] = {}
    for anchor in root.iter("a"):
        href = (anchor.get("href") or "").strip()
        if not href or href.lower().startswith(_SKIPPED_SCHEMES):
            continue
        if "nofollow" in (anchor.get("rel") or "").lower().split():
            continue
        hrefs.setdefault(urljoin(base, href), None)
    return tuple(hrefs)
