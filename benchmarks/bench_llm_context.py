"""What the LLM chunk-context step costs narezka itself, apart from the LLM.

No LLM can run here, so the LLM's own time (seconds per chunk on a CPU) is not measured; this
measures everything around it, against a local fake of Ollama's ``/api/chat`` that answers at
once (``tests/fake_llm.py``, the same fake the tests use): building each request (document
excerpt, redaction), the HTTP round trip through the official ``ollama`` client, cleaning the
reply, fitting it into the budget with exact token counts, and the sqlite cache. Peers in the
same run: chunking the same corpus, and embedding its chunks with the default embedder.

Rows, all on the same chunks (``headings``, sized in the embedder's tokens as ``index`` does):

- chunking alone (``chunk_documents``);
- chunking + context, cold: every chunk a cache miss, one request each;
- chunking + context, warm: every chunk a cache hit, no request;
- embedding the chunks (``use``, the default), for scale.

    python benchmarks/bench_llm_context.py [--corpus examples/kb] [--out results/x.md]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fake_llm import LLMState, fake_llm  # noqa: E402
from narezka.embed import get_embedder  # noqa: E402
from narezka.enrich.context_cache import ContextCache  # noqa: E402
from narezka.enrich.llm_client import OllamaChat  # noqa: E402
from narezka.enrich.llm_context import ContextWriter  # noqa: E402
from narezka.runs import chunk_documents  # noqa: E402

REPEATS = 3


class TimedClient:
    """The client, with the seconds spent inside its ``chat`` (the HTTP round trip)."""

    def __init__(self, inner: OllamaChat) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0

    def chat(self, messages: object) -> object:
        started = time.perf_counter()
        try:
            return self.inner.chat(messages)  # type: ignore[arg-type]
        finally:
            self.seconds += time.perf_counter() - started


def timed(run: Callable[[], object], repeats: int = REPEATS) -> tuple[float, object]:
    """Median seconds of ``repeats`` runs, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=REPO / "examples" / "kb")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    model = get_embedder("use")
    counter, size = model.counter, model.budget
    kwargs = {"counter": counter, "size": size, "exclude": (".narezka/**",)}

    def chunk(context: ContextWriter | None = None) -> list[object]:
        return list(chunk_documents([args.corpus], "headings", context=context, **kwargs).chunks)

    lines = [
        f"corpus: {args.corpus.name}; headings, {size} {counter.name} tokens (as `index` sizes);",
        f"median of {REPEATS} runs; fake Ollama /api/chat on 127.0.0.1 answering at once; "
        f"load average {os.getloadavg()[0]:.1f} on a shared 2-core machine.",
        "",
    ]
    base, chunks = timed(chunk)
    n = len(chunks)  # type: ignore[arg-type]
    state = LLMState()
    with fake_llm(state) as url, tempfile.TemporaryDirectory() as tmp:
        client = TimedClient(OllamaChat("ctx-model", host=url))

        def cold() -> object:
            # A fresh cache each run: every chunk is a miss and one request.
            path = Path(tmp) / f"cold-{time.perf_counter_ns()}.sqlite"
            with ContextCache(path) as cache:
                return chunk(ContextWriter(client, cache))  # type: ignore[arg-type]

        miss, _ = timed(cold)
        http = client.seconds / REPEATS
        requests = len(state.chat_requests()) // REPEATS
        with ContextCache(Path(tmp) / "warm.sqlite") as cache:
            chunk(ContextWriter(client, cache))  # type: ignore[arg-type]  # fill it
            writer = ContextWriter(client, cache)  # type: ignore[arg-type]
            hit, _ = timed(lambda: chunk(writer))
            stats = writer.stats
    texts = [c.embed_text for c in chunks]  # type: ignore[attr-defined]
    embed, _ = timed(lambda: model.embed(texts), repeats=1)

    def row(name: str, seconds: float, extra: float | None = None) -> str:
        per = (extra if extra is not None else seconds) / n * 1000
        return f"| {name} | {seconds:.3f} | {per:.2f} | {seconds / base:.2f}× |"

    lines += [
        f"{n} chunks; per run: cold {requests} requests; warm {stats.cached // REPEATS} cache "
        f"hits and {stats.generated} requests.",
        "",
        "| run | seconds | ms per chunk (of the step alone for context rows) | vs chunking |",
        "|---|--:|--:|--:|",
        row("chunking alone", base),
        row("chunking + context, cold (all misses)", miss, miss - base),
        f"| … of which the HTTP round trip to the fake (same process) | {http:.3f} "
        f"| {http / n * 1000:.2f} | |",
        f"| … of which narezka's own work (excerpt, redaction, fit, cache) | "
        f"{miss - base - http:.3f} | {(miss - base - http) / n * 1000:.2f} | |",
        row("chunking + context, warm (all hits)", hit, hit - base),
        row("embedding the chunks (use), for scale", embed),
        "",
        "The LLM's own generation time is not in these figures: no LLM ran here. A 3B model on",
        "a laptop CPU takes seconds per chunk, so the step's cost is the LLM's; narezka's part",
        "is the difference between the cold row and chunking alone.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
