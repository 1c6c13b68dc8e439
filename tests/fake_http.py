"""What the local fake servers share (Ollama/OpenAI embeddings, LLM chat, Qdrant's REST API):
a quiet JSON request handler and a server on a random 127.0.0.1 port for one block."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JsonHandler(BaseHTTPRequestHandler):
    """A request handler that answers JSON and keeps test output clean."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_raw(self, status: int, data: bytes, kind: str = "application/json") -> None:
        """Answer ``data`` with ``status``."""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        # The client may have timed out and gone away: expected in timeout tests.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)

    def send_json(self, status: int, payload: Any) -> None:
        """Answer ``payload`` as JSON with ``status``."""
        self.send_raw(status, json.dumps(payload, ensure_ascii=False).encode())

    def read_json(self) -> Any:
        """The request's JSON body ({} when it has none)."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else {}


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (random port) for the block; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    # A short poll interval keeps shutdown() (once per test) from costing 0.5 s.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
