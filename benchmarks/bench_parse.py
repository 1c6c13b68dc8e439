#!/usr/bin/env python3
"""Block-map speed: markdown-it (``parse_blocks_reference``) against ``scan_blocks``, real corpus.

    python benchmarks/bench_parse.py                  # whole corpus, median of 3 runs
    python benchmarks/bench_parse.py --repeat 5 --corpus path/to/md

The scanner row is what the chunker pays: ``scan_blocks`` and, when it returns None,
``parse_blocks_reference`` on that document. MB/s counts UTF-8 input bytes; front matter is
split off before timing, as ``parse_document`` does. Also reports the fallback share (files,
bytes)
and checks that every scanner answer equals markdown-it's.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from narezka.parse.markdown import parse_blocks_reference, split_front_matter
from narezka.parse.scanner import scan_blocks
from narezka.types import Block

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus"

Doc = tuple[str, int]  # text, body start


def load(root: Path) -> list[Doc]:
    docs = []
    for path in sorted(root.rglob("*.md")):
        text = path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
        docs.append((text, split_front_matter(text)[0]))
    return docs


def with_fallback(text: str, start: int) -> list[Block]:
    blocks = scan_blocks(text, start)
    return parse_blocks_reference(text, start) if blocks is None else blocks


def timed(fn: Callable[[str, int], object], docs: list[Doc], repeat: int) -> float:
    """Median seconds of ``repeat`` passes over all documents."""
    runs = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        for text, start in docs:
            fn(text, start)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    docs = load(args.corpus)
    if not docs:
        raise SystemExit(f"no Markdown files under {args.corpus}")
    sizes = [len(text.encode()) for text, _ in docs]
    mb = sum(sizes) / 1e6
    fallback = [i for i, (text, start) in enumerate(docs) if scan_blocks(text, start) is None]
    wrong = sum(
        1
        for text, start in docs
        if (got := scan_blocks(text, start)) is not None
        and got != parse_blocks_reference(text, start)
    )
    rows = [
        ("markdown-it (reference)", timed(parse_blocks_reference, docs, args.repeat)),
        ("scan_blocks (no fallback)", timed(scan_blocks, docs, args.repeat)),
        ("scan_blocks + fallback", timed(with_fallback, docs, args.repeat)),
    ]
    base = rows[0][1]
    print(f"corpus: {args.corpus} — {len(docs)} files, {mb:.2f} MB UTF-8, median of {args.repeat}")
    print()
    print(f"| {'parser':<27} | {'seconds':>8} | {'MB/s':>7} | {'speed-up':>8} |")
    print(f"|{'-' * 29}|{'-' * 9}:|{'-' * 8}:|{'-' * 9}:|")
    for name, secs in rows:
        print(f"| {name:<27} | {secs:8.3f} | {mb / secs:7.1f} | {base / secs:7.1f}x |")
    print()
    fb_bytes = sum(sizes[i] for i in fallback)
    print(
        f"fallback: {len(fallback)}/{len(docs)} files ({len(fallback) / len(docs):.1%}), "
        f"{fb_bytes / 1e6:.2f} MB ({fb_bytes / (mb * 1e6):.1%} of bytes); "
        f"scanner answers differing from markdown-it: {wrong}"
    )


if __name__ == "__main__":
    main()
