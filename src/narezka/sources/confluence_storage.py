"""Confluence's storage format (the XHTML its REST API returns) as a plain HTML page.

The page body holds Confluence's own elements besides HTML: macros
(``<ac:structured-macro ac:name="info">`` with ``<ac:parameter>`` settings and an
``<ac:rich-text-body>`` or a CDATA ``<ac:plain-text-body>``), links to pages
(``<ac:link><ri:page ri:content-title="…"/>…``), images, emoticons, task lists. They are
turned into the HTML a reader sees, so the page converts through the HTML converter like a
page of a space export: a macro's text is kept (an info panel as a quote, a code macro as a
code block, an expand's body in place), its parameters and the images are dropped.
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["storage_page"]

_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)
_PANELS = frozenset({"info", "note", "warning", "tip", "panel", "excerpt"})
_DROPPED = frozenset(
    {"ac:parameter", "ac:image", "ac:emoticon", "ac:placeholder", "ac:task-id", "ri:attachment"}
)


def storage_page(title: str, storage: str, trail: tuple[str, ...] = ()) -> bytes:
    """A whole HTML page: the title as its heading, the body converted (module docstring).
    ``trail`` (the ancestors' titles) goes in the page's ``<meta name="breadcrumbs">``."""
    body = _convert(storage) if storage.strip() else ""
    crumbs = html.escape(" › ".join(trail), quote=True)
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><meta name='breadcrumbs' content=\"{crumbs}\">"
        f"</head><body><main><h1>{html.escape(title)}</h1>{body}</main></body></html>"
    )
    return page.encode("utf-8")


def _convert(storage: str) -> str:
    from lxml import etree
    from lxml import html as lxml_html

    # CDATA (a code macro's body) means text: the HTML parser would take it for a comment.
    text = _CDATA.sub(lambda m: html.escape(m.group(1), quote=False), storage)
    root = lxml_html.fragment_fromstring(text, create_parent="div")
    for el in list(root.iter()):
        if isinstance(el.tag, str) and el.getparent() is not None:
            _rewrite(el)
    for el in list(root.iter()):
        if isinstance(el.tag, str) and el.tag.startswith(("ac:", "ri:")):
            el.drop_tag()
    return "".join(etree.tostring(child, encoding="unicode", method="html") for child in root)


def _rewrite(el: Any) -> None:
    tag = el.tag
    if tag in _DROPPED:
        el.drop_tree()
    elif tag == "ac:structured-macro" or tag == "ac:macro":
        _macro(el, el.get("ac:name", ""))
    elif tag == "ac:link":
        _link(el)
    elif tag == "ac:task":
        found = _child(el, "ac:task-status")
        status = found.text_content() if found is not None else ""
        if found is not None:
            found.drop_tree()
        el.tag = "li"
        el.text = ("[x] " if status.strip() == "complete" else "[ ] ") + (el.text or "")
    elif tag == "ac:task-list":
        el.tag = "ul"


def _macro(el: Any, name: str) -> None:
    if name in ("code", "noformat"):
        body = _child(el, "ac:plain-text-body")
        code = body.text_content() if body is not None else ""
        el.clear(keep_tail=True)
        el.tag = "pre"
        el.text = code
    elif name in _PANELS:
        el.tag = "blockquote"
    elif name in ("toc", "children", "pagetree", "recently-updated", "attachments"):
        el.drop_tree()  # generated navigation: no text of the page's own
    else:
        el.tag = "div"  # expand, section, column, status…: the body's text is kept


def _link(el: Any) -> None:
    target = _child(el, "ri:page")
    words = "".join(
        (found.text_content() or "")
        for found in el
        if found.tag in ("ac:plain-text-link-body", "ac:link-body")
    ).strip()
    title = target.get("ri:content-title", "") if target is not None else ""
    el.clear(keep_tail=True)
    el.tag = "span"
    el.text = words or title


def _child(el: Any, tag: str) -> Any:
    """``el``'s first child named ``tag`` (the prefixed names are plain names to the HTML
    parser: ElementPath would take ``ac:`` for a namespace)."""
    return next((child for child in el if child.tag == tag), None)
