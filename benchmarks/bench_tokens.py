#!/usr/bin/env python3
"""What exact token budgets cost: narezka sizing in model tokens against sizing in characters
and against one bare encode of every document, in one process over the same pre-read texts.

    python benchmarks/bench_tokens.py                      # md_corpus/ru/fastapi, median of 5
    python benchmarks/bench_tokens.py --corpus DIR [DIR ...] --repeat 3 --out FILE.md

Only splitting is timed (files are read and decoded first). Per row: MB/s of UTF-8 input,
median seconds, chunks, and how many times the tokenizer was called. The bare-encode rows are
the floor any exact sizing pays: every character tokenized once, one call per document. The
"counts replayed" row sizes in USE tokens with every count read from a table filled by an
untimed run first: the same chunks, no tokenizer, so it is what the tokens path costs in
Python alone (its gap to the characters row), and the USE row less it is the tokenizer's own
time in place (against the bare encode: what calling it per block costs). "Text tokenized" is
the characters the tokenizer was given over the corpus's own: 1× is every character once.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from narezka.discover import iter_files, read_document
from narezka.embed.local import UseEmbedder
from narezka.runs.chunking import chunk_raw
from narezka.split import SplitParams, get_strategy
from narezka.tokens import TokenCounter, get_counter
from narezka.types import RawDocument

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus/ru/fastapi"


class Replayed:
    """A counter answering from counts ``inner`` gave before: the tokens path without the
    tokenizer. Counts are recorded by a first (untimed) run; a text never seen is counted."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self.name = inner.name
        self.join_slack = getattr(inner, "join_slack", None)
        self.word_ends = getattr(inner, "word_ends", False)
        self.known: dict[str, int] = {}
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        known = self.known.get(text)
        if known is None:
            known = self.known[text] = self.inner.count(text)
        return known

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        self.calls += 1
        count, known = self.inner.count, self.known
        return [known[t] if t in known else known.setdefault(t, count(t)) for t in texts]


class Calls:
    """A counter that counts its own calls (count and count_batch alike)."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self.name = inner.name
        # The join bound and the word-end rule decide whether groups are sized from their
        # pieces: keep them.
        self.join_slack = getattr(inner, "join_slack", None)
        self.word_ends = getattr(inner, "word_ends", False)
        self.calls = 0
        self.chars = 0

    def count(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return self.inner.count(text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        self.calls += 1
        self.chars += sum(map(len, texts))
        return self.inner.count_batch(texts)


Outcome = tuple[int, int, float | None]
"""Chunks, tokenizer calls, and the characters tokenized over the corpus's (None: not kept)."""


def read_corpus(root: Path) -> list[RawDocument]:
    return [read_document(top, file)[0] for top, file in iter_files([root])]


def median_run(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, nargs="+", default=[DEFAULT_CORPUS])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    use = UseEmbedder().counter
    cl100k = get_counter("tokens", "cl100k_base")
    lines = [
        "# narezka token-budget benchmark",
        "",
        f"- median of {args.repeat} runs; Python {platform.python_version()}, "
        f"{platform.machine()}; the machine was shared with other jobs, so read the ratios",
    ]
    for corpus in args.corpus:
        lines += ["", *measure(corpus, args.repeat, use, cl100k)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


def measure(corpus: Path, repeat: int, use: TokenCounter, cl100k: TokenCounter) -> list[str]:
    """The rows and ratios of one corpus, every row timed in this process."""
    docs = read_corpus(corpus)
    mb = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    headings = get_strategy("headings")

    text_chars = sum(len(d.text) for d in docs)

    def narezka(unit: str, size: int, counter: TokenCounter) -> Callable[[], Outcome]:
        params = SplitParams(size=size, unit=unit)

        def run() -> Outcome:
            spy = Calls(counter)
            chunks = sum(len(chunk_raw(d, headings, params, spy).chunks) for d in docs)
            return chunks, spy.calls, (spy.chars / text_chars if unit == "tokens" else None)

        return run

    def bare(counter: TokenCounter) -> Callable[[], Outcome]:
        return lambda: (0, sum(1 for d in docs if counter.count(d.text) >= 0), 1.0)

    def replayed(size: int, counter: TokenCounter) -> Callable[[], Outcome]:
        params, table = SplitParams(size=size, unit="tokens"), Replayed(counter)
        for d in docs:  # fills the table, untimed
            chunk_raw(d, headings, params, table)

        def run() -> Outcome:
            table.calls = 0
            chunks = sum(len(chunk_raw(d, headings, params, table).chunks) for d in docs)
            return chunks, table.calls, None

        return run

    rows = [
        ("narezka headings, 800 chars", narezka("chars", 800, get_counter("chars"))),
        ("narezka headings, 384 USE tokens", narezka("tokens", 384, use)),
        ("narezka headings, 384 USE tokens, counts replayed (no tokenizer)", replayed(384, use)),
        ("narezka headings, 256 cl100k tokens", narezka("tokens", 256, cl100k)),
        ("bare SentencePiece (USE) encode, one per document", bare(use)),
        ("bare tiktoken cl100k encode, one per document", bare(cl100k)),
    ]
    # Round-robin, so a burst of load from other jobs hits every row alike.
    times: dict[str, list[float]] = {title: [] for title, _ in rows}
    outcome: dict[str, Outcome] = {}
    for _ in range(repeat):
        for title, fn in rows:
            seconds, outcome[title] = median_run(fn, 1)
            times[title].append(seconds)
    results = [(t, statistics.median(times[t]), *outcome[t]) for t, _ in rows]

    seconds_of = {r[0]: r[1] for r in results}
    lines = [
        f"## {corpus} — {len(docs)} files, {mb:.2f} MB UTF-8",
        "",
        "| what | MB/s | median s | chunks | tokenizer calls | text tokenized |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for title, seconds, chunks, calls, share in results:
        shown = chunks or "–"
        tokenized = "–" if share is None else f"{share:.2f}×"
        lines.append(
            f"| {title} | {mb / seconds:.2f} | {seconds:.3f} | {shown} | {calls} | {tokenized} |"
        )
    chars, use_t, replay, cl_t, use_bare, cl_bare = (seconds_of[title] for title, _ in rows)
    lines += [
        "",
        "| ratio (time of the first / time of the second) | × |",
        "|---|---:|",
        f"| USE tokens / characters | {use_t / chars:.2f} |",
        f"| USE tokens, counts replayed / characters (the tokens path's Python) | "
        f"{replay / chars:.2f} |",
        f"| USE tokenizer in place (USE less replayed) / bare USE encode | "
        f"{(use_t - replay) / use_bare:.2f} |",
        f"| cl100k tokens / characters | {cl_t / chars:.2f} |",
        f"| USE tokens / bare USE encode | {use_t / use_bare:.2f} |",
        f"| cl100k tokens / bare cl100k encode | {cl_t / cl_bare:.2f} |",
    ]
    return lines


if __name__ == "__main__":
    sys.exit(main())
