#!/usr/bin/env python3
"""How much joining two texts at whitespace changes their token count, per tokenizer.

    python benchmarks/join_bounds.py                        # whole md_corpus
    python benchmarks/join_bounds.py --corpus DIR --out results/join_bounds.md

The packer sizes a group of pieces from the pieces' own counts; this measures the error of
that sum. For every pair of neighbouring pieces ``a``, ``b`` with whitespace ``g`` between
them (neighbouring blocks, lines of one block, words of one line) it records
``narezka.tokens.join_correction``: count(a + g + b) against count(a) + count(b) with the
per-call constant (specials, instruction prefix) counted once and the gap's own tokens. A
counter's ``join_slack`` must bound the absolute value of every figure here (tests/tokens
checks that on generated text too). Block pairs are all taken; line and word pairs are a
seeded sample per file.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from narezka.discover import iter_files, read_document
from narezka.parse.markdown import parse_document
from narezka.tokens import TokenCounter, get_counter, join_correction, join_slack

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus"
Pair = tuple[str, str, str, str]  # kind, left, gap, right


def pairs(root: Path, per_file: int, seed: int) -> Iterator[Pair]:
    rng = random.Random(seed)
    for top, file in iter_files([root]):
        doc, _ = parse_document(read_document(top, file)[0])
        text = doc.text
        blocks = [b for b in doc.blocks if text[b.start : b.end].strip()]
        for prev, nxt in itertools.pairwise(blocks):
            gap = text[prev.end : nxt.start]
            if gap and not gap.strip():
                yield (
                    "blocks",
                    text[prev.start : prev.end].strip(),
                    gap,
                    text[nxt.start : nxt.end].strip(),
                )
        lines = [ln for ln in text[doc.body_start :].split("\n") if ln.strip()]
        for k in rng.sample(range(max(0, len(lines) - 1)), min(per_file, max(0, len(lines) - 1))):
            yield "lines", lines[k].strip(), "\n", lines[k + 1].strip()
        words = text[doc.body_start :].split()
        for k in rng.sample(range(max(0, len(words) - 1)), min(per_file, max(0, len(words) - 1))):
            yield "words", words[k], " ", words[k + 1]


def counters() -> list[tuple[str, Callable[[], TokenCounter]]]:
    def use() -> TokenCounter:
        from narezka.embed.local import UseEmbedder

        return UseEmbedder().counter

    def e5() -> TokenCounter:
        from narezka.embed.local import E5Embedder

        return E5Embedder().counter

    def minilm() -> TokenCounter:
        from narezka.embed.minilm import MiniLMEmbedder

        return MiniLMEmbedder().counter

    def xlmr() -> TokenCounter:
        from narezka.embed.local import E5Embedder
        from narezka.tokens.models import PrefixFreeCounter

        return PrefixFreeCounter(E5Embedder().counter, name="xlmr")

    def utf8() -> TokenCounter:
        from narezka.tokens.models import Utf8BoundCounter

        return Utf8BoundCounter()

    return [
        ("use (SentencePiece unigram)", use),
        ("e5 (XLM-R SentencePiece, passage: prefix)", e5),
        ("xlmr without prefix (ollama bge-m3 style)", xlmr),
        ("minilm (BERT WordPiece, uncased)", minilm),
        ("cl100k_base (tiktoken BPE)", lambda: get_counter("tokens", "cl100k_base")),
        ("o200k_base (tiktoken BPE)", lambda: get_counter("tokens", "o200k_base")),
        ("utf-8 bytes bound", utf8),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--per-file", type=int, default=20, help="line and word pairs per file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    sample = list(pairs(args.corpus, args.per_file, args.seed))
    kinds = Counter(kind for kind, *_ in sample)
    lines = [
        "# Token count of a whitespace join against the sum of its parts",
        "",
        f"- corpus: {args.corpus}; pairs: "
        + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        + f" (line and word pairs: {args.per_file} a file, seed {args.seed})",
        "- correction = count(a + gap + b) − (count(a) + count(b) − call_constant + "
        f"blank_tokens(gap)), narezka.tokens.join_correction; Python {platform.python_version()}",
        "",
        "| tokenizer | min | max | pairs ≠ 0 | declared join_slack | within | seconds |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    ok = True
    for title, make in counters():
        try:
            counter = make()
        except Exception as exc:  # a tokenizer that is not installed: its row says why
            reason = str(exc).split(":")[0][:60]
            lines.append(f"| {title} | – | – | – | – | not available: {reason} | – |")
            continue
        started = time.perf_counter()
        values = Counter(join_correction(counter, a, g, b) for _, a, g, b in sample)
        seconds = time.perf_counter() - started
        lo, hi = min(values), max(values)
        declared = join_slack(counter)
        within = declared is not None and max(-lo, hi) <= declared
        ok = ok and (declared is None or within)
        nonzero = sum(n for v, n in values.items() if v)
        shown = "–" if declared is None else str(declared)
        lines.append(
            f"| {title} | {lo} | {hi} | {nonzero} | {shown} | "
            f"{'–' if declared is None else 'yes' if within else 'no'} | {seconds:.1f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
