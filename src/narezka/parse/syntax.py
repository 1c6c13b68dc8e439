"""Line-level Markdown syntax the block scanner and the markdown-it path share: heading
titles and anchors, slugs, fence lines and the lenient backtick fence."""

from __future__ import annotations

import re

# A heading's attribute list, as Pandoc, Python-Markdown's attr_list and MkDocs write it:
# ``{#id}``, ``{ #id }`` (FastAPI's docs: 2,210 headings of md_corpus), ``{#id .class key=v}``.
# Anything else in braces (``{#a b}``) is the title's own text.
_ATTRIBUTE = r"(?:\.[^}\s]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^}\s]+))"
EXPLICIT_ANCHOR = re.compile(
    r"[ \t]*\{[ \t]*#([^}\s]+)(?:[ \t]+" + _ATTRIBUTE + r")*[ \t]*\}[ \t]*$"
)
# A backtick fence whose info string holds a backtick (```` ```warn header="`x`" ````):
# CommonMark reads that line as a paragraph, but the authors who write it (javascript.info,
# several doc generators) mean a fence, and so does the chunk checker. The parser gets a copy
# with those backticks masked; offsets do not move.
LENIENT_FENCE = re.compile(r"^( {0,3}`{3,})([^`\n]+`[^\n]*)$", re.M)
CONTAINER_PREFIX = re.compile(r"(?:[ \t]*(?:>|[-*+]|\d{1,9}[.)])(?=[ \t]|$))*[ \t]*")
_SLUG_DROP = re.compile(r"[^\w\- ]+", re.U)
_SLUG_SPACE = re.compile(r"[\s_]+", re.U)


def slugify(title: str) -> str:
    """GitHub-style slug: lowercase, punctuation dropped, spaces to hyphens; keeps Cyrillic."""
    slug = _SLUG_DROP.sub("", title.strip().lower())
    return _SLUG_SPACE.sub("-", slug).strip("-")


def heading_title(raw_title: str) -> tuple[str, str]:
    """Split a heading's content into (title, explicit anchor or '')."""
    # The search is tried at every position of the title: most titles have no brace at all.
    match = EXPLICIT_ANCHOR.search(raw_title) if "{" in raw_title else None
    if match is None:
        return raw_title.strip(), ""
    return raw_title[: match.start()].strip(), match.group(1)


def mask_info_backticks(match: re.Match[str]) -> str:
    """A lenient fence line with the backticks of its info string masked (same length)."""
    fence, info = match.group(1), match.group(2)
    # ```` ```rm -rf``` is dangerous ```` is inline code (a closing run as long as the
    # opening one), not a fence with a quoted info string: leave it to CommonMark.
    if "`" * len(fence.strip()) in info:
        return match.group(0)
    return fence + info.replace("`", "'")


_PREFIX_FIRST = frozenset(" \t>-*+0123456789")
"""The characters a container prefix can start with: a line starting otherwise has none
(most fence lines start with their backticks, and skip the regex)."""


def _prefix_end(line: str) -> int:
    if not line or line[0] not in _PREFIX_FIRST:
        return 0
    prefix = CONTAINER_PREFIX.match(line)
    return prefix.end() if prefix else 0


def fence_lines(text: str, start: int, end: int, marker: str) -> tuple[str, str]:
    """The opening fence line and the closing one ('' when the fence runs to end of file).

    Container markers (``>`` of a quote, a list bullet) are not part of either line.
    """
    first_end = text.find("\n", start, end)
    opening_line = text[start : end if first_end == -1 else first_end]
    open_indent = _prefix_end(opening_line)
    opening = opening_line[open_indent:].strip()
    last_start = text.rfind("\n", start, end) + 1
    if last_start <= start:
        return opening, ""
    closing_line = text[last_start:end]
    close_indent = _prefix_end(closing_line)
    closing = closing_line[close_indent:].strip()
    # A closing fence may be indented at most 3 columns more than its container allows;
    # deeper, the line is code content and the fence runs on.
    if close_indent > open_indent + 3 or len(closing) < len(marker) or closing.strip(marker[0]):
        return opening, ""
    return opening, closing
