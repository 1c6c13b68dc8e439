"""An independent statement of the chunk contract, for tests (docs/ARCHITECTURE.md)."""

from __future__ import annotations

from collections.abc import Sequence

from narezka import Chunk
from narezka.discover import normalize_newlines
from narezka.parse.markdown import parse_blocks, split_front_matter
from narezka.tokens import TokenCounter

ATOM_SHARE = 0.8
"""An atom at most this share of the size must never be cut (as check_chunks.py says)."""


def assert_contract(
    raw_text: str,
    chunks: Sequence[Chunk],
    size: int,
    counter: TokenCounter,
    *,
    atoms: bool = True,
) -> None:
    """Fail with a precise message where the chunks break the contract."""
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
    if not atoms:
        return
    bounds = {b for c in chunks for b in (c.start, c.end)}
    for block in parse_blocks(text, body_start):
        if not block.is_atom:
            continue
        whole = counter.count(text[block.start : block.end])
        if whole > size * ATOM_SHARE:
            continue
        inside = [b for b in bounds if block.start < b < block.end]
        assert not inside, f"{block.kind.value} [{block.start}, {block.end}) cut at {inside}"
