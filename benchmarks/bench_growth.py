#!/usr/bin/env python3
"""How indexing costs grow with the corpus: first index, no-change sync, one-edit sync, peak
memory, manifest and store size at 1k, 10k, 100k (and, asked for, 1M) generated files, with
the growth exponent fitted between neighbouring sizes (1.0 = linear).

    python benchmarks/bench_growth.py                         # 1k, 10k
    python benchmarks/bench_growth.py --sizes 1000,10000,100000 \
        --out benchmarks/results/bench_growth.md

Corpora come from ``tests/corpus_gen.py`` (deterministic; Russian and English, nested
folders, headings, code, tables, lists; sizes skewed small like md_corpus's) and are written
once under ``--work`` (default: the system temp folder), outside the repository. The ``hash``
embedder keeps the embedding cost out of the figures: what is measured is discovery, hashing,
chunking, the manifest and the store. Every step runs the console script in a fresh process
under GNU time: wall seconds, and the peak RSS of its largest process.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from corpus_gen import write_corpus  # noqa: E402


@dataclass
class Step:
    seconds: float
    peak_mb: float
    cpu: float
    """User + system CPU seconds of the process and its workers: what the step costs, which
    on a shared machine the wall clock only shows behind the waiting for a core."""
    load: float
    """The 1-minute load average as the step ended: the machine is shared, and a figure
    taken at load 10 on 2 cores is not one taken at load 1."""


@dataclass
class Size:
    files: int
    corpus_mb: float
    first: Step
    unchanged: Step
    one_edit: Step
    manifest_mb: float
    index_mb: float


def timed(*args: str) -> Step:
    """Run ``narezka ARGS`` under GNU time: (wall seconds, peak RSS in MB)."""
    command = ["/usr/bin/time", "-f", "%e %M %U %S", sys.executable, "-m", "narezka", *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"narezka {' '.join(args)} failed: {done.stderr[-2000:]}")
    pattern = r"^([\d.]+) (\d+) ([\d.]+) ([\d.]+)$"
    seconds, kilobytes, user, system = re.findall(pattern, done.stderr, re.MULTILINE)[-1]
    cpu = float(user) + float(system)
    return Step(float(seconds), int(kilobytes) / 1024, cpu, os.getloadavg()[0])


def folder_mb(folder: Path, pattern: str = "*", *, on_disk: bool = False) -> float:
    """MB of the files under ``folder``: their sizes, or the blocks they take on disk (the
    engine's files are sparse: their sizes run far ahead of what they hold)."""
    files = [p.stat() for p in folder.rglob(pattern) if p.is_file()]
    return sum(s.st_blocks * 512 if on_disk else s.st_size for s in files) / 2**20


def measure(files: int, work: Path) -> Size:
    corpus = work / f"corpus-{files}"
    if not (corpus / ".complete").is_file():
        shutil.rmtree(corpus, ignore_errors=True)
        write_corpus(corpus, files // 2)
        (corpus / ".complete").write_text("", encoding="utf-8")
    shutil.rmtree(corpus / ".narezka", ignore_errors=True)
    corpus_mb = folder_mb(corpus, "*.md")
    first = timed("index", str(corpus), "--embedder", "hash")
    unchanged = timed("sync", str(corpus))
    edited = sorted((corpus / "en").rglob("*.md"))[len(list((corpus / "en").rglob("*.md"))) // 2]
    original = edited.read_text(encoding="utf-8")
    edited.write_text(original + "\nOne more line at the end.\n", encoding="utf-8")
    try:
        one_edit = timed("sync", str(corpus))
    finally:
        edited.write_text(original, encoding="utf-8")
    home = corpus / ".narezka"
    return Size(
        files,
        corpus_mb,
        first,
        unchanged,
        one_edit,
        folder_mb(home, "manifest*", on_disk=True),
        folder_mb(home, on_disk=True),
    )


def exponent(a: float, b: float, na: int, nb: int) -> str:
    if a <= 0 or b <= 0:
        return "—"
    return f"{math.log(b / a) / math.log(nb / na):.2f}"


def _step(step: Step) -> str:
    return f"{step.seconds:.2f} ({step.cpu:.2f}, {step.load:.1f})"


def table(rows: list[Size]) -> str:
    out = [
        "| files | corpus MB | first index s (CPU s, load) | peak MB "
        "| no-change sync s (CPU s, load) | peak MB | one-edit sync s (CPU s, load) "
        "| manifest MB on disk | .narezka MB on disk |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        out.append(
            f"| {r.files:,} | {r.corpus_mb:.1f} | {_step(r.first)} | {r.first.peak_mb:.0f} "
            f"| {_step(r.unchanged)} | {r.unchanged.peak_mb:.0f} | {_step(r.one_edit)} "
            f"| {r.manifest_mb:.1f} | {r.index_mb:.1f} |"
        )
    if len(rows) > 1:
        out += ["", "Growth exponents between neighbouring sizes (1.00 = linear):", ""]
        out += ["CPU seconds (user + system) are fitted, not wall seconds: on a shared machine the"]
        out += ["wall clock mostly measures the wait for a core.", ""]
        out += ["| from → to | first index | no-change sync | one-edit sync | peak RSS |"]
        out += ["|---|--:|--:|--:|--:|"]
        for a, b in itertools.pairwise(rows):
            cells = [
                exponent(a.first.cpu, b.first.cpu, a.files, b.files),
                exponent(a.unchanged.cpu, b.unchanged.cpu, a.files, b.files),
                exponent(a.one_edit.cpu, b.one_edit.cpu, a.files, b.files),
                exponent(a.first.peak_mb, b.first.peak_mb, a.files, b.files),
            ]
            out.append(f"| {a.files:,} → {b.files:,} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="Comma-separated file counts.")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "growth")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for files in (int(n) for n in args.sizes.split(",")):
        rows.append(measure(files, args.work))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    text = table(rows)
    print(text)
    if args.out is not None:
        head = (
            f"# Growth with the corpus\n\n`python benchmarks/bench_growth.py --sizes {args.sizes}`"
        )
        cores = os.cpu_count()
        args.out.write_text(f"{head}, {cores} cores, hash embedder\n\n{text}\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
