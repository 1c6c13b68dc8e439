#!/usr/bin/env python3
"""Instructions one chunking pass costs, counted by valgrind: a comparison of two trees that
the load of a shared machine cannot move.

    python benchmarks/instructions.py --src /tmp/old/src --src src          # cl100k headings
    python benchmarks/instructions.py --src src --mode chars --mode cl100k --mode replayed

Wall and CPU times on this machine move by a third within minutes, for both trees alike, so
a 5% change in the code cannot be seen in them. valgrind's cachegrind counts the instructions
a process executes; the same run repeats them to about 0.2%. Each figure is one pass over the
corpus: the process run with two passes less the process run with one, so start-up, imports
and reading files cancel out. It counts instructions, not time: cache misses and the
tokenizer's memory traffic are not in it (bench_tokens.py times those). Needs valgrind on
PATH (Debian: ``apt-get install -y valgrind``); each figure takes about 40 s per MB of corpus.

Modes: ``chars`` (headings, 800 characters), ``cl100k`` (headings, 256 cl100k tokens),
``replayed`` (the cl100k run with every count read from a table: the tokens path's Python
alone) and ``bare`` (one tiktoken encode per document: the floor of exact sizing).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus/ru/fastapi"
MODES = ("chars", "cl100k", "replayed", "bare")


def run_passes(src: Path, mode: str, passes: int, corpus: Path) -> None:
    """The measured process: ``passes`` chunking passes over ``corpus`` with ``src``'s code."""
    sys.path.insert(0, str(src))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_tokens import Replayed, read_corpus
    from narezka.runs.chunking import chunk_raw
    from narezka.split import SplitParams, get_strategy
    from narezka.tokens import TokenCounter, get_counter

    docs = read_corpus(corpus)
    headings = get_strategy("headings")
    cl100k = get_counter("tokens", "cl100k_base")
    if mode == "bare":
        for _ in range(passes):
            for d in docs:
                cl100k.count(d.text)
        return
    counter: TokenCounter
    if mode == "chars":
        params, counter = SplitParams(size=800, unit="chars"), get_counter("chars")
    else:
        params = SplitParams(size=256, unit="tokens")
        counter = Replayed(cl100k) if mode == "replayed" else cl100k
    for d in docs:  # loads the tokenizer, fills the replay table: in both processes alike
        chunk_raw(d, headings, params, counter)
    for _ in range(passes):
        for d in docs:
            chunk_raw(d, headings, params, counter)


def instructions(src: Path, mode: str, passes: int, corpus: Path) -> int:
    """Instructions valgrind counted for the whole process of ``run_passes``."""
    cmd = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        str(Path(__file__).resolve()),
        "--run",
        str(src),
        mode,
        str(passes),
        str(corpus),
    ]
    # One hash seed for every process: string hashes order sets and the dicts built from
    # them, and that order moved a pass by up to 2.5% between runs of the same tree.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", type=Path, action="append", help="a src folder (repeatable)")
    ap.add_argument("--mode", choices=MODES, action="append", help="repeatable; default cl100k")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--run", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run:
        src, mode, passes, corpus = args.run
        run_passes(Path(src), mode, int(passes), Path(corpus))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not on PATH (Debian: apt-get install -y valgrind)", file=sys.stderr)
        return 2
    trees = args.src or [REPO_ROOT / "src"]
    modes = args.mode or ["cl100k"]
    print(f"instructions per pass over {args.corpus} (valgrind cachegrind, 2 passes less 1)\n")
    print("| tree | mode | M instructions |")
    print("|---|---|--:|")
    for mode in modes:
        for src in trees:
            one = instructions(src, mode, 1, args.corpus)
            two = instructions(src, mode, 2, args.corpus)
            print(f"| {src} | {mode} | {(two - one) / 1e6:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
