#!/usr/bin/env python3
"""Pathological inputs: is every strategy linear on a huge line, a huge table, a huge code block?

    python benchmarks/bench_pathological.py                  # full sizes (the 4x column)
    python benchmarks/bench_pathological.py --scale 0.1 --out /tmp/p.md

Three generated documents, each at 1x and 4x of a base size (4x is the issue's size: a 5 MB
single line, a 50,000-row table, a 20,000-line fenced code block). Every strategy splits each
in characters (800) and in USE tokens (384, the default index budget), in this one process;
the table shows seconds at 1x and 4x and their ratio over 4 (1.0 = linear; a quadratic
strategy shows ~4). A run past --timeout seconds is stopped and shown as such. ``semantic``
gets the deterministic hash embedder so only its splitting is timed.
"""

from __future__ import annotations

import argparse
import platform
import random
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from narezka.embed.base import HashEmbedder
from narezka.embed.local import UseEmbedder
from narezka.runs.chunking import chunk_raw
from narezka.split import SplitParams, get_strategy
from narezka.tokens import TokenCounter, get_counter
from narezka.types import RawDocument

STRATEGIES = [
    "fixed",
    "overlap",
    "recursive",
    "sentences",
    "headings",
    "semantic",
    "parent-child",
    "faq",
    "legal",
    "code",
    "chat",
    "auto",
]
WORDS = (
    "доставка заказа курьером занимает от одного до трёх дней в зависимости от региона "
    "the order ships within two days and the tracking number arrives by email once it leaves "
    "config.yaml retries=3 timeout_ms=2500 user_id 0x7f3a9c"
).split()


def one_line(nbytes: int) -> str:
    """Words and punctuation on a single line, with no newline at all."""
    rng = random.Random(1)
    out: list[str] = []
    size = 0
    while size < nbytes:
        word = rng.choice(WORDS) + ("." if rng.random() < 0.08 else "")
        out.append(word)
        size += len(word.encode("utf-8")) + 1
    return "# Журнал\n\n" + " ".join(out)


def table(rows: int) -> str:
    lines = ["# Тарифы", "", "| зона | вес, кг | цена, ₽ | срок |", "|---|---:|---:|---|"]
    lines += [
        f"| Зона {i % 9} | {i % 30 + 1} | {100 + i % 977} | {i % 5 + 1} дн. |" for i in range(rows)
    ]
    return "\n".join(lines) + "\n"


def code_block(lines: int) -> str:
    body = [
        f"    value_{i} = compute(value_{i - 1}, step={i % 7})  # шаг {i}" for i in range(lines)
    ]
    return "# Скрипт\n\n```python\ndef run():\n" + "\n".join(body) + "\n```\n"


INPUTS: dict[str, tuple[str, Callable[[float], str]]] = {
    "single line": ("5 MB", lambda k: one_line(int(5_000_000 * k))),
    "table": ("50k rows", lambda k: table(int(50_000 * k))),
    "code block": ("20k lines", lambda k: code_block(int(20_000 * k))),
}


class TimedOut(Exception):
    """A run took longer than --timeout."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise TimedOut


def timed(
    strategy: str, text: str, params: SplitParams, counter: TokenCounter, limit: int
) -> float:
    raw = RawDocument(source="big.md", text=text)
    chosen = (
        get_strategy(strategy, embed=HashEmbedder().embed)
        if strategy == "semantic"
        else (get_strategy(strategy))
    )
    signal.alarm(limit)
    start = time.perf_counter()
    try:
        chunk_raw(raw, chosen, params, counter)
    finally:
        signal.alarm(0)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every input size")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--units", default="chars,tokens")
    ap.add_argument("--inputs", default=",".join(INPUTS), help="comma-separated input names")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)

    use = UseEmbedder().counter
    units = {
        "chars": (SplitParams(size=800, unit="chars"), get_counter("chars")),
        "tokens": (SplitParams(size=384, unit="tokens"), use),
    }
    lines = [
        "# narezka on pathological inputs",
        "",
        f"- 4x sizes: {', '.join(f'{n}: {label}' for n, (label, _) in INPUTS.items())}"
        f" (× {args.scale}); 1x is a quarter of each",
        f"- chars: 800; tokens: 384 USE SentencePiece; Python {platform.python_version()}, "
        "one run each, the machine shared with other jobs",
        "- linearity = (seconds at 4x / seconds at 1x) / 4: 1.0 is linear, ~4 quadratic",
        "",
        "| input | strategy | unit | 1x s | 4x s | 4x MB/s | linearity |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for name in args.inputs.split(","):
        make = INPUTS[name][1]
        small, big = make(args.scale / 4), make(args.scale)
        mb = len(big.encode("utf-8")) / 1e6
        for strategy in args.strategies.split(","):
            for unit in args.units.split(","):
                params, counter = units[unit]
                try:
                    t1 = timed(strategy, small, params, counter, args.timeout)
                    t4 = timed(strategy, big, params, counter, args.timeout)
                    row = f"{t1:.2f} | {t4:.2f} | {mb / t4:.2f} | {t4 / t1 / 4:.2f}"
                except TimedOut:
                    row = f"> {args.timeout} s | – | – | –"
                except Exception as exc:  # a strategy that refuses this input: say why
                    row = f"{type(exc).__name__}: {str(exc)[:60]} | – | – | –"
                line = f"| {name} | {strategy} | {unit} | {row} |"
                print(line, flush=True)
                lines.append(line)
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
