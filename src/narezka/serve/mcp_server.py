"""The MCP front end (official ``mcp`` SDK, ``MCPServer``): four read-only tools and one
resource over a :class:`~narezka.serve.service.Service`.

Each tool returns one JSON text, never larger than the service's reply budget. A refused
request (bad argument, unknown id, path outside the corpus) is a tool error carrying the
reason; anything unexpected is a tool error saying so, with the details only in the log.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from narezka.errors import NarezkaError
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


def build_mcp(service: Service, *, name: str = "narezka") -> MCPServer:
    """An MCP server over ``service`` (run it on stdio, or mount its streamable HTTP app)."""
    server: MCPServer = MCPServer(name, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def search(
        query: Annotated[
            str,
            Field(
                description="What to look for, in the user's words (any language; Russian "
                "and English work best).",
                min_length=1,
                max_length=MAX_QUERY_CHARS,
            ),
        ],
        k: Annotated[int, Field(description="How many hits at most.", ge=1, le=MAX_K)] = 5,
        mode: Annotated[
            Literal["hybrid", "dense", "bm25"],
            Field(
                description="hybrid (default): meaning and exact words together; dense: "
                "meaning only; bm25: exact words only (names, identifiers, error codes)."
            ),
        ] = "hybrid",
        zone: Annotated[str | None, Field(description="Only chunks of this zone.")] = None,
        project: Annotated[str | None, Field(description="Only this project.")] = None,
        category: Annotated[str | None, Field(description="Only this category.")] = None,
        path: Annotated[
            str | None,
            Field(
                description="Only files matching this glob, .gitignore-style: '*.md' at any "
                "depth, 'products/**' or 'docs/*.md' from the corpus root."
            ),
        ] = None,
        include_archived: Annotated[
            bool, Field(description="Let archived (outdated) pages answer too.")
        ] = False,
        expand: Annotated[
            Literal["section", "parent"] | None,
            Field(
                description="section: return each hit's whole heading section instead of "
                "the chunk; parent: its parent chunk (parent-child indexes only)."
            ),
        ] = None,
        cursor: Annotated[
            str | None,
            Field(description="next_cursor from the previous reply to the same search."),
        ] = None,
    ) -> str:
        """Search the knowledge base. Returns {"hits": [...], "next_cursor", "total"}; each
        hit has text, breadcrumb, url, file_path, start, end (exact character span in the
        file), score and chunk_id. Archived pages are left out unless include_archived."""
        return _answer(
            lambda: service.search(
                query,
                k=k,
                mode=mode,
                zone=zone,
                project=project,
                category=category,
                path=path,
                include_archived=include_archived,
                expand=expand,
                cursor=cursor,
            )
        )

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
