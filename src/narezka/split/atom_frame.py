"""The frame around a piece of a split atom: a table's header rows, a code block's fences.

A piece of a split table repeats the header in its ``embed_text`` and a piece of a split code
block gets its fences back, so the model still sees what the rows or lines are. The frame is
paid for in every piece, so it must stay small next to the budget: a header cell holding a
3,000-character token would otherwise leave no room for the piece's own text, and the packer
would cut the table into one-character pieces, each over the limit with the header. Frames
longer than their share are shortened here (the longest cells first, the info string first)
and given up when even the shortest form does not fit.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

from narezka.errors import NarezkaWarning
from narezka.parse.sanitize import sanitize
from narezka.tokens import TokenCounter, unit_words
from narezka.types import Block, BlockKind

Fits = Callable[[str], bool]
"""Whether a frame's text is within its share of the budget."""

ELLIPSIS = "…"
# A cell ends at a pipe that no backslash escapes (GFM splits cells there, code spans too).
_CELL_SEP = re.compile(r"(?<!\\)\|")
_FENCE_RUN = re.compile(r"[ \t]*(`+|~+)")


class AtomContextWarning(NarezkaWarning):
    """A split table's header or code block's fences did not fit even shortened: dropped."""


def atom_frame(
    text: str,
    atom: Block,
    header_end: int,
    counter: TokenCounter,
    cap: int,
    *,
    header: str | None = None,
) -> tuple[str, str]:
    """What goes before and after a piece of ``atom`` (a table or a fenced code block), at
    most ``cap`` units together; ('', '') with an :class:`AtomContextWarning` when nothing
    fits. ``header_end`` is where a table's data rows start; ``header``, if given, is the
    header rows' text to use instead of ``text[atom.start:header_end]`` (redacted)."""

    def fits(frame: str) -> bool:
        return counter.count(frame) <= cap

    if atom.kind is BlockKind.TABLE:
        raw = header if header is not None else text[atom.start : header_end]
        frame = (table_header(raw, fits), "")
    else:
        frame = code_fences(atom.fence, atom.fence_close or atom.fence.lstrip()[:3], fits)
    if not frame[0]:
        line = text.count("\n", 0, atom.start) + 1
        what = "header rows" if atom.kind is BlockKind.TABLE else "fence lines"
        warnings.warn(
            f"the {atom.kind.value} at line {line} is split, and even shortened its {what} "
            f"exceed {cap} {unit_words(counter.name)} (half the packing budget less the "
            "breadcrumb, and room for a redaction marker): its pieces are embedded without them",
            AtomContextWarning,
            stacklevel=4,
        )
    return frame


def table_header(raw: str, fits: Fits) -> str:
    """The header to repeat (sanitized, ending in a newline), or '' when none fits.

    ``raw`` is the table's header row and delimiter row as they stand in the document. The
    delimiter row goes first (it is syntax, and the model reads the header row without it),
    then the longest cells are cut.
    """
    header = sanitize(raw)
    if not header.endswith("\n"):
        header += "\n"
    if fits(header):
        return header
    row = header.split("\n", 1)[0] + "\n"
    if fits(row):
        return row
    cells = _cells(row)
    widest = max(len(c) for c in cells)

    def render(width: int) -> str:
        shown = [c if len(c) <= width else c[:width] + ELLIPSIS for c in cells]
        return "| " + " | ".join(shown) + " |\n"

    return _widest_fit(render, widest, fits)


def code_fences(opening: str, closing: str, fits: Fits) -> tuple[str, str]:
    """The lines to put before and after a piece of a fenced block, or ('', '') when none fit.

    ``opening`` is the opening fence line (marker and info string), ``closing`` the closing
    marker; both come without container prefixes or newlines.
    """
    opening, closing = sanitize(opening), sanitize(closing)
    if fits(opening + "\n\n" + closing):
        return opening + "\n", "\n" + closing
    run = _FENCE_RUN.match(opening)
    marker = run.group(1) if run else opening[:3]
    # A marker of hundreds of backticks says nothing more than three of them.
    marker = marker if len(marker) <= 8 else marker[0] * 3
    info = opening[run.end() if run else len(marker) :]

    def render(width: int) -> str:
        if len(info) <= width:
            return marker + info
        return marker + (info[:width].rstrip() + ELLIPSIS if width else "")

    chosen = _widest_fit(lambda w: render(w) + "\n\n" + marker, len(info), fits)
    if not chosen:
        return "", ""
    return chosen.split("\n", 1)[0] + "\n", "\n" + marker


def _widest_fit(render: Callable[[int], str], widest: int, fits: Fits) -> str:
    """``render(width)`` for the largest width in [0, widest] that fits, or '' if none does.

    Rendered length grows with the width, so binary search finds it in log(widest) tries.
    """
    if not fits(render(0)):
        return ""
    lo, hi = 0, widest
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(render(mid)):
            lo = mid
        else:
            hi = mid - 1
    return render(lo)


def _cells(row: str) -> list[str]:
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return [cell.strip() for cell in _CELL_SEP.split(row)]
