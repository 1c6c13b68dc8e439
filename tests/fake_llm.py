"""A local fake of the Ollama and OpenAI chat APIs, for the LLM-written context tests.

No live LLM was available to test against, so the context step is tested against this fake,
which implements the documented shapes:

- Ollama ``POST /api/chat`` (non-streaming, ``"stream": false``): the reply is
  ``{"model", "created_at", "message": {"role": "assistant", "content"}, "done": true,
  "done_reason", "prompt_eval_count", "eval_count", ...}``; errors are ``{"error": "..."}``
  with 404 for a model that was never pulled (``model "x" not found, try pulling it first``).
- OpenAI ``POST /v1/chat/completions``: ``{"id", "object": "chat.completion", "choices":
  [{"index": 0, "message": {"role": "assistant", "content"}, "finish_reason": "stop"}],
  "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}``; errors are
  ``{"error": {"message", "type", "param", "code"}}``.

The answer is made from the request (the document's first heading and the passage's first
words), so tests can tell which chunk a context belongs to. Faults are scripted per request:
an HTTP status, a delay (timeouts), a body that is not JSON, an empty or a very long reply.
It listens on 127.0.0.1, a random port.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fake_http import JsonHandler, serving

LONG_REPLY = " ".join(f"Sentence number {i} keeps going on." for i in range(40))


def default_answer(document: str, passage: str) -> str:
    """``Section of «Title»: first words.`` from the prompt's document and passage."""
    title = next(
        (line.lstrip("#").strip() for line in document.splitlines() if line.startswith("#")),
        "document",
    )
    words = " ".join(re.sub(r"[#>|*`\[\]]", " ", passage).split()[:5])
    return f"Part of «{title}» about {words}."


@dataclass
class LLMState:
    """What the fake serves and how it misbehaves; tests change it between calls."""

    models: set[str] = field(default_factory=lambda: {"ctx-model"})
    faults: list[str | int | float] = field(default_factory=list)
    """One per request, consumed in order: an HTTP status (int), a delay in seconds (float),
    ``"garbage"`` (a 200 that is not JSON), ``"empty"`` (empty content), ``"long"``."""
    always: str | int | float | None = None
    """A fault for every request (after ``faults`` run out)."""
    answer: Callable[[str, str], str] = default_answer
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [b for p, b in self.requests if p in ("/api/chat", "/v1/chat/completions")]


def _prompt(body: dict[str, Any]) -> tuple[str, str]:
    user = next((m["content"] for m in body.get("messages", []) if m["role"] == "user"), "")
    doc = re.search(r"<document>\n(.*)\n</document>", user, re.DOTALL)
    passage = re.search(r"<passage>\n(.*)\n</passage>", user, re.DOTALL)
    return (doc.group(1) if doc else ""), (passage.group(1) if passage else "")


def _handler(state: LLMState) -> type[JsonHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            openai = self.path == "/v1/chat/completions"
            if self.path not in ("/api/chat", "/v1/chat/completions"):
                return self.send_json(404, {"error": "404 page not found"})
            with state.lock:
                state.requests.append((self.path, body))
                fault = state.faults.pop(0) if state.faults else state.always
            if isinstance(fault, float):
                time.sleep(fault)
                fault = None
            model = body.get("model", "")
            if model not in state.models:
                if openai:
                    return self._error(
                        404, f"The model `{model}` does not exist.", "model_not_found"
                    )
                return self.send_json(
                    404, {"error": f'model "{model}" not found, try pulling it first'}
                )
            if isinstance(fault, int):
                if openai:
                    return self._error(fault, f"simulated failure {fault}", None)
                return self.send_json(fault, {"error": f"simulated failure {fault}"})
            if fault == "garbage":
                return self.send_raw(200, b"<html>proxy error</html>", "text/html")
            document, passage = _prompt(body)
            text = {"empty": "", "long": LONG_REPLY}.get(str(fault)) if fault else None
            content = state.answer(document, passage) if text is None else text
            prompt_tokens = sum(len(m["content"].split()) for m in body.get("messages", []))
            reply_tokens = len(content.split())
            if openai:
                return self.send_json(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": reply_tokens,
                            "total_tokens": prompt_tokens + reply_tokens,
                        },
                    },
                )
            return self.send_json(
                200,
                {
                    "model": model,
                    "created_at": "2026-12-01T12:00:00.000000Z",
                    "message": {"role": "assistant", "content": content},
                    "done": True,
                    "done_reason": "stop",
                    "total_duration": 1000,
                    "load_duration": 10,
                    "prompt_eval_count": prompt_tokens,
                    "prompt_eval_duration": 100,
                    "eval_count": reply_tokens,
                    "eval_duration": 100,
                },
            )

        def _error(self, status: int, message: str, code: str | None) -> None:
            kind = "invalid_request_error" if status < 500 else "server_error"
            error = {"message": message, "type": kind, "param": None, "code": code}
            self.send_json(status, {"error": error})

    return Handler


@contextmanager
def fake_llm(state: LLMState) -> Iterator[str]:
    """Serve ``state`` on 127.0.0.1 (random port) for the block; yields the base URL."""
    with serving(_handler(state)) as url:
        yield url
