"""The search page at ``/`` of ``narezka serve --http``: a query box, mode and filters, and the
hits rendered on the server from the same :meth:`Service.search` reply ``/search`` returns.

It works with JavaScript off: the form is a plain ``GET /?q=…`` and the server renders the
results. A small script (``search.js``, inline with ``common.js``) makes a search fetch only
the results and swap them in, and carries the API key when the server has one.

Safety, decided here and tested in ``tests/serve/test_search_page.py``:

- Every string from the index (text, headings, paths, URLs) and from the request is escaped;
  a chunk's Markdown is shown as text, so no link or markup in a document becomes one on the
  page. The only links are the server's own ``/sources/…`` and a hit URL whose scheme is
  ``http`` or ``https``.
- ``Content-Security-Policy``: nothing loads from anywhere; the one inline script and the one
  inline stylesheet run by their SHA-256 hashes (no ``'unsafe-inline'``); ``fetch`` reaches
  only this server; no framing; no referrer leaves with a click on a hit's URL.
- The Host and Origin guards apply to ``/`` as to every endpoint. With an API key, ``GET /``
  without it is still answered (the :class:`~narezka.serve.http_api.Guard` lets just this
  path through, marking the request unauthorized) but shows a key field and nothing from the
  index; the script keeps the key in ``sessionStorage`` (this tab only) and sends it as
  ``Authorization: Bearer``, exactly what the JSON endpoints take. The key never travels in a
  URL or a cookie.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cache
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.types import Scope

from narezka import defaults
from narezka.errors import ConfigError
from narezka.pages import asset
from narezka.search import Query
from narezka.search.query import MODES
from narezka.serve.errors import ServiceError
from narezka.serve.service import Service
from narezka.tokens.bm25 import bm25_encoder

PAGE_PATH = "/"
AUTHORIZED = "narezka.authorized"
"""The ASGI scope key the Guard sets to True once a request passed the API key check (or no
key is configured); the page shows index data only when it is True: it fails closed."""

K_CHOICES = ("5", "10", "20", "50")
FILTERS = (
    ("path", "Path glob", "e.g. products/**"),
    ("zone", "Zone", "any"),
    ("project", "Project", "any"),
    ("category", "Category", "any"),
)
SEARCH_OPTIONS = ("mode", "k", "path", "zone", "project", "category", "include_archived")
"""The options of :data:`narezka.search.query.OPTIONS` the form offers."""
_WORD = re.compile(r"[^\W_]+")


def asks_for_key(scope: Scope) -> bool:
    """Whether a request that lacks the API key may still reach the app: only the page itself,
    which then shows a key field instead of anything from the index."""
    return bool(scope.get("path") == PAGE_PATH and scope.get("method") in ("GET", "HEAD"))


@dataclass(frozen=True, slots=True)
class Asked:
    """What the form asked, each field as the text the URL gave (empty: not given)."""

    q: str = ""
    mode: str = ""
    k: str = ""
    path: str = ""
    zone: str = ""
    project: str = ""
    category: str = ""
    include_archived: str = ""
    cursor: str = ""

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Asked:
        given = {f.name: params.get(f.name, "").strip() for f in fields(cls)}
        return cls(**{**given, "q": params.get("q", "")})  # q as typed: the reply echoes it

    def options(self) -> dict[str, str | None]:
        """The query's options as :meth:`Service.search` takes them (``None``: the default)."""
        return {name: getattr(self, name) or None for name in SEARCH_OPTIONS}

    def archived(self) -> bool:
        """Whether archived pages count, read as the search reads it (a bad value: no; the
        search then says why)."""
        try:
            asked = Query.parse("archived?", {"include_archived": self.include_archived or None})
            return asked.filters.include_archived
        except ConfigError:
            return False

    def url(self, cursor: str = "") -> str:
        """This search's own page URL (a cursor: its next page)."""
        given = {"q": self.q, **self.options(), "cursor": cursor or None}
        return PAGE_PATH + "?" + urlencode({k: v for k, v in given.items() if v})


def search_page(service: Service) -> Callable[[Request], HTMLResponse]:
    """The route's call (run by ``http_api._guarded`` in a worker thread): the caller's
    mistakes (a bad glob, k out of range) are shown on the page with status 400; the server's
    faults propagate to ``_guarded`` like those of every other endpoint."""

    def page(request: Request) -> HTMLResponse:
        asked = Asked.from_params(request.query_params)
        if request.scope.get(AUTHORIZED) is not True:
            return _respond(asked, _key_needed(), keyed="needed")
        if not asked.q.strip():
            return _respond(asked, _results_section("empty", _status("Type a question.")))
        try:
            reply = service.search(asked.q, cursor=asked.cursor or None, **asked.options())
        except ServiceError as exc:
            message = _status(f"Cannot search: {exc}", "error")
            return _respond(asked, _results_section("error", message), status=400)
        return _respond(asked, render_results(asked, reply))

    return page


# ---- the document ------------------------------------------------------------------------


@cache
def _inline() -> tuple[str, str]:
    """The page's one stylesheet and one script (shipped in ``narezka/pages/assets``)."""
    return asset("common.css") + asset("search.css"), asset("common.js") + asset("search.js")


def _hash(code: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"


@cache
def headers() -> dict[str, str]:
    """The page's response headers: the CSP allows its own inline style and script by hash."""
    style, script = _inline()
    policy = (
        f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(style)}; "
        "connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "X-Frame-Options": "DENY",
    }


def _respond(asked: Asked, results: str, *, keyed: str = "", status: int = 200) -> HTMLResponse:
    return HTMLResponse(_document(asked, results, keyed), status_code=status, headers=headers())


def _document(asked: Asked, results: str, keyed: str) -> str:
    style, script = _inline()
    e = html.escape
    title = f"{asked.q.strip()} — narezka search" if asked.q.strip() else "narezka search"
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # No icon to fetch: without this the browser asks for /favicon.ico (a 404).
            '<link rel="icon" href="data:,">',
            f"<title>{e(title)}</title>",
            f"<style>{style}</style>",
            "</head>",
            f'<body data-page="search" data-key="{e(keyed)}">',
            '<main class="search-page">',
            '<h1 id="title">narezka search</h1>',
            _form(asked),
            _key_form(),
            # The script re-announces each swapped-in status here: a live region must already
            # be on the page when its text changes for a screen reader to read it.
            '<p id="announce" class="visually-hidden" aria-live="polite"></p>',
            results,
            _source_view(),
            "</main>",
            f"<script>{script}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


def _form(asked: Asked) -> str:
    e = html.escape
    modes = _options(sorted(MODES, key=lambda m: m != defaults.MODE), asked.mode or defaults.MODE)
    ks = _options(K_CHOICES, asked.k or str(defaults.K))
    boxes = "".join(
        f'<label for="f-{name}">{label}</label>'
        f'<input id="f-{name}" name="{name}" value="{e(getattr(asked, name))}"'
        f' placeholder="{e(hint)}" autocomplete="off">'
        for name, label, hint in FILTERS
    )
    filtered = any(getattr(asked, name) for name, _, _ in FILTERS) or asked.archived()
    archived = " checked" if asked.archived() else ""
    return (
        f'<form id="search" role="search" method="get" action="{PAGE_PATH}" '
        'aria-labelledby="title">'
        '<div class="ask">'
        '<label for="q">Question</label>'
        f'<input id="q" name="q" type="search" value="{e(asked.q)}" autofocus required '
        'maxlength="2000" autocomplete="off" spellcheck="false">'
        '<button type="submit">Search</button>'
        "</div>"
        '<div class="how">'
        f'<label for="mode">Mode</label><select id="mode" name="mode">{modes}</select>'
        f'<label for="k">Results</label><select id="k" name="k">{ks}</select>'
        "</div>"
        f'<details class="filters"{" open" if filtered else ""}><summary>Filters</summary>'
        f'<div class="grid">{boxes}'
        '<label class="check">'
        f'<input type="checkbox" name="include_archived" value="true"{archived}>'
        " include archived pages</label></div></details>"
        "</form>"
    )


def _options(values: Sequence[str], chosen: str) -> str:
    """A select's options, ``chosen`` selected (added if a URL asked for another value, so
    that the next search asks the same)."""
    listed = [*values, *(() if chosen in values else (chosen,))]
    return "".join(
        f'<option value="{html.escape(v)}"{" selected" if v == chosen else ""}>'
        f"{html.escape(v)}</option>"
        for v in listed
    )


def _key_form() -> str:
    # Hidden until the script shows it, and its field has no name: with JavaScript off it can
    # never submit the key in a URL.
    return (
        '<form id="key-form" class="key" hidden aria-label="API key">'
        '<label class="ask-key" for="api-key">API key</label>'
        '<input class="ask-key" id="api-key" type="password" autocomplete="off" spellcheck="false">'
        '<button class="ask-key" type="submit">Use key</button>'
        '<button type="button" id="forget-key" hidden>Forget key</button>'
        "</form>"
    )


def _source_view() -> str:
    return (
        '<section id="source-view" class="source-view" hidden aria-labelledby="source-title">'
        '<h2 id="source-title" tabindex="-1"></h2>'
        '<button type="button" id="source-close">Close</button>'
        '<pre class="source-text"></pre></section>'
    )


def _key_needed() -> str:
    # Nothing of the index is shown without the key, whatever was asked.
    return _results_section(
        "key",
        _status(
            "This server needs an API key. Enter it above: the page keeps it in this tab only "
            "and sends it as Authorization: Bearer. (With JavaScript off, use the JSON API "
            "with that header.)"
        ),
    )


def _results_section(state: str, inner: str) -> str:
    return (
        f'<section id="results" class="results" data-state="{state}" aria-label="Results">'
        f"{inner}</section>"
    )


def _status(message: str, kind: str = "") -> str:
    role = "alert" if kind == "error" else "status"
    return f'<p id="status" class="status {kind}" role="{role}">{html.escape(message)}</p>'


# ---- results -----------------------------------------------------------------------------


def render_results(asked: Asked, reply: Mapping[str, Any]) -> str:
    """The results section for one ``/search`` reply: the hits, or why there are none."""
    hits = list(reply.get("hits") or [])
    best, floor = reply.get("best_relevance"), reply.get("min_relevance")
    if not hits:
        if best is None:
            message = "Nothing found: no indexed text matches the question and filters."
        else:
            message = (
                f"Nothing relevant: the closest passage has relevance {best:.2f}, below the "
                f"floor of {floor or 0:.2f}."
            )
        return _results_section("none", _status(message, "none"))
    total = int(reply.get("total") or len(hits))
    shown = f"{len(hits)} of {total}" if total > len(hits) else str(total)
    noun = "result" if total == 1 else "results"
    terms = query_terms(asked.q)
    items = "".join(_hit(hit, terms) for hit in hits)
    more = ""
    if reply.get("next_cursor"):
        href = html.escape(asked.url(str(reply["next_cursor"])))
        more = f'<p class="more"><a href="{href}" data-swap rel="next">More results</a></p>'
    return _results_section(
        "hits",
        _status(f"{shown} {noun}, best relevance {hits[0].get('relevance', 0):.2f}")
        + f'<ol class="hits">{items}</ol>{more}',
    )


def _hit(hit: Mapping[str, Any], terms: frozenset[str]) -> str:
    e = html.escape
    path = str(hit.get("file_path", ""))
    crumb = " › ".join(str(s) for s in hit.get("section") or ()) or path
    relevance = float(hit.get("relevance") or 0.0)
    link = source_link(hit)
    where = str(hit.get("where") or "")
    tags = [f'<span class="tag">{e(where)}</span>'] if where else []
    for name in ("zone", "project", "category"):
        if hit.get(name):
            tags.append(f'<span class="tag">{name} {e(str(hit[name]))}</span>')
    if hit.get("archived"):
        tags.append('<span class="tag">archived</span>')
    if hit.get("stale"):
        tags.append('<span class="tag over">changed since indexed</span>')
    if hit.get("truncated"):
        tags.append('<span class="tag">cut to the reply budget</span>')
    external = link.startswith(("http://", "https://"))
    rel = ' rel="noopener noreferrer"' if external else ""
    kind = "url" if external else "source"
    return (
        '<li class="result">'
        f'<h2 class="crumb">{e(crumb)}</h2>'
        '<p class="meta">'
        f'<a class="{kind}" href="{e(link)}"{rel} data-path="{e(path)}">{e(path)}</a>'
        f"{''.join(tags)}"
        f'<span class="rel">relevance {relevance:.2f} '
        f'<meter min="0" max="1" value="{relevance:.4f}" aria-label="relevance">'
        f"{relevance:.2f}</meter></span></p>"
        f'<div class="text">{highlight(str(hit.get("text", "")), terms)}</div>'
        "</li>"
    )


def source_link(hit: Mapping[str, Any]) -> str:
    """Where a hit's link goes: its URL when that is ``http(s)`` with a host, else this
    server's ``/sources/{path}`` (anything else, ``javascript:`` included, never links)."""
    url = str(hit.get("url") or "")
    if _web_url(url):
        return url
    return "/sources/" + quote(str(hit.get("file_path", "")), safe="/")


def _web_url(url: str) -> bool:
    if any(c.isspace() or ord(c) < 32 for c in url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def query_terms(query: str) -> frozenset[str]:
    """The query's BM25 terms (stems, stop words dropped): what highlighting looks for."""
    return frozenset(bm25_encoder().tokens(query))


def highlight(text: str, terms: frozenset[str]) -> str:
    """``text`` escaped, each word whose BM25 term is among ``terms`` in ``<mark>``: the
    words the query matched, in any of their forms (``вскрытый`` marks ``вскрытую``)."""
    encoder = bm25_encoder()
    out: list[str] = []
    done = 0
    for match in _WORD.finditer(text):
        if not terms or not terms.intersection(encoder.tokens(match.group())):
            continue
        out.append(html.escape(text[done : match.start()]))
        out.append(f"<mark>{html.escape(match.group())}</mark>")
        done = match.end()
    out.append(html.escape(text[done:]))
    return "".join(out)


__all__ = ["AUTHORIZED", "asks_for_key", "highlight", "render_results", "search_page"]
