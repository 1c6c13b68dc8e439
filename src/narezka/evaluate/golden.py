"""Golden sets in two formats, one per file:

* **strings** (the seed's): JSONL lines ``{"q", "must_contain": [...], "category"?, "source"?}``;
  a hit is one retrieved chunk containing every string, case-insensitive;
* **reference spans**: JSONL lines ``{"q", "references": [{"doc", "start", "end",
  "content"?}, ...], "category"?}``, half-open character offsets into a corpus document's
  normalized text (BOM removed, CRLF/CR turned into LF: the text every chunk offset indexes);
  ``content``, when given, must equal that slice. Chroma's benchmark CSV (``question,
  references, corpus_id``) loads as this format, corpus ``x`` naming the file ``x.md``.

Either format may hold **unanswerable** questions: ``{"q", "answerable": false,
"evidence"?: [...], "category"?, "source"?}``, questions the corpus does not answer (no
``must_contain`` strings or ``references``; ``evidence``, strings of the answer in a document
left out of the corpus, are checked to occur nowhere in it). They are not scored by hit@k; they
measure whether ``min_relevance`` says "nothing relevant" (:mod:`narezka.evaluate.refusal`).

The first valid question decides a file's format. Loading never stops at a bad line: it is
reported with its line number and skipped. Checks against the corpus text (strings that occur
nowhere, unknown documents, offsets outside a document, content that differs) run before any
embedding, so a question that can never be hit is known up front.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeGuard

from narezka.errors import ConfigError
from narezka.evaluate.spans import Span

STRINGS = "strings"
SPANS = "spans"
CSV_COLUMNS = ("question", "references", "corpus_id")


@dataclass(frozen=True, slots=True)
class Reference:
    """One expected excerpt: ``[start, end)`` in document ``doc`` (corpus-relative path)."""

    doc: str
    start: int
    end: int
    content: str | None = None
    """The excerpt's text as the golden file gives it (checked against the corpus)."""

    @property
    def span(self) -> Span:
        return Span(self.doc, self.start, self.end)


@dataclass(frozen=True, slots=True)
class GoldenQuestion:
    """One question and what answers it: strings a chunk must contain, or reference spans."""

    q: str
    must_contain: tuple[str, ...]
    category: str = ""
    source: str = ""
    """The corpus file that answers it (POSIX path relative to the corpus), when known."""
    line: int = 0
    """1-based line in the golden file (0 for questions built in code)."""
    references: tuple[Reference, ...] = ()
    """Expected excerpts (span format; ``must_contain`` is then empty)."""
    answerable: bool = True
    """False: the corpus does not answer it (no strings, no references; see the module)."""
    evidence: tuple[str, ...] = ()
    """Unanswerable questions: strings of an answer outside the corpus, which must not occur
    in it."""

    @property
    def format(self) -> str:
        return SPANS if self.references else STRINGS


@dataclass(frozen=True, slots=True)
class GoldenProblem:
    """Something wrong with one golden line; ``skipped`` says whether the question was dropped."""

    line: int
    problem: str
    skipped: bool = True

    @classmethod
    def kept(cls, line: int, problem: str, strings: Iterable[str]) -> GoldenProblem:
        """A problem that keeps its question: ``problem`` with ``{}`` standing for the
        ``strings`` it names, quoted."""
        return cls(line, problem.format(", ".join(repr(s) for s in strings)), skipped=False)

    def __str__(self) -> str:
        verdict = "skipped" if self.skipped else "kept"
        return f"line {self.line}: {self.problem} ({verdict})"


@dataclass(slots=True)
class GoldenSet:
    """The valid questions of a golden file and what was wrong with the rest."""

    questions: list[GoldenQuestion] = field(default_factory=list)
    problems: list[GoldenProblem] = field(default_factory=list)

    @property
    def format(self) -> str:
        """``"spans"`` when the questions carry reference spans, else ``"strings"``."""
        return SPANS if any(q.references for q in self.questions) else STRINGS

    @property
    def unanswerable(self) -> list[GoldenQuestion]:
        """The questions the corpus does not answer."""
        return [q for q in self.questions if not q.answerable]

    def add(self, question: GoldenQuestion) -> None:
        """Keep a question unless its format differs from the set's (the first answerable one
        decides; an unanswerable question has no format and fits either)."""
        first = next((q for q in self.questions if q.answerable), None)
        if question.answerable and first is not None and question.format != first.format:
            self.problems.append(
                GoldenProblem(
                    question.line,
                    f"a {question.format} question in a golden set of {first.format}"
                    " (the first question decides the format)",
                )
            )
        else:
            self.questions.append(question)


def parse_golden(lines: Iterable[str]) -> GoldenSet:
    """Parse JSONL lines of either format; blank lines are ignored, bad ones reported and
    skipped."""
    golden = GoldenSet()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        question, problem = _parse_line(line, number)
        if problem is not None:
            golden.problems.append(GoldenProblem(number, problem))
        elif question is not None:
            golden.add(question)
    return golden


def load_golden(path: str | Path) -> GoldenSet:
    """Read a golden file: JSONL (see :func:`parse_golden`) or Chroma's questions CSV
    (see :func:`parse_chroma_csv`), told apart by the ``.csv`` suffix or the CSV header."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read golden set {file}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"golden set {file} is not UTF-8: {exc}") from exc
    if is_chroma_csv(file, text):
        return parse_chroma_csv(text, name=str(file))
    return parse_golden(text.splitlines())


def is_chroma_csv(path: Path, text: str) -> bool:
    """A ``.csv`` file, or one whose first line is a CSV header with Chroma's columns."""
    if path.suffix.lower() == ".csv":
        return True
    first = text.lstrip().partition("\n")[0]
    if first.startswith("{"):
        return False
    header = next(csv.reader([first]), [])
    return {"question", "references"} <= {h.strip() for h in header}


def parse_chroma_csv(text: str, *, name: str = "questions CSV") -> GoldenSet:
    """Chroma's ``questions_df.csv`` as a span golden set; corpus ``x`` becomes ``x.md``.

    Problems carry the file line where the row starts (quoted fields may span lines).
    """
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ConfigError(f"{name}: missing CSV column {', '.join(missing)}")
    golden = GoldenSet()
    line = reader.line_num + 1
    for row in reader:
        question, problem = _parse_csv_row(row, line)
        if problem is not None:
            golden.problems.append(GoldenProblem(line, problem))
        elif question is not None:
            golden.add(question)
        line = reader.line_num + 1
    return golden


def _parse_csv_row(
    row: Mapping[str, str | None], line: int
) -> tuple[GoldenQuestion | None, str | None]:
    q = (row.get("question") or "").strip()
    corpus_id = (row.get("corpus_id") or "").strip()
    if not q:
        return None, "empty question"
    if not corpus_id:
        return None, "empty corpus_id"
    try:
        raw = json.loads(row.get("references") or "")
    except json.JSONDecodeError as exc:
        return None, f"references are not valid JSON ({exc.msg})"
    if not isinstance(raw, list):
        return None, "references are not a JSON list"
    if not raw:
        return None, "empty references"
    refs = []
    for number, item in enumerate(raw, start=1):
        parsed = chroma_reference(item)
        if isinstance(parsed, str):
            return None, f"reference {number}: {parsed}"
        start, end, content = parsed
        if start >= end:
            return None, f"reference {number}: empty or reversed range [{start}, {end})"
        refs.append(Reference(f"{corpus_id}.md", start, end, content))
    return GoldenQuestion(q, (), corpus_id, f"{corpus_id}.md", line, tuple(refs)), None


def chroma_reference(ref: Any) -> tuple[int, int, str | None] | str:
    """``(start, end, content)`` of one Chroma reference object, or what is wrong with it."""
    if not isinstance(ref, Mapping):
        return "not an object"
    start, end = ref.get("start_index"), ref.get("end_index")
    if not _is_int(start) or not _is_int(end):
        return f"non-integer offsets {start!r}, {end!r}"
    content = ref.get("content")
    if content is not None and not isinstance(content, str):
        return '"content" is not a string'
    return start, end, content


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_line(line: str, number: int) -> tuple[GoldenQuestion | None, str | None]:
    try:
        data: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(data, dict):
        return None, f"expected a JSON object, got {type(data).__name__}"
    q = data.get("q")
    if not isinstance(q, str) or not q.strip():
        return None, 'missing or empty "q"'
    category, source = data.get("category") or "", data.get("source") or ""
    if not isinstance(category, str) or not isinstance(source, str):
        return None, '"category" and "source" must be strings'
    flag = data.get("answerable", True)
    if not isinstance(flag, bool):
        return None, '"answerable" must be true or false'
    if not flag:
        return _unanswerable(data, q.strip(), category, source, number)
    return _answerable(data, q.strip(), category, source, number)


def _answerable(
    data: dict[str, Any], q: str, category: str, source: str, number: int
) -> tuple[GoldenQuestion | None, str | None]:
    """A question answered by reference spans or by strings its hit must contain."""
    if "references" in data:
        if "must_contain" in data:
            return None, 'give "must_contain" or "references", not both'
        refs = _parse_references(data["references"])
        if isinstance(refs, str):
            return None, refs
        return GoldenQuestion(q, (), category, source or refs[0].doc, number, refs), None
    strings = data.get("must_contain")
    if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
        return None, '"must_contain" must be a list of strings (or give "references")'
    cleaned = tuple(s for s in strings if s.strip())
    if not cleaned:
        return None, 'empty "must_contain"'
    return GoldenQuestion(q, cleaned, category, source, number), None


def _unanswerable(
    data: dict[str, Any], q: str, category: str, source: str, number: int
) -> tuple[GoldenQuestion | None, str | None]:
    # An answer to look for contradicts "the corpus does not answer it": refuse rather than
    # guess which of the two the author meant.
    if data.get("must_contain") or data.get("references"):
        return None, (
            'an unanswerable question ("answerable": false) takes no "must_contain" or "references"'
        )
    evidence = data.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(s, str) for s in evidence):
        return None, '"evidence" must be a list of strings'
    kept = tuple(s for s in evidence if s.strip())
    return GoldenQuestion(q, (), category, source, number, answerable=False, evidence=kept), None


def _parse_references(raw: Any) -> tuple[Reference, ...] | str:
    if not isinstance(raw, list):
        return '"references" must be a list of {"doc", "start", "end"} objects'
    if not raw:
        return 'empty "references"'
    refs = []
    for number, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            return f"reference {number} is not an object"
        doc, start, end, content = (item.get(k) for k in ("doc", "start", "end", "content"))
        if not isinstance(doc, str) or not doc.strip():
            return f'reference {number}: "doc" must be a non-empty string'
        if not _is_int(start) or not _is_int(end):
            return f'reference {number}: "start" and "end" must be integers'
        if not 0 <= start < end:
            return f"reference {number}: empty or reversed range [{start}, {end})"
        if content is not None and not isinstance(content, str):
            return f'reference {number}: "content" must be a string'
        refs.append(Reference(doc.strip().removeprefix("./"), start, end, content))
    return tuple(refs)


def absent_strings(question: GoldenQuestion, corpus_lower: str) -> tuple[str, ...]:
    """The question's strings that occur nowhere in the (lower-cased) corpus text."""
    return tuple(s for s in question.must_contain if s.lower() not in corpus_lower)


def check_against_corpus(
    golden: GoldenSet, texts: Mapping[str, str]
) -> tuple[GoldenSet, dict[GoldenQuestion, tuple[str, ...]]]:
    """Check questions against the corpus files' text (``source`` → text), before embedding.

    A question naming a ``source`` that is not a corpus file is reported and dropped, and so is
    one with a reference into an unknown document, offsets past a document's end, or a
    ``content`` that differs from the slice it points at (stale offsets would score the wrong
    text). A question with a string that occurs nowhere is kept (it counts as a miss: the
    golden set or the corpus is wrong, and the report should say so) but flagged, and so is an
    unanswerable question whose ``evidence`` occurs in the corpus after all; the returned
    map gives each such question's absent strings.
    """
    # One joined text: a string cannot span files, and the separator occurs in no string.
    corpus_lower = "\x00".join(t.lower() for t in texts.values())
    kept = GoldenSet(problems=list(golden.problems))
    absent: dict[GoldenQuestion, tuple[str, ...]] = {}
    for question in golden.questions:
        if not question.answerable:
            # Kept either way: the golden set, not the question, is then wrong, as with a
            # string that occurs nowhere.
            kept.questions.append(question)
            found = [s for s in question.evidence if s.lower() in corpus_lower]
            if found:
                kept.problems.append(
                    GoldenProblem.kept(
                        question.line,
                        "unanswerable, yet its evidence {} occurs in the corpus",
                        found,
                    )
                )
            continue
        if question.references:
            problem = reference_problem(question.references, texts)
            if problem:
                kept.problems.append(GoldenProblem(question.line, problem))
                continue
            # Reports quote the excerpt: fill it in where the golden line gave offsets only.
            refs = tuple(
                replace(r, content=texts[r.doc][r.start : r.end]) for r in question.references
            )
            kept.questions.append(replace(question, references=refs))
            continue
        if question.source and question.source not in texts:
            kept.problems.append(
                GoldenProblem(question.line, f"unknown document {question.source!r}")
            )
            continue
        kept.questions.append(question)
        missing = absent_strings(question, corpus_lower)
        if missing:
            absent[question] = missing
            kept.problems.append(
                GoldenProblem.kept(
                    question.line, "never hittable: {} occurs nowhere in the corpus", missing
                )
            )
    kept.problems.sort(key=lambda p: p.line)
    return kept, absent


def reference_problem(refs: Iterable[Reference], texts: Mapping[str, str]) -> str | None:
    """What is wrong with the first bad reference against the corpus text, or None."""
    for number, ref in enumerate(refs, start=1):
        text = texts.get(ref.doc)
        if text is None:
            return f"reference {number}: unknown document {ref.doc!r}"
        if ref.end > len(text):
            return (
                f"reference {number}: offsets [{ref.start}, {ref.end}) outside {ref.doc} "
                f"(length {len(text)})"
            )
        found = text[ref.start : ref.end]
        if ref.content is not None and ref.content != found:
            problem = (
                f"reference {number}: content differs from {ref.doc}[{ref.start}:{ref.end}]: "
                f"expected {shorten(ref.content)!r}, found {shorten(found)!r}"
            )
            at = text.find(ref.content)
            if at >= 0:
                problem += f"; the content occurs at [{at}, {at + len(ref.content)})"
            return problem
    return None


def shorten(text: str, width: int = 60) -> str:
    """One line of at most ``width`` characters, an ellipsis marking the cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


__all__ = [
    "SPANS",
    "STRINGS",
    "GoldenProblem",
    "GoldenQuestion",
    "GoldenSet",
    "Reference",
    "absent_strings",
    "check_against_corpus",
    "chroma_reference",
    "is_chroma_csv",
    "load_golden",
    "parse_chroma_csv",
    "parse_golden",
    "reference_problem",
    "shorten",
]
