"""What the inspector page shows, as JSON-ready data: each document's exact text, its atoms
(code blocks, tables, HTML), and every run's chunks as spans of that text, with sizes against
the limit and per-run totals.

A chunk's ``embed_text`` is usually its breadcrumb line, a blank line and its span, and its url
the source and its anchor: the page rebuilds those from the document text, the section and
the anchor, which keeps a 10 MB corpus near 15 MB of page. A different prefix (a split table's
repeated header) is carried as ``p``; anything else (sanitized text, restored code fences) is
carried whole as ``x``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from narezka.convert.options import DEFAULT, ConvertOptions
from narezka.discover import iter_files, read_document
from narezka.errors import SourceError
from narezka.index import layout
from narezka.parse.markdown import parse_document
from narezka.runs import ChunkReport
from narezka.runs.chunking import include_for
from narezka.runs.stats import percentile
from narezka.split import get_strategy
from narezka.tokens import TokenCounter
from narezka.types import Chunk

HISTOGRAM_BINS = 20


@dataclass(frozen=True, slots=True)
class InspectRun:
    """One strategy's chunks of the corpus and the limit they were cut to."""

    label: str
    report: ChunkReport
    limit: int
    unit: str
    """``chars`` or ``tokens``: what ``Chunk.tokens`` and ``limit`` count."""
    tokenizer: str = "chars"
    strategy: str = ""
    """The strategy asked for (``auto`` picks one per file: those are in the report)."""


@dataclass(slots=True)
class SourceText:
    """A document's exact text and its atoms, as the splitters saw them."""

    text: str
    atoms: list[tuple[int, int, str]] = field(default_factory=list)
    body_start: int = 0


def index_convert_cache(paths: Sequence[str | Path]) -> Path | None:
    """The conversion cache of the index the ``paths`` lie in (``.narezka/converted.sqlite``
    in the nearest folder up from each that has one), when they all share it; else None.

    The inspector reads PDF, Word, HTML… files through it, so a file the index converted
    (a scan read by OCR, a 500-page PDF) is not converted again. Only a cache that is there is
    used: the inspector never creates files in an index folder; a conversion it misses is
    added the way a search's re-read adds one (``ConvertCache``: sqlite, safe beside a sync).
    """
    found: set[Path] = set()
    for path in paths:
        here = Path(path).resolve()
        for folder in [here, *here.parents] if here.is_dir() else here.parents:
            cache = folder / layout.STORE_DIRNAME / layout.CONVERT_CACHE_NAME
            if cache.is_file():
                found.add(cache)
                break
        else:
            return None
    return found.pop() if len(found) == 1 else None


def read_sources(
    paths: Sequence[str | Path],
    runs: Sequence[InspectRun],
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    *,
    convert_cache: Path | None = None,
    options: ConvertOptions = DEFAULT,
) -> dict[str, SourceText]:
    """Read again every file the runs chunked and map the atoms of the Markdown ones.

    The globs are the runs' own: their strategies' unless ``include`` names some. Converted
    files come from ``convert_cache`` when given (``index_convert_cache``), the others are
    converted under ``options`` (the runs' OCR and limits).
    """
    chosen: dict[str, str] = {}
    for run in runs:
        for source, name in run.report.strategies.items():
            chosen.setdefault(source, name)
    names = dict.fromkeys([*(r.strategy for r in runs if r.strategy), *chosen.values()])
    globs = tuple(dict.fromkeys(g for n in names for g in include_for(get_strategy(n), include)))
    markdown = {n for n in names if get_strategy(n).markdown}
    out: dict[str, SourceText] = {}
    for root, file in iter_files(paths, globs, exclude, errors=[]):
        try:
            raw, _ = read_document(root, file, convert_cache=convert_cache, options=options)
        except SourceError:
            continue  # the run already reported it as skipped
        if raw.source not in chosen or raw.source in out:
            continue
        if chosen[raw.source] not in markdown:
            out[raw.source] = SourceText(raw.text)
            continue
        doc, _ = parse_document(raw)
        atoms = [(b.start, b.end, b.kind.value) for b in doc.blocks if b.is_atom]
        out[raw.source] = SourceText(raw.text, atoms, doc.body_start)
    return out


def breadcrumb_prefix(section: Sequence[str]) -> str:
    """What most strategies put before the span in ``embed_text``: the heading path line and
    a blank line (nothing without a section)."""
    return " > ".join(section) + "\n\n" if section else ""


def _chunk_record(c: Chunk, display: int | None) -> dict[str, Any]:
    # The page rebuilds what is left out: the prefix from ``sec``, the url from the anchor.
    record: dict[str, Any] = {
        "i": c.index,
        "s": c.start,
        "e": c.end,
        "sec": list(c.section),
        "c": c.chars,
        "t": c.tokens,
    }
    if c.anchor and c.url == f"{c.source}#{c.anchor}":
        record["a"] = c.anchor
    else:
        record["u"] = c.url
    if display is not None:
        record["d"] = display
    if not c.embed_text.endswith(c.text):
        record["x"] = c.embed_text
    elif (prefix := c.embed_text[: len(c.embed_text) - len(c.text)]) != breadcrumb_prefix(
        c.section
    ):
        record["p"] = prefix
    return record


def _histogram(sizes: Sequence[int], limit: int) -> dict[str, Any]:
    width = max(1, -(-limit // HISTOGRAM_BINS))
    counts = [0] * (HISTOGRAM_BINS + 1)  # the last bin: over the limit
    for size in sizes:
        counts[HISTOGRAM_BINS if size > limit else min(size // width, HISTOGRAM_BINS - 1)] += 1
    return {"width": width, "counts": counts}


def _totals(run: InspectRun, display: Sequence[int] | None) -> dict[str, Any]:
    sizes = [c.tokens for c in run.report.chunks]
    totals: dict[str, Any] = {
        "files": run.report.files,
        "chunks": len(sizes),
        "p50": percentile(sizes, 0.5),
        "p95": percentile(sizes, 0.95),
        "max": max(sizes, default=0),
        "over": sum(1 for s in sizes if s > run.limit),
        "removed": run.report.removed_chars,
        "skipped": [f"{e.path}: {e.problem}" for e in run.report.skipped],
        "empty": list(run.report.empty_files),
        "warnings": len(run.report.warnings),
    }
    if display is not None:
        totals["display"] = {
            "p50": percentile(list(display), 0.5),
            "p95": percentile(list(display), 0.95),
            "max": max(display, default=0),
        }
    return totals


def inspection_data(
    runs: Sequence[InspectRun],
    sources: dict[str, SourceText],
    *,
    display: TokenCounter | None = None,
    title: str = "narezka inspect",
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The page's index (runs, totals, histograms, file list) and one record per document.

    ``display`` counts tokens for people when the runs measure characters (the limit stays
    in characters). A chunk whose text no longer matches the re-read file (it changed on
    disk meanwhile) is kept and the document is flagged ``stale``.
    """
    per_run = [_by_source(run.report.chunks) for run in runs]
    shown = [
        display.count_batch([c.embed_text for c in run.report.chunks]) if display else None
        for run in runs
    ]
    display_of = [
        {(c.source, c.index): n for c, n in zip(run.report.chunks, counts, strict=True)}
        if counts is not None
        else {}
        for run, counts in zip(runs, shown, strict=True)
    ]
    order = sorted(set().union(*per_run) & set(sources)) if per_run else []
    docs: list[dict[str, Any]] = []
    files: list[dict[str, Any]] = []
    for source in order:
        doc, file = _document(source, sources[source], per_run, display_of, runs)
        docs.append(doc)
        files.append(file)
    index = {
        "title": title,
        "runs": [
            {
                "label": run.label,
                "limit": run.limit,
                "unit": run.unit,
                "tokenizer": run.tokenizer,
                "display": display.name if display is not None else None,
                "totals": _totals(run, shown[n]),
                "histogram": _histogram([c.tokens for c in run.report.chunks], run.limit),
            }
            for n, run in enumerate(runs)
        ],
        "files": files,
    }
    return index, docs


def _by_source(chunks: Sequence[Chunk]) -> dict[str, list[Chunk]]:
    by_source: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_source.setdefault(c.source, []).append(c)
    return by_source


def _document(
    source: str,
    src: SourceText,
    per_run: Sequence[dict[str, list[Chunk]]],
    display_of: Sequence[dict[tuple[str, int], int]],
    runs: Sequence[InspectRun],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One document's record (its text and each run's chunks) and its row in the file list."""
    chunk_lists = []
    stale = False
    for n, by_source in enumerate(per_run):
        chunks = by_source.get(source, [])
        stale = stale or any(src.text[c.start : c.end] != c.text for c in chunks)
        chunk_lists.append(
            [_chunk_record(c, display_of[n].get((c.source, c.index))) for c in chunks]
        )
    doc = {
        "source": source,
        "text": src.text,
        "body": src.body_start,
        "atoms": [list(a) for a in src.atoms],
        "runs": chunk_lists,
        "stale": stale,
    }
    file = {
        "source": source,
        "chars": len(src.text),
        "chunks": [len(c) for c in chunk_lists],
        "over": [
            sum(1 for c in cs if c["t"] > run.limit)
            for cs, run in zip(chunk_lists, runs, strict=True)
        ],
    }
    return doc, file


__all__ = [
    "InspectRun",
    "SourceText",
    "breadcrumb_prefix",
    "index_convert_cache",
    "inspection_data",
    "read_sources",
]
