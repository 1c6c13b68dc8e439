"""A web site as a source: its pages under the start URL, crawled into the staging folder.

``narezka index https://docs.example.org/handbook/`` reads the start page and every page it
links to, transitively, that lies on the same host under the same path; the pages are staged
as files (``handbook/intro.html``…) and converted like any HTML file. A later refresh asks
each page with its ``ETag`` / ``Last-Modified`` (a ``304`` is not fetched again), removes pages
that are gone (``404``/``410``) or no longer linked, and keeps a page that failed for now.

The crawl never leaves its host: links elsewhere are not followed, a redirect elsewhere is
refused by name. Every request has a timeout, every page a size cap, the crawl a page cap;
credentials in the URL go, as a Basic header, to that host only and are stored nowhere.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from narezka.errors import ConfigError, SourceUnavailableError
from narezka.sources.base import (
    STAGING_DIRNAME,
    Refresh,
    safe_member,
    source_dir,
    split_credentials,
    strip_credentials,
)

STATE_FILE = "state.json"
MAX_PAGES = 5000
"""Pages one crawl reads at most: a site that generates links without end stops here."""
PAGE_BYTES = 8 * 2**20
"""A page larger than this is named and not staged."""
REQUEST_SECONDS = 30.0
"""A request that has not answered within this is given up (the page is kept as it was)."""
_KINDS = {"text/html": ".html", "application/xhtml+xml": ".html", "text/markdown": ".md",
          "text/plain": ".txt"}  # fmt: skip
_HREF = re.compile(rb"""\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)


class _Refused(Exception):
    """A redirect to another host: the page is named and skipped (never raised further)."""


class _StayOnHost(urllib.request.HTTPRedirectHandler):
    def __init__(self, host: str) -> None:
        self.host = host

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> Any:  # fmt: skip
        if (urlsplit(newurl).hostname or "").lower() != self.host:
            raise _Refused(f"redirected to {strip_credentials(newurl)}, another host: refused")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class SiteSource:
    """The pages of one site under a start URL (see the module docstring)."""

    def __init__(self, url: str, *, cache: Path | None = None, home: Path | None = None,
                 staging: Path | None = None) -> None:  # fmt: skip
        clean, user, password = split_credentials(url)
        parts = urlsplit(clean)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"{strip_credentials(url)}: a site is an http(s) URL with a host")
        self.start = urldefrag(clean)[0]
        self.host = parts.hostname.lower()
        path = parts.path or "/"
        self.prefix = path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"
        self._auth = (user or "", password or "") if user or password else None
        self.home = home if home is not None else source_dir(self.start, cache)
        self._staging = staging if staging is not None else self.home / STAGING_DIRNAME
        opener = urllib.request.build_opener(_StayOnHost(self.host))
        opener.addheaders = [("User-Agent", "narezka (+https://github.com/narezka)")]
        self._opener = opener

    @property
    def spec(self) -> str:
        return self.start

    @property
    def staging(self) -> Path:
        return self._staging

    def in_scope(self, url: str) -> bool:
        """Whether ``url`` is one of this site's pages: same scheme and host, under the
        start's folder, no query (a query's pages are the same page, or endless)."""
        parts = urlsplit(url)
        return (
            parts.scheme == urlsplit(self.start).scheme
            and (parts.hostname or "").lower() == self.host
            and (parts.path or "/").startswith(self.prefix)
            and not parts.query
        )

    # complexity: the crawl loop; each answer (refused, gone, failed, 304, too big) met in place
    def refresh(self) -> Refresh:
        self.staging.mkdir(parents=True, exist_ok=True)
        state = self._load_state()
        pages: dict[str, dict[str, Any]] = state.get("pages", {})
        seen: dict[str, dict[str, Any]] = {}
        warnings: list[str] = []
        fetched: list[str] = []
        size = 0
        queue, queued = deque([self.start]), {self.start}
        while queue:
            url = queue.popleft()
            if len(seen) >= MAX_PAGES:
                warnings.append(f"{self.start}: over {MAX_PAGES} pages: the crawl stopped")
                break
            old = pages.get(url)
            try:
                body, entry = self._fetch(url, old)
            except _Refused as exc:
                if url == self.start:
                    raise SourceUnavailableError(self.start, str(exc)) from None
                warnings.append(f"{url}: {exc}")
                continue
            except _Gone:
                if url == self.start:  # never taken as "the whole site went"
                    raise SourceUnavailableError(self.start, "the start page is gone") from None
                continue  # 404/410: not seen, so its staged file goes below
            except (OSError, ValueError) as exc:  # a timeout, a 5xx: keep it as it was
                problem = strip_credentials(str(getattr(exc, "reason", None) or exc))
                if url == self.start:
                    raise SourceUnavailableError(self.start, problem) from None
                warnings.append(f"{url}: {problem}: kept as it was")
                if old is None:
                    continue
                body, entry = None, None  # its links are followed from the staged copy
            if body is None or entry is None:  # 304, or failed for now: the staged copy
                assert old is not None
                seen[url] = old
                body = self._staged(old)
            elif len(body) > PAGE_BYTES:
                warnings.append(f"{url}: over {PAGE_BYTES} bytes: not staged")
                continue
            elif (unsafe := safe_member(str(entry["path"]))) is not None:
                warnings.append(f"{url}: {unsafe}: not staged")
                continue
            else:
                rel = str(entry["path"])
                if old is None or old.get("sha") != entry["sha"] or old.get("path") != rel:
                    self._write(rel, body)
                    fetched.append(rel)
                    size += len(body)
                seen[url] = entry
            for link in self._links(url, body):
                if link not in queued and self.in_scope(link):
                    queued.add(link)
                    queue.append(link)
        kept = {e["path"] for e in seen.values()}
        gone = sorted({e["path"] for u, e in pages.items() if u not in seen} - kept)
        for rel in gone:  # only pages this source staged (listed in its state) go
            with contextlib.suppress(FileNotFoundError):
                (self.staging / rel).unlink()
        self._save_state({"spec": self.start, "pages": seen})
        return Refresh(
            version=f"{len(seen)} pages", fetched=tuple(sorted(fetched)), deleted=tuple(gone),
            fetched_bytes=size, warnings=tuple(warnings),
        )  # fmt: skip

    def _fetch(
        self, url: str, old: dict[str, Any] | None
    ) -> tuple[bytes | None, dict[str, Any] | None]:
        request = urllib.request.Request(url)
        if self._auth is not None:
            token = base64.b64encode(":".join(self._auth).encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        if old is not None and (self.staging / old["path"]).is_file():
            if old.get("etag"):
                request.add_header("If-None-Match", old["etag"])
            if old.get("modified"):
                request.add_header("If-Modified-Since", old["modified"])
        try:
            with self._opener.open(request, timeout=REQUEST_SECONDS) as answer:
                final = answer.geturl()
                kind = answer.headers.get_content_type()
                body = answer.read(PAGE_BYTES + 1)
                etag, modified = answer.headers.get("ETag"), answer.headers.get("Last-Modified")
        except urllib.error.HTTPError as exc:
            if exc.code == 304:
                return None, None
            if exc.code in (404, 410):
                raise _Gone from None
            raise OSError(f"HTTP {exc.code}") from None
        suffix = _KINDS.get(kind)
        if suffix is None:
            raise _Refused(f"{kind}, not a page narezka reads: skipped")
        entry = {
            "path": self._path_of(final if self.in_scope(final) else url, suffix),
            "sha": hashlib.sha256(body).hexdigest(),
            "etag": etag,
            "modified": modified,
        }
        return body, entry

    def _path_of(self, url: str, suffix: str) -> str:
        """The staged file of a page: its URL path under the start's folder, an ``index``
        file for a folder's URL, the suffix its type says."""
        rel = unquote(urlsplit(url).path)[len(self.prefix) :]
        if not rel or rel.endswith("/"):
            rel += "index"
        path = PurePosixPath(rel)
        return str(path if path.suffix == suffix else path.with_name(path.name + suffix))

    def _links(self, url: str, body: bytes) -> list[str]:
        found = []
        for m in _HREF.finditer(body):
            raw = (m.group(1) or m.group(2) or m.group(3) or b"").decode("utf-8", "replace")
            with contextlib.suppress(ValueError):
                found.append(urldefrag(urljoin(url, raw.strip()))[0])
        return found

    def _staged(self, entry: dict[str, Any]) -> bytes:
        try:
            return (self.staging / str(entry["path"])).read_bytes()
        except OSError:
            return b""

    def _write(self, rel: str, body: bytes) -> None:
        target = self.staging / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.narezka-tmp")
        tmp.write_bytes(body)
        os.replace(tmp, target)

    def _load_state(self) -> dict[str, Any]:
        try:
            data = json.loads((self.home / STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and isinstance(data.get("pages"), dict) else {}

    def _save_state(self, state: dict[str, Any]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        path = self.home / STATE_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)

    def record(self) -> dict[str, Any]:
        return {"kind": "site", "spec": self.start}

    def link(self, path: str, lines: tuple[int, int] | None) -> str | None:
        state = self._load_state().get("pages", {})
        for url, entry in state.items():
            if entry.get("path") == path:
                return str(url)
        return None


class _Gone(Exception):
    """The page answered 404 or 410: it is removed from the staging folder."""
