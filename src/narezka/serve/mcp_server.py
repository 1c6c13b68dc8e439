"""The MCP front end (official ``mcp`` SDK, ``MCPServer``): four read-only tools and one
resource over a :class:`~narezka.serve.service.Service`.

Each tool returns one JSON text, never larger than the service's reply budget. A refused
request (bad argument, unknown id, path outside the corpus) is a tool error carrying the
reason; anything unexpected is a tool error saying so, with the details only in the log.
An argument a tool does not take is refused too (the SDK would ignore it), and on stdio a
line that is not a JSON-RPC message gets JSON-RPC 2.0's error reply (the SDK drops it).
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field, ValidationError

from narezka.errors import NarezkaError
from narezka.search.options import IndexSetting, Option, shown_at
from narezka.serve.service import MAX_CONTEXT, MAX_K, MAX_QUERY_CHARS, Service

log = logging.getLogger("narezka.serve")

INSTRUCTIONS = """\
narezka searches one Markdown knowledge base that it keeps chunked, indexed and up to date.
Start with `search`; every hit has a `chunk_id`, its file (`file_path`), its heading path
(`breadcrumb`), a link (`url`) and its exact character span (`start`, `end`) in the file.
Use `get_context` for the chunks around a hit, `list_sources` and the resource
narezka://source/{path} for whole files, `index_status` to see what is indexed and how fresh
it is. Replies are bounded; when `next_cursor` is not null, call again with it for more."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def _answer(call: Callable[[], Any]) -> str:
    try:
        return json.dumps(call(), ensure_ascii=False)
    except NarezkaError as exc:
        raise ToolError(str(exc)) from None
    except Exception:
        log.exception("tool failed")
        raise ToolError("internal error in narezka (details are in the server's log)") from None


def _worded(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply without hits says so in words an agent acts on, not as an error."""
    if reply["hits"] or reply.get("next_cursor"):
        return reply
    best = reply.get("best_relevance")
    why = (
        f"the best match has relevance {best:.2f}, below min_relevance {reply['min_relevance']}"
        if best is not None
        else "nothing matched"
    )
    answer = (
        f"No passage in this index answers {reply['query']!r} ({why}). Do not answer from "
        "these documents: say they do not cover it, or search again with other words."
    )
    return {"answer": answer, **reply}


def _search_signature() -> inspect.Signature:
    """The search tool's arguments: the query, every option of the table MCP shows (each with
    its type, default, bounds and help: the tool's input schema) and the cursor."""
    text = Field(
        description="What to look for, in the user's words (any language; Russian and English "
        "work best).",
        min_length=1,
        max_length=MAX_QUERY_CHARS,
    )
    cursor = Field(description="next_cursor from the previous reply to the same search.")
    keyword = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature(
        [
            inspect.Parameter("query", keyword, annotation=Annotated[str, text]),
            *(
                inspect.Parameter(o.name, keyword, annotation=_argument(o), default=o.default)
                if not isinstance(o.default, IndexSetting)
                else inspect.Parameter(o.name, keyword, annotation=_argument(o), default=None)
                for o in shown_at("mcp")
            ),
            inspect.Parameter(
                "cursor", keyword, annotation=Annotated[str | None, cursor], default=None
            ),
        ],
        return_annotation=str,
    )


def _argument(option: Option) -> Any:
    """One option of the table as a tool argument's type (pydantic makes its schema)."""
    bounds: dict[str, Any] = {}
    if option.kind in ("whole", "number"):
        top = MAX_K if option.name == "k" else option.maximum  # a reply's bound, not a query's
        bounds = {"ge": option.minimum, "le": top}
    said = f" (default: {option.default_text})" if option.default_text else ""
    return Annotated[option.annotation(), Field(description=option.help + said, **bounds)]


def build_mcp(service: Service, *, name: str = "narezka") -> MCPServer:
    """An MCP server over ``service`` (run it on stdio, or mount its streamable HTTP app)."""
    server: MCPServer = MCPServer(name, instructions=INSTRUCTIONS, log_level="WARNING")

    def search(query: str, cursor: str | None = None, **options: Any) -> str:
        """Search the knowledge base. Returns {"hits": [...], "next_cursor", "total",
        "best_relevance"}; each hit has text, breadcrumb, url, file_path, start, end (exact
        character span in the file), relevance (the calibrated chance, 0 to 1, that it answers
        the query), score and chunk_id. No hits and an "answer" in words: the index does not
        answer the query. Archived pages are left out unless include_archived."""
        return _answer(lambda: _worded(service.search(query, cursor=cursor, **options)))

    # The arguments are the table's (narezka.search.options): the SDK reads the signature.
    search.__signature__ = _search_signature()  # type: ignore[attr-defined]
    search = server.tool(annotations=READ_ONLY, structured_output=False)(search)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def get_context(
        chunk_id: Annotated[str, Field(description="A chunk_id from a search hit.")],
        before: Annotated[
            int, Field(description="Chunks to add before it.", ge=0, le=MAX_CONTEXT)
        ] = 1,
        after: Annotated[
            int, Field(description="Chunks to add after it.", ge=0, le=MAX_CONTEXT)
        ] = 1,
    ) -> str:
        """The chunk and its neighbours in the same file, in reading order: use it when a hit
        starts or stops mid-thought."""
        return _answer(lambda: service.get_context(chunk_id, before=before, after=after))

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def list_sources(
        path_glob: Annotated[
            str | None, Field(description="Only paths matching this glob, e.g. 'docs/**'.")
        ] = None,
        cursor: Annotated[
            str | None, Field(description="next_cursor from the previous reply.")
        ] = None,
    ) -> str:
        """The indexed files: path, size, chunk count and the resource uri to read the whole
        file. Paged: follow next_cursor."""
        return _answer(lambda: service.list_sources(path_glob, cursor))

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def index_status() -> str:
        """What is indexed: files, chunks, embedder, strategy, when it last synced, files
        changed since (the next sync's work) and whether the server is syncing now."""
        return _answer(service.status)

    tools = (search, get_context, list_sources, index_status)
    server.middleware.append(
        _KnownArguments({f.__name__: frozenset(inspect.signature(f).parameters) for f in tools})
    )

    @server.resource(
        "narezka://source/{+path}",
        name="source",
        description="An indexed file's text (secrets redacted), cut to the reply budget.",
        mime_type="text/markdown",
    )
    def source(path: str) -> str:
        try:
            return service.source_text(path)
        except NarezkaError as exc:
            raise ResourceError(str(exc)) from None

    return server


class _KnownArguments:
    """Refuses a tool call that passes an argument the tool does not take: the SDK would drop
    it silently, and a caller who misspelt ``path`` would get unfiltered results."""

    def __init__(self, takes: Mapping[str, frozenset[str]]) -> None:
        self.takes = takes

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params or {}
        known = self.takes.get(str(params.get("name"))) if ctx.method == "tools/call" else None
        arguments = params.get("arguments")
        if known is not None and isinstance(arguments, Mapping):
            unknown = sorted(set(arguments) - known)
            if unknown:
                text = (
                    f"unknown argument{'s' if len(unknown) > 1 else ''} "
                    f"{', '.join(map(repr, unknown))} for {params['name']} "
                    f"(it takes: {', '.join(sorted(known)) or 'none'})"
                )
                return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        return await call_next(ctx)


async def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes, answering a line that is not a
    JSON-RPC message (bad JSON, a lone surrogate, not an object) with a parse error or an
    invalid request error, id null, as JSON-RPC 2.0 says; the SDK's own loop drops them."""
    # MCPServer.run("stdio") in its own words, with one stream put between.
    lowlevel = server._lowlevel_server
    async with stdio_server() as (lines, replies):
        send, screened = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def screen() -> None:
            async with send:
                async for item in lines:
                    if isinstance(item, Exception):
                        await replies.send(SessionMessage(_rejection(item)))
                    else:
                        await send.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(screen)
            await lowlevel.run(screened, replies, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()


def _rejection(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error reply to a line the transport could not take as a message."""
    if isinstance(exc, ValidationError) and any(e["type"] == "json_invalid" for e in exc.errors()):
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not valid JSON")
    else:
        error = ErrorData(
            code=INVALID_REQUEST,
            message="Invalid Request: not a JSON-RPC 2.0 request, notification or response",
        )
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)
