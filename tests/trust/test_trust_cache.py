"""Trust audit, row 2 (#38): no plaintext secret under ``.narezka/``, in any format.

A secret is planted in every place each converted format offers (a Word heading, an HTML
``h2`` and ``id``, a slide title and its notes, a PDF running footer, an Excel sheet name,
an EPUB title…); the corpus is indexed with the real command line, then every file under the
index folder is read as bytes, recursively (sqlite logs, the engine's log and segments
included), the way ``grep -a`` would: no secret may be there, before or after ``cache
clear``, ``--rebuild``, ``compact``, or deleting the files and syncing. Every field a search
serves is checked too. Each file also carries a plain "canary" phrase: once the file is
deleted and synced, its converted text must be gone from the conversion cache (and, after
``compact``, from everything).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from click.testing import CliRunner
from planted_formats import CANARIES, FILES, PLANTED, found, on_disk, write_corpus

from narezka.cli import cli

# --- the real command line ----------------------------------------------------------------


def run(*args: str, ok: Iterable[int] = (0,)) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code in ok, result.output
    return result.stdout


def index(corpus: Path, *extra: str) -> dict[str, object]:
    out = run("index", str(corpus), "--embedder", "hash:64", "--json", *extra)
    summary: dict[str, object] = json.loads(out)
    return summary


QUERIES = ("Token rotation", "Keys", "key", "Deploy", "Chapter", "Confidential", "Service chat")


def served(corpus: Path) -> list[dict[str, object]]:
    """Every hit of a few searches, every field, as ``search --format json`` prints it."""
    args = ("--store", str(corpus), "--format", "json", "-k", "50", "--min-relevance", "0")
    hits: list[dict[str, object]] = []
    for query in QUERIES:
        for mode in ("bm25", "hybrid"):
            out = run("search", query, *args, "--mode", mode, ok=(0, 1))
            hits += json.loads(out) if out.strip() else []
    return hits


def conversions(home: Path) -> int:
    """Rows of the conversion cache, in any table (0 when it is gone)."""
    path = home / "converted.sqlite"
    if not path.exists():
        return 0
    db = sqlite3.connect(path)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return sum(int(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in tables)
    finally:
        db.close()


def converted_files(home: Path) -> dict[str, bytes]:
    """The conversion cache's file and its sqlite side files, as bytes."""
    return {p.name: p.read_bytes() for p in home.glob("converted.sqlite*") if p.is_file()}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = write_corpus(tmp_path / "kb")
    summary = index(folder)
    assert summary["files_new"] == len(FILES) + 1, summary
    assert not summary["skipped"], summary["skipped"]
    return folder


def test_every_format_planted_its_secrets_where_conversion_keeps_them(tmp_path: Path) -> None:
    """The probes can fail: converted without redaction, each file's text, provenance or
    meta holds every secret planted in it (but those in places no converter reads)."""
    from narezka.convert import convert

    folder = write_corpus(tmp_path / "kb")
    texts = ""
    for name in FILES:
        if not name.endswith(".md"):
            converted = convert((folder / name).read_bytes(), Path(name).suffix, name)
            texts += converted.markdown + json.dumps(converted.meta) + repr(converted.provenance)
    converted_ones = {k: v for k, v in PLANTED.items() if not k.startswith("md:")}
    missing = set(converted_ones) - set(found(texts.encode(), converted_ones))
    # A page's <title> and the Word file's core title are read by no converter: planted all
    # the same, should one start to read them.
    assert missing == {"html: title", "docx: core title"}


def _clear(corpus: Path) -> None:
    run("cache", "clear", "--store", str(corpus))


def _rebuild(corpus: Path) -> None:
    index(corpus, "--rebuild")


def _compact(corpus: Path) -> None:
    run("compact", str(corpus))


def _delete(corpus: Path) -> None:
    for name in FILES:
        (corpus / name).unlink()
    assert index(corpus)["files_deleted"] == len(FILES)


ACTIONS: dict[str, Callable[[Path], None]] = {
    "nothing more": lambda corpus: None,
    "cache clear": _clear,
    "index --rebuild": _rebuild,
    "compact": _compact,
    "the files deleted and synced": _delete,
}


@pytest.mark.parametrize("action", ACTIONS)
def test_no_secret_in_any_file_under_the_index_folder(corpus: Path, action: str) -> None:
    home = corpus / ".narezka"
    assert conversions(home) >= len(FILES) - 1  # the converted files are cached
    ACTIONS[action](corpus)
    assert on_disk(home, PLANTED) == [], f"after {action}"
    if action == "cache clear":
        assert conversions(home) == 0
    elif action == "index --rebuild":
        assert conversions(home) >= len(FILES) - 1  # converted again, as redacted


def test_a_deleted_file_leaves_no_text_in_the_conversion_cache(corpus: Path) -> None:
    home = corpus / ".narezka"
    _delete(corpus)
    # Their converted text went with them, and left no byte in a free page or the log.
    assert conversions(home) == 0
    assert not [k for k, v in converted_files(home).items() if found(v, CANARIES)]
    run("compact", str(corpus))
    assert on_disk(home, CANARIES) == [], "after compact: no text of a deleted file anywhere"


def test_no_secret_in_any_served_field(corpus: Path) -> None:
    hits = served(corpus)
    sources = {h["file_path"] for h in hits}
    assert sources >= set(FILES), sources  # every converted file was served
    assert {k for h in hits for k, v in h.items() if v is not None} >= {"sheet", "element"}
    shown = json.dumps(hits, ensure_ascii=False)
    assert found(shown.encode(), PLANTED) == []


def test_a_changed_file_leaves_no_conversion_of_its_old_text(corpus: Path) -> None:
    home = corpus / ".narezka"
    before = conversions(home)
    (corpus / "table.csv").write_text("service,key\nchat,none\n", encoding="utf-8")
    assert index(corpus)["files_changed"] == 1
    assert conversions(home) == before  # the old conversion went, the new one came
    assert not found(b"".join(converted_files(home).values()), {"csv": CANARIES["table.csv"]})


def test_chunking_a_converted_file_shows_no_secret_in_any_field(tmp_path: Path) -> None:
    """``narezka chunk`` over the files themselves (no index, no cache): the canonical text
    is redacted as it is converted, so even the exact-span ``text`` holds markers."""
    folder = write_corpus(tmp_path / "kb")
    for name in FILES:
        if name.endswith(".md"):
            continue
        out = run("chunk", str(folder / name), "--format", "jsonl")
        chunks = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert chunks, name
        assert found(out.encode(), PLANTED) == [], name


def test_the_server_serves_no_secret_of_a_converted_file(corpus: Path) -> None:
    """What HTTP and MCP serve (one ``Service`` behind both): every hit with its context,
    each chunk, and each file's whole text (``/sources``, MCP ``read_source``)."""
    from narezka.serve.service import Service

    with Service(corpus, watch=False) as service:
        hits = []
        for query in QUERIES:
            hits += service.search(query, k=50, min_relevance=0)["hits"]
        shown = [json.dumps(hits, ensure_ascii=False)]
        for hit in hits:
            shown.append(json.dumps(service.get_context(hit["chunk_id"]), ensure_ascii=False))
        shown += [service.source_text(name) for name in FILES]
    assert {h["file_path"] for h in hits} >= set(FILES)
    assert found("".join(shown).encode(), PLANTED) == []


def test_cache_stats_counts_conversions_and_clear_conversions_keeps_vectors(
    corpus: Path,
) -> None:
    stats = json.loads(run("cache", "stats", "--store", str(corpus)))
    assert stats["conversions"]["entries"] == len(FILES) - 1 and stats["entries"] > 0
    out = run("cache", "clear", "--store", str(corpus), "--conversions")
    assert out.strip() == f"removed {len(FILES) - 1} conversions"
    stats = json.loads(run("cache", "stats", "--store", str(corpus)))
    assert stats["conversions"]["entries"] == 0 and stats["entries"] > 0
    assert run("cache", "clear", "--store", str(corpus)).startswith(
        f"removed {stats['entries']} vectors"
    )
