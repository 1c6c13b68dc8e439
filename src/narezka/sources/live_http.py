"""The HTTP client the live sources (Confluence's REST API, Notion's API) share.

Every request has a timeout and every answer a size cap (abandoned as it streams); a ``429``
or ``503`` is retried after its ``Retry-After`` (bounded: a service asking for more than
:data:`MAX_WAIT_SECONDS`, or again after :data:`MAX_RETRIES` tries, stops the run); a ``5xx``
or no answer is tried again after each of :attr:`LiveLimits.retry_delays`, then raises
:class:`PageFailed` (a page's reader keeps that page's staged copy; a listing's stops the
run); ``401`` and ``403`` name the variable the token came from, never the token. Requests go
to the service's own origin only: a redirect, or a ``next`` link to another host, is refused
before it is followed, so the token is never sent elsewhere (a download follows a few
redirects on its own origin and refuses one to another host the same way). httpx logs URLs,
never headers; no URL here carries a credential.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from narezka.errors import MissingDependencyError, SourceUnavailableError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_LIMITS",
    "LOOPBACK",
    "TOO_LARGE",
    "LiveClient",
    "LiveLimits",
    "PageFailed",
    "check_origin",
]

MAX_RETRIES = 5
"""Tries of one request the service rate-limits (``429``/``503``) before the run stops."""
MAX_WAIT_SECONDS = 60.0
"""The longest ``Retry-After`` honoured; a service asking for more stops the run, by name."""
MAX_REDIRECTS = 5
"""Redirects on the service's own origin a download follows at most."""
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts a token may be sent to over plain ``http`` (a local fake, a tunnel): others need
``https``."""


TOO_LARGE = 0
"""The status :meth:`LiveClient.ask` gives an answer past the size cap (abandoned as it
streamed): the caller names the page and leaves it out."""


@dataclass(frozen=True, slots=True)
class LiveLimits:
    """How long a request may take and how much one answer may hold."""

    timeout: float = 30.0
    max_bytes: int = 16 << 20
    retry_delays: tuple[float, ...] = (1.0, 2.0)
    """Seconds waited before each new try of a request that got a ``5xx`` or no answer (the
    tests pass zeros: nothing sleeps)."""


class PageFailed(SourceUnavailableError):
    """One request failed for now (a ``5xx`` or no answer, retries spent, or a download
    redirected to another host): a page's reader names the page and keeps its staged copy;
    raised from a listing, it stops the run like any SourceUnavailableError."""


DEFAULT_LIMITS = LiveLimits()


def _private(url: str) -> bool:
    """Whether what is sent to ``url`` is sent over https, or stays on this machine."""
    parts = urlsplit(url)
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK)


def check_origin(source: str, url: str) -> str:
    """``url``'s origin (``scheme://host:port``); a SourceUnavailableError for a URL that is
    not http(s), or plain http to another machine (the token would travel in the clear)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SourceUnavailableError(source, f"{parts.scheme}: not an http(s) service URL")
    if not _private(url):
        raise SourceUnavailableError(
            source, "a token is sent over https only (plain http to 127.0.0.1 or localhost)"
        )
    return f"{parts.scheme}://{parts.netloc}"


class LiveClient:
    """JSON over HTTP to one service origin, with the source's token in every request."""

    def __init__(
        self,
        source: str,
        origin: str,
        *,
        headers: Mapping[str, str],
        auth: tuple[str, str] | None = None,
        token_variable: str,
        limits: LiveLimits = DEFAULT_LIMITS,
        sleep: Callable[[float], None] | None = None,
        media_hosts: frozenset[str] = frozenset(),
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise MissingDependencyError("httpx", "live") from None

        self.source = source
        self.origin = origin
        self.token_variable = token_variable
        self.limits = limits
        self.requests = 0
        self._sleep = sleep if sleep is not None else time.sleep  # looked up now: tests swap it
        self._client = httpx.Client(
            timeout=httpx.Timeout(limits.timeout),
            follow_redirects=False,
            headers={"User-Agent": "narezka", "Accept": "application/json", **headers},
            auth=auth,
        )
        self.media_hosts = media_hosts
        # The service's own file host (Confluence Cloud's media API) answers a download's
        # redirect with a signed URL: it is asked by a client that holds no credential.
        self._bare = httpx.Client(
            timeout=httpx.Timeout(limits.timeout),
            follow_redirects=False,
            headers={"User-Agent": "narezka"},
        )

    def close(self) -> None:
        self._client.close()
        self._bare.close()

    def __enter__(self) -> LiveClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url(self, path: str) -> str:
        """``path`` (absolute or from the origin) as a URL of this service; another origin
        is refused: the token goes nowhere else."""
        url = urljoin(self.origin + "/", path)
        if not url.startswith(self.origin + "/"):
            raise SourceUnavailableError(self.source, f"refused a link to another host: {url}")
        return url

    def get(
        self, path: str, params: Mapping[str, Any] | None = None, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        """The JSON object at ``path``; None for a ``404`` (or ``400``) when ``missing_ok``."""
        return self._checked(path, *self.ask("GET", path, params), missing_ok)

    def post(
        self, path: str, body: Mapping[str, Any], *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        """The JSON object a POST of ``body`` to ``path`` answers (``missing_ok`` as get)."""
        return self._checked(path, *self.ask("POST", path, None, body), missing_ok)

    def _checked(
        self, path: str, status: int, found: dict[str, Any] | None, missing_ok: bool
    ) -> dict[str, Any] | None:
        if status == TOO_LARGE:
            why = f"{_path(path)}: an answer over {self.limits.max_bytes:,} bytes"
            raise SourceUnavailableError(self.source, why)
        if found is None and not missing_ok:
            raise SourceUnavailableError(self.source, f"{_path(path)}: answered {status}")
        return found

    def ask(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> tuple[int, dict[str, Any] | None]:
        """The status and the JSON object of one request, rate limits waited out: None for
        a ``404`` or ``400``, status :data:`TOO_LARGE` for an answer past the cap; a refused
        token, another error status or an answer that is not JSON raise, by name."""
        url = self.url(path)
        status, _, data = self._exchange(method, url, params, body)
        if status in (TOO_LARGE, 400, 404):
            return status, None
        self._check(status, url)
        try:
            found = json.loads(data)
        except ValueError:
            found = None
        if not isinstance(found, dict):
            raise SourceUnavailableError(self.source, f"{_path(url)}: the answer is not JSON")
        return status, found

    def download(self, path: str) -> bytes | None:
        """The raw bytes at ``path`` (an attachment): None for a ``404``; redirects on this
        origin followed (at most :data:`MAX_REDIRECTS`), and over https to one of
        ``media_hosts`` without the token (from then on); one elsewhere refused as
        :class:`PageFailed`, so is an answer past the cap."""
        url, bare = self.url(path), False
        for _ in range(MAX_REDIRECTS + 1):
            status, headers, data = self._exchange("GET", url, None, None, bare=bare)
            if status == TOO_LARGE:
                why = f"{_path(url)}: over {self.limits.max_bytes:,} bytes"
                raise PageFailed(self.source, why)
            if status in (301, 302, 303, 307, 308):
                target = urljoin(url, headers.get("location", ""))
                if self._media(target):
                    bare = True
                elif bare or not target.startswith(self.origin + "/"):
                    host = urlsplit(target).hostname or target
                    raise PageFailed(self.source, f"{_path(url)}: refused a redirect to {host}")
                url = target
                continue
            if status == 404:
                return None
            self._check(status, url)
            return data
        raise PageFailed(self.source, f"{_path(url)}: over {MAX_REDIRECTS} redirects")

    def _media(self, url: str) -> bool:
        return _private(url) and urlsplit(url).hostname in self.media_hosts

    def _exchange(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None,
        body: Any,
        *,
        bare: bool = False,
    ) -> tuple[int, httpx.Headers, bytes]:
        """One request: rate limits waited out, a ``5xx`` or no answer tried again after
        each of the limits' retry delays (then :class:`PageFailed`, naming the last
        failure)."""
        delays = iter(self.limits.retry_delays)
        throttled = 0
        while True:
            try:
                status, headers, data = self._send(method, url, params, body, bare=bare)
            except PageFailed:
                delay = next(delays, None)
                if delay is None:
                    raise
                self._sleep(delay)
                continue
            if status in (429, 503):
                wait = _retry_after(headers.get("retry-after"), throttled)
                if wait > MAX_WAIT_SECONDS or throttled == MAX_RETRIES:
                    raise SourceUnavailableError(
                        self.source, f"the service is rate-limiting narezka ({status}): try later"
                    )
                throttled += 1
                self._sleep(wait)
                continue
            if status >= 500:
                delay = next(delays, None)
                if delay is None:
                    tries = len(self.limits.retry_delays) + 1
                    why = f"{_path(url)}: answered {status} ({tries} tries)"
                    raise PageFailed(self.source, why)
                self._sleep(delay)
                continue
            return status, headers, data

    def _send(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None,
        body: Any,
        *,
        bare: bool = False,
    ) -> tuple[int, httpx.Headers, bytes]:
        import httpx

        self.requests += 1
        client = self._bare if bare else self._client
        try:
            with client.stream(method, url, params=params, json=body) as answer:
                declared = answer.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.limits.max_bytes:
                    return TOO_LARGE, answer.headers, b""
                chunks, size = [], 0
                for chunk in answer.iter_bytes():
                    size += len(chunk)
                    if size > self.limits.max_bytes:
                        return TOO_LARGE, answer.headers, b""
                    chunks.append(chunk)
                return answer.status_code, answer.headers, b"".join(chunks)
        except httpx.TimeoutException:
            why = f"{_path(url)}: no answer in {self.limits.timeout:g} s"
            raise PageFailed(self.source, why) from None
        except httpx.HTTPError as exc:
            why = f"{_path(url)}: {type(exc).__name__}"
            raise PageFailed(self.source, why) from None

    def _check(self, status: int, url: str) -> None:
        if status == 401:
            raise SourceUnavailableError(
                self.source,
                f"the service refused the token in {self.token_variable} (401): is it valid?",
            )
        if status == 403:
            raise SourceUnavailableError(
                self.source,
                f"the token in {self.token_variable} may not read this (403): grant it access",
            )
        if 300 <= status < 400:
            raise SourceUnavailableError(self.source, f"{_path(url)}: redirected ({status})")
        if status >= 400:
            raise SourceUnavailableError(self.source, f"{_path(url)}: answered {status}")


def _retry_after(value: str | None, attempt: int) -> float:
    """Seconds a ``Retry-After`` asks for (an HTTP date counts as the bound); without one,
    1, 2, 4… seconds."""
    if value is None:
        return float(2**attempt)
    try:
        return max(0.0, float(value))
    except ValueError:
        return MAX_WAIT_SECONDS


def _path(url: str) -> str:
    return urlsplit(url).path
