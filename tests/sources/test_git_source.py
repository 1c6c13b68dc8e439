"""The git source: a commit staged into the cache with git's plumbing; later refreshes read
only what changed, move renames, remove deletions, and never write outside the cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from narezka.errors import ConfigError, SourceUnavailableError
from narezka.sources import GitSource, open_source
from narezka.sources.git import parse_git_spec
from sources.git_repos import commit, git, make_repo

FILES = {
    "README.md": "# Доставка\n\nКурьером по России.\n",
    "docs/возврат.md": "# Возврат\n\nЧай можно вернуть в течение 14 дней.\n",
    "docs/tariffs.md": "# Тарифы\n\nПо весу и зоне.\n",
}


def staged(source: GitSource) -> dict[str, str]:
    root = source.staging
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_local_repository_is_staged_at_its_commit(tmp_path: Path, private_cache: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    source = GitSource(f"git+file://{repo}")
    done = source.refresh()
    assert staged(source) == FILES
    assert done.version == git(repo, "rev-parse", "HEAD")
    assert sorted(done.fetched) == sorted(FILES)
    assert source.staging.is_relative_to(private_cache)


def test_a_second_refresh_reads_only_the_changed_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    source = GitSource(f"git+{repo}")
    source.refresh()
    before = {p: (source.staging / p).stat().st_mtime_ns for p in FILES}
    commit(repo, {"docs/tariffs.md": "# Тарифы\n\nНовые цены.\n"}, "prices")
    done = source.refresh()
    assert done.fetched == ("docs/tariffs.md",) and not done.deleted and not done.moved
    assert done.fetched_bytes == len("# Тарифы\n\nНовые цены.\n".encode())
    assert staged(source)["docs/tariffs.md"] == "# Тарифы\n\nНовые цены.\n"
    for path in ("README.md", "docs/возврат.md"):  # untouched: same file, same mtime
        assert (source.staging / path).stat().st_mtime_ns == before[path]
    assert source.refresh().fetched == ()


def test_a_rename_moves_the_file_and_a_deletion_removes_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    source = GitSource(f"git+{repo}")
    source.refresh()
    (repo / "guide").mkdir()
    git(repo, "mv", "docs/возврат.md", "guide/возврат.md")
    commit(repo, {"docs/tariffs.md": None}, "move and delete")
    done = source.refresh()
    assert done.moved == (("docs/возврат.md", "guide/возврат.md"),)
    assert done.deleted == ("docs/tariffs.md",) and done.fetched == ()
    assert sorted(staged(source)) == ["README.md", "guide/возврат.md"]
    assert not (source.staging / "docs").exists()  # the folder it emptied goes too


def test_a_branch_is_read_at_its_own_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    git(repo, "checkout", "--quiet", "-b", "draft")
    commit(repo, {"draft.md": "# Черновик\n"}, "draft")
    git(repo, "checkout", "--quiet", "main")
    main = GitSource(f"git+{repo}@main")
    draft = GitSource(f"git+{repo}@draft")
    main.refresh(), draft.refresh()
    assert "draft.md" not in staged(main) and "draft.md" in staged(draft)
    assert main.staging != draft.staging


def test_gitignore_lfs_links_submodule_and_size_are_named_or_left_out(tmp_path: Path) -> None:
    lfs = "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12345\n"
    repo = make_repo(
        tmp_path / "repo",
        {**FILES, ".gitignore": "build/\n*.log\n!keep.log\n", "build/out.md": "# built\n",
         "debug.log": "x", "keep.log": "kept\n", "big.psd": lfs},
    )  # fmt: skip
    os.symlink("/etc/passwd", repo / "passwd.md")
    commit(repo, {}, "link")
    git(repo, "add", "passwd.md")
    commit(repo, {}, "link")
    source = GitSource(f"git+{repo}")
    done = source.refresh()
    files = staged(source)
    assert "build/out.md" not in files and "debug.log" not in files and "keep.log" in files
    assert "big.psd" not in files and "passwd.md" not in files
    assert any("big.psd" in w and "LFS" in w for w in done.warnings)
    assert any("passwd.md" in w and "symbolic link" in w for w in done.warnings)
    assert not any(p.is_symlink() for p in source.staging.rglob("*"))


def test_a_file_over_the_size_cap_is_not_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("narezka.sources.git.MAX_DOCUMENT_BYTES", 100)
    repo = make_repo(tmp_path / "repo", {"small.md": "# a\n", "huge.md": "x" * 500})
    source = GitSource(f"git+{repo}")
    done = source.refresh()
    assert "huge.md" not in staged(source)
    assert any("huge.md" in w and "500 bytes" in w for w in done.warnings)


def test_a_cloned_repository_is_fetched_into_the_cache_and_updated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    source = GitSource(f"git+file://{repo}@main", fetch=True)
    source.refresh()
    assert staged(source) == FILES
    assert (source.home / "repo.git").is_dir()
    commit(repo, {"docs/tariffs.md": "# Тарифы\n\nДороже.\n"}, "prices")
    done = source.refresh()
    assert done.fetched == ("docs/tariffs.md",)
    assert staged(source)["docs/tariffs.md"] == "# Тарифы\n\nДороже.\n"


def test_credentials_in_the_url_are_stored_and_shown_nowhere(
    tmp_path: Path, private_cache: Path
) -> None:
    secret = "s3cr3t-t0ken"
    source = GitSource(f"git+https://bob:{secret}@127.0.0.1:9/org/repo.git@main")
    assert secret not in source.spec and "bob" not in source.spec
    assert secret not in str(source.record())
    with pytest.raises(SourceUnavailableError) as caught:
        source.refresh()  # nothing listens on port 9: git fails, naming the URL
    assert secret not in str(caught.value) and "127.0.0.1" in str(caught.value)
    for path in private_cache.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_a_missing_repository_or_ref_is_named(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailableError, match="no such repository"):
        GitSource(f"git+{tmp_path / 'nowhere'}").refresh()
    repo = make_repo(tmp_path / "repo", FILES)
    with pytest.raises(SourceUnavailableError, match="no branch, tag or commit 'nope'"):
        GitSource(f"git+{repo}@nope").refresh()
    (tmp_path / "plain").mkdir()
    with pytest.raises(SourceUnavailableError, match="not a git repository"):
        GitSource(f"git+{tmp_path / 'plain'}").refresh()


def test_git_not_installed_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SourceUnavailableError, match="git is not installed"):
        GitSource(f"git+{repo}").refresh()


def test_a_hung_git_is_stopped_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nexec /bin/sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr("narezka.sources.git.COMMAND_SECONDS", 0.5)
    with pytest.raises(SourceUnavailableError, match="took over"):
        GitSource(f"git+{tmp_path}").refresh()


@pytest.mark.parametrize(
    ("spec", "location", "ref"),
    [
        ("git+https://github.com/org/repo.git@main", "https://github.com/org/repo.git", "main"),
        ("git+https://u:p@host/org/repo", "https://u:p@host/org/repo", None),
        ("git+ssh://git@host/a/b@v1.2", "ssh://git@host/a/b", "v1.2"),
        ("git+file:///srv/repo@dev", "file:///srv/repo", "dev"),
        ("git+../repo", "../repo", None),
    ],
)
def test_specs_parse_into_location_and_ref(spec: str, location: str, ref: str | None) -> None:
    assert parse_git_spec(spec) == (location, ref)


@pytest.mark.parametrize("spec", ["git+", "git+https://host/org/repo@", "ftp://x:pw@y/z"])
def test_a_bad_spec_is_a_config_error_without_credentials(spec: str) -> None:
    with pytest.raises(ConfigError) as caught:
        open_source(spec)
    assert "x@" not in str(caught.value) and "pw" not in str(caught.value)


def test_a_bad_link_template_is_refused_before_anything_runs() -> None:
    with pytest.raises(ConfigError, match="unknown field"):
        open_source("git+/tmp/r", link_template="https://h/{sha}/{path}")


def test_a_refresh_stopped_half_way_leaves_nothing_it_cannot_remove(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    source = GitSource(f"git+{repo}")
    real = source._write

    def crash(*args: object, **kwargs: object) -> int:
        real(*args, **kwargs)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(source, "_write", crash)
    with pytest.raises(KeyboardInterrupt):
        source.refresh()  # the files are written, the final state never saved
    monkeypatch.undo()
    git(repo, "rm", "--quiet", "README.md")
    git(repo, "commit", "--quiet", "-m", "gone")
    done = source.refresh()
    assert "README.md" in done.deleted
    assert not (source.staging / "README.md").exists()


def test_a_folder_that_becomes_a_file_and_back_is_staged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"notes/a.md": "# a\n", "b.md": "# b\n"})
    source = GitSource(f"git+{repo}")
    source.refresh()
    git(repo, "rm", "--quiet", "-r", "notes", "b.md")
    commit(repo, {"notes": "# now a file\n", "b.md/c.md": "# now a folder\n"}, "swap")
    done = source.refresh()
    assert staged(source) == {"notes": "# now a file\n", "b.md/c.md": "# now a folder\n"}
    assert sorted(done.deleted) == ["b.md", "notes/a.md"]


def test_a_rename_whose_staged_copy_went_missing_is_read_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    source = GitSource(f"git+{repo}")
    source.refresh()
    (source.staging / "README.md").unlink()  # the staging folder lost it somehow
    git(repo, "mv", "README.md", "ПРОЧТИ.md")
    commit(repo, {}, "rename")
    done = source.refresh()
    assert done.moved == () and done.fetched == ("ПРОЧТИ.md",)
    assert staged(source)["ПРОЧТИ.md"] == FILES["README.md"]
