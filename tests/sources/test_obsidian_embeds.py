"""An Obsidian vault's ``![[embeds]]`` and callouts as chunked and indexed: embedded notes found
by Obsidian's names, their text in the embedding note's chunks with ``embedded_from``, a sync
that re-reads a note when a note it embeds changes, and callouts kept whole."""

from __future__ import annotations

import os
from pathlib import Path

from narezka.discover.notes import find_note
from narezka.index import Index
from narezka.runs.chunking import chunk_documents, chunk_path
from narezka.settings import Settings

SETTINGS = Settings().replace(embedder="hash", unit="chars", size=400, min_chars=0)


def make_vault(root: Path, notes: dict[str, str]) -> Path:
    (root / ".obsidian").mkdir(parents=True)
    for path, text in notes.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


NOTES = {
    "Чай.md": "# Чай\n\nУлун и пуэр.\n\n![[доставка#Сроки]]\n\n![[схема.png]]\n",
    "Логистика/Доставка.md": "# Доставка\n\n## Сроки\n\nТри дня по России. ^srok\n\n"
    "## Цены\n\nБесплатно от 3000 ₽.\n",
}


def by_source(chunks: list) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for c in chunks:
        out.setdefault(c.source, []).append(c)
    return out


def test_an_embedded_section_is_chunked_in_the_embedding_note_with_its_origin(
    tmp_path: Path,
) -> None:
    vault = make_vault(tmp_path / "v", NOTES)
    chunks = by_source(chunk_path(vault, size=400, unit="chars", min_chars=0))
    [tea] = chunks["Чай.md"]
    assert "Улун и пуэр.\n\n**Сроки**\n\nТри дня по России.\n\n![[схема.png]]" in tea.text
    assert "Бесплатно" not in tea.text
    assert tea.meta["embedded_from"] == ["Логистика/Доставка.md#Сроки"]
    assert "Доставка" in tea.meta["links"]
    # The embedded note is still a document of its own, its text as written.
    assert all("embedded_from" not in c.meta for c in chunks["Логистика/Доставка.md"])
    assert any("Три дня по России. ^srok" in c.text for c in chunks["Логистика/Доставка.md"])


def test_the_embedding_notes_chunks_keep_exact_spans_of_its_read_text(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", NOTES)
    tea = [c for c in chunk_path(vault, size=60, unit="chars", min_chars=0)
           if c.source == "Чай.md"]  # fmt: skip
    text = "".join(c.text for c in tea)
    assert "Три дня по России." in text
    assert [c.meta.get("embedded_from") for c in tea].count(None) >= 1  # its own text too


def test_a_folder_that_is_not_a_vault_keeps_its_embeds_as_written(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", NOTES)
    (vault / ".obsidian").rmdir()
    [tea] = [c for c in chunk_path(vault) if c.source == "Чай.md"]
    assert "![[доставка#Сроки]]" in tea.text
    assert "embedded_from" not in tea.meta


def test_a_missing_or_ambiguous_target_warns_naming_the_note_and_the_target(
    tmp_path: Path,
) -> None:
    vault = make_vault(
        tmp_path / "v",
        {"a.md": "# A\n\n![[Нет]] и ![[Дубль]]\n", "x/Дубль.md": "1", "y/Дубль.md": "2"},
    )
    report = chunk_documents([vault])
    warned = [w for w in report.warnings if "![[" in w]
    assert warned == [
        "a.md: ![[Нет]]: no note of that name; left as a link",
        "a.md: ![[Дубль]]: several notes have that name (x/Дубль.md, y/Дубль.md); left as a link",
    ]
    [a] = [c for c in report.chunks if c.source == "a.md"]
    assert "![[Нет]] и ![[Дубль]]" in a.text


def test_names_resolve_as_obsidian_resolves_them(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {"Note.md": "", "a/Note.md": "", "a/b/Deep.md": "", "c/Deep.md": "", "c/Other.md": ""},
    )
    assert find_note(vault, "note", "z.md") == "Note.md"  # the vault's root first
    assert find_note(vault, "a/note.MD", "z.md") == "a/Note.md"
    assert find_note(vault, "Deep", "c/x.md") == "c/Deep.md"  # beside the embedding note
    assert find_note(vault, "Deep", "z.md") == ("a/b/Deep.md", "c/Deep.md")
    assert find_note(vault, "b/deep", "z.md") == "a/b/Deep.md"  # the end of a path
    assert find_note(vault, "other", "z.md") == "c/Other.md"
    assert find_note(vault, "none", "z.md") is None
    (vault / "New.md").write_text("", encoding="utf-8")  # a note added is found at once
    assert find_note(vault, "new", "z.md") == "New.md"


def test_notes_in_hidden_folders_are_not_embedded(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "![[Старое]]", ".trash/Старое.md": "удалено"})
    assert find_note(vault, "Старое", "a.md") is None


def test_a_callout_that_fits_is_one_chunk_with_its_kind(tmp_path: Path) -> None:
    callout = (
        "> [!warning]- Осторожно\n> "
        + "Вскрытый чай не возвращается. " * 5
        + "\n>\n> "
        + "Второй абзац выноски тоже важен. " * 5
        + "\n> - пункт один\n> - пункт два"
    )
    note = (
        "# Заметка\n\n" + "Вступление к заметке идёт здесь. " * 6 + f"\n\n{callout}\n\n"
        "После выноски. " + "Текст. " * 20 + "\n"
    )
    vault = make_vault(tmp_path / "v", {"Заметка.md": note})
    chunks = chunk_path(vault, size=400, unit="chars", min_chars=0)
    holding = [c for c in chunks if "[!warning]" in c.text]
    assert len(holding) == 1 and callout in holding[0].text
    assert holding[0].meta["callouts"] == ["warning"]
    # The same text outside a vault is a plain quote, cut between its paragraphs.
    (vault / ".obsidian").rmdir()
    plain = chunk_path(vault, size=400, unit="chars", min_chars=0)
    assert not any(callout in c.text for c in plain)


def _chunks_of(index: Index, source: str) -> list[str]:
    return [h.text for h in index.chunks() if h.file_path == source]


def test_a_sync_re_reads_a_note_when_a_note_it_embeds_changes(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", NOTES)
    with Index.create(vault, SETTINGS, store=tmp_path / "idx") as index:
        index.sync()
        assert "Три дня" in "".join(_chunks_of(index, "Чай.md"))
        delivery = vault / "Логистика" / "Доставка.md"
        delivery.write_text("# Доставка\n\n## Сроки\n\nПять дней.\n", encoding="utf-8")
        report = index.sync()
        assert report.files_changed == 2 and report.files_unchanged == 0
        tea = "".join(_chunks_of(index, "Чай.md"))
        assert "Пять дней." in tea and "Три дня" not in tea
        hits = index.search("Пять дней", k=5)
        tea_hit = next(h for h in hits if h.file_path == "Чай.md")
        assert tea_hit.payload["embedded_from"] == ["Логистика/Доставка.md#Сроки"]
        assert not tea_hit.stale
        # Nothing changed: nothing is read again.
        assert index.sync().files_unchanged == 2


def test_a_sync_re_reads_a_note_when_its_missing_embed_appears_or_goes(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "# A\n\n![[Позже]]\n", "b.md": "# B\n"})
    with Index.create(vault, SETTINGS, store=tmp_path / "idx") as index:
        report = index.sync()
        assert any("![[Позже]]" in w for w in report.warnings)
        later = vault / "sub" / "Позже.md"
        later.parent.mkdir()
        later.write_text("Теперь есть.\n", encoding="utf-8")
        report = index.sync()
        assert (report.files_new, report.files_changed, report.files_unchanged) == (1, 1, 1)
        assert "Теперь есть." in "".join(_chunks_of(index, "a.md"))
        later.unlink()
        os.utime(vault / "sub")
        report = index.sync()
        assert (report.files_deleted, report.files_changed) == (1, 1)
        assert "![[Позже]]" in "".join(_chunks_of(index, "a.md"))
