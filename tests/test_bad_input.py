"""Bad input: nothing crashes, one bad file never stops the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import narezka
from narezka.errors import NarezkaWarning
from narezka.tokens import get_counter

from contract import assert_contract


def test_empty_and_whitespace_files_yield_no_chunks_and_are_counted(tmp_path: Path) -> None:
    (tmp_path / "empty.md").write_text("", encoding="utf-8")
    (tmp_path / "blank.md").write_text(" \n\t\n\n", encoding="utf-8")
    (tmp_path / "front-matter-only.md").write_text("---\ntitle: X\n---\n", encoding="utf-8")
    report = narezka.chunk_documents([tmp_path])
    assert report.chunks == []
    assert sorted(report.empty_files) == ["blank.md", "empty.md", "front-matter-only.md"]
    assert report.files == 3 and report.skipped == []


@pytest.mark.parametrize("strategy", ["fixed", "overlap", "recursive", "sentences", "headings"])
def test_a_300k_line_without_spaces_is_split(strategy: str) -> None:
    text = "# Данные\n\n" + "QUJD" * 75_000 + "\n\nКонец."
    chunks = narezka.chunk_text(text, strategy, size=800)
    assert_contract(text, chunks, 800, get_counter("chars"), atoms=False)
    assert max(len(c.text) for c in chunks) <= 800


def test_a_300k_line_in_tokens_keeps_raw_spans_bounded() -> None:
    text = "x" * 300_000
    chunks = narezka.chunk_text(text, "recursive", size=256, unit="tokens")
    assert_contract(text, chunks, 256, get_counter("tokens", "cl100k_base"), atoms=False)


def test_invalid_utf8_is_skipped_with_a_message_and_others_go_on(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Первый\n\nТекст.\n", encoding="utf-8")
    (tmp_path / "b.md").write_bytes(b"# \xff\xfe\x80\x81 broken " * 20)
    (tmp_path / "c.md").write_text("# Третий\n\nЕщё текст.\n", encoding="utf-8")
    report = narezka.chunk_documents([tmp_path])
    assert [c.source for c in report.chunks] == ["a.md", "c.md"]
    assert len(report.skipped) == 1
    assert "b.md" in str(report.skipped[0])


def test_legacy_encoding_is_decoded_with_a_warning(tmp_path: Path) -> None:
    text = "# Оплата\n\nОплатить заказ можно картой или наличными при получении.\n"
    (tmp_path / "pay.md").write_bytes(text.encode("koi8-r"))
    report = narezka.chunk_documents([tmp_path])
    assert report.chunks[0].text.startswith("# Оплата")
    assert any("pay.md" in w and "koi8" in w for w in report.warnings)


def test_control_characters_are_kept_in_spans_and_dropped_from_embed_text() -> None:
    text = "# Тест\n\nНевидимый\u200b пробел и\x07 звонок \ufffd здесь."
    report_chunks = narezka.chunk_text(text, "headings", size=200)
    (chunk,) = report_chunks
    assert "\u200b" in chunk.text and "\x07" in chunk.text
    assert not any(ch in chunk.embed_text for ch in "\u200b\x07\ufffd")


def test_removed_characters_are_counted(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# T\n\nText\u200b\u200b with \x07 marks.\n", encoding="utf-8")
    assert narezka.chunk_documents([tmp_path]).removed_chars == 3


def test_unterminated_fence_keeps_the_rest_of_the_file_as_code() -> None:
    text = "# A\n\n```\ncode\n# not a heading\n\nmore code\n"
    chunks = narezka.chunk_text(text, "headings", size=200)
    assert all(c.section == ("A",) for c in chunks)


def test_a_front_matter_alias_bomb_is_refused_by_name_and_the_index_goes_on(
    tmp_path: Path,
) -> None:
    """370 bytes of YAML aliases stand for 387 million strings; once they took the run down."""
    levels = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"l{n}: &l{n} [" + ",".join([f"*l{n - 1}"] * 9) + "]" for n in range(1, 9)]
    (tmp_path / "bomb.md").write_text(
        "---\n" + "\n".join(levels) + "\n---\n# Бомба\n\nТекст под бомбой.\n", encoding="utf-8"
    )
    (tmp_path / "ok.md").write_text("# Доставка\n\nКурьер привезёт заказ.\n", encoding="utf-8")
    with narezka.Index.create(tmp_path, narezka.Settings(embedder="hash")) as index:
        report = index.sync()
        hits = index.search("Текст под бомбой", k=5, min_relevance=0)
    warned = [w for w in report.warnings if "bomb.md" in w]
    assert warned and "expands to more than" in warned[0]
    assert {h.file_path for h in hits} == {"bomb.md", "ok.md"}


@pytest.mark.parametrize("strategy", ["headings", "recursive", "sentences", "fixed", "auto"])
def test_surrogate_code_points_are_read_as_replacement_characters(strategy: str) -> None:
    # UTF-8 cannot hold U+D800–U+DFFF: hashing, counting and storing failed on the first one.
    text = "# Возврат\n\nЧай \udc80 вскрытый \ud83d\ude00 вернуть нельзя.\n\n" + "Текст. " * 40
    with pytest.warns(NarezkaWarning, match="3 surrogate code points"):
        chunks = narezka.chunk_text(text, strategy, size=120)
    readable = text.replace("\udc80", "\ufffd").replace("\ud83d", "\ufffd")
    readable = readable.replace("\ude00", "\ufffd")
    assert len(readable) == len(text)  # one for one: offsets stay
    assert_contract(readable, chunks, 120, get_counter("chars"), atoms=False)
    for chunk in chunks:
        chunk.embed_text.encode("utf-8")
        json.dumps(chunk.to_json(), ensure_ascii=False).encode("utf-8")


def test_a_converted_text_with_surrogates_keeps_its_pages(tmp_path: Path) -> None:
    from narezka.runs.file_chunks import chunk_raw, make_params
    from narezka.split import get_strategy
    from narezka.types import ProvenanceSpan, RawDocument, SourceLocation

    page_one = "# Отчёт\n\nСтраница один \ud83d.\n\n"
    text = page_one + "Страница два.\n"
    pages = (
        ProvenanceSpan(0, len(page_one), SourceLocation(page=1)),
        ProvenanceSpan(len(page_one), len(text), SourceLocation(page=2)),
    )
    raw = RawDocument(source="r.pdf", text=text, provenance=pages)
    params = make_params(size=30)
    result = chunk_raw(raw, get_strategy("headings"), params, get_counter("chars"))
    assert any("r.pdf" in w and "1 surrogate code point " in w for w in result.warnings)
    assert "\ufffd" in "".join(c.text for c in result.chunks)
    assert result.chunks[-1].text == "Страница два."
