"""``narezka serve``: MCP on stdio (what desktop agents launch), or the HTTP API and MCP's
streamable HTTP endpoint with ``--http HOST:PORT``; the index kept fresh meanwhile."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import click

from narezka.errors import MissingDependencyError, NarezkaError


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise click.BadParameter(f"expected HOST:PORT, e.g. 127.0.0.1:8765, not {value!r}")
    return host.strip("[]"), int(port)


@click.command("serve")
@click.argument("location", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    help="Serve the HTTP API and MCP (at /mcp) on this address instead of MCP on stdio. "
    "Any address but loopback needs NAREZKA_API_KEY.",
)
@click.option(
    "--max-reply-tokens",
    type=int,
    default=None,
    help="Largest reply, in tokens (cl100k)  [default: 8000].",
)
@click.option("--no-watch", is_flag=True, help="Do not sync on file changes (sync at start only).")
@click.option("--debounce-ms", type=int, default=800, show_default=True)
@click.option(
    "--search-threads",
    type=click.IntRange(min=1),
    default=None,
    help="Searches run at once; more wait their turn  [default: the number of cores].",
)
@click.option(
    "--follow-symlinks/--no-follow-symlinks",
    default=None,
    help="Change whether its syncs read symlinks leading outside the corpus  [default: as the "
    "index records; built without, they are named as skipped].",
)
def serve_command(
    location: Path,
    http: str | None,
    max_reply_tokens: int | None,
    no_watch: bool,
    debounce_ms: int,
    search_threads: int | None,
    follow_symlinks: bool | None,
) -> None:
    """Serve an index (STORE, or a CORPUS folder: indexed first if it has none) to agents
    over MCP and to apps over HTTP, syncing it as files change.

    Example: narezka serve examples/kb --http 127.0.0.1:8765
    """
    try:
        from narezka.serve.http_api import build_app
        from narezka.serve.mcp_server import build_mcp
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError(exc.name or "mcp", "serve") from exc
    from narezka.serve.service import DEFAULT_REPLY_TOKENS, Service

    # stdout is the MCP channel on stdio: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    address = _address(http) if http else None
    api_key = os.environ.get("NAREZKA_API_KEY") or None
    try:
        service = Service(
            location,
            max_reply_tokens=max_reply_tokens or DEFAULT_REPLY_TOKENS,
            watch=not no_watch,
            debounce_ms=debounce_ms,
            search_threads=search_threads,
            follow_symlinks=follow_symlinks,
        )
    except NarezkaError as exc:
        raise click.UsageError(str(exc)) from None
    with service:
        if address is None:
            service.start()
            build_mcp(service).run("stdio")
            return
        import uvicorn

        host, port = address
        try:
            app = build_app(service, host=host, api_key=api_key)
        except NarezkaError as exc:
            raise click.UsageError(str(exc)) from None
        service.start()
        click.echo(f"narezka: serving {service.corpus} on http://{host}:{port}", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
