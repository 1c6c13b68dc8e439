"""Conversions are cached by the source's bytes and the converter version."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import narezka.convert
from narezka.convert import Converted
from narezka.convert.cache import ConvertCache, cache_key, redacted, text_hash
from narezka.parse.redaction import count_kinds, find_secrets, redact_span
from narezka.types import ProvenanceSpan, SourceLocation

import convert_samples as samples


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = narezka.convert.convert

    def spy(data: bytes, suffix: str, path: str = "", **kw: object) -> Converted:
        calls.append(path)
        return real(data, suffix, path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("narezka.convert.cache.convert", spy)
    return calls


def test_unchanged_bytes_are_converted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    data = samples.make_pptx()
    with ConvertCache(tmp_path / "convert.sqlite") as cache:
        first = cache.convert(data, ".pptx", "deck.pptx")
    with ConvertCache(tmp_path / "convert.sqlite") as cache:  # survives reopening
        again = cache.convert(data, ".pptx", "renamed.pptx")
        assert (cache.hits, cache.misses) == (1, 0)
    assert again == first and calls == ["deck.pptx"]


def test_changed_bytes_or_converter_version_convert_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    path = tmp_path / "convert.sqlite"
    with ConvertCache(path) as cache:
        cache.convert(b"a;b\n1;2\n", ".csv", "v1.csv")
        cache.convert(b"a;b\n1;3\n", ".csv", "v2.csv")
    with ConvertCache(path, version="next") as cache:
        cache.convert(b"a;b\n1;2\n", ".csv", "v1.csv")
    assert calls == ["v1.csv", "v2.csv", "v1.csv"]
    assert cache_key(b"x", ".CSV") == cache_key(b"x", ".csv") != cache_key(b"x", ".csv", "0")


def test_provenance_and_meta_round_trip(tmp_path: Path) -> None:
    data = samples.make_pdf([[(11, "Page one.")], [(11, "Page two.")]], header="Running")
    with ConvertCache(tmp_path / "c.sqlite") as cache:
        fresh = cache.convert(data, ".pdf", "r.pdf")
        cached = cache.get(data, ".pdf")
    assert cached == fresh and cached.provenance[1].where.page == 2
    assert cached.meta["running_text"] == ["Running", "1"]


def test_a_crawled_page_is_cached_under_its_boilerplate_set(tmp_path: Path) -> None:
    from narezka.convert.html import block_key

    page = b"<p>Menu</p><p>Body</p>"
    menu = {block_key("Menu")}
    with ConvertCache(tmp_path / "c.sqlite") as cache:
        assert cache.convert(page, ".html", "p.html", boilerplate=menu).markdown == "Body\n"
        assert cache.get(page, ".html") is None  # without the set: another page text
        assert cache.convert(page, ".html", "p.html").markdown == "Menu\n\nBody\n"
        assert cache.convert(page, ".html", "p.html", boilerplate=menu).markdown == "Body\n"
        assert (cache.hits, cache.misses) == (1, 2)


# --- the cache holds only what the index may hold (#38 row 2) -----------------------------

TOKEN = "ghp_Zx81Qw7eRt5yUi3oPa1sDf9gHj2kLz4xCv6b"
AWS = "AKIAQWERTYUIOPASDFGH"


def _sheets_with_secrets() -> bytes:
    import io

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = AWS
    sheet.append(["service", "key"])
    sheet.append(["git", TOKEN])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _bytes_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_a_conversion_is_stored_and_returned_redacted(tmp_path: Path) -> None:
    data = _sheets_with_secrets()
    plain = narezka.convert.convert(data, ".xlsx", "keys.xlsx")
    assert TOKEN in plain.markdown and plain.provenance[0].where.sheet == AWS  # can fail
    with ConvertCache(tmp_path / "c.sqlite") as cache:
        fresh = cache.convert(data, ".xlsx", "keys.xlsx")
        again = cache.convert(data, ".xlsx", "keys.xlsx")
    assert again == fresh
    assert TOKEN not in fresh.markdown and AWS not in fresh.markdown
    assert "[REDACTED:github-token]" in fresh.markdown
    assert {s.where.sheet for s in fresh.provenance} == {"[REDACTED:aws-access-key-id]"}
    # The provenance map still covers the text it did, markers included.
    assert fresh.provenance[-1].end == len(fresh.markdown.rstrip("\n"))
    blob = _bytes_under(tmp_path)
    assert TOKEN.encode() not in blob and AWS.encode() not in blob


def test_running_headers_and_other_meta_are_redacted(tmp_path: Path) -> None:
    # Pages that differ: a line on every page alike is body text, not a running header, when
    # taking it away would leave the page empty.
    bodies = ("A page about delivery.", "Another about payment.", "A third about returns.")
    data = samples.make_pdf([[(11, body)] for body in bodies], header=f"Confidential {TOKEN}")
    assert TOKEN in str(narezka.convert.convert(data, ".pdf", "r.pdf").meta)  # can fail
    with ConvertCache(tmp_path / "c.sqlite") as cache:
        converted = cache.convert(data, ".pdf", "r.pdf")
    assert converted.meta["running_text"][0] == "Confidential [REDACTED:github-token]"
    assert TOKEN.encode() not in _bytes_under(tmp_path)


def test_without_redaction_the_cache_keeps_plaintext_under_other_keys(tmp_path: Path) -> None:
    data = _sheets_with_secrets()
    with ConvertCache(tmp_path / "c.sqlite", redact=False) as plain:
        assert TOKEN in plain.convert(data, ".xlsx").markdown
        assert cache_key(data, ".xlsx", redact=False) != cache_key(data, ".xlsx")
    with ConvertCache(tmp_path / "c.sqlite") as redacting:
        assert redacting.get(data, ".xlsx") is None  # never the plaintext entry
        assert TOKEN not in redacting.convert(data, ".xlsx").markdown
        assert redacting.count() == 2


def test_put_redacts_what_it_is_given(tmp_path: Path) -> None:
    converted = Converted(f"# Keys\n\n{TOKEN}\n", (), {"title": TOKEN, "notes": (AWS,)})
    with ConvertCache(tmp_path / "c.sqlite") as cache:
        cache.put(b"x", ".docx", converted)
        stored = cache.get(b"x", ".docx")
    assert stored is not None and TOKEN not in repr(stored) and AWS not in repr(stored)
    assert redacted(converted).meta["notes"] == ["[REDACTED:aws-access-key-id]"]
    assert TOKEN.encode() not in _bytes_under(tmp_path)


def test_the_text_hash_is_the_manifests_document_hash() -> None:
    from narezka.enrich.hashes import doc_hash

    for text in ("", "# Чай\n", f"key {TOKEN}\n" * 50):
        assert text_hash(text) == doc_hash(text)


def test_rows_no_file_has_go_without_a_trace(tmp_path: Path) -> None:
    with ConvertCache(tmp_path / "c.sqlite") as cache:
        for k in range(30):
            cache.put(bytes([k]), ".docx", Converted(f"canaryphrase number {k}\n", ()))
        kept = Converted("a text still indexed\n", ())
        cache.put(b"kept", ".docx", kept)
        assert cache.retain_texts([text_hash(kept.markdown)]) == 30
        assert cache.count() == 1 and cache.get(b"kept", ".docx") == kept
    blob = _bytes_under(tmp_path)
    assert b"canaryphrase" not in blob and b"a text still indexed" in blob


def test_the_plaintext_table_of_older_versions_goes_at_the_first_prune(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE converted (key TEXT PRIMARY KEY, markdown TEXT, rest TEXT)")
    db.executemany(
        "INSERT INTO converted VALUES (?, ?, ?)",
        [(str(k), f"old plaintext {TOKEN} {k}", "{}") for k in range(20)],
    )
    db.commit()
    db.close()
    assert TOKEN.encode() in path.read_bytes()  # can fail
    with ConvertCache(path) as cache:
        cache.retain_texts([])
    assert TOKEN.encode() not in _bytes_under(tmp_path)


def test_clear_drops_every_conversion_and_its_bytes(tmp_path: Path) -> None:
    with ConvertCache(tmp_path / "c.sqlite", redact=False) as cache:
        cache.convert(_sheets_with_secrets(), ".xlsx")
        assert TOKEN.encode() in _bytes_under(tmp_path)  # can fail
        assert cache.clear() == 1 and cache.count() == 0
    assert TOKEN.encode() not in _bytes_under(tmp_path)


_PIECES = st.sampled_from(
    ["Чай и кофе.", "plain words", "| a | b |", "\n\n", "# Heading", TOKEN, AWS, "pwd=Fk9d",
     "https://bob:hunter2hunter@db.example/x", "[REDACTED:password]"]
)  # fmt: skip


@given(st.lists(_PIECES, min_size=1, max_size=12))
def test_redaction_moves_the_provenance_with_the_text(pieces: list[str]) -> None:
    """Each piece its own span: once redacted, each span holds exactly what redacting that
    piece in place gives (``redact_span``), and redacting again changes nothing."""
    text, spans = "", []
    for n, piece in enumerate(pieces):
        start = len(text)
        text += piece + " "
        spans.append(ProvenanceSpan(start, start + len(piece), SourceLocation(element=f"e{n}")))
    converted = redacted(Converted(text, tuple(spans), {"pieces": pieces}))
    secrets = find_secrets(text)
    assert converted.markdown == redact_span(text, secrets, 0, len(text))
    by_element = {s.where.element: s for s in converted.provenance}
    for n, span in enumerate(spans):
        expected = redact_span(text, secrets, span.start, span.end)
        moved = by_element[f"e{n}"]
        assert converted.markdown[moved.start : moved.end] == expected
    assert count_kinds(find_secrets(converted.markdown)) == count_kinds(secrets)
    assert redacted(converted) == converted
    meta = str(converted.meta)
    assert not [s for s in (TOKEN, AWS, "pwd=Fk9d", "hunter2hunter") if s in meta]


def test_pruning_keeps_the_texts_an_index_manifest_has(tmp_path: Path) -> None:
    from narezka.index.compaction import prune_conversions
    from narezka.store import Manifest
    from narezka.store.manifest import FileEntry

    home = tmp_path / ".narezka"
    kept, gone = Converted("a text still indexed\n", ()), Converted("canaryphrase gone\n", ())
    with ConvertCache(home / "converted.sqlite") as cache:
        cache.put(b"kept", ".docx", kept)
        cache.put(b"gone", ".docx", gone)
    with Manifest(home / "data-1") as manifest:
        manifest.commit(FileEntry("a.docx", 1, 1.0, text_hash(kept.markdown), "f", "e"))
        assert prune_conversions(home, manifest) == []
    with ConvertCache(home / "converted.sqlite") as cache:
        assert cache.count() == 1 and cache.get(b"kept", ".docx") == kept
    assert b"canaryphrase" not in _bytes_under(home)


def test_a_cache_that_cannot_be_pruned_now_is_named(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from narezka.index.compaction import prune_conversions

    home = tmp_path / ".narezka"
    with ConvertCache(home / "converted.sqlite") as cache:
        cache.put(b"x", ".docx", Converted("text\n", ()))
    damaged = tmp_path / "manifest.sqlite"
    damaged.write_bytes(b"not a database, " * 512)
    warnings = prune_conversions(home, SimpleNamespace(path=damaged))  # type: ignore[arg-type]
    assert len(warnings) == 1 and "converted.sqlite" in warnings[0]
    assert (
        "until a later run prunes them (not writable now: it or the manifest is damaged)"
        in warnings[0]
    )
    with ConvertCache(home / "converted.sqlite") as cache:
        assert cache.count() == 1  # nothing lost: pruned by a later run


def test_a_marker_is_found_as_the_secret_it_stands_for() -> None:
    """A text stored redacted is redacted, counted and flagged again as it was: its markers
    are its secrets. A marker of no kind narezka finds is left as text."""
    text = "key [REDACTED:github-token], pwd [REDACTED:password], [REDACTED:made-up] x"
    found = find_secrets(text)
    assert [(text[s.start : s.end], s.kind) for s in found] == [
        ("[REDACTED:github-token]", "github-token"),
        ("[REDACTED:password]", "password"),
    ]
    assert redact_span(text, found, 0, len(text)) == text
