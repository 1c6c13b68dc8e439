"""Turning redaction on leaves no plaintext on disk: the index moves to a fresh generation,
the old one goes, and the caches keep no entry of an old text (issue 23, item 3)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fake_llm import LLMState, fake_llm
from narezka import Index, Settings
from narezka.cli import cli
from narezka.embed import EmbeddingCache, HashEmbedder
from narezka.embed.cache import cache_key
from narezka.embed.remote import RetryPolicy
from narezka.enrich import llm_client
from narezka.enrich.context_cache import ContextCache
from narezka.index import layout
from narezka.runs import chunk_documents
from narezka.split import SplitParams
from narezka.store.lock import DirectoryLock

from conftest import TEST_DATA

PLANTED: list[dict[str, str]] = json.loads((TEST_DATA / "secrets" / "planted.json").read_text())
TOKEN = "ghp_Zx81Qw7eRt5yUi3oPa1sDf9gHj2kLz4xCv6b"
HEADING_NOTE = (
    f"---\ntitle: Keys {TOKEN}\n---\n\n# Token {TOKEN} rotation\n\n"
    f"Rotate {TOKEN} every month, and the team is told.\n"
)
SIZES = ("--size", "300", "--unit", "chars")


def secrets() -> list[str]:
    return [p["value"] for p in PLANTED if p["file"].endswith(".md")] + [TOKEN]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    corpus = tmp_path / "notes"
    corpus.mkdir()
    for file in (TEST_DATA / "secrets").glob("*.md"):
        shutil.copy(file, corpus / file.name)
    (corpus / "heading.md").write_text(HEADING_NOTE, encoding="utf-8")
    (corpus / "plain.md").write_text("# Tea\n\nA note about tea, nothing secret.\n", "utf-8")
    return corpus


def on_disk(home: Path, values: list[str]) -> list[str]:
    """``file: secret`` for every secret whose bytes some file under ``home`` holds."""
    found = []
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path.relative_to(home)}: {v[:20]}" for v in values if v.encode() in data]
    return found


def index(corpus: Path, *extra: str) -> dict[str, object]:
    args = ["index", str(corpus), "--embedder", "hash:64", *SIZES, "--json", *extra]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    summary: dict[str, object] = json.loads(result.stdout)
    return summary


@pytest.mark.parametrize("rebuild", [(), ("--rebuild",)])
def test_redaction_turned_on_leaves_no_plaintext_under_the_index(
    notes: Path, rebuild: tuple[str, ...]
) -> None:
    home = notes / ".narezka"
    index(notes, "--no-redact")
    assert on_disk(home, secrets())  # the engine's log and pages hold them: the test can fail
    assert layout.read_meta(home)["data"] == "data-1"

    summary = index(notes, *rebuild)

    assert on_disk(home, secrets()) == []
    assert layout.read_meta(home)["data"] == "data-2"
    assert not (home / "data-1").exists()
    warnings = summary["warnings"]
    assert isinstance(warnings, list)
    assert any("redaction is stricter" in w and "removed data-1" in w for w in warnings)
    with Index.open(notes) as ix:
        shown = json.dumps([h.to_json() for h in ix.chunks()], ensure_ascii=False)
    assert "[REDACTED:" in shown and not any(v in shown for v in secrets())
    # Nothing more to do: the next run is an ordinary sync in the same generation.
    again = index(notes)
    assert again["files_unchanged"] == 7 and layout.read_meta(home)["data"] == "data-2"


def test_an_old_generation_still_read_elsewhere_goes_on_a_later_run(notes: Path) -> None:
    home = notes / ".narezka"
    index(notes, "--no-redact")
    reader = DirectoryLock(home / "data-1")  # as a search in another process holds it
    try:
        summary = index(notes)
    finally:
        reader.release()
    warnings = summary["warnings"]
    assert isinstance(warnings, list)
    assert any("data-1 (in use: a later run)" in w for w in warnings)
    assert layout.read_meta(home)["retired"] == ["data-1"]
    index(notes)  # the next run finishes the job
    assert not (home / "data-1").exists() and on_disk(home, secrets()) == []


def test_a_sync_of_one_file_that_turns_redaction_on_rebuilds_them_all(notes: Path) -> None:
    index(notes, "--no-redact")
    settings = Settings(embedder="hash:64", size=300, unit="chars")
    with Index.create(notes, settings) as ix:
        report = ix.sync(paths=[notes / "plain.md"])  # a watcher's event
        count = sum(1 for _ in ix.chunks())
    assert report.files_new == 7 and count == report.chunks_embedded
    assert on_disk(notes / ".narezka", secrets()) == []


def test_the_embedding_cache_forgets_old_texts_and_keeps_the_rest(notes: Path) -> None:
    home = notes / ".narezka"
    index(notes, "--no-redact")
    model = HashEmbedder(64)

    def keys(redact: bool) -> dict[bytes, bool]:
        """The cache key of every chunk's embed_text, and whether it holds a secret."""
        report = chunk_documents([notes], "headings", size=300, unit="chars", redact=redact)
        return {
            cache_key(model.name, model.max_tokens, True, "passage", c.embed_text): bool(
                c.secrets or c.source == "heading.md"
            )
            for c in report.chunks
        }

    old = keys(redact=False)
    with EmbeddingCache(home / layout.CACHE_NAME) as cache:
        assert set(cache.get_many(list(old))) == set(old)  # every old text is cached
    index(notes)
    new = keys(redact=True)
    with EmbeddingCache(home / layout.CACHE_NAME) as cache:
        left = set(cache.get_many(list(old)))
        assert not left & {k for k, secret in old.items() if secret}
        # What the new generation still embeds stays (a text without a secret, in a file
        # chunked as before); an old text it no longer has goes.
        assert left == set(old) & set(new) != set()
        assert set(cache.get_many(list(new))) == set(new)


FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02, timeout=2.0)


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(llm_client, "DEFAULT_RETRY", FAST)
    with fake_llm(LLMState()) as base:
        yield f"ollama:ctx-model@{base}"


def test_llm_contexts_written_from_plaintext_go_too(notes: Path, llm: str) -> None:
    # The fake LLM quotes the document's first heading and the passage's first words.
    def settings(redact: bool | None) -> Settings:
        return Settings(embedder="hash", context_llm=llm, size=300, unit="chars", redact=redact)

    home = notes / ".narezka"
    with Index.create(notes, settings(False)) as ix:
        ix.sync()
    with ContextCache(home / layout.CONTEXT_CACHE_NAME) as cache:
        assert cache.count() > 0
    assert any(hit.startswith(layout.CONTEXT_CACHE_NAME) for hit in on_disk(home, [TOKEN]))

    with Index.create(notes, settings(None)) as ix:
        report = ix.sync()

    assert report.context["chunks"] > 0
    assert on_disk(home, secrets()) == []


def test_a_cache_keeps_no_byte_of_the_rows_it_drops(tmp_path: Path) -> None:
    with ContextCache(tmp_path / "contexts.sqlite") as cache:
        for k in range(50):
            cache.put(bytes([k]) * 32, "m", f"context {k} quoting {TOKEN}", None)
        cache.put(b"\xff" * 32, "m", "a context to keep", None)
        assert cache.retain([b"\xff" * 32]) == 50
        assert cache.count() == 1
    assert on_disk(tmp_path, [TOKEN]) == []
    assert on_disk(tmp_path, ["a context to keep"])


def _fingerprint(redact: bool, rules: int | None = None) -> str:
    fingerprint = SplitParams(size=300, redact=redact).fingerprint("headings")
    if rules is None:
        return fingerprint
    fields = json.loads(fingerprint.partition(":")[2])
    return "headings:" + json.dumps({**fields, "redact": rules})


@pytest.mark.parametrize(
    ("old", "new", "removes"),
    [
        (_fingerprint(False), _fingerprint(True), True),  # redaction turned on
        (_fingerprint(True, rules=0), _fingerprint(True), True),  # a rule set that finds more
        ("", _fingerprint(True), True),  # a record that does not say: assume the worst
        (_fingerprint(True), _fingerprint(True), False),
        (_fingerprint(True), _fingerprint(False), False),  # turned off: nothing to take out
        (_fingerprint(False), _fingerprint(False), False),
    ],
)
def test_which_changes_take_text_out(old: str, new: str, removes: bool) -> None:
    from narezka.index.records import IndexRecord, removes_text  # here: older trees lack them

    record = IndexRecord.from_json({"version": 2, "dim": 64, "fingerprint": old}, "index.json")
    assert removes_text(record, new) is removes


def test_converted_files_leave_no_plaintext_when_redaction_is_turned_on(tmp_path: Path) -> None:
    """The conversion cache keeps plaintext only while the index does (``--no-redact``):
    turned on, the conversions of the old texts go with the old generation."""
    import openpyxl

    corpus = tmp_path / "sheets"
    corpus.mkdir()
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "AKIAQWERTYUIOPASDFGH"
    sheet.append(["git", TOKEN])
    book.save(corpus / "keys.xlsx")
    home = corpus / ".narezka"
    planted = ["AKIAQWERTYUIOPASDFGH", TOKEN]
    index(corpus, "--no-redact")
    assert any(hit.startswith(layout.CONVERT_CACHE_NAME) for hit in on_disk(home, planted))

    index(corpus)

    assert on_disk(home, planted) == []
    with Index.open(corpus) as ix:
        hits = [h.to_json() for h in ix.search("git", k=5, mode="bm25")]
    assert hits and hits[0]["sheet"] == "[REDACTED:aws-access-key-id]"


def test_a_no_redact_index_reads_its_converted_files_back_in_plain(tmp_path: Path) -> None:
    """Built with --no-redact, an index holds a converted file's plaintext, and re-reading
    the file (section expansion, /sources) sees that same text: not stale, not redacted."""
    import openpyxl

    from narezka.serve.service import Service

    corpus = tmp_path / "sheets"
    corpus.mkdir()
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["git", TOKEN])
    book.save(corpus / "keys.xlsx")
    index(corpus, "--no-redact")
    with Index.open(corpus) as ix:
        hits = ix.search("git", k=1, mode="bm25", expand="section")
    assert hits and not hits[0].stale and TOKEN in hits[0].text
    with Service(corpus, watch=False) as service:
        assert TOKEN in service.source_text("keys.xlsx")
