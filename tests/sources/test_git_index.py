"""An index of a git repository: built from the staged commit, re-synced with only what
changed upstream, hits linked to the file at the commit, and all of it by the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.cli import cli
from narezka.environment import Environment
from narezka.index import Index
from narezka.settings import Settings
from narezka.sources import GitSource, open_source
from sources.git_repos import commit, git, make_repo

DOCS = {
    "README.md": "# Магазин чая\n\nО магазине.\n",
    "docs/возврат.md": (
        "# Возврат\n\nВступление.\n\n## Сроки\n\nВскрытый чай можно вернуть в течение "
        "четырнадцати дней, если упаковка цела и сохранён чек.\n"
    ),
    "docs/доставка.md": "# Доставка\n\nКурьером по Москве и почтой по России.\n",
}
SETTINGS = Settings().replace(embedder="hash", unit="chars", size=400, min_chars=0)


def test_a_repository_is_indexed_resynced_and_linked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", DOCS)
    source = GitSource(
        f"git+{repo}", link_template="https://git.example.org/shop/{commit}/{path}#L{first}-L{last}"
    )
    with Index.create(source, SETTINGS) as index:
        first = index.sync()
        assert first.files_new == 3
        hits = index.search("вскрытый чай вернуть", k=1, mode="bm25")
    head = git(repo, "rev-parse", "HEAD")
    assert hits[0].file_path == "docs/возврат.md"
    text = DOCS["docs/возврат.md"]
    line = text[: text.index("Вскрытый")].count("\n") + 1
    assert hits[0].link is not None
    assert hits[0].link.startswith(f"https://git.example.org/shop/{head}/docs/%D0%B2")
    first_line, last_line = map(int, hits[0].link.rsplit("#L", 1)[1].split("-L"))
    assert first_line <= line <= last_line

    # One file changes, one is renamed, one deleted: only the changed one is fetched and embedded.
    (repo / "guide").mkdir()
    git(repo, "mv", "docs/доставка.md", "guide/доставка.md")
    commit(repo, {"README.md": "# Магазин чая\n\nО магазине и о нас.\n",
                  "docs/возврат.md": None}, "edit, move, delete")  # fmt: skip
    with Index.open(source.staging.parent / "index") as index:
        assert index.source is not None
        again = index.sync()
        paths = sorted(h.file_path for h in index.chunks())
        assert "docs/возврат.md" not in paths and "guide/доставка.md" in paths
        moved = index.search("курьером почтой", k=1, mode="bm25")
    assert again.source["fetched"] == ["README.md"]
    assert again.source["moved"] == [["docs/доставка.md", "guide/доставка.md"]]
    assert again.source["deleted"] == ["docs/возврат.md"]
    assert again.files_changed == 1 and again.files_deleted == 2 and again.files_new == 1
    assert again.cache_misses == 1  # the moved file's chunks came from the embedding cache
    new_head = git(repo, "rev-parse", "HEAD")
    assert moved[0].link is not None and new_head in moved[0].link


def test_a_folder_index_has_no_source_and_no_link(tmp_path: Path) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Чай\n\nЗелёный чай.\n", encoding="utf-8")
    with Index.create(corpus, SETTINGS) as index:
        index.sync()
        hits = index.search("зелёный", k=1, mode="bm25")
    assert index.source is None and hits[0].link is None


def test_the_command_line_indexes_and_searches_a_git_url(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", DOCS)
    spec = f"git+file://{repo}@main"
    runner = CliRunner()
    done = runner.invoke(cli, ["index", spec, "--embedder", "hash", "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["source"]["spec"] == spec and len(report["source"]["fetched"]) == 3
    found = runner.invoke(
        cli, ["search", "вскрытый чай", "--store", spec, "--mode", "bm25", "--format", "json"]
    )
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)[0]["file_path"] == "docs/возврат.md"
    synced = runner.invoke(cli, ["sync", spec])
    assert synced.exit_code == 0, synced.output
    assert "0 fetched" in synced.stdout + synced.stderr


def test_the_cache_folder_is_handed_down_from_the_top(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", DOCS)
    spec = f"git+file://{repo}@main"
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(elsewhere))
    done = CliRunner().invoke(cli, ["index", spec, "--embedder", "hash", "--json"])
    assert done.exit_code == 0, done.output
    assert [p.name for p in (elsewhere / "sources").iterdir()]  # the command's variable
    assert not (private_cache / "sources").exists()
    given = Environment.read({"NAREZKA_CACHE_DIR": str(elsewhere)})
    assert open_source(spec, env=given).home.is_relative_to(elsewhere / "sources")
    # A source opened bare reads no variable: the user cache dir (this test's HOME).
    assert open_source(spec).home.is_relative_to(private_cache / "sources")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["index", "git+/no/such/repo"], "no such repository"),
        (["index", "http://127.0.0.1:9/docs/"], "http://127.0.0.1:9/docs/: "),
        (["index", "ftp://host/x"], "ftp://host/x: no such file or directory"),
        (["index", "git+/r", "--link-template", "{oops}"], "unknown field"),
        (["search", "чай", "--store", "git+/never/indexed"], "no narezka index of"),
    ],
)
def test_an_unreadable_source_exits_2_naming_it(args: list[str], said: str) -> None:
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 2 and said in done.stderr, done.output


def test_settings_of_a_several_sources_file_apply_and_a_repositorys_do_not(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {**DOCS, "narezka.toml": "[settings]\nsize = 333\n"})
    project = tmp_path / "project"
    project.mkdir()
    config = project / "narezka.toml"
    config.write_text(
        '[settings]\nsize = 444\nunit = "chars"\n\n[[sources]]\nname = "r"\ngit = "../repo"\n',
        encoding="utf-8",
    )
    runner = CliRunner()
    several = runner.invoke(cli, ["index", str(config), "--embedder", "hash", "--json"])
    alone = runner.invoke(cli, ["index", f"git+{repo}", "--embedder", "hash", "--json"])
    assert several.exit_code == 0 and alone.exit_code == 0, several.output + alone.output
    assert "narezka.toml" in json.loads(several.stdout)["settings_from"]["size"]
    assert "size" not in json.loads(alone.stdout)["settings_from"]
