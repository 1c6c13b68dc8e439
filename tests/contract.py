"""An independent statement of the chunk contract, for tests (docs/ARCHITECTURE.md)."""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it import MarkdownIt

from narezka import Chunk
from narezka.discover import normalize_newlines
from narezka.parse.markdown import parse_blocks, split_front_matter
from narezka.tokens import TokenCounter

ATOM_SHARE = 0.8
"""An atom at most this share of the size must never be cut (as check_chunks.py says)."""

RAW_CHARS_PER_TOKEN = 8
"""In tokens, a chunk's span holds at most this many characters per token of the size (the
README's "Sizes"): a longer atom is too big for one chunk however few tokens it has."""


def assert_contract(
    raw_text: str,
    chunks: Sequence[Chunk],
    size: int,
    counter: TokenCounter,
    *,
    atoms: bool = True,
    commonmark: bool = False,
) -> None:
    """Fail with a precise message where the chunks break the contract.

    ``commonmark`` takes the atoms from markdown-it-py's CommonMark parser as it stands (what
    the shared checker's ``--commonmark`` does) rather than from narezka's own block map.
    """
    text = normalize_newlines(raw_text)
    body_start = split_front_matter(text)[0]
    covered = bytearray(len(text))
    previous = (-1, -1)
    for k, c in enumerate(chunks):
        where = f"chunk {k} [{c.start}, {c.end})"
        assert c.index == k, f"{where}: index {c.index}"
        assert body_start <= c.start < c.end <= len(text), f"{where}: bad span"
        assert c.text == text[c.start : c.end], f"{where}: text is not the exact span"
        assert (c.start, c.end) > previous and c.start >= previous[0], f"{where}: out of order"
        previous = (c.start, c.end)
        measured = counter.count(c.embed_text)
        assert measured <= size, f"{where}: embed_text is {measured} > {size}"
        assert c.tokens == measured, f"{where}: tokens field {c.tokens} != {measured}"
        assert c.chars == len(c.embed_text)
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
    lost = [i for i in range(body_start, len(text)) if not covered[i] and not text[i].isspace()]
    assert not lost, f"lost characters at {lost[:5]}: {text[lost[0] : lost[0] + 30]!r}"
    bound = chunk_bound(text[body_start:], size)
    assert len(chunks) <= bound, f"{len(chunks)} chunks where {bound} would do"
    if not atoms:
        return
    bounds = {b for c in chunks for b in (c.start, c.end)}
    spans = commonmark_atoms(text, body_start) if commonmark else narezka_atoms(text, body_start)
    for kind, start, end in spans:
        whole = counter.count(text[start:end])
        if whole > size * ATOM_SHARE:
            continue
        if counter.name != "chars" and end - start > size * RAW_CHARS_PER_TOKEN:
            continue  # too long a span for one chunk, whatever its tokens (README, "Sizes")
        inside = [b for b in bounds if start < b < end]
        assert not inside, f"{kind} [{start}, {end}) cut at {inside}: {text[start:end]!r}"


def chunk_bound(body: str, size: int) -> int:
    """Most chunks a body may take: every line its own piece, plus an eighth-full chunk of
    everything (overlap packs at half the size, a split atom's frame may take half of that;
    a limit in tokens only loosens it). Pieces of one character, each carrying an atom's
    header, break it."""
    return body.count("\n") + 1 + 8 * (len(body) // size + 1)


def narezka_atoms(text: str, body_start: int) -> list[tuple[str, int, int]]:
    return [(b.kind.value, b.start, b.end) for b in parse_blocks(text, body_start) if b.is_atom]


def commonmark_atoms(text: str, body_start: int) -> list[tuple[str, int, int]]:
    """Code blocks and tables by CommonMark (+ GFM tables), spans as the shared checker's."""
    body = text[body_start:]
    offsets = [body_start]
    for line in body.split("\n"):
        offsets.append(offsets[-1] + len(line) + 1)
    spans = []
    for token in MarkdownIt("commonmark").enable("table").parse(body):
        if token.map and token.type in ("fence", "code_block", "table_open"):
            a, b = token.map
            spans.append((token.type, offsets[a], min(offsets[b] - 1, len(text))))
    return spans
