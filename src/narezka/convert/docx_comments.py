"""Word comments as metadata of the text they are anchored to: each comment of
``word/comments.xml`` found between its ``w:commentRangeStart`` and ``w:commentRangeEnd`` in
the body (or at its ``w:commentReference`` alone), named by that text (``on``) and located by
its span of the Markdown (``at``), so the chunk holding the text carries the comment and no
chunk's text holds it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from narezka.convert.docx_blocks import W
from narezka.types import ProvenanceSpan

__all__ = ["Anchors", "anchor_comments"]

ON_CHARS = 300
"""Characters of the commented text kept in ``on``: enough to recognise it, not a copy of a
commented chapter."""


@dataclass
class _Anchor:
    first: int
    last: int
    text: list[str] = field(default_factory=list)


class Anchors:
    """Where each comment id is anchored in the body: the first and last body block (their
    numbers, ``p12``) and the text between its range marks, read as the blocks are written."""

    def __init__(self) -> None:
        self.found: dict[str, _Anchor] = {}
        self._open: set[str] = set()

    def read(self, block: Any, number: int) -> None:
        """Record the comment marks and the commented text of body block ``number``."""
        for open_id in self._open:  # a range over two paragraphs: their words stay apart
            self.found[open_id].text.append(" ")
        for node in block.iter(W + "commentRangeStart", W + "commentRangeEnd", W + "t",
                               W + "commentReference"):  # fmt: skip
            key = node.get(W + "id") or ""
            if node.tag == W + "t":
                for open_id in self._open:
                    self.found[open_id].text.append(node.text or "")
            elif node.tag == W + "commentRangeStart":
                self.found[key] = _Anchor(number, number)
                self._open.add(key)
            elif node.tag == W + "commentRangeEnd":
                self._open.discard(key)
                if key in self.found:
                    self.found[key].last = number
            elif key not in self.found:  # a reference without a range: its block
                self.found[key] = _Anchor(number, number)
        for open_id in self._open:
            self.found[open_id].last = number


def _block_span(spans: Sequence[ProvenanceSpan], first: int, last: int) -> tuple[int, int] | None:
    wanted = {f"p{n}" for n in range(first, last + 1)}
    inside = [s for s in spans if s.where.element in wanted]
    if not inside:
        return None
    return min(s.start for s in inside), max(s.end for s in inside)


def anchor_comments(
    comments: Iterable[Mapping[str, str]],
    anchors: Anchors,
    markdown: str,
    spans: Sequence[ProvenanceSpan],
) -> list[dict[str, Any]]:
    """The comments (``id``, ``author``, ``text``) with ``on`` (the commented text) and, when
    their blocks were written, ``at``: the commented text's span of ``markdown``, or its
    blocks' span where the Markdown's marks keep the text from being found as it is."""
    out: list[dict[str, Any]] = []
    for comment in comments:
        note: dict[str, Any] = {"author": comment["author"], "text": comment["text"]}
        anchor = anchors.found.get(comment["id"])
        if anchor is None:
            out.append(note)
            continue
        on = " ".join("".join(anchor.text).split())
        if on:
            note["on"] = on[:ON_CHARS]
        span = _block_span(spans, anchor.first, anchor.last)
        if span is not None:
            start, end = span
            found = markdown.find(on, start, end) if on else -1
            note["at"] = [found, found + len(on)] if found >= 0 else [start, end]
        out.append(note)
    return out
