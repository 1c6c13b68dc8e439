"""Check a string golden set against its corpus: every string present, in the stated section.

Usage::

    python benchmarks/ru_devset/validate.py [GOLDEN] [CORPUS] [--held-out PATH ...]
    python benchmarks/ru_devset/validate.py --suite [benchmarks/devsuite/suite.json]

defaults: ``benchmarks/ru_devset/fastapi.jsonl`` and ``$NAREZKA_SHARED/data/md_corpus/ru/fastapi``.
``--suite`` checks every golden and near file of the dev suite's manifest against its corpus
and held-out list (Chroma's CSV sets are skipped: the harness checks their spans).

A line of the set is the seed's golden format plus three fields the harness ignores::

    {"q", "must_contain": [...], "category", "source", "kind", "section"}

``source`` is the answering file relative to the corpus root; ``section`` is the title of the
heading whose *own* text (from that heading to the next heading of any level, as narezka's
parser finds headings) holds every string, compared case-insensitively as the harness scores.
A title that occurs more than once in the file passes when one of its sections holds them all.
With held-out files (files or folders relative to the corpus, left out of the index), an
answerable question whose ``source`` is held out is counted as ``held`` (the dev suite's
runner does not ask it: a reused set such as the example KB's keeps such lines), and an
*unanswerable* line
(``"answerable": false``, ``"must_contain": []``) must name a held-out ``source`` and
``section`` whose own text holds every one of its ``evidence`` strings, none of which may occur
in any file that stays indexed: the question is answered only by what was held out.
The script prints one line per problem (``line N: …``), the count per kind, and exits 1 when
anything is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from narezka.discover.walk import read_document
from narezka.formats import CONVERTED_SUFFIXES
from narezka.parse.markdown import parse_document
from narezka.types import BlockKind

KINDS = ("code", "table", "prose", "needs-heading-context")
HERE = Path(__file__).resolve().parent
DEFAULT_GOLDEN = HERE / "fastapi.jsonl"
SHARED = Path(os.environ.get("NAREZKA_SHARED", HERE.parents[2] / "shared"))
DEFAULT_CORPUS = SHARED / "data" / "md_corpus" / "ru" / "fastapi"
SUITE = HERE.parent / "devsuite" / "suite.json"
# FastAPI's docs write anchors as ``{ #id }`` (attr_list style, spaces inside) and
# javascript.info's as ``[#id]``; narezka's parser keeps both in the title, the sets state
# titles without them.
_SPACED_ANCHOR = re.compile(r"\s*(\{\s*#[^}\s]+\s*\}|\[#[^\]\s]+\])\s*$")


@dataclass(frozen=True, slots=True)
class Report:
    """What the validator found: problems (one line each) and the number of questions per kind."""

    problems: list[str]
    kinds: Counter[str]
    questions: int
    unanswerable: int = 0
    held: int = 0
    """Answerable questions whose source is held out (valid, but not asked)."""


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


def is_held_out(source: str, held_out: Sequence[str]) -> bool:
    """Whether ``source`` is one of ``held_out`` or lies inside one of its folders."""
    return any(source == h or source.startswith(h.rstrip("/") + "/") for h in held_out)


def indexed_text(corpus: Path, held_out: Sequence[str]) -> str:
    """The lower-cased text of every Markdown file of ``corpus`` that is not held out, and
    the canonical text of its PDF, Word and HTML files (the example KB mixes them)."""
    texts = []
    for path in sorted(corpus.rglob("*")):
        source = path.relative_to(corpus).as_posix()
        if is_held_out(source, held_out) or ".narezka" in path.parts:
            continue
        if path.suffix == ".md":
            texts.append(path.read_text(encoding="utf-8", errors="replace").lower())
        elif path.suffix.lower() in CONVERTED_SUFFIXES:
            texts.append(read_document(corpus, path)[0].text.lower())
    return "\x00".join(texts)


def validate(golden: Path, corpus: Path, held_out: Sequence[str] = ()) -> Report:
    """Check every line of ``golden`` against the files under ``corpus``; questions answered
    by a ``held_out`` file are unanswerable ones (see the module text)."""
    problems: list[str] = []
    kinds: Counter[str] = Counter()
    cache: dict[str, list[tuple[str, str]]] = {}
    seen: dict[str, int] = {}
    rest: list[str] = []  # the indexed text, read once when an unanswerable line needs it
    count = unanswerable = held = 0
    for number, line in enumerate(golden.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        count += 1
        problem = _check_line(line, corpus, cache, held_out, rest)
        if problem:
            problems.append(f"line {number}: {problem}")
            continue
        data = json.loads(line)
        kinds[data["kind"]] += 1
        unanswerable += data.get("answerable", True) is False
        held += data.get("answerable", True) is not False and is_held_out(data["source"], held_out)
        if data["q"] in seen:
            problems.append(f"line {number}: same question as line {seen[data['q']]}")
        seen.setdefault(data["q"], number)
    return Report(problems, kinds, count, unanswerable, held)


def _check_line(
    line: str,
    corpus: Path,
    cache: dict[str, list[tuple[str, str]]],
    held_out: Sequence[str] = (),
    rest: list[str] | None = None,
) -> str:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg})"
    if not isinstance(data, dict):
        return "not a JSON object"
    for key in ("q", "source", "section", "kind"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            return f'missing or empty "{key}"'
    held = is_held_out(data["source"], held_out)
    if data.get("answerable", True) is False:
        return _check_unanswerable(data, corpus, cache, held, held_out, rest)
    strings = data.get("must_contain")
    if (
        not isinstance(strings, list)
        or not strings
        or not all(isinstance(s, str) and s.strip() for s in strings)
    ):
        return '"must_contain" must be a non-empty list of non-empty strings'
    return _check_strings(data, strings, corpus, cache)


def _check_unanswerable(
    data: dict[str, Any],
    corpus: Path,
    cache: dict[str, list[tuple[str, str]]],
    held: bool,
    held_out: Sequence[str],
    rest: list[str] | None,
) -> str:
    if data.get("must_contain") != []:
        return 'an unanswerable question needs "must_contain": []'
    if not held:
        return f"unanswerable, but its source {data['source']!r} is not held out"
    evidence = data.get("evidence")
    if (
        not isinstance(evidence, list)
        or not evidence
        or not all(isinstance(s, str) and s.strip() for s in evidence)
    ):
        return '"evidence" must be a non-empty list of non-empty strings'
    problem = _check_strings(data, evidence, corpus, cache)
    if problem:
        return problem
    if rest is not None and not rest:
        rest.append(indexed_text(corpus, held_out))
    indexed = rest[0] if rest else indexed_text(corpus, held_out)
    found = [s for s in evidence if s.lower() in indexed]
    if found:
        return f"{', '.join(map(repr, found))} also in an indexed file: the index could answer"
    return ""


def _check_strings(
    data: dict[str, Any], strings: list[str], corpus: Path, cache: dict[str, list[tuple[str, str]]]
) -> str:
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("golden", nargs="?", type=Path, default=DEFAULT_GOLDEN)
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--held-out", nargs="*", default=[], help="Held-out files or folders.")
    parser.add_argument("--suite", nargs="?", type=Path, const=SUITE, default=None)
    args = parser.parse_args(argv)
    if args.suite:
        return check_suite(args.suite)
    if not args.corpus.is_dir():
        print(f"corpus {args.corpus} not found (set NAREZKA_SHARED or pass it)", file=sys.stderr)
        return 2
    report = validate(args.golden, args.corpus, args.held_out)
    _print(report)
    return 1 if report.problems else 0


def check_suite(manifest: Path) -> int:
    """Validate every string set of the dev suite against its corpus and held-out list."""
    sys.path.insert(0, str(manifest.resolve().parent))
    from manifest import load_suite  # the suite's one reader of its manifest

    failed = False
    for corpus in load_suite(manifest).corpora:
        if corpus.chroma_id:
            continue
        if not corpus.root.is_dir():
            print(f"{corpus.name}: {corpus.root} not found (set NAREZKA_SHARED)", file=sys.stderr)
            return 2
        for golden in (*corpus.golden, *([corpus.near] if corpus.near else [])):
            repo = HERE.parents[1]
            shown = golden.relative_to(repo) if golden.is_relative_to(repo) else golden
            print(f"{corpus.name}: {shown}")
            if not _has_sections(golden):
                # A reused set in the seed's format (examples/kb/golden.jsonl) names no section
                # or kind; the harness checks that its strings occur in the corpus.
                print("  no section/kind fields: checked by the harness only")
                continue
            report = validate(golden, corpus.root, corpus.held_out)
            _print(report, indent="  ")
            failed = failed or bool(report.problems)
    return 1 if failed else 0


def _has_sections(golden: Path) -> bool:
    first = next((line for line in golden.read_text(encoding="utf-8").splitlines() if line), "")
    try:
        return "section" in json.loads(first)
    except json.JSONDecodeError:
        return True  # let validate() report the bad line


def _print(report: Report, indent: str = "") -> None:
    for problem in report.problems:
        print(indent + problem)
    answered_in_atoms = report.kinds["code"] + report.kinds["table"]
    print(
        f"{indent}{report.questions} questions, {len(report.problems)} problems; "
        + ", ".join(f"{k} {report.kinds[k]}" for k in KINDS)
        + f"; code+table {answered_in_atoms / max(1, sum(report.kinds.values())):.0%}"
        + f"; unanswerable {report.unanswerable}"
        + (f"; {report.held} answered by held-out files (not asked)" if report.held else "")
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
