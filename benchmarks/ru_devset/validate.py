"""Check the Russian dev set against its corpus: every string present, in the stated section.

Usage::

    python benchmarks/ru_devset/validate.py [GOLDEN] [CORPUS]

defaults: ``benchmarks/ru_devset/fastapi.jsonl`` and ``$NAREZKA_SHARED/data/md_corpus/ru/fastapi``.

A line of the set is the seed's golden format plus three fields the harness ignores::

    {"q", "must_contain": [...], "category", "source", "kind", "section"}

``source`` is the answering file relative to the corpus root; ``section`` is the title of the
heading whose *own* text (from that heading to the next heading of any level, as narezka's
parser finds headings) holds every string, compared case-insensitively as the harness scores.
A title that occurs more than once in the file passes when one of its sections holds them all.
The script prints one line per problem (``line N: …``), the count per kind, and exits 1 when
anything is wrong.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from narezka.discover.walk import read_document
from narezka.parse.markdown import parse_document
from narezka.types import BlockKind

KINDS = ("code", "table", "prose", "needs-heading-context")
HERE = Path(__file__).resolve().parent
DEFAULT_GOLDEN = HERE / "fastapi.jsonl"
SHARED = Path(os.environ.get("NAREZKA_SHARED", HERE.parents[2] / "shared"))
DEFAULT_CORPUS = SHARED / "data" / "md_corpus" / "ru" / "fastapi"
# FastAPI's docs write anchors as ``{ #id }`` (attr_list style, spaces inside), which narezka's
# parser keeps in the title; the set states titles without them.
_SPACED_ANCHOR = re.compile(r"\s*\{\s*#[^}\s]+\s*\}\s*$")


@dataclass(frozen=True, slots=True)
class Report:
    """What the validator found: problems (one line each) and the number of questions per kind."""

    problems: list[str]
    kinds: Counter[str]
    questions: int


def sections(corpus: Path, source: str) -> list[tuple[str, str]]:
    """``(title, lower-cased own text)`` of every heading of one corpus file, in order."""
    raw, _ = read_document(corpus, corpus / source)
    doc, _ = parse_document(raw)
    heads = [b for b in doc.blocks if b.kind is BlockKind.HEADING]
    ends = [h.start for h in heads[1:]] + [len(doc.text)]
    return [
        (_SPACED_ANCHOR.sub("", h.title), doc.text[h.start : end].lower())
        for h, end in zip(heads, ends, strict=True)
    ]


def validate(golden: Path, corpus: Path) -> Report:
    """Check every line of ``golden`` against the files under ``corpus``."""
    problems: list[str] = []
    kinds: Counter[str] = Counter()
    cache: dict[str, list[tuple[str, str]]] = {}
    seen: dict[str, int] = {}
    count = 0
    for number, line in enumerate(golden.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        count += 1
        problem = _check_line(line, corpus, cache)
        if problem:
            problems.append(f"line {number}: {problem}")
            continue
        data = json.loads(line)
        kinds[data["kind"]] += 1
        if data["q"] in seen:
            problems.append(f"line {number}: same question as line {seen[data['q']]}")
        seen.setdefault(data["q"], number)
    return Report(problems, kinds, count)


def _check_line(line: str, corpus: Path, cache: dict[str, list[tuple[str, str]]]) -> str:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg})"
    if not isinstance(data, dict):
        return "not a JSON object"
    for key in ("q", "source", "section", "kind"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            return f'missing or empty "{key}"'
    strings = data.get("must_contain")
    if (
        not isinstance(strings, list)
        or not strings
        or not all(isinstance(s, str) and s.strip() for s in strings)
    ):
        return '"must_contain" must be a non-empty list of non-empty strings'
    if data["kind"] not in KINDS:
        return f"unknown kind {data['kind']!r} (one of {', '.join(KINDS)})"
    source = data["source"]
    if source not in cache:
        if not (corpus / source).is_file():
            return f"source {source!r} is not a file under {corpus}"
        cache[source] = sections(corpus, source)
    titled = [text for title, text in cache[source] if title == data["section"]]
    if not titled:
        return f"no heading titled {data['section']!r} in {source}"
    lowered = [s.lower() for s in strings]
    whole = "\x00".join(text for _, text in cache[source])
    absent = [s for s, low in zip(strings, lowered, strict=True) if low not in whole]
    if absent:
        return f"{', '.join(map(repr, absent))} not in {source}"
    if not any(all(low in text for low in lowered) for text in titled):
        return f"not all strings inside section {data['section']!r} of {source}"
    return ""


def main(argv: list[str]) -> int:
    golden = Path(argv[0]) if argv else DEFAULT_GOLDEN
    corpus = Path(argv[1]) if len(argv) > 1 else DEFAULT_CORPUS
    if not corpus.is_dir():
        print(f"corpus {corpus} not found (set NAREZKA_SHARED or pass it)", file=sys.stderr)
        return 2
    report = validate(golden, corpus)
    for problem in report.problems:
        print(problem)
    answered_in_atoms = report.kinds["code"] + report.kinds["table"]
    print(
        f"{report.questions} questions, {len(report.problems)} problems; "
        + ", ".join(f"{k} {report.kinds[k]}" for k in KINDS)
        + f"; code+table {answered_in_atoms / max(1, sum(report.kinds.values())):.0%}"
    )
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
