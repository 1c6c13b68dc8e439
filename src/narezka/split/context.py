"""Per-document state shared by all strategies: sections, atoms, embed_text, costs, chunks.

A strategy decides *where* to cut; this module decides what a range becomes: its breadcrumb,
the repeated table header or restored code fence around a piece of an atom, the sanitized
text the model sees, its exact size, and finally the ``Chunk`` with its identity.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections.abc import Sequence
from functools import cached_property
from hashlib import sha256
from typing import Any

from narezka._native import core
from narezka.parse.redaction import (
    DerivedRedactor,
    marker,
    redact_span,
    secrets_in,
    size_change,
)
from narezka.parse.sanitize import body_needs_sanitizing, sanitize, trim_whitespace
from narezka.split.atom_frame import atom_frame
from narezka.split.cuts import Cuts
from narezka.split.packer import Packer, Refiner
from narezka.split.sections import Section, anchors_in, heading_sections, redacted_sections
from narezka.split.sizes import RAW_CHARS_PER_TOKEN, Sizes, _constants
from narezka.tokens import TokenCounter, counts_split_at_word_ends, join_slack, short_counts
from narezka.types import Block, BlockKind, Chunk, Document

__all__ = ["RAW_CHARS_PER_TOKEN", "DocumentContext", "Section"]

BREADCRUMB_SHARE = 0.2
"""A breadcrumb may take at most this share of the budget; an atom of 80% always fits."""
ATOM_FRAME_SHARE = 0.5
"""A split atom's repeated header or fences, with the breadcrumb, may take this share of the
smallest budget the document is packed at, so every piece keeps room of its own."""
_NO_FRAME = ("", "")
_ATOM_KINDS = tuple(b for b in BlockKind if Block(b, 0, 0).is_atom)
_CHUNK_FIELDS = [f.name for f in dataclasses.fields(Chunk)]


class DocumentContext(Cuts, Sizes):
    """Everything about one document that turns ranges into chunks (its candidate cuts,
    the refiners, come from :class:`~narezka.split.cuts.Cuts`)."""

    def __init__(
        self,
        doc: Document,
        counter: TokenCounter,
        budget: int,
        *,
        strategy: str,
        fingerprint: str,
        breadcrumbs: bool,
        sections: Sequence[Section] | None = None,
        pack_budget: int | None = None,
    ) -> None:
        self.doc = doc
        self.text = doc.text
        self.secrets = doc.secrets
        self.counter = counter
        self.budget = budget
        self.strategy = strategy
        self.fingerprint = fingerprint
        self.breadcrumbs = breadcrumbs
        self.chars = counter.name == "chars"
        self.sections = list(sections) if sections is not None else heading_sections(doc.blocks)
        self.meta = doc.meta
        """Front matter as the chunks carry it: with its secrets redacted, like the titles
        and anchors (the one place the chunk fields that are not spans are made safe)."""
        if doc.secrets:
            redactor = DerivedRedactor(doc.text, doc.secrets)
            self.sections = redacted_sections(self.sections, redactor)
            self.meta = redactor.value(dict(doc.meta))
        self.section_starts = [s.start for s in self.sections]
        self.blocks = list(doc.blocks)
        self.block_starts = [b.start for b in self.blocks]
        self.atoms = [b for b in self.blocks if b.kind in _ATOM_KINDS]  # by identity: fast
        self.atom_starts = [a.start for a in self.atoms]
        title = self.meta.get("title")
        self.title = title.strip() if isinstance(title, str) else ""
        self._cost: dict[tuple[int, int], int] = {}
        self._tokens: dict[tuple[int, int], int] = {}
        self._body: dict[tuple[int, int], int] = {}
        self._extra: dict[str, int] = {}
        self._prefix: dict[tuple[str, ...], str] = {}
        self._spans: dict[tuple[int, int], tuple[tuple[str, ...], str, str]] = {}
        self._embed: dict[tuple[int, int], str] = {}
        self._frames: dict[int, tuple[str, str]] = {}
        self._density = (0, 0)  # characters and tokens of the blocks counted so far
        # How far a whitespace join may move a group's count from the sum of its pieces
        # (0: the sum is exact); None when the counter does not say, or for characters.
        self.slack = None if self.chars else join_slack(counter)
        # A count equal to count("") is ambiguous when it differs from the constant (e5: a
        # one-token text and a text the tokenizer sees as empty both count 5): such a part
        # is counted whole.
        self._base, self._empty = (0, 0) if self.slack is None else _constants(counter)
        # Exact group counts from the pieces' counts and the text around each join.
        self.word_ends = (
            counts_split_at_word_ends(counter) and self.slack is not None and self._base == 0
        )
        self._own: dict[tuple[int, int], int] = {}
        self._pairs: dict[tuple[tuple[int, int], tuple[int, int]], int | None] = {}
        self._edge_terms: dict[tuple[str, int, int], int | None] = {}
        self._gaps: dict[str, int | None] = {}
        self._prefix_tokens: dict[str, int] = {}
        # Titles, marks, gaps, frames recur across files: counts outlive the document.
        self._short = counter if self.chars else short_counts(counter)
        # The smallest budget a packer of this document uses (overlap packs below the size):
        # what a split atom's frame must leave room in.
        self.pack_budget = budget if pack_budget is None else min(budget, pack_budget)

    @cached_property
    def clean(self) -> bool:
        """Whether the body needs no sanitizing: most documents don't, and knowing it once
        lets every range skip the regex passes and character costs be pure arithmetic.
        Asked on first use: strategies that render their own text (chat) never ask."""
        return not body_needs_sanitizing(self.text, self.doc.body_start)

    @cached_property
    def _raw_bodies(self) -> bool:
        """Whether every range's body is its own text: no atom to frame a piece of, no
        secret, nothing to sanitize (and no subclass framing ranges its own way)."""
        plain_frames = type(self)._atom_context is DocumentContext._atom_context
        return plain_frames and not self.atoms and not self.secrets and self.clean

    # ---- sections and breadcrumbs -------------------------------------------------------

    def section_index(self, pos: int) -> int:
        """Index of the section holding ``pos``; -1 before the first heading."""
        return bisect_right(self.section_starts, pos) - 1

    def common_section(self, start: int, end: int) -> tuple[tuple[str, ...], str]:
        """The section path shared by every section the range touches, and its anchor."""
        path, anchor, _ = self._span(start, end)
        return path, anchor

    def crumb(self, start: int, end: int) -> str:
        """The breadcrumb the range's ``embed_text`` starts with (see :meth:`prefix`)."""
        return self._span(start, end)[2]

    def _span(self, start: int, end: int) -> tuple[tuple[str, ...], str, str]:
        """Common path, anchor and breadcrumb of the range, by the sections it touches: every
        candidate range asks, and a document has few distinct pairs of sections."""
        starts = self.section_starts
        key = (bisect_right(starts, start), bisect_right(starts, max(start, end - 1)))
        known = self._spans.get(key)
        if known is None:
            path, anchor = self._shared_path(key[0] - 1, key[1] - 1)
            known = self._spans[key] = (path, anchor, self.prefix(path))
        return known

    def _shared_path(self, first: int, last: int) -> tuple[tuple[str, ...], str]:
        if first < 0:
            return (), ""
        path, anchors = self.sections[first].path, self.sections[first].anchors
        for k in range(first + 1, last + 1):
            other = self.sections[k].path
            n = 0
            while n < min(len(path), len(other)) and path[n] == other[n]:
                n += 1
            path, anchors = path[:n], anchors[:n]
        return path, (anchors[-1] if anchors else "")

    def prefix(self, path: tuple[str, ...]) -> str:
        """The breadcrumb line plus blank line that starts ``embed_text`` (may be empty)."""
        cached = self._prefix.get(path)
        if cached is not None:
            return cached
        crumbs = [title for title in path if title]
        if self.title and (not crumbs or crumbs[0] != self.title):
            crumbs.insert(0, self.title)
        result = ""
        if self.breadcrumbs and crumbs:
            cap = int(self.budget * BREADCRUMB_SHARE) - 3
            line = " > ".join(crumbs)
            size = self._crumb_tokens(crumbs, line)
            # Deepest titles say most about the chunk: drop from the root first.
            while len(crumbs) > 1 and size > cap:
                crumbs.pop(0)
                line = "… > " + " > ".join(crumbs)
                size = self._crumb_tokens(crumbs, line)
            while line and size > cap:
                line = line[: len(line) * 3 // 4]
                crumbs = []  # a cut line is no longer its titles joined
                size = self._crumb_tokens(crumbs, line)
            result = line + "\n\n" if line else ""
            if line and self.slack == 0:
                self._prefix_tokens[result] = size + (self._gap_tokens("\n\n") or 0)
        self._prefix[path] = result
        return result

    # ---- atoms --------------------------------------------------------------------------

    def atom_at(self, pos: int) -> Block | None:
        """The atom strictly containing ``pos`` (a cut there would break it), if any."""
        k = bisect_right(self.atom_starts, pos) - 1
        if k >= 0 and self.atoms[k].start < pos < self.atoms[k].end:
            return self.atoms[k]
        return None

    def _atom_context(self, start: int, end: int) -> tuple[str, str]:
        """Text to put around a piece of a split atom: table header rows, code fences."""
        if not self.atoms:
            return _NO_FRAME
        before = after = ""
        atom = self.atom_at(start)
        if atom is not None and atom.kind is BlockKind.TABLE:
            if start >= self.table_body_start(atom):
                before = self._frame(atom)[0]
        elif atom is not None and atom.kind is BlockKind.CODE and atom.fence:
            before = self._frame(atom)[0]
        closing = self.atom_at(end)
        if closing is not None and closing.kind is BlockKind.CODE and closing.fence:
            after = self._frame(closing)[1]
        return before, after

    def frame_lengths(self, k: int) -> tuple[int, int]:
        """The lengths of ``atoms[k]``'s frame before and after a piece (the native packer's
        one question about it)."""
        before, after = self._frame(self.atoms[k])
        return len(before), len(after)

    def frame_texts(self, k: int) -> tuple[str, str]:
        """``atoms[k]``'s frame before and after a piece (the native packer asks in tokens)."""
        return self._frame(self.atoms[k])

    def _frame(self, atom: Block) -> tuple[str, str]:
        """The atom's header or fences, shortened to their share of the budget (once)."""
        frame = self._frames.get(atom.start)
        if frame is None:
            crumb = self._short.count(self.crumb(atom.start, atom.end))
            cap = int(self.pack_budget * ATOM_FRAME_SHARE) - crumb
            # A piece holding a secret's marker must still fit with its frame: a secret is
            # never cut, and its marker is whole in every piece that touches it.
            markers = [marker(s.kind) for s in secrets_in(self.secrets, atom.start, atom.end)]
            if markers:
                longest = max(self._short.count(m) for m in set(markers))
                cap = min(cap, self.pack_budget - crumb - longest)
            header_end = self.table_body_start(atom) if atom.kind is BlockKind.TABLE else 0
            # The header is redacted before it is shortened: a secret cut short in a cell
            # would no longer be recognized.
            header = self.span_text(atom.start, header_end) if header_end else None
            frame = atom_frame(self.text, atom, header_end, self.counter, cap, header=header)
            self._frames[atom.start] = frame
        return frame

    def table_body_start(self, table: Block) -> int:
        """Offset of the first data row (just past the delimiter row's newline)."""
        pos = table.start
        for _ in range(2):
            nl = self.text.find("\n", pos, table.end)
            if nl == -1:
                return table.end
            pos = nl + 1
        return pos

    # ---- what the model sees, and its size ----------------------------------------------

    def span_text(self, start: int, end: int) -> str:
        """The range's text with the document's secrets in it redacted (not sanitized)."""
        if not self.secrets:
            return self.text[start:end]
        return redact_span(self.text, self.secrets, start, end)

    def embed_text(self, start: int, end: int) -> str:
        key = (start, end)
        cached = self._embed.get(key)
        if cached is not None:
            return cached
        result = self.crumb(start, end) + self._framed(start, end)
        if len(self._embed) > 4096:
            self._embed.clear()
        self._embed[key] = result
        return result

    def _framed(self, start: int, end: int) -> str:
        """``embed_text`` after its breadcrumb: the redacted span in its atom's frame,
        sanitized where that changes it."""
        if self._raw_bodies:
            return self.text[start:end]
        before, after = self._atom_context(start, end)
        body = before + self.span_text(start, end) + after
        # A marker can make a run long enough to shorten, in a clean document too; else, in
        # a document that needs sanitizing somewhere, most chunks lie where it changes nothing.
        if (self.secrets and secrets_in(self.secrets, start, end)) or (
            not self.clean and not self._unchanged(start, end, before, after)
        ):
            body = sanitize(body)
        return body

    def cost(self, start: int, end: int) -> int:
        """Size of the range as a chunk: exact tokens of its ``embed_text`` (never less than a
        raw-length floor); in characters, an upper bound with the raw span in place of the
        sanitized one."""
        raw = end - start
        if self.chars:
            # Sanitizing never lengthens text, so the redacted length bounds the sanitized
            # one: no need to build embed_text. Redaction changes a span's length by an exact
            # amount (a 4-character password becomes a longer marker, a key block a shorter
            # one): size_change() accounts for it. Pure arithmetic on cached lookups, asked
            # for every candidate group: cheaper than a memo.
            starts = self.section_starts
            span = self._spans.get((bisect_right(starts, start), bisect_right(starts, end - 1)))
            value = len(span[2] if span is not None and raw > 0 else self.crumb(start, end)) + raw
            if self.atoms:
                before, after = self._atom_context(start, end)
                value += len(before) + len(after)
            if self.secrets:
                # The raw-length floor still holds: a blob of keys stays a bounded span.
                value += size_change(self.secrets, start, end)
                value = max(value, -(-raw // RAW_CHARS_PER_TOKEN))
            return value
        key = (start, end)
        cached = self._cost.get(key)
        if cached is not None:
            return cached
        # A cheap lower bound settles far-too-long ranges without tokenizing them.
        floor = -(-raw // RAW_CHARS_PER_TOKEN)
        if floor > self.budget:
            value = floor
        else:
            exact = self.summed_cost(start, end)
            if exact is None:
                exact = self.counter.count(self.embed_text(start, end))
            self._tokens[key] = exact
            value = max(exact, floor)
        self._cost[key] = value
        return value

    def max_probe(self) -> int:
        return self.budget if self.chars else self.budget * RAW_CHARS_PER_TOKEN

    def packer(
        self, refiners: Sequence[Refiner], budget: int | None = None, *, ceiling: int | None = None
    ) -> Packer:
        """A packer over this document; atoms may use ``ceiling`` (default: the full budget).

        Atom boundaries are always the last refiner: a range no other refiner cuts (a long
        token, then a fence indented under its list item) is hard split a unit at a time.
        """
        return Packer(
            self.text,
            self.budget if budget is None else budget,
            self.cost,
            [*refiners, self.atom_bounds],
            max_probe=self.max_probe(),
            ceiling=self.budget if ceiling is None else ceiling,
            atom_of=self.atom_range,
            trim=self.trim,
            estimate=None if self.chars else self.body_tokens,
            overhead=self.overhead_tokens,
            prefetch=None if self.chars else self.count_bodies,
            likely=None if self.chars else self.likely_fits,
            bounds=None if self.slack is None else self.group_bounds,
            flat=self.flat_cost if self.chars else None,
        )

    def flat_cost(self, pieces: list[tuple[int, int]]) -> int | None:
        """In characters, what every group of the pieces costs beyond its length when that
        is one constant: they lie in one section (one breadcrumb), no piece edge is inside an
        atom (no frame) and no secret is among them (no marker); else None."""
        start, end = pieces[0][0], pieces[-1][1]
        if (
            not self.chars
            or end <= start
            or (self.secrets and secrets_in(self.secrets, start, end))
        ):
            return None
        starts = self.section_starts
        if bisect_right(starts, start) != bisect_right(starts, end - 1):
            return None
        if self.atoms:
            atom_at = self.atom_at
            for s, e in pieces:
                if atom_at(s) is not None or atom_at(e) is not None:
                    return None
        return len(self.crumb(start, end))

    def trim(self, start: int, end: int) -> tuple[int, int]:
        """Trim whitespace, but keep an atom's indentation: a cut there would cut the atom."""
        text = self.text
        if start < end and not text[start].isspace() and not text[end - 1].isspace():
            s, e = start, end  # trim_whitespace's set is all isspace(): nothing to trim
        else:
            s, e = trim_whitespace(text, start, end)
        if s < e and self.atoms:
            atoms, starts = self.atoms, self.atom_starts
            k = bisect_right(starts, s) - 1
            if k >= 0 and start <= atoms[k].start < s < atoms[k].end:
                s = atoms[k].start
            k = bisect_right(starts, e) - 1
            if k >= 0 and atoms[k].start < e < atoms[k].end <= end:
                e = atoms[k].end
        return s, e

    def atom_range(self, start: int, end: int) -> tuple[int, int] | None:
        """The span of the atom the range lies in, if it lies in one."""
        atom = self.atom_at(start + 1) if end - start > 1 else None
        if atom is not None and atom.start <= start and end <= atom.end:
            return atom.start, atom.end
        return None

    def within_atom(self, start: int, end: int) -> bool:
        """Whether the range lies inside one atom (a whole table, code block, or a piece)."""
        return self.atom_range(start, end) is not None

    # ---- chunks -------------------------------------------------------------------------

    def make_chunks(self, ranges: list[tuple[int, int]]) -> list[Chunk]:
        rows: list[tuple[Any, ...]] = []  # the fields of each Chunk, in their order
        if not self.chars:
            # Chunks whose count is not known yet (sized by bounds only) in one batch.
            todo = [r for r in ranges if r not in self._tokens]
            if todo:
                counts = self.counter.count_batch([self.embed_text(*r) for r in todo])
                self._tokens.update(zip(todo, counts, strict=True))
        text, source, strategy = self.text, self.doc.source, self.strategy
        meta = dict(self.meta)
        secrets, sections, starts = self.secrets, self.sections, self.section_starts
        known, chars, name = self._tokens, self.chars, self.counter.name
        salt = f"{self.fingerprint}\0"
        spans, framed = self._spans, self._framed
        # In characters the breadcrumb and body are joined here (no embed_text was made while
        # packing); in tokens embed_text's memo holds most of them already. A subclass that
        # renders its own (chat) is always asked. The range's section pair is looked up
        # once for the breadcrumb, the path, the anchor and whether the range has anchors.
        joined = chars and type(self).embed_text is DocumentContext.embed_text
        for index, (start, end) in enumerate(ranges):
            key = (bisect_right(starts, start), bisect_right(starts, max(start, end - 1)))
            span = spans.get(key)
            if span is None:
                span = self._span(start, end)
            path, anchor, crumb = span
            embed = crumb + framed(start, end) if joined else self.embed_text(start, end)
            tokens = len(embed) if chars else known.get((start, end))
            if tokens is None:
                tokens = self.counter.count(embed)
            # surrogatepass: a lone surrogate (text decoded with errors="surrogateescape")
            # still hashes; any other text hashes as its plain UTF-8, as it always did.
            data = (salt + embed).encode("utf-8", "surrogatepass")
            digest = sha256(data).hexdigest()[:32]
            # A range within one section (most) lists no anchors.
            anchors = anchors_in(sections, starts, start, end) if key[0] != key[1] else None
            rows.append(
                (
                    source,
                    index,
                    start,
                    end,
                    text[start:end],
                    embed,
                    path,
                    anchor,
                    f"{source}#{anchor}" if anchor else source,
                    len(embed),
                    tokens,
                    name,
                    strategy,
                    digest,
                    {**meta, "anchors": anchors} if anchors else meta,
                    secrets_in(secrets, start, end) if secrets else (),
                )
            )
        # The core sets the slots of each frozen Chunk without a Python call per field.
        if core is not None:
            chunks: list[Chunk] = core.make_objects(Chunk, _CHUNK_FIELDS, rows)
        else:
            chunks = [Chunk(*row) for row in rows]
        return chunks
