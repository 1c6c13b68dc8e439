"""Loader for Chroma's general chunking benchmark (``shared/data/chroma_eval``).

Layout (see that folder's README): ``corpora/<corpus_id>.md`` — five UTF-8 corpora
(chatlogs, finance, pubmed, state_of_the_union, wikitexts) — and ``questions_df.csv`` with
columns ``question``, ``references``, ``corpus_id``. ``references`` is a JSON list of
``{"content", "start_index", "end_index"}``: half-open *character* offsets into the corpus
text, ``content`` being the excerpt itself. Each reference becomes a
:class:`~narezka.evaluate.spans.Span` whose ``doc`` is the corpus id.

This loader serves ``benchmarks/chroma.py`` (corpus ids as document names). ``narezka eval
CORPORA --golden questions_df.csv`` reads the same CSV through
:func:`narezka.evaluate.golden.parse_chroma_csv` instead, as a span golden set over the
corpus files ``<corpus_id>.md``; both share :func:`~narezka.evaluate.golden.chroma_reference`.

Loading never crashes on a bad row or reference: it is recorded as a :class:`ChromaProblem`
(with its 1-based CSV data row) and skipped; a reference whose ``content`` differs from the
corpus slice is kept (its offsets are what scoring uses) and counted in
:attr:`ChromaBenchmark.mismatches`.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from narezka.environment import Environment
from narezka.errors import ConfigError
from narezka.evaluate.golden import chroma_reference
from narezka.evaluate.spans import Span, SpanQuestion

QUESTIONS_FILE = "questions_df.csv"
CORPORA_DIR = "corpora"
REPO_ROOT = Path(__file__).resolve().parents[3]


def default_root(env: Environment) -> Path:
    """``$NAREZKA_SHARED/data/chroma_eval`` as ``env`` holds it (the caller's, read at its
    top), else ``<repo>/../shared/data/chroma_eval``."""
    base = env.shared or REPO_ROOT.parent / "shared"
    return base / "data" / "chroma_eval"


@dataclass(frozen=True, slots=True)
class ChromaProblem:
    """Something wrong with one CSV row (``reference`` is its 0-based index, -1 for the row)."""

    row: int
    reference: int
    problem: str
    skipped: bool


@dataclass(frozen=True, slots=True)
class ChromaBenchmark:
    """The corpora (name → text) and the questions with their reference spans."""

    root: Path
    corpora: dict[str, str]
    questions: list[SpanQuestion]
    problems: list[ChromaProblem] = field(default_factory=list)

    @property
    def mismatches(self) -> int:
        """References whose stored ``content`` differs from the corpus slice they point at."""
        return sum(1 for p in self.problems if p.problem.startswith("content mismatch"))

    @property
    def references(self) -> int:
        return sum(len(q.references) for q in self.questions)

    def per_corpus(self) -> dict[str, int]:
        """Questions per corpus (a question's corpus is its first reference's document)."""
        counts = Counter(q.references[0].doc for q in self.questions if q.references)
        return dict(sorted(counts.items()))


def _reference_span(
    ref: Any, corpus_id: str, text: str, row: int, index: int, problems: list[ChromaProblem]
) -> Span | None:
    def problem(msg: str, skipped: bool = True) -> None:
        problems.append(ChromaProblem(row, index, msg, skipped))

    parsed = chroma_reference(ref)
    if isinstance(parsed, str):
        problem("reference is not an object" if parsed == "not an object" else parsed)
        return None
    start, end, content = parsed
    if not 0 <= start <= end <= len(text):
        problem(f"offsets [{start}, {end}) outside {corpus_id} (length {len(text)})")
        return None
    if content is not None and content != text[start:end]:
        problem(f"content mismatch at [{start}, {end})", skipped=False)
    return Span(corpus_id, start, end)


def load_chroma(root: Path) -> ChromaBenchmark:
    """Read the benchmark under ``root`` (usually :func:`default_root`).

    Raises :class:`~narezka.errors.ConfigError` only when the questions file or the corpora
    folder is missing; everything wrong inside them is reported in ``problems``.
    """
    root = Path(root)
    csv_path = root / QUESTIONS_FILE
    corpora_dir = root / CORPORA_DIR
    if not csv_path.is_file() or not corpora_dir.is_dir():
        raise ConfigError(f"Chroma benchmark not found under {root} (set NAREZKA_SHARED)")
    corpora = {
        path.stem: path.read_text(encoding="utf-8")
        for path in sorted(corpora_dir.glob("*.md"))
        if path.is_file()
    }
    questions: list[SpanQuestion] = []
    problems: list[ChromaProblem] = []
    with csv_path.open(encoding="utf-8", newline="") as handle:
        for row_no, row in enumerate(csv.DictReader(handle), start=1):
            question = (row.get("question") or "").strip()
            corpus_id = (row.get("corpus_id") or "").strip()
            if not question:
                problems.append(ChromaProblem(row_no, -1, "empty question", True))
                continue
            if corpus_id not in corpora:
                problems.append(ChromaProblem(row_no, -1, f"unknown corpus {corpus_id!r}", True))
                continue
            try:
                raw = json.loads(row.get("references") or "")
            except json.JSONDecodeError as exc:
                problems.append(ChromaProblem(row_no, -1, f"references not JSON: {exc}", True))
                continue
            if not isinstance(raw, list):
                problems.append(ChromaProblem(row_no, -1, "references is not a list", True))
                continue
            text = corpora[corpus_id]
            spans = [
                span
                for i, ref in enumerate(raw)
                if (span := _reference_span(ref, corpus_id, text, row_no, i, problems))
            ]
            if not spans:
                problems.append(ChromaProblem(row_no, -1, "no usable references", True))
                continue
            questions.append(SpanQuestion(question, tuple(spans), line=row_no))
    return ChromaBenchmark(root, corpora, questions, problems)


def token_ends(text: str, tokenizer: str = "cl100k_base") -> list[int]:
    """Character offset where each token of ``text`` ends, for a tiktoken encoding.

    A token ending inside a multi-byte character is taken to end after that character. Feed
    the result to :func:`narezka.evaluate.spans.to_token_span` or ``span_metrics_tokens``.
    """
    import tiktoken

    canonical = tokenizer.removesuffix("_offline")
    known = set(tiktoken.list_encoding_names())
    names = [n for n in (f"{canonical}_offline", canonical) if n in known]
    if not names:
        raise ConfigError(f"unknown tiktoken encoding {tokenizer!r}")
    encoding = tiktoken.get_encoding(names[0])
    ids = encoding.encode_ordinary(text)
    data = text.encode("utf-8")
    # chars_before[b]: characters that start before byte b (continuation bytes start none).
    chars_before = list(accumulate(((byte & 0xC0) != 0x80 for byte in data), initial=0))
    byte_ends = accumulate(len(piece) for piece in encoding.decode_tokens_bytes(ids))
    return [chars_before[b] for b in byte_ends]
