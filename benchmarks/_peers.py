"""The chunkers that bench_chunk.py times: narezka's strategies and its peers.

Each chunker is a ``Splitter``: ``make()`` builds a fresh instance and returns the callable that
is timed (one document in, the library's native output out), and ``pieces()`` turns that output
into ``Piece`` objects afterwards, outside the timed region. A fresh instance per timed run keeps
memoizing peers (semchunk's token-count cache, chonkie's ``lru_cache``) from getting faster on
repeats. Peers are imported inside ``make()`` so a missing or broken package fails one row only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

Split = Callable[[str], Any]
"""One document in, the splitter's native output out: the part that is timed."""

HEADERS = [("#" * n, f"h{n}") for n in range(1, 7)]


@dataclass(frozen=True, slots=True)
class Piece:
    """One chunk as the benchmark sees it."""

    text: str
    span: tuple[int, int] | None = None
    """Offsets reported by the splitter itself; ``None`` means: locate ``text`` by search."""
    sized: str | None = None
    """The text the size limit applies to, when it is not ``text`` (narezka's ``embed_text``)."""


@dataclass(frozen=True, slots=True)
class Splitter:
    """A chunker configured for one benchmark row."""

    slug: str
    """Stable id within a configuration, used to pick the row in a memory subprocess."""
    name: str
    package: str
    """Distribution name whose version the table shows."""
    make: Callable[[], Split]
    pieces: Callable[[Any], list[Piece]] | None
    """``None`` for a reference row that does not chunk (bare tokenizer speed)."""
    note: str = ""


def _strings(out: Sequence[str]) -> list[Piece]:
    return [Piece(s) for s in out]


def _chonkie(out: Sequence[Any]) -> list[Piece]:
    return [Piece(c.text) for c in out]


def _langchain_docs(out: Sequence[Any]) -> list[Piece]:
    return [Piece(d.page_content) for d in out]


def _llama_nodes(out: Sequence[Any]) -> list[Piece]:
    return [Piece(n.get_content()) for n in out]


def _narezka_chunks(out: Sequence[Any]) -> list[Piece]:
    return [Piece(c.text, (c.start, c.end), c.embed_text) for c in out]


def _narezka(nz: ModuleType | None, unit: str, size: int) -> list[Splitter]:
    if nz is None:
        return []

    def builder(strategy: str) -> Callable[[], Split]:
        def make() -> Split:
            chunk_text = nz.chunk_text
            if unit == "chars":
                return lambda text: chunk_text(text, strategy, size=size, unit="chars")
            return lambda text: chunk_text(
                text, strategy, size=size, unit="tokens", tokenizer="cl100k_base"
            )

        return make

    notes = {"headings": "", "recursive": "", "fixed": "naive baseline; cuts code by design"}
    return [
        Splitter(f"narezka.{s}", f"narezka {s}", "narezka", builder(s), _narezka_chunks, note)
        for s, note in notes.items()
    ]


# ---- characters -------------------------------------------------------------------------------


def _lc_recursive(size: int) -> Split:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0).split_text


def _lc_recursive_md(size: int) -> Split:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN, chunk_size=size, chunk_overlap=0
    )
    return splitter.split_text


def _lc_headers() -> Split:
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    return MarkdownHeaderTextSplitter(headers_to_split_on=HEADERS).split_text


def _sts_markdown(size: int) -> Split:
    from semantic_text_splitter import MarkdownSplitter

    return MarkdownSplitter(size).chunks


def _sts_text(size: int) -> Split:
    from semantic_text_splitter import TextSplitter

    return TextSplitter(size).chunks


def _chonkie_recursive(size: int, tokenizer: Any) -> Split:
    from chonkie import RecursiveChunker

    return RecursiveChunker(tokenizer=tokenizer, chunk_size=size).chunk


def _chonkie_markdown_recipe(size: int) -> Split:
    from chonkie import RecursiveChunker

    # The recipe lives on the Hugging Face hub; offline this raises and the row shows why.
    return RecursiveChunker.from_recipe(
        "markdown", lang="en", tokenizer="character", chunk_size=size
    ).chunk


def _semchunk(size: int, counter: Any) -> Split:
    import semchunk

    chunker = semchunk.chunkerify(counter, size)  # type: ignore[attr-defined]
    return lambda text: chunker(text)


def _llama_sentence(size: int, tokenizer: Callable[[str], Sequence[Any]]) -> Split:
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=size, chunk_overlap=0, tokenizer=tokenizer).split_text


def _llama_markdown() -> Split:
    from llama_index.core import Document
    from llama_index.core.node_parser import MarkdownNodeParser

    parser = MarkdownNodeParser()
    return lambda text: parser.get_nodes_from_documents([Document(text=text)])


def char_splitters(size: int, nz: ModuleType | None) -> list[Splitter]:
    """Rows of the ``size`` characters configuration."""
    lc, sts, llama = "langchain-text-splitters", "semantic-text-splitter", "llama-index-core"
    no_limit = "no size limit"
    return [
        *_narezka(nz, "chars", size),
        Splitter(
            "sts.markdown",
            "semantic-text-splitter MarkdownSplitter",
            sts,
            lambda: _sts_markdown(size),
            _strings,
        ),
        Splitter(
            "sts.text",
            "semantic-text-splitter TextSplitter",
            sts,
            lambda: _sts_text(size),
            _strings,
        ),
        Splitter(
            "lc.recursive",
            "langchain RecursiveCharacterTextSplitter",
            lc,
            lambda: _lc_recursive(size),
            _strings,
        ),
        Splitter(
            "lc.recursive_md",
            "langchain RecursiveCharacter… (Language.MARKDOWN)",
            lc,
            lambda: _lc_recursive_md(size),
            _strings,
        ),
        Splitter(
            "lc.headers",
            "langchain MarkdownHeaderTextSplitter",
            lc,
            _lc_headers,
            _langchain_docs,
            f"{no_limit}; drops heading lines",
        ),
        Splitter(
            "chonkie.recursive",
            "chonkie RecursiveChunker (character)",
            "chonkie",
            lambda: _chonkie_recursive(size, "character"),
            _chonkie,
        ),
        Splitter(
            "chonkie.markdown",
            "chonkie RecursiveChunker markdown recipe",
            "chonkie",
            lambda: _chonkie_markdown_recipe(size),
            _chonkie,
        ),
        Splitter("semchunk", "semchunk (len)", "semchunk", lambda: _semchunk(size, len), _strings),
        Splitter(
            "llama.sentence",
            "llama-index SentenceSplitter (list)",
            llama,
            lambda: _llama_sentence(size, list),
            _strings,
            "tokenizer=list: 1 token a char",
        ),
        Splitter(
            "llama.markdown",
            "llama-index MarkdownNodeParser",
            llama,
            _llama_markdown,
            _llama_nodes,
            no_limit,
        ),
    ]


# ---- tokens -----------------------------------------------------------------------------------


def _sts_markdown_tiktoken_rs(tokens: int) -> Split:
    from semantic_text_splitter import MarkdownSplitter

    # tiktoken-rs ships its vocabularies inside the wheel: no download.
    return MarkdownSplitter.from_tiktoken_model("gpt-4", tokens).chunks


def _sts_markdown_callback(tokens: int, enc: Any) -> Split:
    from semantic_text_splitter import MarkdownSplitter

    encode = enc.encode_ordinary
    return MarkdownSplitter.from_callback(lambda s: len(encode(s)), tokens).chunks


def _bare_encode(enc: Any) -> Split:
    encode: Split = enc.encode_ordinary
    return encode


def token_splitters(tokens: int, enc: Any, nz: ModuleType | None) -> list[Splitter]:
    """Rows of the ``tokens`` cl100k tokens configuration; ``enc`` is a tiktoken Encoding."""
    sts, llama = "semantic-text-splitter", "llama-index-core"
    return [
        *_narezka(nz, "tokens", tokens),
        Splitter(
            "sts.markdown.rs",
            "semantic-text-splitter MarkdownSplitter (tiktoken-rs)",
            sts,
            lambda: _sts_markdown_tiktoken_rs(tokens),
            _strings,
            "counts in Rust",
        ),
        Splitter(
            "sts.markdown.cb",
            "semantic-text-splitter MarkdownSplitter (tiktoken callback)",
            sts,
            lambda: _sts_markdown_callback(tokens, enc),
            _strings,
        ),
        Splitter(
            "chonkie.recursive",
            "chonkie RecursiveChunker (tiktoken)",
            "chonkie",
            lambda: _chonkie_recursive(tokens, enc),
            _chonkie,
        ),
        Splitter(
            "semchunk", "semchunk (tiktoken)", "semchunk", lambda: _semchunk(tokens, enc), _strings
        ),
        Splitter(
            "llama.sentence",
            "llama-index SentenceSplitter (tiktoken)",
            llama,
            lambda: _llama_sentence(tokens, enc.encode_ordinary),
            _strings,
        ),
        Splitter(
            "tiktoken.encode",
            "bare tiktoken encode_ordinary (no chunking)",
            "tiktoken",
            lambda: _bare_encode(enc),
            None,
            "reference: one encode per document",
        ),
    ]


def locate(text: str, pieces: Sequence[Piece]) -> list[tuple[int, int] | None]:
    """Spans of string chunks: forward search from the last match, then on stripped text."""
    spans: list[tuple[int, int] | None] = []
    cursor = last_start = 0
    for piece in pieces:
        if piece.span is not None:
            spans.append(piece.span)
            cursor, last_start = piece.span[1], piece.span[0]
            continue
        found: tuple[int, int] | None = None
        for needle in dict.fromkeys((piece.text, piece.text.strip())):
            if not needle:
                continue
            pos = text.find(needle, cursor)
            if pos < 0:  # chunks that overlap their predecessor
                pos = text.find(needle, last_start)
            if pos >= 0:
                found = (pos, pos + len(needle))
                break
        spans.append(found)
        if found is not None:
            last_start, cursor = found
    return spans
