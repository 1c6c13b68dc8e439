"""The HTTP front end: a JSON API over a :class:`~narezka.serve.service.Service` and MCP's
streamable HTTP endpoint (``/mcp``) in one Starlette app, run by uvicorn.

Guards, outermost first: the Host and Origin headers (DNS rebinding: a page of another site
whose name was re-pointed at 127.0.0.1 is refused; the same check MCP's own transport runs),
no POST body a form could send cross-site without a preflight, an API key when one is
configured (required for any address but loopback; compared in constant time), a request
body limit, a time limit per request (answered on time with 503 while the request's thread,
which cannot be interrupted, stops at its next check of the same limit). No CORS headers are
sent, so a web page from another origin cannot read replies. Errors are
``{"error": message}`` with no internals in them: 4xx for the caller's mistakes, 5xx for the
server's own faults.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from narezka.errors import NarezkaError
from narezka.search.options import shown_at
from narezka.serve.errors import NotFoundError, RequestTimeoutError, ServiceError
from narezka.serve.limits import REQUEST_SECONDS
from narezka.serve.mcp_server import build_mcp
from narezka.serve.openapi import openapi_document
from narezka.serve.page import AUTHORIZED, asks_for_key, search_page
from narezka.serve.service import Service

log = logging.getLogger("narezka.serve")

MAX_BODY_BYTES = 64 * 1024
SYNC_SECONDS = 600.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")

Handler = Callable[[Request], Awaitable[Response]]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _guarded(call: Callable[[Request], Any]) -> Handler:
    """A route whose work runs in a worker thread (the index is synchronous); the caller's
    mistakes are 400/404, the server's faults (a damaged index, a failed sync) 500 with
    narezka's message, anything else a bare 500."""

    async def endpoint(request: Request) -> Response:
        try:
            # Abandoned on the time limit, so the answer is not held by the thread.
            result = await anyio.to_thread.run_sync(call, request, abandon_on_cancel=True)
        except NotFoundError as exc:
            return _error(404, str(exc))
        except (ServiceError, _BadRequest) as exc:
            return _error(400, str(exc))
        except RequestTimeoutError as exc:
            return _error(503, str(exc))
        except NarezkaError as exc:
            log.error("request failed: %s: %s", request.url.path, exc)
            return _error(500, f"the server cannot answer: {exc}")
        except Exception:
            log.exception("request failed: %s", request.url.path)
            return _error(500, "internal error (details are in the server's log)")
        if isinstance(result, Response):
            return result
        return JSONResponse(result)

    return endpoint


class _BadRequest(Exception):
    pass


def _int(request: Request, name: str, default: int) -> int:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise _BadRequest(f"{name} must be an integer, not {value!r}") from None


def _routes(service: Service) -> list[Route]:
    def search(request: Request) -> dict[str, Any]:
        q = request.query_params
        query = q.get("q")
        if query is None:
            raise _BadRequest("the query parameter q is required")
        # Every option of the table HTTP shows, by its one name, in its text form; an empty
        # one is not given. Query.parse checks them.
        options = {o.name: q.get(o.name) or None for o in shown_at("http")}
        return service.search(query, cursor=q.get("cursor") or None, **options)

    def chunk(request: Request) -> dict[str, Any]:
        chunk_id = str(request.path_params["chunk_id"])
        before, after = _int(request, "before", 0), _int(request, "after", 0)
        if before or after:
            return service.get_context(chunk_id, before=before, after=after)
        return service.chunk(chunk_id)

    def sources(request: Request) -> dict[str, Any]:
        q = request.query_params
        return service.list_sources(q.get("path_glob") or None, q.get("cursor") or None)

    def source(request: Request) -> Response:
        path = str(request.path_params["path"])
        text = service.source_text(path)
        # nosniff: a browser shows the file as text, whatever its bytes look like.
        return PlainTextResponse(
            text,
            media_type="text/markdown; charset=utf-8",
            headers={"X-Content-Type-Options": "nosniff"},
        )

    def status(_: Request) -> dict[str, Any]:
        return service.status()

    def sync(_: Request) -> dict[str, Any]:
        return service.request_sync(wait=True, timeout=SYNC_SECONDS)

    async def openapi(_: Request) -> Response:
        return JSONResponse(openapi_document())

    return [
        Route("/", _guarded(search_page(service)), methods=["GET"]),
        Route("/search", _guarded(search), methods=["GET"]),
        Route("/chunks/{chunk_id}", _guarded(chunk), methods=["GET"]),
        Route("/sources", _guarded(sources), methods=["GET"]),
        Route("/sources/{path:path}", _guarded(source), methods=["GET"]),
        Route("/status", _guarded(status), methods=["GET"]),
        Route("/sync", _guarded(sync), methods=["POST"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]


def host_security(host: str, allowed_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """The Host and Origin headers requests may carry, for the API and MCP's transport alike:
    loopback names, the address served (unless a wildcard) and ``allowed_hosts``, each with
    any port. A wildcard bind with no ``allowed_hosts`` checks neither (it needs an API key,
    which a browser never sends by itself)."""
    if host in WILDCARD and not allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    served = () if host in WILDCARD or host in LOOPBACK else (host,)
    names = [_bracketed(name) for name in (*LOOPBACK, *served, *allowed_hosts)]
    hosts = [variant for name in names for variant in _with_ports(name)]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


def _bracketed(name: str) -> str:
    # An IPv6 address travels in brackets in Host and Origin: "[::1]:8765".
    return f"[{name}]" if name.count(":") > 1 and not name.startswith("[") else name


def _with_ports(name: str) -> tuple[str, ...]:
    has_port = name.rpartition(":")[2].isdigit() and not name.endswith("]")
    return (name,) if has_port else (name, f"{name}:*")


class Guard:
    """Host/Origin, content type, API key, body size and time limits for every request (the
    MCP endpoint too)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        api_key: str | None,
        max_body: int,
        seconds: float,
        security: TransportSecuritySettings | None = None,
    ):
        self.app = app
        self.api_key = api_key.encode() if api_key else None
        self.max_body = max_body
        self.seconds = seconds
        self.headers_check = TransportSecurityMiddleware(security or host_security("127.0.0.1"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = await self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        body = await self._body(scope, receive)
        if body is None:
            await _error(413, f"the request body is over {self.max_body} bytes")(
                scope, receive, send
            )
            return
        started = False

        async def replay() -> Message:
            nonlocal body
            if body is not None:
                message, body = body, None
                return message
            return await receive()

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        limit = SYNC_SECONDS if scope["path"] == "/sync" else self.seconds
        try:
            with anyio.fail_after(limit):
                await self.app(scope, replay, tracking)
        except TimeoutError:
            if not started:
                await _error(503, f"the request took longer than {limit:.0f} s")(
                    scope, receive, send
                )

    async def _refusal(self, scope: Scope) -> Response | None:
        """Why the request is refused before anything reads it, or None."""
        request = Request(scope)
        problem = await self.headers_check.validate_request(request)
        if problem is not None:
            if problem.status_code == 421:
                host = request.headers.get("host", "")
                return _error(
                    421,
                    f"this server does not answer for the host {host!r} "
                    "(list the names it serves with --allowed-host)",
                )
            origin = request.headers.get("origin", "")
            return _error(403, f"requests from the origin {origin!r} are refused")
        kind = request.headers.get("content-type")
        if request.method == "POST" and kind and not kind.lower().startswith("application/json"):
            # A form or a no-cors fetch can send these from any site without a preflight.
            return _error(415, f"a POST body must be application/json, not {kind!r}")
        authorized = self.api_key is None or self._authorized(request.headers)
        if not authorized and not asks_for_key(scope):  # the page asks for it, showing nothing
            return _error(401, "a valid API key is required (Authorization: Bearer KEY)")
        scope[AUTHORIZED] = authorized
        return None

    async def _body(self, scope: Scope, receive: Receive) -> Message | None:
        """The whole request body as one message (it is small), or None if over the limit:
        read here, so a chunked body with no length gets the same 413 as a declared one."""
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.max_body:
            return None
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message  # the client went away: the app sees it as it would have
            chunk = bytes(message.get("body", b""))
            seen += len(chunk)
            if seen > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

    def _authorized(self, headers: Any) -> bool:
        assert self.api_key is not None
        given = str(headers.get("x-api-key", "")).encode("latin-1")
        bearer = str(headers.get("authorization", "")).encode("latin-1")
        if bearer[:7].lower() == b"bearer ":
            given = bearer[7:].strip()
        return hmac.compare_digest(given, self.api_key)


def build_app(
    service: Service,
    *,
    host: str = "127.0.0.1",
    api_key: str | None = None,
    max_body: int = MAX_BODY_BYTES,
    seconds: float = REQUEST_SECONDS,
    allowed_hosts: Sequence[str] = (),
) -> ASGIApp:
    """The HTTP API with MCP at ``/mcp``; ``api_key`` is required off loopback; requests
    must name a loopback host, ``host`` or one of ``allowed_hosts`` (:func:`host_security`)."""
    api_key = (api_key or "").strip() or None  # a blank key would admit anyone
    if host not in LOOPBACK and not api_key:
        raise NarezkaError(
            f"serving on {host} (not loopback) needs an API key: set NAREZKA_API_KEY"
        )
    service.request_seconds = seconds  # the work stops at the limit its answer is given at
    mcp = build_mcp(service)
    security = host_security(host, allowed_hosts)
    mcp_app = mcp.streamable_http_app(host=host, transport_security=security)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    async def not_found(_: Request, exc: Exception) -> Response:
        status = int(getattr(exc, "status_code", 404))
        return _error(status, "no such endpoint" if status == 404 else "method not allowed")

    # The MCP app's own route (``/mcp``) joins ours, so one router answers every path and
    # an unknown one gets the same JSON error as the rest of the API.
    app = Starlette(
        routes=[*_routes(service), *mcp_app.routes],
        lifespan=lifespan,
        exception_handlers={404: not_found, 405: not_found},
    )
    return Guard(app, api_key=api_key, max_body=max_body, seconds=seconds, security=security)
