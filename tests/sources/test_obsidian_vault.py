"""An Obsidian vault indexed as a folder: settings, trash and the attachments folder are not
read, tags are filterable (library, CLI), and the note text stays exact."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from narezka.cli import cli
from narezka.discover.vault import vault_excludes
from narezka.index import Index
from narezka.search import Filter
from narezka.settings import Settings

SETTINGS = Settings().replace(embedder="hash", unit="chars", size=400, min_chars=0)


def make_vault(root: Path, *, attachments: str = "Вложения") -> Path:
    (root / ".obsidian" / "plugins" / "p").mkdir(parents=True)
    (root / ".obsidian" / "app.json").write_text(
        json.dumps({"attachmentFolderPath": attachments}), encoding="utf-8"
    )
    (root / ".obsidian" / "plugins" / "p" / "README.md").write_text("# Plugin\n", "utf-8")
    (root / ".trash").mkdir()
    (root / ".trash" / "old.md").write_text("# Старое\n\nудалённая заметка\n", "utf-8")
    (root / attachments).mkdir()
    (root / attachments / "скан.md").write_text("# Скан\n\nвложение\n", "utf-8")
    (root / "Чай.md").write_text(
        "---\ntags: [напитки]\naliases: [Tea]\n---\n# Чай\n\nУлун и пуэр. #китай\n"
        "См. [[Доставка|доставку]].\n",
        encoding="utf-8",
    )
    (root / "Доставка.md").write_text("# Доставка\n\nКурьером, улун тоже. #логистика\n", "utf-8")
    return root


def test_a_vault_skips_settings_trash_and_attachments(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    with Index.create(vault, SETTINGS) as index:
        index.sync()
        paths = sorted({h.file_path for h in index.chunks()})
    assert paths == ["Доставка.md", "Чай.md"]


def test_tags_are_filterable_and_stored_on_each_chunk(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    with Index.create(vault, SETTINGS) as index:
        index.sync()
        tea = index.search("улун", mode="bm25", filters=Filter(tag="#Китай"))
        fm = index.search("улун", mode="bm25", filters=Filter(tag="напитки"))
        logistics = index.search("улун", mode="bm25", filters=Filter(tag="логистика"))
        none = index.search("улун", mode="bm25", filters=Filter(tag="нет-такого"))
        every = index.search("улун", mode="bm25")
    assert [h.file_path for h in tea] == ["Чай.md"] == [h.file_path for h in fm]
    assert [h.file_path for h in logistics] == ["Доставка.md"]
    assert list(none) == [] and len({h.file_path for h in every}) == 2
    assert tea[0].payload["tags"] == ["напитки", "китай"]
    assert tea[0].text in (vault / "Чай.md").read_text(encoding="utf-8")
    assert tea[0].link == "obsidian://open?vault=vault&file=%D0%A7%D0%B0%D0%B9"


def test_the_command_line_filters_by_tag(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    runner = CliRunner()
    assert runner.invoke(cli, ["index", str(vault), "--embedder", "hash"]).exit_code == 0
    done = runner.invoke(
        cli,
        ["search", "улун", "--store", str(vault), "--mode", "bm25", "--tag", "логистика",
         "--format", "json"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert [h["file_path"] for h in json.loads(done.stdout)] == ["Доставка.md"]


def test_a_folder_without_obsidian_is_not_a_vault(tmp_path: Path) -> None:
    (tmp_path / "app.json").write_text("{}", encoding="utf-8")
    assert vault_excludes(tmp_path) == ()


def test_attachment_settings_that_name_no_folder_exclude_nothing(tmp_path: Path) -> None:
    for setting in ("/", "./", "../outside", 3):
        vault = tmp_path / f"v{hash(str(setting))}"
        (vault / ".obsidian").mkdir(parents=True)
        (vault / ".obsidian" / "app.json").write_text(
            json.dumps({"attachmentFolderPath": setting}), encoding="utf-8"
        )
        assert vault_excludes(vault) == (), setting
    (tmp_path / "bad" / ".obsidian").mkdir(parents=True)
    (tmp_path / "bad" / ".obsidian" / "app.json").write_text("{not json", encoding="utf-8")
    assert vault_excludes(tmp_path / "bad") == ()


def test_front_matter_tags_filter_in_any_folder_whatever_their_case(tmp_path: Path) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "a.md").write_text("---\ntags: [Чай, '#Улун']\n---\n# A\n\nулун\n", "utf-8")
    (corpus / "b.md").write_text("# B\n\nулун #чай\n", "utf-8")  # not a vault: no inline tags
    with Index.create(corpus, SETTINGS) as index:
        index.sync()
        found = index.search("улун", mode="bm25", filters=Filter(tag="ЧАЙ"))
    assert [h.file_path for h in found] == ["a.md"]
    assert found[0].payload["tags"] == ["чай", "улун"] and found[0].link is None
