"""``auto``: pick a strategy per file from its type and content.

Markdown → ``headings``, or ``faq`` for a page that is mostly questions (see
:func:`~narezka.split.faq.looks_like_faq`); source code → ``code``; JSON/JSONL messages or
``Name: text`` transcripts → ``chat``; text dominated by numbered articles and points →
``legal``; anything else → ``recursive``. The choice is cheap (an extension and a line scan),
made per file, and shown per file by ``narezka chunk --stats``; each chunk's ``strategy``
names the one it got.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import ClassVar

from narezka.formats import CONVERTED_SUFFIXES
from narezka.split.base import MARKDOWN_INCLUDE, SplitParams, Strategy
from narezka.split.chat import ChatStrategy, looks_like_chat
from narezka.split.code import CODE_EXTENSIONS, CodeStrategy
from narezka.split.faq import FaqStrategy, looks_like_faq
from narezka.split.headings import HeadingsStrategy
from narezka.split.legal import LEGAL_THRESHOLD, LegalStrategy, legal_score
from narezka.split.recursive import RecursiveStrategy
from narezka.tokens import TokenCounter
from narezka.types import Chunk, Document, RawDocument

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})


class AutoStrategy:
    """Chooses ``headings``, ``faq``, ``code``, ``chat``, ``legal`` or ``recursive`` per file."""

    name: ClassVar[str] = "auto"
    breadcrumbs: ClassVar[bool] = True
    markdown: ClassVar[bool] = True
    include: ClassVar[tuple[str, ...]] = tuple(
        dict.fromkeys((*MARKDOWN_INCLUDE, *CodeStrategy.include, *ChatStrategy.include))
    )

    def __init__(self) -> None:
        self._strategies: dict[str, Strategy] = {
            "headings": HeadingsStrategy(),
            "faq": FaqStrategy(),
            "code": CodeStrategy(),
            "chat": ChatStrategy(),
            "legal": LegalStrategy(),
            "recursive": RecursiveStrategy(),
        }

    def choose(self, raw: RawDocument) -> Strategy:
        return self._strategies[choose_strategy(raw.source, raw.text)]

    def split(self, doc: Document, params: SplitParams, counter: TokenCounter) -> list[Chunk]:
        # The pipeline calls choose() first; this serves callers holding a parsed Document.
        chosen = self._strategies[choose_strategy(doc.source, doc.text)]
        return chosen.split(doc, params, counter)


def choose_strategy(source: str, text: str) -> str:
    """The strategy ``auto`` gives a file, by its name and text."""
    suffix = PurePosixPath(source).suffix.lower()
    if suffix in CODE_EXTENSIONS:
        return "code"
    # A converted file (PDF, Word, HTML…) is Markdown by the time it is split.
    markdown = suffix in MARKDOWN_SUFFIXES or suffix in CONVERTED_SUFFIXES
    if not markdown and looks_like_chat(source, text):
        return "chat"
    if legal_score(text) >= LEGAL_THRESHOLD:
        return "legal"
    if markdown:
        return "faq" if looks_like_faq(text) else "headings"
    return "recursive"


__all__ = ["AutoStrategy", "choose_strategy"]
