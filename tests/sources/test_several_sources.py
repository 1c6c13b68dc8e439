"""Several sources for one index, named by ``[[sources]]`` in a narezka.toml: each staged
under its name, refreshed together, linked by its own kind; bad tables named by number."""

from __future__ import annotations

from pathlib import Path

import pytest

from narezka.environment import current
from narezka.errors import ConfigError
from narezka.index import Index
from narezka.settings import Settings
from narezka.sources import SeveralSources, open_source
from sources.git_repos import commit, git, make_repo
from sources.live_fakes import DATABASE, serve
from sources.site_server import Site
from sources.site_server import serve as serve_site
from sources.test_confluence_source import space
from sources.test_notion_source import workspace

SETTINGS = Settings().replace(embedder="hash", unit="chars", size=400, min_chars=0)


def write_config(where: Path, text: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    config = where / "narezka.toml"
    config.write_text(text, encoding="utf-8")
    return config


def test_a_repository_and_a_folder_make_one_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "handbook", {"возврат.md": "# Возврат\n\nЧай вернуть.\n"})
    wiki = tmp_path / "wiki"
    (wiki / ".obsidian").mkdir(parents=True)
    (wiki / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    (wiki / "доставка.md").write_text("# Доставка\n\nКурьером.\n", encoding="utf-8")
    config = write_config(
        tmp_path / "project",
        '[[sources]]\nname = "handbook"\ngit = "../handbook"\n'
        'link_template = "https://git.example.org/{commit}/{path}#L{first}-L{last}"\n\n'
        '[[sources]]\nname = "wiki"\npath = "../wiki"\n',
    )
    with Index.create(config, SETTINGS) as index:
        report = index.sync()
        paths = sorted({h.file_path for h in index.chunks()})
        hits = {h.file_path: h for h in index.search("чай курьером", k=5, mode="bm25")}
    assert paths == ["handbook/возврат.md", "wiki/доставка.md"]
    head = git(repo, "rev-parse", "HEAD")
    assert hits["handbook/возврат.md"].link is not None
    assert hits["handbook/возврат.md"].link.startswith(f"https://git.example.org/{head}/")
    assert hits["wiki/доставка.md"].link == (wiki / "доставка.md").resolve().as_uri()
    assert sorted(report.source["fetched"]) == paths

    commit(repo, {"возврат.md": "# Возврат\n\nЧай вернуть за 14 дней.\n"}, "edit")
    (wiki / "доставка.md").unlink()
    with Index.open(config) as index:
        again = index.sync()
        paths = sorted({h.file_path for h in index.chunks()})
    assert again.source["fetched"] == ["handbook/возврат.md"]
    assert again.source["deleted"] == ["wiki/доставка.md"]
    assert paths == ["handbook/возврат.md"]


def test_a_member_taken_out_of_the_file_leaves_the_index(tmp_path: Path) -> None:
    make_repo(tmp_path / "a", {"a.md": "# A\n\nальфа\n"})
    make_repo(tmp_path / "b", {"b.md": "# B\n\nбета\n"})
    both = '[[sources]]\nname = "a"\ngit = "../a"\n\n[[sources]]\nname = "b"\ngit = "../b"\n'
    config = write_config(tmp_path / "p", both)
    with Index.create(config, SETTINGS) as index:
        index.sync()
    config.write_text('[[sources]]\nname = "a"\ngit = "../a"\n', encoding="utf-8")
    with Index.create(config, SETTINGS) as index:
        report = index.sync()
        paths = sorted({h.file_path for h in index.chunks()})
    source = open_source(str(config))
    assert isinstance(source, SeveralSources)
    assert paths == ["a/a.md"] and report.source["deleted"] == ["b/b.md"]
    assert not (source.home / "members" / "b").exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "no [[sources]] tables"),
        ('[[sources]]\ngit = "x"\n', "#1: name must be"),
        ('[[sources]]\nname = "a"\n', "#1 (a): give exactly one of"),
        ('[[sources]]\nname = "a"\nsite = "https://h/"\npath = "."\n', "exactly one of"),
        ('[[sources]]\nname = "a"\nsite = "ftp://h/"\n', "a site is an http(s) URL"),
        ('[[sources]]\nname = "a"\npath = "."\ngit = "x"\n', "give exactly one of"),
        ('[[sources]]\nname = "a"\npath = "nowhere"\n', "is not a folder"),
        ('[[sources]]\nname = "a"\npath = "."\nurl = "x"\n', "unknown keys ['url']"),
        ('[[sources]]\nname = "../up"\npath = "."\n', "name must be"),
        ('[[sources]]\nname = "a"\npath = "."\nlink_template = "{x}"\n', "unknown field"),
        ('[[sources]]\nname = "a"\npath = "."\n[[sources]]\nname = "a"\npath = "."\n', "share"),
    ],
)
def test_a_bad_sources_table_is_named(tmp_path: Path, text: str, said: str) -> None:
    config = write_config(tmp_path / "p", text)
    with pytest.raises(ConfigError, match=r"narezka\.toml") as caught:
        open_source(str(config))
    assert said in str(caught.value)


def test_a_folder_member_copies_only_what_changed_and_follows_no_link(tmp_path: Path) -> None:
    from narezka.sources import FolderSource

    folder = tmp_path / "wiki"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "x.md").write_text("# hidden\n", encoding="utf-8")
    (folder / "a.md").write_text("# A\n", encoding="utf-8")
    (folder / "b.md").write_text("# B\n", encoding="utf-8")
    (tmp_path / "secret.md").write_text("# outside\n", encoding="utf-8")
    (folder / "link.md").symlink_to(tmp_path / "secret.md")
    source = FolderSource(folder, home=tmp_path / "home")
    first = source.refresh()
    assert first.fetched == ("a.md", "b.md")
    assert any("link.md" in w and "not followed" in w for w in first.warnings)
    (folder / "b.md").write_text("# B, longer\n", encoding="utf-8")
    assert source.refresh().fetched == ("b.md",)
    assert source.refresh().fetched == ()
    assert not (source.staging / "link.md").exists()
    assert not (source.staging / ".git").exists()


def live_config(where: Path, confluence: str, notion: str, extra: str = "") -> Path:
    return write_config(
        where,
        f'[[sources]]\nname = "eng"\nconfluence = "{confluence}"\n{extra}\n'
        f'[[sources]]\nname = "kb"\nnotion = "{notion}"\n',
    )


def test_live_confluence_and_notion_members_make_one_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(space()) as wiki, serve(workspace()) as notion:
        monkeypatch.setenv("CONFLUENCE_USER", wiki.user)
        monkeypatch.setenv("CONFLUENCE_TOKEN", wiki.token)
        monkeypatch.setenv("NOTION_TOKEN", notion.token)
        config = live_config(
            tmp_path / "p", f"{wiki.url}/wiki/spaces/ENG", f"notion+{notion.url}/{DATABASE}"
        )
        with Index.create(config, SETTINGS) as index:
            report = index.sync()
            hits = {h.file_path: h for h in index.search("oolong улун", k=10, mode="bm25")}
        assert "eng/Home/Tea/Oolong.html" in report.source["fetched"]
        assert "kb/Возврат/Улун.md" in report.source["fetched"]
        assert hits["eng/Home/Tea/Oolong.html"].link == wiki.url + "/wiki/spaces/ENG/pages/104"
        assert hits["kb/Возврат/Улун.md"].link == f"https://www.notion.so/Улун-{'b' * 32}"
        wiki.log.clear()
        with Index.open(config) as index:
            again = index.sync()
        assert again.source["fetched"] == [] and len(wiki.log) == 3  # listings only
        source = open_source(str(config), env=current())
        assert isinstance(source, SeveralSources)
        for part in source.home.rglob("*"):
            if part.is_file():
                assert wiki.token.encode() not in part.read_bytes()
                assert notion.token.encode() not in part.read_bytes()


@pytest.mark.parametrize(
    ("extra", "url", "said"),
    [
        ('token = "abc"', "https://w.example/wiki/spaces/ENG", "['token']: credentials"),
        ('api_key = "abc"', "https://w.example/wiki/spaces/ENG", "['api_key']: credentials"),
        ('user = "me"', "https://w.example/wiki/spaces/ENG", "['user']: credentials"),
        ("", "https://me:pw@w.example/wiki/spaces/ENG", "a credential in the URL is refused"),
        ('link_template = "https://x/{path}"', "https://w.example/wiki/spaces/ENG",
         "no link_template"),
        ("", "https://w.example/wiki/overview", "a Confluence space is"),
    ],
)  # fmt: skip
def test_a_credential_in_the_file_is_refused_by_name(
    tmp_path: Path, extra: str, url: str, said: str
) -> None:
    config = live_config(tmp_path / "p", url, "1" * 32, extra)
    with pytest.raises(ConfigError, match=r"narezka\.toml") as caught:
        open_source(str(config))
    assert said in str(caught.value)
    assert "abc" not in str(caught.value) and "pw" not in str(caught.value)


def test_site_and_live_members_taken_out_of_the_file_leave_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = Site()
    site.html("/docs/", '<h1>Docs</h1><p>Сайт про чай.</p><a href="tea.html">t</a>')
    site.html("/docs/tea.html", "<h1>Tea</h1><p>Пуэр хранится долго.</p>")
    make_repo(tmp_path / "a", {"a.md": "# A\n\nальфа\n"})
    with serve_site(site) as site, serve(space()) as wiki:
        monkeypatch.setenv("CONFLUENCE_USER", wiki.user)
        monkeypatch.setenv("CONFLUENCE_TOKEN", wiki.token)
        config = write_config(
            tmp_path / "p",
            '[[sources]]\nname = "a"\ngit = "../a"\n\n'
            f'[[sources]]\nname = "web"\nsite = "{site.base}/docs/"\n\n'
            f'[[sources]]\nname = "eng"\nconfluence = "{wiki.url}/wiki/spaces/ENG"\n',
        )
        with Index.create(config, SETTINGS) as index:
            index.sync()
            before = {h.file_path for h in index.chunks()}
        assert {"web/tea.html", "eng/Home/Tea/Oolong.html"} <= before
        config.write_text('[[sources]]\nname = "a"\ngit = "../a"\n', encoding="utf-8")
        with Index.open(config) as index:
            report = index.sync()
            paths = sorted({h.file_path for h in index.chunks()})
    assert paths == ["a/a.md"]
    assert "web/tea.html" in report.source["deleted"]
    assert "eng/Home/Tea/Oolong.html" in report.source["deleted"]
    source = open_source(str(config))
    assert isinstance(source, SeveralSources)
    assert not (source.home / "members" / "web").exists()
    assert not (source.home / "members" / "eng").exists()
    assert not (source.staging / "eng").exists() and not (source.staging / "web").exists()


def test_an_index_whose_narezka_toml_is_gone_opens_with_the_members_it_recorded(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "a", {"a.md": "# A\n\nальфа\n"})
    config = write_config(
        tmp_path / "p",
        '[[sources]]\nname = "a"\ngit = "../a"\n'
        'link_template = "https://git.example.org/{commit}/{path}"\n',
    )
    with Index.create(config, SETTINGS) as index:
        index.sync()
        home = index.home
    assert home is not None
    head = git(repo, "rev-parse", "HEAD")
    commit(repo, {"b.md": "# B\n"}, "later")  # not synced: links stay at the staged commit
    with Index.open(config) as index:  # the file read again, the commit kept from the record
        assert index.search("альфа", k=1, mode="bm25")[0].link == (
            f"https://git.example.org/{head}/a.md"
        )
    config.unlink()
    with Index.open(home) as index:
        hits = index.search("альфа", k=1, mode="bm25")
    assert hits[0].link == f"https://git.example.org/{head}/a.md"
