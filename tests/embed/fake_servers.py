"""A local fake of the Ollama and OpenAI embedding HTTP APIs, for tests.

No live Ollama server was available to test against, so the clients are tested against this
fake, which implements the documented contract: ``POST /api/show`` (``model_info`` with
``<arch>.context_length`` and ``<arch>.embedding_length``; 404 for unknown models),
``POST /api/embed`` (batched ``input``, ``embeddings`` and ``prompt_eval_count``; with
``truncate: false`` an over-long input fails the request with "input length exceeds the
context length" as HTTP 400, 413 or 500, as different server versions do; 404 for unknown
models), and ``POST /v1/embeddings`` (OpenAI's shape). Faults are scripted: queued error
statuses, and slow responses for timeout tests. It listens on 127.0.0.1, a random port.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fake_http import JsonHandler, serving
from narezka.embed.base import HashEmbedder, WordCounter

LENGTH_MESSAGE = "the input length exceeds the context length"


@dataclass
class FakeState:
    """What the fake serves and how it misbehaves; tests change it between calls."""

    models: dict[str, tuple[int, int]] = field(default_factory=lambda: {"fake-embed": (32, 16)})
    """model name -> (context_length, embedding_length)."""
    length_status: int = 400
    fail_statuses: list[int] = field(default_factory=list)
    """Statuses returned (with a generic error) by the next embed requests, one each."""
    delays: list[float] = field(default_factory=list)
    """Seconds to sleep before answering the next embed requests, one each."""
    always_delay: float = 0.0
    """Seconds every request takes, the fake's own work included."""
    max_batch: int | None = None
    """Larger embed batches are refused with 413, as TEI refuses them."""
    retry_after: str | None = None
    """The ``Retry-After`` header sent with simulated 429 and 503 answers."""
    fail_rate: float = 0.0
    fail_cycle: tuple[int, ...] = (503, 429, 500)
    """Statuses of the random failures, in turn."""
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    keep_alive: bool = False
    base64: bool = True
    """Answers ``encoding_format: base64`` (else refuses it with 400, as older servers do)."""
    digest_vectors: bool = False
    """Vectors from each text's SHA-512 instead of ``HashEmbedder``: as deterministic, and
    cheap enough that a benchmark measures the client rather than the fake's arithmetic."""
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    answered: list[tuple[float, list[str]]] = field(default_factory=list)
    """(monotonic time the answer is sent, inputs) of every embed request answered with
    vectors."""
    failed_at: list[float] = field(default_factory=list)
    """Monotonic times of the simulated failures."""
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def embedded_texts(self) -> list[str]:
        """Every text the fake returned a vector for, once per time it did."""
        with self.lock:
            return [text for _, inputs in self.answered for text in inputs]

    def embed_requests(self) -> list[dict[str, Any]]:
        return [body for path, body in self.requests if path in ("/api/embed", "/v1/embeddings")]


_COUNTER = WordCounter()


def _handler(state: FakeState) -> type[JsonHandler]:
    class Handler(JsonHandler):
        # Keep-alive (for benchmarks, as real servers do) leaves the clients' pooled sockets
        # open when a test ends; tests close every connection after its answer.
        protocol_version = "HTTP/1.1" if state.keep_alive else "HTTP/1.0"
        # Headers and body go out in two writes: with Nagle's algorithm the body waits for
        # the client's delayed ACK (40 ms) on a kept-alive connection. Servers set NODELAY.
        disable_nagle_algorithm = True
        deadline = 0.0
        counted = False
        """Whether this request is counted in ``state.in_flight``."""

        def send_raw(self, status: int, data: bytes, kind: str = "application/json") -> None:
            # The delay covers the fake's own work: answer when it is up, not after it.
            time.sleep(max(0.0, self.deadline - time.monotonic()))
            self._answered()
            super().send_raw(status, data, kind)

        def _answered(self) -> None:
            # A request stops being in flight before its answer goes out: once the client
            # has read it, it may send the next one before this thread runs again, and
            # counting both would see one request more in flight than the client sent.
            with state.lock:
                state.in_flight -= self.counted
                self.counted = False

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            is_embed = self.path in ("/api/embed", "/v1/embeddings")
            with state.lock:
                state.requests.append((self.path, body))
                delay = state.delays.pop(0) if is_embed and state.delays else state.always_delay
                fail = state.fail_statuses.pop(0) if is_embed and state.fail_statuses else None
                if fail is None and is_embed and state.rng.random() < state.fail_rate:
                    fail = state.fail_cycle[len(state.failed_at) % len(state.fail_cycle)]
                if fail is not None:
                    state.failed_at.append(time.monotonic())
                state.in_flight += is_embed
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
                self.counted = is_embed
            try:
                self._answer(body, delay, fail)
            finally:
                self._answered()

        def _answer(self, body: dict[str, Any], delay: float, fail: int | None) -> None:
            self.deadline = time.monotonic() + delay
            if self.path == "/api/show":
                return self._show(body)
            if fail is not None:
                error = {"error": f"simulated failure {fail}"}
                if fail in (429, 503) and state.retry_after is not None:
                    data = json.dumps(error).encode()
                    time.sleep(max(0.0, self.deadline - time.monotonic()))
                    self._answered()
                    self.send_response(fail)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Retry-After", state.retry_after)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return None
                return self.send_json(fail, error)
            if self.path == "/api/embed":
                return self._embed(body, openai=False)
            if self.path == "/v1/embeddings":
                return self._embed(body, openai=True)
            return self.send_json(404, {"error": "404 page not found"})

        def _show(self, body: dict[str, Any]) -> None:
            model = body.get("model", "")
            if model not in state.models:
                return self.send_json(404, {"error": f"model '{model}' not found"})
            window, dim = state.models[model]
            return self.send_json(
                200,
                {
                    "modelfile": f"FROM /blobs/sha256-{abs(hash(model)) % 10**12:012d}",
                    "parameters": "",
                    "template": "",
                    "details": {"format": "gguf", "family": "bert"},
                    "model_info": {
                        "general.architecture": "bert",
                        "bert.context_length": window,
                        "bert.embedding_length": dim,
                    },
                },
            )

        def _embed(self, body: dict[str, Any], *, openai: bool) -> None:
            model = body.get("model", "")
            if model not in state.models:
                if openai:
                    return self.send_json(404, {"error": {"message": f"model {model} not found"}})
                msg = f'model "{model}" not found, try pulling it first'
                return self.send_json(404, {"error": msg})
            window, dim = state.models[model]
            if openai and body.get("encoding_format") == "base64" and not state.base64:
                message = "encoding_format 'base64' is not supported"
                return self.send_json(400, {"error": {"message": message}})
            inputs = body.get("input", [])
            inputs = [inputs] if isinstance(inputs, str) else list(inputs)
            if state.max_batch is not None and len(inputs) > state.max_batch:
                message = f"batch size {len(inputs)} > maximum allowed batch size {state.max_batch}"
                return self.send_json(413, {"error": message, "error_type": "Validation"})
            counts = _COUNTER.count_batch(inputs)
            if not openai:
                window = min(window, int(body.get("options", {}).get("num_ctx") or window))
            if any(n > window for n in counts):
                if openai:
                    message = f"This model's maximum context length is {window} tokens"
                    return self.send_json(400, {"error": {"message": message}})
                return self.send_json(state.length_status, {"error": LENGTH_MESSAGE})
            vectors = (
                _digest_vectors(inputs, dim)
                if state.digest_vectors
                else (HashEmbedder(dim).embed(inputs).tolist())
            )
            with state.lock:  # before answering: the client may look as soon as it has the answer
                state.answered.append((max(self.deadline, time.monotonic()), inputs))
            if openai:
                encoded: list[Any] = vectors
                if body.get("encoding_format") == "base64":
                    encoded = [
                        base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode()
                        for v in vectors
                    ]
                data = [
                    {"object": "embedding", "index": i, "embedding": v}
                    for i, v in enumerate(encoded)
                ]
                usage = {"prompt_tokens": sum(counts), "total_tokens": sum(counts)}
                self.send_json(200, {"object": "list", "data": data, "usage": usage})
            else:
                payload = {"model": model, "embeddings": vectors, "prompt_eval_count": sum(counts)}
                self.send_json(200, payload)
            return None

    return Handler


def _digest_vectors(texts: list[str], dim: int) -> list[list[float]]:
    out = []
    for text in texts:
        raw = hashlib.shake_256(text.encode()).digest(dim)
        out.append([b / 255.0 - 0.5 for b in raw])
    return out


@contextmanager
def fake_server(state: FakeState) -> Iterator[str]:
    """Serve ``state`` on 127.0.0.1 (random port) for the block; yields the base URL."""
    with serving(_handler(state)) as url:
        yield url
