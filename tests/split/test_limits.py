"""Limits that hold on any input: oversized atom context, hard splits that stay in their unit.

Each shape here was found by fuzzing main (issue 10, items 11 and 12); the tests pin the
shape so it cannot come back.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import pytest

import narezka
from narezka.split.atom_frame import AtomContextWarning
from narezka.tokens import TokenCounter, get_counter

from contract import assert_contract

# Every strategy that chunks Markdown without an embedder; "fixed" only gives up atoms.
STRATEGIES = ["overlap", "recursive", "sentences", "headings", "parent-child", "legal", "auto"]
ALL = [*STRATEGIES, "fixed"]

WIDE = "x" * 3000
ROWS = "\n".join(f"| a{i} | b{i} |" for i in range(50))
HUGE_HEADER_TABLE = f"# T\n\nIntro.\n\n| {WIDE} | h2 |\n|---|---|\n{ROWS}\n\nAfter.\n"


def linear_bound(text: str, size: int) -> int:
    """Chunks a split may take: a piece of every atom row and a half-full chunk of the rest."""
    return 4 * (len(text) // size + 1) + 4


@pytest.mark.parametrize("strategy", ALL)
def test_a_table_header_longer_than_the_budget_keeps_every_chunk_in_the_limit(
    strategy: str,
) -> None:
    chunks = narezka.chunk_text(HUGE_HEADER_TABLE, strategy, size=200)
    assert_contract(HUGE_HEADER_TABLE, chunks, 200, get_counter("chars"), atoms=strategy != "fixed")
    # Main cut each row into one-character pieces, each carrying the 3,000-char header.
    assert len(chunks) <= linear_bound(HUGE_HEADER_TABLE, 200), len(chunks)


@pytest.mark.parametrize("strategy", ALL)
def test_a_table_header_of_many_words_keeps_every_chunk_in_the_token_limit(strategy: str) -> None:
    # Sanitizing shortens one long run, not a header of 300 ordinary words.
    wordy = " ".join(["заголовок"] * 300)
    text = f"# T\n\n| {wordy} | h2 |\n|---|---|\n{ROWS}\n\nAfter.\n"
    counter = get_counter("tokens", "cl100k_base")
    chunks = narezka.chunk_text(text, strategy, size=64, unit="tokens")
    assert_contract(text, chunks, 64, counter, atoms=strategy != "fixed")
    # About four characters a token: the bound in characters per chunk.
    assert len(chunks) <= linear_bound(text, 64 * 3), len(chunks)


def test_a_shortened_header_keeps_the_short_cells_and_cuts_the_long_one() -> None:
    chunks = narezka.chunk_text(HUGE_HEADER_TABLE, "headings", size=200)
    pieces = [c for c in chunks if c.text.startswith("| a") and "| a0 |" not in c.text]
    assert pieces, "the table body is split into pieces after the first"
    for c in pieces:
        header, first_row = c.embed_text.split("\n\n", 1)[1].split("\n", 2)[:2]
        assert header.startswith("| xxx") and header.endswith("… | h2 |"), header
        assert first_row == c.text.split("\n", 1)[0], "the delimiter row went first"
        assert len(header) < 200 // 2


def test_a_header_too_wide_to_shorten_is_dropped_with_a_warning() -> None:
    cells = 60
    head = "|" + "|".join(f" c{i} " for i in range(cells)) + "|"
    delim = "|" + "---|" * cells
    rows = "\n".join("|" + "|".join(f" {r} " for _ in range(cells)) + "|" for r in range(20))
    text = f"{head}\n{delim}\n{rows}\n"
    with pytest.warns(AtomContextWarning, match="line 1"):
        chunks = narezka.chunk_text(text, "recursive", size=120)
    assert_contract(text, chunks, 120, get_counter("chars"))
    assert all(not c.embed_text.startswith("| c0") for c in chunks if " c0 " not in c.text)


@pytest.mark.parametrize(
    "text",
    [
        # Found by hypothesis: crumb, fences and the 26-character marker were 41 characters,
        # so every one-character piece of the secret was emitted over the limit of 40.
        "# доставка\n\n```b\n\nhttps://u:Pw9xQ@host/\n\nash\n```",
        "# доставка\n\n| a | b |\n|---|---|\n| https://u:Pw9xQ@host/ | 1 |\n| x | y |\n",
    ],
)
def test_a_split_atom_leaves_its_pieces_room_for_a_redaction_marker(text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AtomContextWarning)
        chunks = narezka.chunk_text(text, "headings", size=40)
    assert_contract(text, chunks, 40, get_counter("chars"), atoms=False)
    assert any("[REDACTED:url-credentials]" in c.embed_text for c in chunks)


def test_a_fence_line_longer_than_the_budget_is_shortened() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(60))
    text = f"```python {'i' * 900}\n{code}\n```\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chunks = narezka.chunk_text(text, "recursive", size=150)
    assert_contract(text, chunks, 150, get_counter("chars"))
    pieces = [c for c in chunks if c.text.startswith("line_")]
    assert pieces and all(c.embed_text.startswith("```python") for c in pieces)
    assert len(chunks) <= linear_bound(text, 150)


@pytest.mark.parametrize("strategy", ["overlap", "recursive", "sentences"])
def test_a_huge_table_header_with_overlap_near_half_the_size(strategy: str) -> None:
    # Overlap packs at size - overlap (here 101): a frame of half the *size* left one character.
    chunks = narezka.chunk_text(HUGE_HEADER_TABLE, strategy, size=200, overlap=99)
    assert_contract(HUGE_HEADER_TABLE, chunks, 200, get_counter("chars"))
    assert len(chunks) <= linear_bound(HUGE_HEADER_TABLE, 200), len(chunks)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("unit", ["chars", "tokens"])
def test_a_hard_split_of_a_long_token_ends_where_the_token_ends(strategy: str, unit: str) -> None:
    # The fence is indented under the list item, so the word gap before it ends inside the
    # fence's line: main dropped that cut, and the token's hard split ran on into the fence.
    text = f"- {'z' * 380}\n  ```python\n  print('привет')\n  ```\n\nКонец.\n"
    size = 100 if unit == "chars" else 40
    counter = get_counter("chars") if unit == "chars" else get_counter("tokens", "cl100k_base")
    chunks = narezka.chunk_text(text, strategy, size=size, unit=unit)
    assert_contract(text, chunks, size, counter, commonmark=True)


class RecordingCounter:
    """cl100k tokens, remembering how long each text it was asked about was."""

    def __init__(self) -> None:
        self.inner = get_counter("tokens", "cl100k_base")
        self.name = self.inner.name
        self.lengths: list[int] = []
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        self.lengths.append(len(text))
        return self.inner.count(text)

    def count_batch(self, texts: list[str]) -> list[int]:
        self.calls += 1
        self.lengths.extend(len(t) for t in texts)
        return self.inner.count_batch(texts)


def chunk_with(counter: RecordingCounter, text: str, size: int) -> list[narezka.Chunk]:
    from narezka.parse.markdown import parse_document
    from narezka.split import SplitParams, get_strategy
    from narezka.types import RawDocument

    doc, _ = parse_document(RawDocument(source="t.md", text=text))
    params = SplitParams(size=size, unit="tokens")
    return get_strategy("headings").split(doc, params, counter)


def test_a_huge_line_is_never_tokenized_whole() -> None:
    # One 200,000-character line: sizing it must not tokenize more than a chunk's raw cap.
    text = "# Лог\n\n" + " ".join(f"слово{i}" for i in range(25_000)) + "\n"
    counter = RecordingCounter()
    chunks = chunk_with(counter, text, 64)
    assert_contract(text, chunks, 64, counter.inner)
    assert max(counter.lengths) <= 64 * 8 + 64, max(counter.lengths)


def test_the_pieces_of_one_merge_are_counted_in_one_batch() -> None:
    text = "# Раздел\n\n" + "\n\n".join(f"Абзац номер {i} о доставке." for i in range(300))
    counter = RecordingCounter()
    chunks = chunk_with(counter, text, 64)
    assert_contract(text, chunks, 64, counter.inner)
    # 300 paragraphs: one batch for them, then one exact count per chunk and its breadcrumb.
    assert counter.calls <= 3 * len(chunks) + 4, (counter.calls, len(chunks))


def test_a_section_that_fits_is_tokenized_once() -> None:
    text = "# Раздел\n\n" + "\n\n".join(f"Абзац {i} о доставке и возврате." for i in range(12))
    counter = RecordingCounter()
    chunks = chunk_with(counter, text, 384)
    assert len(chunks) == 1 and chunks[0].tokens <= 384
    # Its blocks are not counted one by one before the chunk is: about one text's worth.
    assert sum(counter.lengths) < 1.3 * len(text), (sum(counter.lengths), len(text))


class SpyCounter:
    """Any counter, remembering how long each text it was asked about was; it declares the
    inner counter's join bound, as a wrapper that forwards attributes would."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self.name = inner.name
        self.join_slack = getattr(inner, "join_slack", None)
        self.lengths: list[int] = []

    def count(self, text: str) -> int:
        self.lengths.append(len(text))
        return self.inner.count(text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        self.lengths.extend(len(t) for t in texts)
        return self.inner.count_batch(texts)


def test_a_long_section_in_sentencepiece_tokens_is_tokenized_about_once() -> None:
    # Each block is counted once and every group's size is their sum (SentencePiece counts
    # add up over whitespace): main encoded every candidate group again, ~2x the text.
    from narezka.embed.local import UseEmbedder
    from narezka.parse.markdown import parse_document
    from narezka.split import SplitParams, get_strategy
    from narezka.types import RawDocument

    paragraphs = [f"Абзац {i}: заказ доставляется курьером за {i % 7 + 1} дня." for i in range(400)]
    text = "# Доставка\n\n" + "\n\n".join(paragraphs) + "\n"
    use = UseEmbedder().counter
    spy = SpyCounter(use)
    doc, _ = parse_document(RawDocument(source="t.md", text=text))
    chunks = get_strategy("headings").split(doc, SplitParams(size=128, unit="tokens"), spy)
    assert_contract(text, chunks, 128, use)
    assert len(chunks) > 20
    assert sum(spy.lengths) < 1.2 * len(text), (sum(spy.lengths), len(text))
