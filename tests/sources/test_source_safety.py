"""A source writes only into its own folder of narezka's cache, whatever the repository
holds: hostile paths are refused by name, and the repository itself is never written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from narezka.index import Index
from narezka.settings import Settings
from narezka.sources import GitSource, safe_member
from sources.git_repos import git, make_repo


def hostile_commit(repo: Path) -> str:
    """A commit (made by plumbing, as an attacker would) whose tree holds ``../escape.md``,
    ``.git/hooks/x.md`` and one honest ``ok.md``."""

    def mktree(rows: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), "mktree"], input=rows, capture_output=True, text=True,
            check=True,
        ).stdout.strip()  # fmt: skip

    blob = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input="# escaped\n",
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    inner = mktree(f"100644 blob {blob}\tescape.md\n")
    hooks = mktree(f"040000 tree {inner}\thooks\n")
    top = mktree(f"040000 tree {inner}\t..\n040000 tree {hooks}\t.git\n100644 blob {blob}\tok.md\n")
    return git(repo, "commit-tree", top, "-m", "hostile")


def test_paths_that_leave_the_staging_folder_are_refused_by_name(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.md": "# a\n"})
    git(repo, "update-ref", "refs/heads/evil", hostile_commit(repo))
    source = GitSource(f"git+{repo}@evil")
    done = source.refresh()
    assert done.fetched == ("ok.md",)
    assert any("'../escape.md' refused" in w for w in done.warnings)
    assert any("'.git/hooks/escape.md' refused" in w for w in done.warnings)
    assert not (source.staging.parent / "escape.md").exists()
    assert not (repo / ".git" / "hooks" / "escape.md").exists()


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../x.md", "a/../../x.md", "a/./b.md", "a//b.md", ".git/config",
     "sub/.GIT/x", "a\\b.md", "a\nb.md", ""],
)  # fmt: skip
def test_unsafe_member_paths_are_named(path: str) -> None:
    assert safe_member(path) is not None


@pytest.mark.parametrize("path", ["a.md", "docs/возврат.md", ".github/x.md", "a..b.md"])
def test_ordinary_paths_are_safe(path: str) -> None:
    assert safe_member(path) is None


def test_indexing_a_repository_writes_only_into_the_cache(
    tmp_path: Path, private_cache: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.md": "# Чай\n\nЗелёный.\n", "b/c.md": "# C\n"})
    home = private_cache.parents[1]  # the cache is the user cache dir of this test's HOME
    before = sorted(p for p in tmp_path.rglob("*") if not p.is_relative_to(home))
    status = git(repo, "status", "--porcelain", "--ignored")
    settings = Settings().replace(embedder="hash", unit="chars", size=400)
    with Index.create(GitSource(f"git+{repo}"), settings) as index:
        index.sync()
    after = sorted(p for p in tmp_path.rglob("*") if not p.is_relative_to(home))
    assert after == before
    assert git(repo, "status", "--porcelain", "--ignored") == status


def test_a_deletion_upstream_removes_only_files_the_source_wrote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.md": "# a\n", "b.md": "# b\n"})
    source = GitSource(f"git+{repo}")
    source.refresh()
    mine = source.staging / "not-from-git.txt"  # someone else's file in the folder
    mine.write_text("keep me", encoding="utf-8")
    git(repo, "rm", "--quiet", "a.md", "b.md")
    git(repo, "commit", "--quiet", "-m", "empty")
    done = source.refresh()
    assert sorted(done.deleted) == ["a.md", "b.md"]
    assert mine.read_text(encoding="utf-8") == "keep me"
