"""LLM-written chunk context (Contextual Retrieval): one or two sentences that situate a chunk
in its document, prepended to the chunk's ``embed_text`` and never to its ``text``.

For each chunk a local LLM (see :mod:`narezka.enrich.llm_client`) gets the document (or, for a
long one, its opening and the stretch around the chunk) and the chunk's own ``embed_text``, and
is asked for the sentences. What comes back is cleaned (reasoning blocks, labels, quotes and
line breaks go), cut to two sentences and ``MAX_CONTEXT_CHARS``, then fitted into the chunk's
budget: ``context + "\\n\\n" + embed_text`` is measured exactly in the chunk's own unit and
must not exceed the limit; a context that does not fit is cut at a sentence, else a word
boundary, else dropped, and each case is counted.

Contexts are cached in sqlite by (prompt version, model, the document excerpt sent, the chunk's
``embed_text``): an interrupted run reuses what it generated, and a re-sync of an unchanged file
asks nothing. Failed requests are not cached, so a later run asks again. A failure never loses a
chunk: it is indexed without context, and the file is marked for another try.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from narezka.embed.servers import Servers
from narezka.enrich.context_cache import PROMPT_VERSION, ContextCache, context_key
from narezka.enrich.context_text import (
    MAX_CONTEXT_CHARS,
    MAX_SENTENCES,
    SEPARATOR,
    SYSTEM_PROMPT,
    chat_messages,
    clean_reply,
    document_excerpt,
    fit_context,
)
from narezka.enrich.llm_client import (
    ChatClient,
    ContextLLMError,
    LLMModelNotFoundError,
    LLMUnavailableError,
    open_client,
)
from narezka.parse.redaction import find_secrets
from narezka.tokens import TokenCounter, unit_words
from narezka.types import Chunk

FAILURES_TO_STOP = 3
"""Consecutive failed requests after which a run stops asking (the server is in trouble)."""
SECONDS_PER_CALL = 3.0
"""The stated rate of the estimate printed before a run: a 3B model on a laptop CPU writes two
sentences in a few seconds. Unmeasured here (no LLM ran); the progress bar shows the real one."""
CHARS_PER_TOKEN = 3.5
"""For the prompt-token estimate (the LLM's tokenizer is unknown here): ~4 for English text,
~3 for Russian."""


@dataclass(slots=True)
class ContextStats:
    """What the context step did (summed over files in a run's report)."""

    chunks: int = 0
    with_context: int = 0
    cached: int = 0
    generated: int = 0
    failed: int = 0
    """Requests that failed: the chunk was indexed without context."""
    not_asked: int = 0
    """Chunks not sent because the run had stopped asking (server down, unknown model)."""
    cut: int = 0
    """Contexts shortened to fit the chunk's budget."""
    dropped: int = 0
    """Contexts that did not fit at all (the chunk was already at its limit)."""
    long_replies: int = 0
    """Replies longer than two sentences or MAX_CONTEXT_CHARS, shortened."""
    prompt_tokens: int = 0
    """As the server counted them (when it says)."""
    seconds: float = 0.0
    """Spent waiting for the LLM."""

    def add(self, other: ContextStats) -> None:
        """Add another file's counts to these."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready counts (``index --json`` prints them under ``context``)."""
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(slots=True)
class ContextEstimate:
    """What a run will ask, printed before it starts."""

    model: str
    chunks: int = 0
    cached: int = 0
    to_generate: int = 0
    prompt_chars: int = 0
    seconds_per_call: float = SECONDS_PER_CALL

    @property
    def prompt_tokens(self) -> int:
        """Estimated prompt tokens of the calls to make (``CHARS_PER_TOKEN``)."""
        return int(self.prompt_chars / CHARS_PER_TOKEN)

    @property
    def seconds(self) -> float:
        """Estimated wall time of the calls at ``seconds_per_call``."""
        return self.to_generate * self.seconds_per_call

    def describe(self) -> str:
        """One line for people."""
        minutes = self.seconds / 60
        return (
            f"context ({self.model}): {self.chunks} chunks, {self.cached} cached, "
            f"{self.to_generate} to generate, ~{self.prompt_tokens:,} prompt tokens; "
            f"~{minutes:.1f} min at {self.seconds_per_call:g} s per call (stated rate; "
            "the progress bar shows the measured one)"
        )


@dataclass(slots=True)
class FileContexts:
    """One file's chunks after the context step, and what happened."""

    chunks: list[Chunk]
    stats: ContextStats
    problems: list[str] = field(default_factory=list)
    """Messages naming the file (failures, shortened or dropped contexts)."""

    @property
    def incomplete(self) -> bool:
        """Some chunk should have had a context and has none: try the file again next run."""
        return self.stats.failed + self.stats.not_asked > 0


class ContextWriter:
    """Writes, caches and fits the contexts of one run's chunks; see the module docstring."""

    def __init__(
        self,
        client: ChatClient,
        cache: ContextCache | None = None,
        *,
        redact: bool = True,
        on_call: Callable[[], None] | None = None,
    ) -> None:
        self.client = client
        self.cache = cache
        self.redact = redact
        self.on_call = on_call
        self.stats = ContextStats()
        self.stopped: str | None = None
        """Why the run stopped asking (set on a dead server or an unknown model)."""
        self._failures = 0

    @property
    def fingerprint(self) -> str:
        """Joins the index fingerprint: another model or prompt re-processes every file."""
        return f"ctx:{self.client.name}:v{PROMPT_VERSION}"

    def requests(self, text: str, chunks: Sequence[Chunk]) -> list[tuple[bytes, str]]:
        """``(cache key, excerpt)`` of every chunk of a document (its text as read)."""
        secrets = find_secrets(text) if self.redact else ()
        out = []
        for chunk in chunks:
            excerpt = document_excerpt(text, chunk.start, chunk.end, secrets)
            out.append((context_key(self.client.name, excerpt, chunk.embed_text), excerpt))
        return out

    def estimate(self, documents: Iterable[tuple[str, Sequence[Chunk]]]) -> ContextEstimate:
        """How many calls the documents need, from the cache as it is now."""
        est = ContextEstimate(self.client.name)
        for text, chunks in documents:
            asks = self.requests(text, chunks)
            found = self.cache.get_many([k for k, _ in asks]) if self.cache else {}
            est.chunks += len(chunks)
            est.cached += sum(1 for k, _ in asks if k in found)
            for (key, excerpt), chunk in zip(asks, chunks, strict=True):
                if key not in found:
                    est.to_generate += 1
                    est.prompt_chars += len(SYSTEM_PROMPT) + len(excerpt) + len(chunk.embed_text)
        return est

    def apply(
        self,
        source: str,
        text: str,
        chunks: Sequence[Chunk],
        *,
        counter: TokenCounter,
        limit: int,
    ) -> FileContexts:
        """The chunks with their contexts prepended to ``embed_text`` within ``limit`` (in
        ``counter``'s unit); a failed request leaves its chunk as it was."""
        stats = ContextStats(chunks=len(chunks))
        problems: list[str] = []
        asks = self.requests(text, chunks)
        found = self.cache.get_many([k for k, _ in asks]) if self.cache else {}
        out: list[Chunk] = []
        errors: list[str] = []
        for chunk, (key, excerpt) in zip(chunks, asks, strict=True):
            context = found.get(key)
            if context is not None:
                stats.cached += 1
            elif self.stopped is not None:
                stats.not_asked += 1
            else:
                context = self._generate(key, excerpt, chunk, stats, errors)
            if not context:
                out.append(chunk)
                continue
            kept, how = fit_context(context, chunk.embed_text, counter, limit)
            if how == "dropped":
                stats.dropped += 1
                out.append(chunk)
                continue
            stats.cut += how == "cut"
            stats.with_context += 1
            out.append(_with_context(chunk, kept, counter, self.fingerprint))
        if errors:
            shown = errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
            problems.append(
                f"{source}: {stats.failed} chunk(s) indexed without context: {shown}; "
                "they are asked again on the next sync"
            )
        if stats.not_asked:
            problems.append(
                f"{source}: {stats.not_asked} chunk(s) indexed without context, not asked "
                f"({self.stopped}); they are asked again on the next sync"
            )
        if stats.dropped or stats.cut:
            problems.append(
                f"{source}: context shortened for {stats.cut} and left out for {stats.dropped} "
                f"chunk(s) to keep embed_text within {limit} {unit_words(counter.name)} "
                "(a smaller --size leaves room for it)"
            )
        if stats.long_replies:
            problems.append(
                f"{source}: {stats.long_replies} repl(ies) longer than {MAX_SENTENCES} "
                f"sentences or {MAX_CONTEXT_CHARS} characters were shortened"
            )
        self.stats.add(stats)
        return FileContexts(out, stats, problems)

    def _generate(
        self, key: bytes, excerpt: str, chunk: Chunk, stats: ContextStats, errors: list[str]
    ) -> str | None:
        started = time.perf_counter()
        try:
            reply = self.client.chat(chat_messages(excerpt, chunk.embed_text))
            context, long = clean_reply(reply.text)
            if not context:
                raise ContextLLMError(f"{self.client.name}: the reply has no usable text")
        except (LLMUnavailableError, LLMModelNotFoundError) as exc:
            # Every other chunk would meet the same wall: stop asking for this run.
            self.stopped = str(exc)
            stats.failed += 1
            errors.append(str(exc))
            return None
        except ContextLLMError as exc:
            stats.failed += 1
            errors.append(str(exc))
            self._failures += 1
            if self._failures >= FAILURES_TO_STOP:
                self.stopped = f"{FAILURES_TO_STOP} requests in a row failed; last: {exc}"
            return None
        finally:
            stats.seconds += time.perf_counter() - started
            if self.on_call is not None:
                self.on_call()
        self._failures = 0
        stats.generated += 1
        stats.long_replies += long
        stats.prompt_tokens += reply.prompt_tokens or 0
        if self.cache is not None:
            self.cache.put(key, self.client.name, context, reply.prompt_tokens)
        return context

    def close(self) -> None:
        """Close the cache and the client's connections."""
        if self.cache is not None:
            self.cache.close()
        close = getattr(self.client, "close", None)
        if callable(close):
            close()


def open_context(
    spec: str | None,
    cache_path: Path,
    *,
    redact: bool = True,
    on_call: Callable[[], None] | None = None,
    servers: Servers | None = None,
) -> ContextWriter | None:
    """The context writer of a run (its cache at ``cache_path``, its LLM reached through
    ``servers``), or None when ``spec`` is None: the step is off."""
    if spec is None:
        return None
    client = open_client(spec, servers=servers)
    return ContextWriter(client, ContextCache(cache_path), redact=redact, on_call=on_call)


def _with_context(chunk: Chunk, context: str, counter: TokenCounter, fingerprint: str) -> Chunk:
    embed = context + SEPARATOR + chunk.embed_text
    # Derived from the strategy's own hash (parent-child folds its parent in): a chunk whose
    # context changes gets a new hash and is embedded again; one without context keeps its.
    digest = hashlib.sha256(f"{chunk.content_hash}\0{fingerprint}\0{context}".encode())
    tokens = len(embed) if counter.name == "chars" else counter.count(embed)
    return replace(
        chunk,
        embed_text=embed,
        chars=len(embed),
        tokens=tokens,
        content_hash=digest.hexdigest()[:32],
        meta={**chunk.meta, "llm_context": context},
    )


__all__ = [
    "FAILURES_TO_STOP",
    "SECONDS_PER_CALL",
    "ContextEstimate",
    "ContextStats",
    "ContextWriter",
    "FileContexts",
    "open_context",
]
