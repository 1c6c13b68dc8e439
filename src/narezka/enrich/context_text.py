"""The text side of LLM-written chunk context: what is sent (the prompt, the document
excerpt), how a reply is cleaned, and how a context is fitted into a chunk's budget.
See :mod:`narezka.enrich.llm_context` for the step itself."""

from __future__ import annotations

import re
from collections.abc import Sequence

from narezka.parse.redaction import redact_span
from narezka.parse.sentences import sentence_ends
from narezka.tokens import TokenCounter
from narezka.types import Secret

DOC_CHARS = 6000
"""The most of a document sent with one chunk: a quarter from its start, the rest around the
chunk (a small model's window and the prompt cost bound it)."""
MAX_CONTEXT_CHARS = 400
MAX_SENTENCES = 2
MIN_CUT_WORDS = 4
"""A context cut at a word boundary keeps at least this many words, or it is dropped."""
SEPARATOR = "\n\n"

SYSTEM_PROMPT = (
    "You write search context for passages of a document. Given the document and one passage "
    "from it, answer with one or two short sentences that say what the passage is about and "
    "where it belongs in the document (product, topic, section), so that the passage can be "
    "found by a search on its own. Write in the language of the document. Answer with the "
    "sentences only: no preamble, no quotes, no lists."
)

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_LABEL = re.compile(r"^\s*(context|контекст|answer|ответ)\s*[:：-]\s*", re.IGNORECASE)


def document_excerpt(
    text: str, start: int, end: int, secrets: Sequence[Secret] = (), limit: int = DOC_CHARS
) -> str:
    """What of the document goes with the chunk ``text[start:end]``: all of it when short,
    else its opening and the stretch around the chunk, cut at line ends, secrets redacted."""
    if len(text) <= limit:
        return redact_span(text, secrets, 0, len(text))
    head_end = _line_end(text, limit // 4)
    room = limit - head_end
    middle = (start + end) // 2
    lo = max(head_end, min(middle - room // 2, len(text) - room))
    lo = _line_start(text, lo, floor=head_end)
    hi = _line_end(text, min(len(text), lo + room))
    parts = [redact_span(text, secrets, 0, head_end)]
    if lo > head_end:
        parts.append("[…]")
    parts.append(redact_span(text, secrets, lo, hi))
    if hi < len(text):
        parts.append("[…]")
    return "\n".join(p for p in parts if p)


def _line_end(text: str, pos: int) -> int:
    cut = text.rfind("\n", 0, pos)
    return cut if cut > pos // 2 else pos


def _line_start(text: str, pos: int, *, floor: int) -> int:
    cut = text.find("\n", pos)
    return cut + 1 if 0 <= cut < pos + 200 else max(pos, floor)


def chat_messages(excerpt: str, chunk_text: str) -> list[dict[str, str]]:
    """The request for one chunk's context."""
    user = f"<document>\n{excerpt}\n</document>\n\n<passage>\n{chunk_text}\n</passage>"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def clean_reply(text: str) -> tuple[str, bool]:
    """The reply as one line of at most two sentences and ``MAX_CONTEXT_CHARS``; and whether
    it had to be shortened. Reasoning blocks (``<think>``), labels and quotes are removed."""
    text = _THINK.sub(" ", text)
    text = " ".join(text.split())
    text = _LABEL.sub("", text).strip().strip("\"'«»“”`").strip()
    if not text:
        return "", False
    ends = [e for e in sentence_ends(text) if e < len(text)]
    cut = False
    if len(ends) >= MAX_SENTENCES:
        text, cut = text[: ends[MAX_SENTENCES - 1]].rstrip(), True
    if len(text) > MAX_CONTEXT_CHARS:
        text, cut = _prefix_within(text, MAX_CONTEXT_CHARS), True
    return text, cut


def _prefix_within(text: str, limit: int) -> str:
    ends = [e for e in sentence_ends(text) if e <= limit]
    if ends:
        return text[: ends[-1]].rstrip()
    space = text.rfind(" ", 0, limit + 1)
    return text[: space if space > 0 else limit].rstrip()


def fit_context(
    context: str, embed_text: str, counter: TokenCounter, limit: int
) -> tuple[str, str]:
    """``(context as kept, how)``: ``how`` is ``full``, ``cut`` (shortened at a sentence, else
    a word boundary) or ``dropped`` (not even ``MIN_CUT_WORDS`` words fit); ``context +
    SEPARATOR + embed_text``
    measured exactly by ``counter`` stays within ``limit``."""

    def fits(prefix: str) -> bool:
        return counter.count(prefix + SEPARATOR + embed_text) <= limit

    if fits(context):
        return context, "full"
    for end in reversed([e for e in sentence_ends(context) if e < len(context)]):
        if fits(context[:end].rstrip()):
            return context[:end].rstrip(), "cut"
    words = context.split(" ")
    lo, hi = 0, len(words) - 1  # the largest word count that fits, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(" ".join(words[:mid])):
            lo = mid
        else:
            hi = mid - 1
    # A few words of a context are noise in the vector, not context.
    return (" ".join(words[:lo]), "cut") if lo >= MIN_CUT_WORDS else ("", "dropped")


__all__ = [
    "DOC_CHARS",
    "MAX_CONTEXT_CHARS",
    "MAX_SENTENCES",
    "MIN_CUT_WORDS",
    "SEPARATOR",
    "SYSTEM_PROMPT",
    "chat_messages",
    "clean_reply",
    "document_excerpt",
    "fit_context",
]
