"""Answer a query from an index: dense, BM25 or hybrid search with filters, de-duplicated.

Archived pages are left out unless asked for (an old returns page must not answer for the
current one). Overlapping or adjacent chunks of one section collapse into the best-scoring
hit; ``expand="section"`` replaces a hit's text by its whole heading section, read from the
source file, and ``expand="parent"`` (for a ``parent-child`` index) by its parent's stored
text, one result per parent (small-to-big).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from narezka.discover import read_document
from narezka.embed import Embedder
from narezka.errors import ConfigError, NarezkaError
from narezka.globs import glob_regex
from narezka.parse.markdown import parse_document
from narezka.pipeline.indexing import default_store_dir, open_embedder, read_index_meta
from narezka.store import Eq, Filter, StoredHit, open_store
from narezka.store.base import Mode
from narezka.store.sparse import DEFAULT_ANALYZER, bm25_encoder
from narezka.types import BlockKind, RawDocument

MODES = ("dense", "bm25", "hybrid")
EXPANSIONS = (None, "section", "parent")
SNIPPET_CHARS = 240


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result."""

    score: float
    url: str
    file_path: str
    section: tuple[str, ...]
    text: str
    snippet: str
    chunk_index: int
    start: int
    end: int
    payload: dict[str, Any] = field(default_factory=dict)
    merged: tuple[int, ...] = ()
    """Indices of neighbouring chunks of the same section folded into this hit."""

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "url": self.url,
            "file_path": self.file_path,
            "section": list(self.section),
            "chunk_index": self.chunk_index,
            "start": self.start,
            "end": self.end,
            "snippet": self.snippet,
            "text": self.text,
            "merged": list(self.merged),
            "zone": self.payload.get("zone"),
            "project": self.payload.get("project"),
            "category": self.payload.get("category"),
            "archived": self.payload.get("archived"),
        }


def resolve_store(location: str | Path) -> Path:
    """An index directory, or a corpus folder holding one in ``.narezka/``."""
    path = Path(location)
    if (path / "index.json").is_file():
        return path
    if path.is_dir() and (default_store_dir(path) / "index.json").is_file():
        return default_store_dir(path)
    raise ConfigError(f"no narezka index at {path}: run `narezka index {path}` first")


def search(
    query: str,
    store: str | Path = ".",
    *,
    mode: str = "hybrid",
    k: int = 5,
    zone: str | None = None,
    project: str | None = None,
    category: str | None = None,
    path: str | None = None,
    include_archived: bool = False,
    expand: str | None = None,
    embedder: Embedder | None = None,
) -> list[Hit]:
    """The ``k`` best hits for ``query``; see the module docstring."""
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if expand not in EXPANSIONS:
        raise ConfigError(f"expand must be 'section' or 'parent', not {expand!r}")
    home = resolve_store(store)
    meta = read_index_meta(home)
    if expand == "parent" and meta.get("strategy") != "parent-child":
        raise ConfigError(
            f"--expand parent needs an index built with --strategy parent-child; {home} was "
            f"built with {meta.get('strategy')!r} (use --expand section, or re-index)"
        )
    must = [
        Eq(name, value)
        for name, value in (("zone", zone), ("project", project), ("category", category))
        if value
    ]
    must_not = [] if include_archived else [Eq("archived", True)]
    query_filter = Filter(tuple(must), tuple(must_not))
    dense = sparse = None
    if mode in ("dense", "hybrid"):
        spec = meta.get("embedder_spec")
        if embedder is None and not spec:
            raise ConfigError(
                f"the index was built with an embedder object ({meta['embedder']}): "
                "pass the same embedder to search"
            )
        model = embedder or open_embedder(str(spec), home)
        if model.name != meta["embedder"]:
            raise ConfigError(
                f"the index was built with {meta['embedder']}, not {model.name}: "
                "search with the same embedder or re-index with --rebuild"
            )
        dense = model.embed_queries([query])[0]
    if mode in ("bm25", "hybrid"):
        sparse = bm25_encoder(meta.get("bm25") or DEFAULT_ANALYZER).encode_query(query)
    # Fetch extra candidates: neighbours fold together and a path glob drops some.
    wanted = k * 4 + (20 if path else 0)
    backend = open_store(home if not meta.get("url") else None, url=meta.get("url"))
    try:
        backend.ensure(int(meta["dim"]), sparse=True)
        stored = backend.query(dense, sparse, filter=query_filter, k=wanted, mode=cast(Mode, mode))
    finally:
        backend.close()
    if path:
        pattern = glob_regex(path)
        stored = [h for h in stored if pattern.match(str(h.payload.get("file_path", "")))]
    # Equal scores must come in one order, or a re-run could fold a different chunk in.
    stored.sort(
        key=lambda h: (-h.score, str(h.payload.get("file_path", "")), h.payload.get("start", 0))
    )
    hits = [_hit(h, query) for h in stored]
    hits = to_parents(hits, query) if expand == "parent" else fold_neighbours(hits, k)
    hits = hits[:k]
    corpus = Path(meta["corpus"])
    if expand == "section":
        # The section holds the folded neighbours too: one read of the file serves both.
        hits = [_expand(h, corpus, query) for h in hits]
    elif expand is None:
        hits = [_merged_text(h, corpus, query) if h.merged else h for h in hits]
    return hits


def _hit(stored: StoredHit, query: str) -> Hit:
    p = dict(stored.payload)
    text = str(p.get("text", ""))
    return Hit(
        score=stored.score,
        url=str(p.get("url", "")),
        file_path=str(p.get("file_path", "")),
        section=tuple(p.get("section_path") or ()),
        text=text,
        snippet=snippet(text, query),
        chunk_index=int(p.get("chunk_index", 0)),
        start=int(p.get("start", 0)),
        end=int(p.get("end", 0)),
        payload=p,
    )


def fold_neighbours(hits: Sequence[Hit], limit: int | None = None) -> list[Hit]:
    """Fold overlapping or adjacent chunks of one section into the best of them (hits come
    best first): its span grows to cover them all, so the neighbour that holds the rest of an
    answer is returned with it instead of dropped. :func:`search` then reads the grown span's
    text from the source file.

    With ``limit``, folding stops at the first hit that would be result ``limit + 1``: a
    neighbour ranked below everything that is returned stays out, so a result grows only by
    chunks that earned their rank."""
    kept: list[Hit] = []
    for hit in hits:
        for i, best in enumerate(kept):
            same_section = best.file_path == hit.file_path and best.section == hit.section
            near = {best.chunk_index, *best.merged}
            if same_section and any(abs(hit.chunk_index - n) <= 1 for n in near):
                kept[i] = dataclasses.replace(
                    _replace_merged(best, (*best.merged, hit.chunk_index)),
                    start=min(best.start, hit.start),
                    end=max(best.end, hit.end),
                )
                break
        else:
            if limit is not None and len(kept) >= limit:
                break
            kept.append(hit)
    return kept


def to_parents(hits: Sequence[Hit], query: str) -> list[Hit]:
    """Each hit replaced by its parent span and text; children of one parent fold into the
    best of them (hits come best first), so k results are k different parents."""
    best: dict[tuple[str, int], Hit] = {}
    for hit in hits:
        p = hit.payload
        if "parent_text" not in p:
            # Not a parent-child point: it stands for itself (negative keys never clash).
            best.setdefault((hit.file_path, -1 - hit.chunk_index), hit)
            continue
        key = (hit.file_path, int(p["parent_index"]))
        if key in best:
            best[key] = _replace_merged(best[key], (*best[key].merged, hit.chunk_index))
            continue
        text = str(p["parent_text"])
        best[key] = dataclasses.replace(
            hit,
            text=text,
            snippet=snippet(text, query),
            start=int(p["parent_start"]),
            end=int(p["parent_end"]),
            section=tuple(p.get("parent_section") or hit.section),
        )
    return list(best.values())


def _replace_merged(hit: Hit, merged: tuple[int, ...]) -> Hit:
    return dataclasses.replace(hit, merged=tuple(sorted(set(merged))))


_WORD = re.compile(r"\w+", re.U)


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first query word it contains (by a 5-letter stem)."""
    stems = {w.lower()[:5] for w in _WORD.findall(query) if len(w) > 2}
    lowered = text.lower()
    first = min((i for s in stems if (i := lowered.find(s)) >= 0), default=0)
    begin = max(0, first - width // 3)
    piece = text[begin : begin + width].replace("\n", " ")
    return ("…" if begin else "") + piece + ("…" if begin + width < len(text) else "")


def _merged_text(hit: Hit, corpus: Path, query: str) -> Hit:
    """The text of a folded hit's whole span, read from its file; if the file changed since
    it was indexed, the hit shrinks back to its best chunk."""
    p = hit.payload
    own = (int(p.get("start", 0)), int(p.get("end", 0)))
    raw = _read_source(corpus, hit.file_path)
    if raw is None or raw.text[own[0] : own[1]] != p.get("text"):
        return dataclasses.replace(hit, start=own[0], end=own[1])
    text = raw.text[hit.start : hit.end]
    return dataclasses.replace(hit, text=text, snippet=snippet(text, query))


def _read_source(corpus: Path, file_path: str) -> RawDocument | None:
    """The indexed file as the index read it (decoded, LF newlines), or None if it is gone
    or unreadable now."""
    root = corpus if corpus.is_dir() else corpus.parent
    try:
        return read_document(root, root / file_path)[0]
    except (OSError, NarezkaError):
        return None


def _expand(hit: Hit, corpus: Path, query: str) -> Hit:
    """Replace the hit's text by its whole heading section from the source file."""
    raw = _read_source(corpus, hit.file_path)
    if raw is None:
        return hit
    doc, _ = parse_document(raw)
    level = len(hit.section)
    start, end = doc.body_start, len(doc.text)
    for block in doc.blocks:
        if block.kind is not BlockKind.HEADING:
            continue
        if block.start <= hit.start and block.level <= max(level, 1):
            start = block.start
        elif block.start > hit.start and block.level <= max(level, 1):
            end = block.start
            break
    text = doc.text[start:end].strip()
    return dataclasses.replace(
        hit, text=text, snippet=snippet(text, query), start=start, end=start + len(text)
    )
