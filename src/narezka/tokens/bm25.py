"""BM25 sparse vectors for documents and queries, Russian and English at once.

Why not ``qdrant_edge.Bm25``: it exists and works offline, but one model stems one language,
and Russian notes are full of English terms (``deploy``, ``API``). This encoder stems each
word by its script — Cyrillic with the Russian Snowball stemmer, Latin with the English one
(PyStemmer, the same Snowball algorithms the engine uses) — and is otherwise built to produce
the *same vectors* as ``qdrant_edge.Bm25`` for one-language text (a test checks it):

* token id = ``abs(murmur3_32(stem))`` as a signed 32-bit int, as Qdrant/fastembed do;
* document weight = ``tf·(k1+1) / (tf + k1·(1 − b + b·len/avg_len))``, ``len`` counted after
  stop words are removed; k1=1.2, b=0.75, avg_len=256 by default;
* query weight = 1 for each unique token; IDF is applied by the engine at search time through
  the sparse vector's ``idf`` modifier (qdrant-edge and qdrant-client both support it), so
  adding documents never requires re-encoding old ones.

``avg_len`` is a fixed parameter, not a corpus statistic, for the same reason: a running
average would change every stored vector's weights. Record it in the index fingerprint.

**Analyzers** (how words become terms; a property of the index, recorded in ``index.json``,
because query and documents must be analyzed alike):

* ``snowball`` (the default): the Snowball stemmers above;
* ``lemma``: Russian words lemmatized by pymorphy3 (``запросов`` → ``запрос``, ``вернёт`` →
  ``вернуть``: forms a stemmer leaves apart), English still by Snowball; needs
  ``pip install 'narezka[ru]'``;
* ``+ident`` on either (``lemma+ident``): identifier-aware terms for code. Words are already
  split at ``_`` and ``.``; this also splits camelCase (``HTTPException`` → ``http``,
  ``exception``) and adds each compound identifier whole, lowercased and unstemmed
  (``response_model_exclude_unset``, ``fastapi.responses``, ``httpexception``), so a query
  naming the identifier exactly outranks chunks that merely share its parts.

* ``+title`` (or ``+titleN``, N from 2 to 9) on any of them (``snowball+title``,
  ``lemma+ident+title3``): **field weights**. Terms of the chunk's titles — the breadcrumb
  line that starts its ``embed_text`` (``A > B > C``) and its Markdown heading lines — count N
  times (2 for ``+title``) in the term frequency, body terms once, before BM25's saturation;
  the length normalization still counts every term once. Queries are unchanged. Because it
  changes every stored vector it is part of the analyzer: recorded, and refused on change
  without ``--rebuild``.

Snowball stays the default by measurement (benchmarks/results/ablation_*.md): on the Russian
dev set no analyzer differs from it significantly, and on the example KB lemmas lose BM25
hits, because questions and answers differ in derivation (``хранится`` / ``хранения``,
``отменить`` / ``отмена``), which a stem joins and a lemma keeps apart.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from narezka._native import core
from narezka.errors import ConfigError, MissingDependencyError
from narezka.types import SparseVector

_BASE_ANALYZERS = ("snowball", "lemma", "snowball+ident", "lemma+ident")
ANALYZERS = (*_BASE_ANALYZERS, *(f"{a}+title" for a in _BASE_ANALYZERS))
"""The analyzers ``--bm25`` offers; ``+titleN`` (N = 2…9) is accepted too."""
TITLE_WEIGHT = 2
DEFAULT_ANALYZER = "snowball"
"""What an index without a recorded analyzer (one built before analyzers existed) used."""

_WORD = re.compile(r"[^\W_]+")
STEMS_HELD = 200_000
"""Words whose stem an encoder remembers."""
# A code identifier: ASCII name parts joined by dots; compound when it has ``_``, ``.`` or a
# case hump (see _COMPOUND). Trailing dots (end of a sentence) are not part of it.
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_HUMP = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN = re.compile(r"[a-z]")

RUSSIAN_STOP = frozenset(
    """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только
    ее её мне было вот от меня еще ещё нет о из ему теперь когда даже ну вдруг ли если уже или ни
    быть был него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где
    есть надо ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж
    тогда кто этот того потому этого какой совсем ним здесь этом один почти мой тем чтобы нее
    сейчас были куда зачем всех никогда можно при наконец два об другой хоть после над больше
    тот через эти нас про всего них какая много разве три эту моя впрочем хорошо свою этой
    перед иногда лучше чуть том нельзя такой им более всегда конечно всю между это также""".split()
)
ENGLISH_STOP = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with i me my we our you your he him his she her its
    them what which who whom am were been being have has had do does did doing from up down out
    off over under again further once here when where why how all any both each few more most
    other some own same so than too very can just should now""".split()
)


@lru_cache(maxsize=2)
def _stemmer(language: str) -> object:
    try:
        import Stemmer
    except ImportError as exc:  # pragma: no cover - PyStemmer ships with narezka[index]
        raise MissingDependencyError("PyStemmer", "index") from exc
    return Stemmer.Stemmer(language)


@lru_cache(maxsize=1)
def _morph() -> Any:
    try:
        import pymorphy3
    except ImportError as exc:
        raise MissingDependencyError("pymorphy3", "ru") from exc
    return pymorphy3.MorphAnalyzer(lang="ru")


@lru_cache(maxsize=200_000)
def russian_lemma(word: str) -> str:
    """The most likely normal form of a lowercased Russian word (ё read as е).

    Cached per process: a pymorphy3 parse costs ~60 µs, and a query's words repeat across
    queries (every ``search`` builds its own encoder, so a per-encoder cache would start cold).
    """
    return str(_morph().parse(word)[0].normal_form).replace("ё", "е")


_TITLE = re.compile(r"\+title([2-9]?)$")
# A heading line of the chunk's own text: its words are title terms too.
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?[ \t]*$", re.M)


def check_analyzer(name: str) -> str:
    """``name`` if it is a known analyzer, else a ConfigError listing them."""
    base = _TITLE.sub("", name)
    if base not in _BASE_ANALYZERS or (base != name and name.endswith("+title1")):
        raise ConfigError(
            f"unknown BM25 analyzer {name!r}; use one of {', '.join(ANALYZERS)} "
            "(or +title2…+title9 for another title weight)"
        )
    return name


def title_weight(analyzer: str) -> int:
    """How many times a title term counts under ``analyzer`` (1: no field weights)."""
    found = _TITLE.search(analyzer)
    if found is None:
        return 1
    return int(found.group(1) or TITLE_WEIGHT)


def title_text(text: str) -> str:
    """The title part of an ``embed_text``: its breadcrumb line (the first paragraph when it
    is a path ``A > B``) and its Markdown heading lines, joined by newlines."""
    parts = []
    first, gap, _ = text.partition("\n\n")
    if gap and "\n" not in first and " > " in first:
        parts.append(first)
    parts.extend(m.group(1) or "" for m in _HEADING_LINE.finditer(text))
    return "\n".join(p for p in parts if p)


def identifiers(text: str) -> list[str]:
    """Compound code identifiers of ``text``, whole and lowercased; for a dotted name also its
    compound components (``fastapi.exception_handlers`` → itself and ``exception_handlers``)."""
    out = []
    for match in _IDENT.finditer(text):
        ident = match.group().strip("_")
        if not ident or not ("_" in ident or "." in ident or _HUMP.search(ident)):
            continue
        out.append(ident.lower())
        if "." in ident:
            out.extend(
                part.lower()
                for part in ident.split(".")
                if "_" in part.strip("_") or _HUMP.search(part)
            )
    return out


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit, unsigned: the hash Qdrant's BM25 uses for token ids."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed
    length = len(data)
    tail = length & ~3
    for i in range(0, tail, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        h ^= (k * c2) & mask
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    k = 0
    rest = length & 3
    if rest == 3:
        k ^= data[tail + 2] << 16
    if rest >= 2:
        k ^= data[tail + 1] << 8
    if rest >= 1:
        k ^= data[tail]
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        h ^= (k * c2) & mask
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h


@lru_cache(maxsize=65536)
def token_id(stem: str) -> int:
    """Sparse index of a stem: ``abs`` of its signed murmur3, as Qdrant computes it."""
    unsigned = murmur3_32(stem.encode("utf-8"))
    return abs(unsigned - (1 << 32) if unsigned >= 1 << 31 else unsigned)


class Bm25Encoder:
    """Turns text into BM25 sparse vectors; ``name`` identifies the settings for fingerprints.

    ``analyzer`` is one of :data:`ANALYZERS` (see the module docstring).
    """

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        avg_len: float = 256.0,
        analyzer: str = DEFAULT_ANALYZER,
    ) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0 or avg_len <= 0:
            raise ValueError(f"bad BM25 parameters k1={k1}, b={b}, avg_len={avg_len}")
        self.k1 = k1
        self.b = b
        self.avg_len = avg_len
        self.analyzer = check_analyzer(analyzer)
        self.title_weight = title_weight(analyzer)
        base, _, rest = _TITLE.sub("", analyzer).partition("+")
        self.ident = bool(rest)
        self.lemmas = base == "lemma"
        # The Snowball name stays what it was before analyzers existed: old fingerprints hold.
        suffix = "" if analyzer == DEFAULT_ANALYZER else f":analyzer={analyzer}"
        self.name = f"bm25-ru-en:k1={k1}:b={b}:avg={avg_len}{suffix}"
        self._ru = _stemmer("russian")
        self._en = _stemmer("english")
        if self.lemmas:
            _morph()  # a missing pymorphy3 fails here, not at the first Russian word
        self._stems: dict[str, str] = {}
        # Without title weights or identifiers, a document's vector is made in the core
        # (words, counts, token ids, weights); the stems still come from _stem.
        self._native: Any = None
        if core is not None and self.title_weight == 1 and not self.ident:
            self._native = core.Bm25Terms(k1, b, avg_len, STEMS_HELD)

    def tokens(self, text: str) -> list[str]:
        """Terms of the text: stems (or lemmas) of its words, lowercased, stop words dropped,
        ё read as е; with ``+ident`` camelCase words split and whole identifiers added."""
        if not self.ident:
            return self._terms(m.group() for m in _WORD.finditer(text.lower()))
        words: list[str] = []
        for match in _WORD.finditer(text):
            word = match.group()
            if _HUMP.search(word):
                # One-letter pieces (the O of OAuth) match everything and mean nothing.
                words.extend(p.lower() for p in _CAMEL_PART.findall(word) if len(p) > 1)
            else:
                words.append(word.lower())
        return self._terms(words) + identifiers(text)

    def _terms(self, words: Iterable[str]) -> list[str]:
        out = []
        stems = self._stems
        for word in words:
            stem = stems.get(word)
            if stem is None:
                stem = self._new_stem(word)
            if stem:
                out.append(stem)
        return out

    def _new_stem(self, word: str) -> str:
        """The stem of a word not seen yet, remembered (up to a bound)."""
        stem = self._stem(word)
        if len(self._stems) < STEMS_HELD:
            self._stems[word] = stem
        return stem

    def _stem(self, word: str) -> str:
        if word in RUSSIAN_STOP or word in ENGLISH_STOP:
            return ""
        if _CYRILLIC.search(word):
            word = word.replace("ё", "е")
            if self.lemmas:
                # «неё» and «какую» are no stop words, their lemmas «она» and «какой» are.
                lemma = russian_lemma(word)
                return "" if lemma in RUSSIAN_STOP else lemma
            return str(self._ru.stemWord(word))  # type: ignore[attr-defined]
        if _LATIN.search(word):
            return str(self._en.stemWord(word))  # type: ignore[attr-defined]
        return word

    def encode_document(self, text: str) -> SparseVector:
        """Term-frequency weights saturated by k1 and normalized by length (b, avg_len)."""
        if self._native is not None:
            found = self._native.encode(text)
            if isinstance(found, list):  # words it has no stem for yet
                found = self._native.encode(text, {word: self._stem(word) for word in found})
            if found is not None:  # else a character the core leaves to Python
                return SparseVector(*found)
        counts, length = self._term_counts(text)
        if not length:
            return SparseVector((), ())
        norm = self.k1 * (1.0 - self.b + self.b * length / self.avg_len)
        if self.title_weight > 1:
            # Title terms already count once among the text's own; they gain weight − 1 more.
            for stem, tf in Counter(self.tokens(title_text(text))).items():
                counts[stem] += (self.title_weight - 1) * tf
        weights: dict[int, float] = {}
        for stem, tf in counts.items():
            # Two stems may share a murmur id; adding keeps the vector valid (unique indices).
            tid = token_id(stem)
            weights[tid] = weights.get(tid, 0.0) + tf * (self.k1 + 1.0) / (tf + norm)
        return _sorted(weights)

    def _term_counts(self, text: str) -> tuple[Counter[str], int]:
        """Each term of the text with its count (in order of first occurrence), and how many
        terms it has: ``Counter(self.tokens(text))`` and its total, with each distinct word
        stemmed once rather than once per occurrence."""
        if self.ident:
            terms = self.tokens(text)
            return Counter(terms), len(terms)
        counts: Counter[str] = Counter()
        length = 0
        stems = self._stems
        # Words counted first (in the core, else in C): a word's stem is looked up once per
        # chunk, not per use.
        found = None if core is None else core.word_counts(text)
        words = Counter(_WORD.findall(text.lower())).items() if found is None else found
        for word, tf in words:
            stem = stems.get(word)
            if stem is None:
                stem = self._new_stem(word)
            if stem:
                counts[stem] += tf
                length += tf
        return counts, length

    def encode_query(self, text: str) -> SparseVector:
        """Weight 1 per unique stem; the engine multiplies by IDF."""
        return _sorted(dict.fromkeys((token_id(s) for s in self.tokens(text)), 1.0))

    def encode_documents(self, texts: list[str]) -> list[SparseVector]:
        """Batch form of ``encode_document``."""
        return [self.encode_document(t) for t in texts]


def _sorted(weights: dict[int, float]) -> SparseVector:
    if not weights:
        return SparseVector((), ())
    indices, values = zip(*sorted(weights.items()), strict=True)
    return SparseVector(indices, values)


@lru_cache(maxsize=8)
def bm25_encoder(analyzer: str = DEFAULT_ANALYZER) -> Bm25Encoder:
    """One shared encoder per analyzer, so repeated searches keep its word cache warm."""
    return Bm25Encoder(analyzer=analyzer)
