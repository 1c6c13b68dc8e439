"""Secret detection: narezka's own rules against detect-secrets, on speed, recall and noise.

Three measurements, both detectors in the same run:

- **recall** on ``tests/data/secrets``: how many planted secrets each one finds (a planted
  value counts as found when a reported secret lies inside it or covers it);
- **speed** over ``md_corpus`` (real Markdown, EN+RU): MB/s of the detector alone, each file
  read once up front;
- **cost in a chunking run**: ``chunk_documents`` over md_corpus with and without it;
- **noise** over ``md_corpus``: how many findings, how many files, by kind — md_corpus holds
  documentation, not credentials, so every finding there is a false positive or at best a
  documentation example (AWS's ``AKIAIOSFODNN7EXAMPLE``, a tutorial's ``SECRET_KEY``); the
  script prints each of ours so a person can classify them.

detect-secrets (Apache-2.0, Yelp) runs its own ``scan_file`` with its default plugins and
filters, as its pre-commit hook does (it reads the file itself: a little I/O is in its time;
ours gets the decoded text). Install it to compare (``pip install detect-secrets``); its row
says so when it is missing.

    python benchmarks/bench_redact.py [--corpus ../shared/data/md_corpus] [--list]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

from narezka.discover import iter_files, read_document
from narezka.parse.redaction import find_secrets
from narezka.runs import chunk_documents

REPO = Path(__file__).resolve().parents[1]
PLANTED = REPO / "tests" / "data" / "secrets"
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "md_corpus"

Finding = tuple[str, str]
"""(kind, the secret's text) as a detector reports it."""
Scan = Callable[[Path, str], list[Finding]]
"""A detector: the file and its decoded text in, findings out."""


def ours(_path: Path, text: str) -> list[Finding]:
    return [(s.kind, text[s.start : s.end]) for s in find_secrets(text)]


def detect_secrets_scanner() -> Scan | str:
    """A scan function over detect-secrets' defaults, or why there is none."""
    try:
        from detect_secrets.core.scan import scan_file
        from detect_secrets.settings import default_settings
    except ImportError:
        return "not installed (pip install detect-secrets)"

    def scan(path: Path, _text: str) -> list[Finding]:
        with default_settings():
            return [(s.type, s.secret_value or "") for s in scan_file(str(path))]

    return scan


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "(missing)"


def _texts(corpus: Path) -> Iterator[tuple[Path, str]]:
    for root, file in iter_files([corpus], ["**/*.md", "**/*.markdown", "**/*.mdx"]):
        yield file, read_document(root, file)[0].text


def recall(scan: Scan) -> tuple[int, int, list[str]]:
    planted = json.loads((PLANTED / "planted.json").read_text("utf-8"))
    missed: list[str] = []
    files = {p["file"] for p in planted}
    found = {f: scan(PLANTED / f, read_document(PLANTED, PLANTED / f)[0].text) for f in files}
    for p in planted:
        value = p["value"]
        hit = any(s and (s in value or value in s) for _, s in found[p["file"]])
        if not hit:
            missed.append(f"{p['file']}: {p['kind']}")
    return len(planted) - len(missed), len(planted), missed


def noise(
    scan: Scan, docs: list[tuple[Path, str]], repeats: int
) -> tuple[float, list[tuple[str, str, str]]]:
    """Findings over ``docs`` and the best time of ``repeats`` passes."""
    best = float("inf")
    hits: list[tuple[str, str, str]] = []
    for _ in range(repeats):
        started = time.perf_counter()
        hits = [(str(path), kind, value) for path, text in docs for kind, value in scan(path, text)]
        best = min(best, time.perf_counter() - started)
    return best, hits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--list", action="store_true", help="print every finding of ours")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus}: no such folder (pass --corpus)")
    docs = list(_texts(args.corpus))
    megabytes = sum(len(t.encode()) for _, t in docs) / 1e6
    print(f"corpus: {args.corpus.name}, {len(docs)} files, {megabytes:.1f} MB")
    print(f"planted: {PLANTED.relative_to(REPO)}; python {sys.version.split()[0]}")
    print("time: best of 3 passes for narezka, 1 for detect-secrets (it takes minutes);")
    print("the machine is shared, so absolute MB/s vary run to run; compare the ratio.\n")

    scanners: dict[str, Scan | str] = {
        "narezka rules": ours,
        f"detect-secrets {_version('detect-secrets')} (defaults)": detect_secrets_scanner(),
    }
    rows = []
    listed: list[tuple[str, str, str]] = []
    base_seconds = None
    for name, scan in scanners.items():
        if isinstance(scan, str):
            rows.append(f"| {name} | – | – | – | – | – | {scan} |")
            continue
        got, total, missed = recall(scan)
        # The slow peer runs once: three passes would take ten minutes.
        seconds, hits = noise(scan, docs, 3 if scan is ours else 1)
        base_seconds = base_seconds or seconds
        kinds = Counter(kind for _, kind, _ in hits)
        top = ", ".join(f"{k} {n}" for k, n in kinds.most_common(4))
        files = len({path for path, _, _ in hits})
        rows.append(
            f"| {name} | {got}/{total} | {megabytes / seconds:.2f} MB/s "
            f"| {seconds / base_seconds:.1f}× | {len(hits)} in {files} files | {top} | "
            f"{'missed: ' + '; '.join(missed) if missed else ''} |"
        )
        if scan is ours:
            listed = hits
    print(
        "| detector | planted found | speed on md_corpus | time vs ours | md_corpus findings "
        "| top kinds | notes |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nWhat redaction costs a chunking run (headings, 800 chars, md_corpus, best of 2):\n")
    print("| chunk_documents | seconds | MB/s |")
    print("|---|---|---|")
    for redact in (False, True):
        best = float("inf")
        for _ in range(2):
            started = time.perf_counter()
            chunk_documents([args.corpus], "headings", redact=redact)
            best = min(best, time.perf_counter() - started)
        print(f"| redact={redact} | {best:.2f} | {megabytes / best:.2f} |")
    if args.list:
        print("\nnarezka findings on md_corpus:")
        for path, kind, value in listed:
            shown = value if len(value) <= 60 else value[:57] + "…"
            print(f"- {Path(path).relative_to(args.corpus)}: {kind}: {shown!r}")


if __name__ == "__main__":
    main()
