"""A documentation site, read as a crawler polite to it: the pages under a start URL.

The crawl stays on the start URL's host and under its folder (``https://host/docs/`` for
``https://host/docs/intro.html``) unless more prefixes are allowed, obeys robots.txt (its
``Disallow`` rules, ``Crawl-delay`` and ``Sitemap`` lines), follows redirects only within that
scope and only so many times, and asks again with ``If-None-Match`` / ``If-Modified-Since``
for every page it has seen, so a re-sync of an unchanged site downloads nothing. A page's
identity is its canonical URL (``<link rel="canonical">`` inside the scope, else the URL it was
fetched at, without its fragment); two URLs that serve the same bytes are one page. Linked
documents (PDF, Word, slides, sheets, Markdown, text) inside the scope are fetched as pages are,
and converted like local files.

Every request has a timeout and every body a size cap; a page that fails for a while (a time
out, a 5xx) is reported as *kept*, so the caller keeps what it had instead of deleting it;
only a 404 or 410 says a page is gone. Credentials in a URL are dropped before anything is
requested, stored or said.
"""

from __future__ import annotations

import hashlib
import posixpath
import threading
import time
import urllib.robotparser
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urldefrag, urljoin, urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

__all__ = [
    "CrawlLimits",
    "CrawlReport",
    "Page",
    "Seen",
    "crawl",
    "page_path",
    "public_url",
    "seen_from",
    "sitemap_urls",
]

USER_AGENT = "narezka"
"""The name a crawl gives in its requests and looks up in robots.txt."""
_DOCUMENT_SUFFIXES = frozenset(
    ".pdf .docx .pptx .xlsx .xlsm .odt .epub .csv .tsv .md .markdown .txt".split()
)
"""Linked files a crawl fetches besides pages: what narezka reads from a folder."""
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_SITEMAP_TYPES = ("application/xml", "text/xml")


@dataclass(frozen=True, slots=True)
class CrawlLimits:
    """How much a crawl may ask of a site and take from it."""

    max_pages: int = 500
    max_bytes: int = 20 << 20
    """Per response: a bigger body is abandoned as it streams, and named."""
    timeout: float = 15.0
    """Seconds for connecting and for each read."""
    max_redirects: int = 5
    concurrency: int = 4
    rate: float = 8.0
    """Requests a second at most (robots.txt's ``Crawl-delay`` may lower it)."""
    allow: tuple[str, ...] = ()
    """More URL prefixes the crawl may enter besides the start URL's folder."""


@dataclass(frozen=True, slots=True)
class Seen:
    """What an earlier crawl stored of a page: for conditional requests and to keep it."""

    url: str
    path: str
    etag: str = ""
    last_modified: str = ""
    digest: str = ""


@dataclass(frozen=True, slots=True)
class Page:
    """One page or document of the site. ``body`` is None when the server said it has not
    changed since ``Seen`` (a 304): the stored copy stands."""

    url: str
    path: str
    body: bytes | None
    etag: str = ""
    last_modified: str = ""
    digest: str = ""


@dataclass(slots=True)
class CrawlReport:
    """What a crawl found. A URL of the previous crawl that is in none of ``pages``,
    ``kept`` and ``gone`` was not reached this time (its links went away)."""

    pages: list[Page] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    """(url, why): pages of the previous crawl that failed this time; keep their copies."""
    gone: list[str] = field(default_factory=list)
    """Pages of the previous crawl the server now answers 404 or 410 for."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(url, why): what the crawl did not take (robots.txt, off the site, too big, …)."""
    requests: int = 0
    not_modified: int = 0

    @property
    def fetched(self) -> int:
        """Pages whose body was downloaded (not answered 304)."""
        return sum(1 for page in self.pages if page.body is not None)


def public_url(url: str) -> str:
    """``url`` without user name and password: what may be stored, logged or requested."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _normal(url: str) -> str:
    """The URL a page is known by: no fragment, no credentials, lowercase scheme and host,
    no default port, dot segments resolved, an empty path as ``/``."""
    url = public_url(urldefrag(url)[0])
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    default = {"http": 80, "https": 443}.get(scheme)
    port = parts.port
    netloc = host if port in (None, default) else f"{host}:{port}"
    path = parts.path or "/"
    resolved = posixpath.normpath(path)
    if path.endswith("/") and resolved != "/":
        resolved += "/"
    return urlunsplit((scheme, netloc, resolved.replace("//", "/"), parts.query, ""))


def _folder(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rsplit("/", 1)[0] + "/", "", ""))


def page_path(url: str, html: bool, root: str = "/") -> str:
    """The file a page is stored as: its URL path below ``root`` (the crawl's folder), an
    HTML page without a suffix given ``.html`` (``/a/`` is ``a/index.html``), a query kept
    apart by a short hash. Never absolute, never with ``..``."""
    parts = urlsplit(url)
    path = parts.path[len(root) - 1 :] if parts.path.startswith(root) else parts.path
    segments = [unquote(s) for s in path.split("/")]
    safe = [s.replace("\\", "_").replace("\x00", "_") for s in segments if s not in ("", ".", "..")]
    name = "/".join(safe)
    if not name or path.endswith("/"):
        name = f"{name}/index.html" if name else "index.html"
    stem, dot, suffix = name.rpartition(".")
    if html and (not dot or "/" in suffix or f".{suffix.lower()}" not in (".html", ".htm")):
        stem, suffix = name, "html"
    if parts.query:
        stem += "__" + hashlib.sha1(parts.query.encode()).hexdigest()[:8]
    return f"{stem}.{suffix}"


class _Pace:
    """At most ``rate`` requests a second, from any thread."""

    def __init__(self, rate: float) -> None:
        self._gap = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def slow_to(self, seconds: float) -> None:
        self._gap = max(self._gap, seconds)

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            at = max(now, self._next)
            self._next = at + self._gap
        if at > now:
            time.sleep(at - now)


@dataclass(slots=True)
class _Answer:
    url: str
    status: int
    kind: str = ""
    body: bytes = b""
    etag: str = ""
    last_modified: str = ""
    why: str = ""


class _Crawl:
    def __init__(
        self,
        start: str,
        previous: Mapping[str, Seen],
        limits: CrawlLimits,
        client: httpx.Client,
    ) -> None:
        self.start = _normal(start)
        self.scope = (_folder(self.start), *(_normal(a) for a in limits.allow))
        self.root = urlsplit(self.scope[0]).path
        self.previous = previous
        self.limits = limits
        self.client = client
        self.pace = _Pace(limits.rate)
        self.report = CrawlReport()
        self.robots: urllib.robotparser.RobotFileParser | None = None  # None: all allowed
        self.queued: set[str] = set()
        self.canonical: set[str] = set()
        self.digests: set[str] = set()
        self.lock = threading.Lock()

    def inside(self, url: str) -> bool:
        return url.startswith(self.scope) or url == self.start

    def fetch(self, url: str, seen: Seen | None) -> _Answer:
        """GET ``url`` (conditionally if ``seen``), following redirects inside the scope."""
        import httpx

        headers = {"User-Agent": USER_AGENT}
        if seen is not None and seen.etag:
            headers["If-None-Match"] = seen.etag
        if seen is not None and seen.last_modified:
            headers["If-Modified-Since"] = seen.last_modified
        hops: list[str] = [url]
        for _ in range(self.limits.max_redirects + 1):
            self.pace.wait()
            with self.lock:
                self.report.requests += 1
            try:
                answer = self._get(hops[-1], headers)
            except httpx.TimeoutException:
                return _Answer(hops[-1], 0, why=f"no answer in {self.limits.timeout:g} s")
            except httpx.HTTPError as exc:
                return _Answer(hops[-1], 0, why=f"request failed ({type(exc).__name__})")
            if answer.status not in (301, 302, 303, 307, 308):
                return answer
            target = _normal(urljoin(hops[-1], answer.why))
            if not self.inside(target):
                return _Answer(hops[-1], -1, why=f"redirects to another host: refused ({target})")
            if target in hops:
                return _Answer(hops[-1], -1, why="redirects in a loop")
            hops.append(target)
        return _Answer(hops[-1], -1, why=f"more than {self.limits.max_redirects} redirects")

    def _get(self, url: str, headers: dict[str, str]) -> _Answer:
        with self.client.stream("GET", url, headers=headers) as response:
            status = response.status_code
            if status in (301, 302, 303, 307, 308):
                return _Answer(url, status, why=response.headers.get("location", ""))
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            answer = _Answer(
                url,
                status,
                kind,
                etag=response.headers.get("etag", ""),
                last_modified=response.headers.get("last-modified", ""),
            )
            if status != 200:
                return answer
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.limits.max_bytes:
                return _Answer(url, -1, why=f"over {self.limits.max_bytes:,} bytes")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.limits.max_bytes:
                    return _Answer(url, -1, why=f"over {self.limits.max_bytes:,} bytes")
                chunks.append(chunk)
            answer.body = b"".join(chunks)
            return answer

    def read_robots(self) -> list[str]:
        """Load robots.txt; return the sitemaps it names."""
        parts = urlsplit(self.start)
        answer = self.fetch(urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", "")), None)
        if answer.status != 200:
            return []  # no robots.txt (or none readable): everything is allowed
        lines = answer.body.decode("utf-8", "replace").splitlines()
        robots = urllib.robotparser.RobotFileParser()
        robots.parse(lines)
        self.robots = robots
        delay = robots.crawl_delay(USER_AGENT)
        if delay:
            self.pace.slow_to(float(delay))
        return [_normal(s) for s in robots.site_maps() or ()]

    def allowed(self, url: str) -> bool:
        return self.robots is None or self.robots.can_fetch(USER_AGENT, url)

    def visit(self, url: str) -> list[str]:
        """Fetch one URL and record it; return the links it leads to."""
        return self.record(self.ask(url))

    def ask(self, url: str) -> tuple[str, Seen | None, _Answer]:
        """Fetch one URL (safe to run in parallel: it records nothing)."""
        seen = self.previous.get(url)
        return url, seen, self.fetch(url, seen)

    def record(self, asked: tuple[str, Seen | None, _Answer]) -> list[str]:
        """Record one fetched URL; return the links it leads to. Answers are recorded in the
        order they were asked, never in the order they arrived: which of two copies of a
        page is kept, and what the report says of the other, must not depend on timing."""
        with self.lock:
            return self._record(*asked)

    def _record(self, url: str, seen: Seen | None, answer: _Answer) -> list[str]:
        report = self.report
        if answer.status == 304 and seen is not None:
            report.not_modified += 1
            report.pages.append(
                Page(url, seen.path, None, seen.etag, seen.last_modified, seen.digest)
            )
            self.canonical.add(url)
            return []
        if answer.status in (404, 410):
            if seen is not None:
                report.gone.append(url)
            else:
                report.skipped.append((url, "not found"))
            return []
        if answer.status != 200:
            why = answer.why or f"answered HTTP {answer.status}"
            if seen is not None and answer.status != -1:
                report.kept.append((url, why))  # a passing failure must not delete the page
            else:
                report.skipped.append((url, why))
            return []
        return self._take(url, answer)

    def _take(self, url: str, answer: _Answer) -> list[str]:
        from narezka.sources.page_links import page_links

        html = answer.kind in _HTML_TYPES
        if answer.kind in _SITEMAP_TYPES or url.endswith(".xml"):
            return sitemap_urls(answer.body)
        links: list[str] = []
        canonical = _normal(answer.url)
        if html:
            found = page_links(answer.body, answer.url)
            if found.canonical and self.inside(_normal(found.canonical)):
                canonical = _normal(found.canonical)
            if found.noindex:
                self.report.skipped.append((url, "the page asks not to be indexed"))
                return [] if found.nofollow else [_normal(link) for link in found.links]
            links = [] if found.nofollow else [_normal(link) for link in found.links]
        elif not _is_document(url):
            self.report.skipped.append((url, f"not a page or document ({answer.kind or '?'})"))
            return []
        digest = hashlib.sha256(answer.body).hexdigest()
        if canonical in self.canonical or digest in self.digests:
            self.report.skipped.append((url, "the same page as one already read"))
            return links
        self.canonical.add(canonical)
        self.digests.add(digest)
        path = page_path(canonical, html, self.root)
        self.report.pages.append(
            Page(canonical, path, answer.body, answer.etag, answer.last_modified, digest)
        )
        return links

    def admit(self, url: str) -> bool:
        """Whether a link found on a page is crawled (and remember it)."""
        if url in self.queued:
            return False
        self.queued.add(url)
        if not self.inside(url):
            return False  # off the site: not even named, links out are normal
        if not self.allowed(url):
            self.report.skipped.append((url, "robots.txt disallows it"))
            return False
        # Links past a few times the page limit are not even queued: a site of a million
        # generated URLs must not fill memory with a frontier.
        return len(self.queued) <= self.limits.max_pages * 4


def _is_document(url: str) -> bool:
    path = urlsplit(url).path.lower()
    return any(path.endswith(suffix) for suffix in _DOCUMENT_SUFFIXES)


def sitemap_urls(data: bytes) -> list[str]:
    """The ``<loc>`` URLs of a sitemap or sitemap index (a DTD is refused, not parsed)."""
    from lxml import etree

    from narezka.convert.guard import declares_dtd

    if declares_dtd([data[:65536]]):
        return []
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return []
    return [
        _normal(str(loc.text).strip())
        for loc in root.iter("{*}loc")
        if loc.text and str(loc.text).strip().startswith(("http://", "https://"))
    ]


def crawl(
    start: str,
    *,
    previous: Mapping[str, Seen] | None = None,
    limits: CrawlLimits = CrawlLimits(),
    client: httpx.Client | None = None,
    progress: Callable[[int], None] | None = None,
    auth: tuple[str, str] | None = None,
) -> CrawlReport:
    """Crawl the site under ``start`` (a page or a sitemap URL): see the module's docstring.
    ``previous`` maps the URLs of the last crawl to what it stored of them; ``auth`` (user,
    password) goes with every request, all of them to the start's host (a redirect elsewhere
    is refused before it is followed)."""
    import httpx

    own = client is None
    if client is None:
        client = httpx.Client(
            timeout=httpx.Timeout(limits.timeout),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
            auth=auth,
        )
    try:
        work = _Crawl(start, previous or {}, limits, client)
        frontier = [work.start, *work.read_robots()]
        frontier = [url for url in frontier if work.admit(url)]
        _run(work, frontier, progress)
        _close_previous(work)
        return work.report
    finally:
        if own:
            client.close()


def _run(work: _Crawl, frontier: list[str], progress: Callable[[int], None] | None) -> None:
    with ThreadPoolExecutor(max_workers=max(1, work.limits.concurrency)) as pool:
        while frontier and len(work.report.pages) < work.limits.max_pages:
            room = work.limits.max_pages - len(work.report.pages)
            batch, frontier = frontier[:room], frontier[room:]
            found: list[str] = []
            for asked in pool.map(work.ask, batch):
                found.extend(link for link in work.record(asked) if work.admit(link))
            frontier.extend(found)
            if progress is not None:
                progress(len(work.report.pages))
        for url in frontier:
            work.report.skipped.append((url, f"past the limit of {work.limits.max_pages} pages"))


def _close_previous(work: _Crawl) -> None:
    """Previous pages the links no longer reached are asked for once more: a page that still
    exists keeps its place (an orphan page stays findable), a 404 says it is gone."""
    reached = {page.url for page in work.report.pages}
    reached.update(url for url, _ in work.report.kept)
    reached.update(work.report.gone)
    for url in sorted(set(work.previous) - reached):
        if len(work.report.pages) >= work.limits.max_pages:
            work.report.kept.append((url, f"past the limit of {work.limits.max_pages} pages"))
            continue
        if not work.inside(url) or not work.allowed(url):
            continue  # out of scope now (settings changed): the caller drops it
        work.visit(url)


def seen_from(pages: Iterable[Page]) -> dict[str, Seen]:
    """What to keep of a crawl's pages for the next one."""
    return {p.url: Seen(p.url, p.path, p.etag, p.last_modified, p.digest) for p in pages}
