#!/usr/bin/env python3
"""Parse-stage speed on a real corpus: the block map against markdown-it, and the per-document
work the chunker does before splitting (parse, secrets, sanitize checks) against a baseline.

    python benchmarks/bench_parse.py                  # whole corpus, median of 3 runs
    python benchmarks/bench_parse.py --repeat 5 --corpus path/to/md
    python benchmarks/bench_parse.py --baseline /tmp/main/src   # another tree, same run

The second table times ``parse_document``, ``find_secrets`` and ``needs_sanitizing`` +
``removed_characters`` on every document (read as the chunker reads it). With ``--baseline``
the same functions from another source tree (``git archive main src | tar -x -C DIR``) are
loaded into this process and timed interleaved with ours, so both see the same load.

The scanner row is what the chunker pays: ``scan_blocks`` and, when it returns None,
``parse_blocks_reference`` on that document. MB/s counts UTF-8 input bytes; front matter is
split off before timing, as ``parse_document`` does. Also reports the fallback share (files,
bytes)
and checks that every scanner answer equals markdown-it's.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from narezka.discover import iter_files, read_document
from narezka.parse.markdown import parse_blocks_reference, split_front_matter
from narezka.parse.scanner import scan_blocks
from narezka.types import Block, RawDocument

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus"

Doc = tuple[str, int]  # text, body start
Stage = Callable[[], object]
STAGES = ("parse_document", "find_secrets", "sanitize checks")


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


def stages(src: Path | None) -> dict[str, Stage]:
    """The three per-document stages over the corpus' documents, from ``src`` (None: this
    tree). A baseline's modules are imported under their own names and then forgotten, so
    the two trees never share a module."""
    names = ("narezka.parse.markdown", "narezka.parse.redaction", "narezka.parse.sanitize")
    saved = {k: v for k, v in sys.modules.items() if k.startswith("narezka")}
    if src is not None:
        for k in saved:
            del sys.modules[k]
        sys.path.insert(0, str(src))
    try:
        markdown, redaction, sanitize = (importlib.import_module(n) for n in names)
    finally:
        if src is not None:
            sys.path.remove(str(src))
            for k in [k for k in sys.modules if k.startswith("narezka")]:
                del sys.modules[k]
            sys.modules.update(saved)
    parse, secrets = markdown.parse_document, redaction.find_secrets
    needs, removed = sanitize.needs_sanitizing, sanitize.removed_characters
    return {
        "parse_document": lambda: [parse(raw) for raw in RAWS],
        "find_secrets": lambda: [secrets(raw.text) for raw in RAWS],
        "sanitize checks": lambda: [(needs(raw.text), removed(raw.text)) for raw in RAWS],
    }


RAWS: list[RawDocument] = []


def stage_table(corpus: Path, mb: float, repeat: int, baseline: Path | None) -> None:
    """Median seconds of each stage, ours and the baseline's interleaved, then the ratios."""
    RAWS.extend(read_document(top, path)[0] for top, path in iter_files([corpus]))
    trees = {"this tree": stages(None)}
    if baseline is not None:
        trees["baseline"] = stages(baseline)
    runs: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeat):
        for stage in STAGES:
            for tree, fns in trees.items():
                gc.collect()
                t0 = time.perf_counter()
                fns[stage]()
                runs.setdefault((tree, stage), []).append(time.perf_counter() - t0)
    secs = {key: statistics.median(v) for key, v in runs.items()}
    print()
    where = f" against {baseline}" if baseline else ""
    print(f"per-document stages, {len(RAWS)} documents, median of {repeat}{where}")
    print()
    head = f"| {'stage':<16} | {'seconds':>8} | {'MB/s':>7} |"
    rule = f"|{'-' * 18}|{'-' * 9}:|{'-' * 8}:|"
    if baseline:
        head += f" {'baseline s':>10} | {'speed-up':>8} |"
        rule += f"{'-' * 11}:|{'-' * 9}:|"
    print(head)
    print(rule)
    for stage in (*STAGES, "total"):
        ours = (
            sum(secs["this tree", s] for s in STAGES)
            if stage == "total"
            else secs["this tree", stage]
        )
        row = f"| {stage:<16} | {ours:8.3f} | {mb / ours:7.1f} |"
        if baseline:
            base = (
                sum(secs["baseline", s] for s in STAGES)
                if stage == "total"
                else secs["baseline", stage]
            )
            row += f" {base:10.3f} | {base / ours:7.2f}x |"
        print(row)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another tree's src/ to time against")
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
    stage_table(args.corpus, mb, args.repeat, args.baseline)


if __name__ == "__main__":
    main()
