"""Golden sets in the seed format: JSONL lines ``{"q", "must_contain": [...], "category"?,
"source"?}``; a hit is one retrieved chunk containing every string, case-insensitive.

Loading never stops at a bad line: it is reported with its line number and skipped. Checks
against the corpus text (strings that occur nowhere, unknown source documents) run before
any embedding, so a question that can never be hit is known up front.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from narezka.errors import ConfigError


@dataclass(frozen=True, slots=True)
class GoldenQuestion:
    """One question and the strings a retrieved chunk must contain to answer it."""

    q: str
    must_contain: tuple[str, ...]
    category: str = ""
    source: str = ""
    """The corpus file that answers it (POSIX path relative to the corpus), when known."""
    line: int = 0
    """1-based line in the golden file (0 for questions built in code)."""


@dataclass(frozen=True, slots=True)
class GoldenProblem:
    """Something wrong with one golden line; ``skipped`` says whether the question was dropped."""

    line: int
    problem: str
    skipped: bool = True

    def __str__(self) -> str:
        verdict = "skipped" if self.skipped else "kept"
        return f"line {self.line}: {self.problem} ({verdict})"


@dataclass(slots=True)
class GoldenSet:
    """The valid questions of a golden file and what was wrong with the rest."""

    questions: list[GoldenQuestion] = field(default_factory=list)
    problems: list[GoldenProblem] = field(default_factory=list)


def parse_golden(lines: Iterable[str]) -> GoldenSet:
    """Parse seed-format JSONL lines; blank lines are ignored, bad ones reported and skipped."""
    golden = GoldenSet()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        question, problem = _parse_line(line, number)
        if problem is not None:
            golden.problems.append(GoldenProblem(number, problem))
        elif question is not None:
            golden.questions.append(question)
    return golden


def load_golden(path: str | Path) -> GoldenSet:
    """Read a seed-format golden file; see :func:`parse_golden`."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read golden set {file}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"golden set {file} is not UTF-8: {exc}") from exc
    return parse_golden(text.splitlines())


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
    strings = data.get("must_contain")
    if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
        return None, '"must_contain" must be a list of strings'
    cleaned = tuple(s for s in strings if s.strip())
    if not cleaned:
        return None, 'empty "must_contain"'
    category, source = data.get("category") or "", data.get("source") or ""
    if not isinstance(category, str) or not isinstance(source, str):
        return None, '"category" and "source" must be strings'
    return GoldenQuestion(q.strip(), cleaned, category, source, number), None


def absent_strings(question: GoldenQuestion, corpus_lower: str) -> tuple[str, ...]:
    """The question's strings that occur nowhere in the (lower-cased) corpus text."""
    return tuple(s for s in question.must_contain if s.lower() not in corpus_lower)


def check_against_corpus(
    golden: GoldenSet, texts: Mapping[str, str]
) -> tuple[GoldenSet, dict[GoldenQuestion, tuple[str, ...]]]:
    """Check questions against the corpus files' text (``source`` → text), before embedding.

    A question naming a ``source`` that is not a corpus file is reported and dropped. A
    question with a string that occurs nowhere is kept (it counts as a miss: the golden set
    or the corpus is wrong, and the report should say so) but flagged; the returned map gives
    each such question's absent strings.
    """
    # One joined text: a string cannot span files, and the separator occurs in no string.
    corpus_lower = "\x00".join(t.lower() for t in texts.values())
    kept = GoldenSet(problems=list(golden.problems))
    absent: dict[GoldenQuestion, tuple[str, ...]] = {}
    for question in golden.questions:
        if question.source and question.source not in texts:
            kept.problems.append(
                GoldenProblem(question.line, f"unknown document {question.source!r}")
            )
            continue
        kept.questions.append(question)
        missing = absent_strings(question, corpus_lower)
        if missing:
            absent[question] = missing
            names = ", ".join(repr(s) for s in missing)
            kept.problems.append(
                GoldenProblem(
                    question.line,
                    f"never hittable: {names} occurs nowhere in the corpus",
                    skipped=False,
                )
            )
    kept.problems.sort(key=lambda p: p.line)
    return kept, absent


__all__ = [
    "GoldenProblem",
    "GoldenQuestion",
    "GoldenSet",
    "absent_strings",
    "check_against_corpus",
    "load_golden",
    "parse_golden",
]
