"""The native core (Rust): private; reach it through :mod:`narezka._native`."""

from collections.abc import Callable
from typing import Any, TypeVar

from narezka.types import Block, BlockKind

_T = TypeVar("_T")

VERSION: str
OPTIMIZED: bool

def scan_blocks(
    src: str, stop: int, off: int, block_type: type[Block], kinds: tuple[BlockKind, ...]
) -> tuple[list[Block], list[tuple[int, str, str]]] | None:
    """The leaf blocks of ``src`` (a body plus one sentinel newline; lines end before
    ``stop``), offsets moved by ``off``, and the (index, raw heading title, fence run)
    fix-ups left to Python; None where the Python scanner must answer."""

def sentence_ends(text: str, start: int, end: int) -> list[int] | None:
    """``narezka.parse.sentences.sentence_ends`` for a clamped range, or None when ``text``
    holds a character outside the core's tables of Python's str predicates."""

def pack_headings(
    text: str,
    bounds: list[int],
    headings: list[tuple[int, int]],
    block_starts: list[int],
    glued: list[int],
    atoms: list[tuple[int, int, int]],
    section_starts: list[int],
    budget: int,
    min_chars: int,
    crumb: Callable[[int, int], int],
    frame: Callable[[int], tuple[int, int]],
) -> list[tuple[int, int]] | None:
    """``narezka.split.headings``'s ranges in characters for a document without secrets
    (``native_ranges`` says what each argument is), or None when ``text`` holds a character
    the core leaves to Python."""

def body_scan(text: str, start: int) -> tuple[bool, int] | None:
    """``narezka.parse.sanitize``'s ``needs_sanitizing(text[start:])`` and
    ``removed_characters(text[start:])`` in one pass, or None for a text with a lone
    surrogate."""

def make_objects(cls: type[_T], names: list[str], rows: list[tuple[Any, ...]]) -> list[_T]:
    """Instances of the frozen slotted dataclass ``cls``, each slot ``names[i]`` set to
    ``row[i]`` without ``__init__``; ValueError for a row of another length."""

def word_counts(text: str) -> list[tuple[str, int]] | None:
    """``Counter(re.findall(r"[^\\W_]+", text.lower())).items()`` as a list, or None for a
    text with a character the core leaves to Python."""

class Bm25Terms:
    """``Bm25Encoder.encode_document``'s work for an analyzer with no title weight and no
    identifiers; it holds up to ``held`` stems Python gave it."""

    def __init__(self, k1: float, b: float, avg_len: float, held: int) -> None: ...
    def encode(
        self, text: str, extra: dict[str, str] | None = None
    ) -> tuple[tuple[int, ...], tuple[float, ...]] | list[str] | None:
        """(sorted token ids, weights); or the words it needs stems for (ask again with
        them in ``extra``); or None for a text left to Python."""

class SecretPrefilter:
    """The secret rules' prefilter, built once from each rule's (hints, case-blind)."""

    def __init__(self, rules: list[tuple[list[str], bool]]) -> None: ...
    def scan(self, text: str) -> tuple[list[int], list[tuple[int, int]]] | None:
        """(indices of the rules with a hint in ``text``, (keyword start, key end) pairs
        where an assignment may start), or None for a text left to Python."""

CL100K_PATTERN: str
"""cl100k_base's pre-tokenizer pattern as tiktoken spells it."""

class Cl100kCounter:
    """cl100k_base's token counts (``len(encode_ordinary(text))``) from tiktoken's ranks."""

    def __init__(self, ranks: dict[bytes, int]) -> None: ...
    def count(self, text: str) -> int: ...
    def count_batch(self, texts: list[str]) -> list[int]: ...
