"""Tests for narezka.discover.walk: finding input files and reading them."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from discover.test_decode import GARBAGE_PARAGRAPH
from narezka.discover import iter_files, read_all, read_document
from narezka.errors import BinaryFileError, DecodeError, RefusedFileError, SourceError
from narezka.runs import chunk_documents


def _write(root: Path, rel: str, data: str | bytes = "text\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def _rels(
    root: Path, include: Sequence[str] | None = None, exclude: Sequence[str] = ()
) -> list[str]:
    pairs = (
        list(iter_files([root], exclude=exclude))
        if include is None
        else list(iter_files([root], include, exclude))
    )
    assert all(r == root for r, _ in pairs)
    return [f.relative_to(root).as_posix() for _, f in pairs]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in ["b.md", "a.md", "z.txt", "sub/c.md", "sub/a.markdown", "sub/deep/d.mdx", "x.png"]:
        _write(tmp_path, rel)
    return tmp_path


def test_walk_yields_default_extensions_in_sorted_order(tree: Path) -> None:
    assert _rels(tree) == ["a.md", "b.md", "sub/a.markdown", "sub/c.md", "sub/deep/d.mdx", "z.txt"]


def test_double_star_slash_matches_zero_or_more_dirs(tree: Path) -> None:
    assert _rels(tree, ["**/*.md"]) == ["a.md", "b.md", "sub/c.md"]
    # .gitignore semantics: a pattern without a slash matches at any depth, one with a
    # slash is anchored to the root.
    assert _rels(tree, ["*.md"]) == ["a.md", "b.md", "sub/c.md"]
    assert _rels(tree, ["/*.md"]) == ["a.md", "b.md"]
    assert _rels(tree, ["sub/*.m*"]) == ["sub/a.markdown", "sub/c.md"]
    assert _rels(tree, ["sub/**/*.md?"]) == ["sub/deep/d.mdx"]
    assert _rels(tree, ["[ab].md"]) == ["a.md", "b.md"]
    assert _rels(tree, ["[!a].md"]) == ["b.md", "sub/c.md"]


def test_exclude_wins_and_prunes_directories(tree: Path) -> None:
    assert _rels(tree, ["**/*.md"], ["a.md"]) == ["b.md", "sub/c.md"]
    assert _rels(tree, exclude=["sub/**"]) == ["a.md", "b.md", "z.txt"]
    assert _rels(tree, exclude=["**/deep"]) == [
        "a.md",
        "b.md",
        "sub/a.markdown",
        "sub/c.md",
        "z.txt",
    ]


def test_tool_dirs_are_skipped_but_other_dot_dirs_are_read(tmp_path: Path) -> None:
    for rel in [
        ".git/x.md",
        ".narezka/y.md",
        ".github/PULL_REQUEST_TEMPLATE.md",
        "node_modules/pkg/readme.md",
        "docs/__pycache__/q.md",
        "docs/.venv/lib/readme.md",
        "docs/ok.md",
    ]:
        _write(tmp_path, rel)
    assert _rels(tmp_path) == [".github/PULL_REQUEST_TEMPLATE.md", "docs/ok.md"]


def test_a_file_path_is_yielded_whatever_the_globs(tmp_path: Path) -> None:
    file = _write(tmp_path, "notes/readme.rst", "Hello\r\n")
    assert list(iter_files([file], ["**/*.md"], ["**"])) == [(file.parent, file)]
    doc, warnings = read_document(file.parent, file)
    assert (doc.source, doc.text, warnings) == ("readme.rst", "Hello\n", [])


def test_paths_keep_their_order_and_files_are_not_repeated(tree: Path) -> None:
    pairs = list(iter_files([tree / "sub", tree / "a.md", tree, tree / "sub" / "c.md"]))
    assert [(r.name, f.relative_to(tree).as_posix()) for r, f in pairs] == [
        ("sub", "sub/a.markdown"),
        ("sub", "sub/c.md"),
        ("sub", "sub/deep/d.mdx"),
        (tree.name, "a.md"),
        (tree.name, "b.md"),
        (tree.name, "z.txt"),
    ]


def test_missing_path_raises_source_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(SourceError, match="no such file or directory") as info:
        list(iter_files([missing]))
    assert info.value.path == str(missing)


def test_missing_path_is_collected_when_asked(tree: Path) -> None:
    errors: list[SourceError] = []
    pairs = list(iter_files([tree / "nope", tree / "a.md"], errors=errors))
    assert pairs == [(tree, tree / "a.md")]
    assert [e.path for e in errors] == [str(tree / "nope")]


def _run_with_timeout(
    paths: list[Path], errors: list[SourceError] | None = None, *, follow: bool = False
) -> list[tuple[Path, Path]]:
    result: list[tuple[Path, Path]] = []
    problems = [] if errors is None else errors
    thread = threading.Thread(
        target=lambda: result.extend(iter_files(paths, errors=problems, follow_symlinks=follow)),
        daemon=True,
    )
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "walk did not finish: symlink loop?"
    return result


def test_symlinks_out_of_the_corpus_are_followed_when_asked_and_loops_end(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    _write(root, "a.md")
    _write(root, "sub/b.md")
    real = _write(tmp_path, "outside/real.md", "outside\n")
    (root / "link.md").symlink_to(real)
    (root / "sub" / "up").symlink_to(root, target_is_directory=True)  # loop back to root
    (root / "ext").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "self.md").symlink_to(root / "self.md")  # a -> a: cannot be resolved
    (root / "dangling.md").symlink_to(root / "gone.md")

    errors: list[SourceError] = []
    found = _run_with_timeout([root], errors, follow=True)
    rels = [f.relative_to(root).as_posix() for _, f in found]

    assert rels == ["a.md", "ext/real.md", "link.md", "sub/b.md"]
    # Loops are reported by name, not dropped silently.
    problems = {e.path: e.problem for e in errors}
    assert "loop" in problems["sub/up"]
    assert "symbolic links" in problems["self.md"]
    # A link to a missing target is named too: a sync keeps what it indexed through it.
    assert problems["dangling.md"] == "symlink to a missing target, skipped"
    doc, _ = read_document(root, root / "link.md")
    assert (doc.source, doc.text) == ("link.md", "outside\n")


def test_read_document_fills_the_raw_document(tmp_path: Path) -> None:
    raw = "# Заголовок\r\nтекст\r\n".encode("cp1251")
    file = _write(tmp_path, "ru/doc.md", raw)

    doc, warnings = read_document(tmp_path, file)

    assert doc.source == "ru/doc.md"
    assert doc.text == "# Заголовок\nтекст\n"
    assert doc.encoding == "cp1251"
    assert doc.size == len(raw)
    assert doc.mtime == file.stat().st_mtime
    assert warnings == [f"{file}: decoded as cp1251 (not UTF-8)"]


def test_unreadable_file_raises_source_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = _write(tmp_path, "secret.md")
    real_open = os.open

    # Tests may run as root, where chmod 000 does not stop reading; fake the refusal instead.
    def refuse(path: Any, flags: int, *args: Any) -> int:
        if Path(path) == file:
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr("narezka.discover.walk.os.open", refuse)
    with pytest.raises(SourceError, match=r"secret\.md: cannot read: Permission denied") as info:
        read_document(tmp_path, file)
    assert info.value.path == str(file)


def test_read_all_goes_on_past_bad_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, "1-good.md", "# Good\n")
    _write(tmp_path, "2-binary.md", b"\x89PNG\r\n\x1a\n\x00\x00")
    _write(tmp_path, "3-noise.md", bytes(range(0x80, 0x100)) * 3)
    _write(tmp_path, "4-legacy.md", "Привет, это старый файл в кодировке Windows.".encode("cp1251"))
    _write(tmp_path, "locked/5-hidden-by-permissions.md")
    _write(tmp_path, "6-last.txt", "last\n")
    real_scandir = os.scandir

    def scandir(path: Path) -> object:
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)  # the walker lists directories with it

    docs, errors, warnings = read_all([tmp_path, tmp_path / "missing.md"])

    assert [d.source for d in docs] == ["1-good.md", "4-legacy.md", "6-last.txt"]
    assert docs[1].text.startswith("Привет")
    by_name = {Path(e.path).name: e for e in errors}
    assert sorted(by_name) == ["2-binary.md", "3-noise.md", "locked", "missing.md"]
    assert isinstance(by_name["2-binary.md"], BinaryFileError)
    assert isinstance(by_name["3-noise.md"], DecodeError)
    assert all(Path(e.path).name in str(e) for e in errors)
    assert warnings == [f"{tmp_path / '4-legacy.md'}: decoded as cp1251 (not UTF-8)"]


def test_text_with_stray_controls_is_chunked_and_binary_still_skipped(tmp_path: Path) -> None:
    # Issue 10 item 4: one NUL used to drop the whole file as "binary".
    _write(tmp_path, "garbage.md", GARBAGE_PARAGRAPH.encode("utf-8"))
    _write(tmp_path, "logo.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 40)

    report = chunk_documents([tmp_path], "headings", size=400)

    assert [(Path(e.path).name, type(e)) for e in report.skipped] == [("logo.md", BinaryFileError)]
    assert "logo.md: binary file (PNG image), skipped" in str(report.skipped[0])
    text = GARBAGE_PARAGRAPH.removeprefix("\ufeff").replace("\r\n", "\n")
    assert report.chunks and all(c.text == text[c.start : c.end] for c in report.chunks)
    assert "\x00\x07" in "".join(c.text for c in report.chunks)
    dropped = "\x00\x07\u200b\ufffd"
    assert not any(ch in c.embed_text for c in report.chunks for ch in dropped)
    # The four dropped characters are counted, the rest of the paragraph is embedded.
    assert report.removed_chars == 4
    assert any("посреди строки, дальше текст" in c.embed_text for c in report.chunks)


def _undecodable_tree(tmp_path: Path) -> Path:
    """good.md beside a file and a folder whose names are Latin-1 bytes, not UTF-8."""
    root = tmp_path / "kb"
    _write(root, "good.md", "# Хорошо\n\nВсё в порядке.\n")
    raw = os.fsencode(root)
    with open(raw + b"/caf\xe9.md", "wb") as f:
        f.write(b"# Cafe\n\ntext\n")
    os.mkdir(raw + b"/d\xe9p")
    with open(raw + b"/d\xe9p/inner.md", "wb") as f:
        f.write(b"# Inner\n\ntext\n")
    with open(raw + b"/caf\xe9.png", "wb") as f:  # not an input: not reported
        f.write(b"\x89PNG")
    return root


def test_a_name_that_is_not_utf8_is_named_skipped_and_the_walk_goes_on(tmp_path: Path) -> None:
    root = _undecodable_tree(tmp_path)
    errors: list[SourceError] = []
    rels = [f.relative_to(root).as_posix() for _, f in iter_files([root], errors=errors)]
    assert rels == ["good.md"]
    assert {e.path: e.problem for e in errors} == {
        "caf\\xe9.md": "file name is not valid UTF-8 (rename it to index it)",
        "d\\xe9p": "folder name is not valid UTF-8 (rename it to index it)",
    }
    # The message must survive what every output does with it: UTF-8 and JSON.
    for error in errors:
        str(error).encode("utf-8")

    direct: list[SourceError] = []
    assert list(iter_files([os.fsdecode(os.fsencode(root) + b"/caf\xe9.md")], errors=direct)) == []
    assert [e.path for e in direct] == ["caf\\xe9.md"]


def test_an_excluded_undecodable_name_is_not_reported(tmp_path: Path) -> None:
    root = _undecodable_tree(tmp_path)
    errors: list[SourceError] = []
    list(iter_files([root], exclude=["caf*", "d*"], errors=errors))
    assert errors == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_one_bad_entry_does_not_drop_the_rest_of_its_folder(tmp_path: Path, jobs: int) -> None:
    """A symlink loop or a non-UTF-8 name in a folder once made ``chunk`` drop the whole
    folder: the walk's first problem was raised instead of collected."""
    root = _undecodable_tree(tmp_path)
    (root / "sub").mkdir()
    (root / "sub" / "loop").symlink_to(root, target_is_directory=True)
    report = chunk_documents([root], jobs=jobs)
    assert {c.source for c in report.chunks} == {"good.md"}
    assert {e.path for e in report.skipped} == {"caf\\xe9.md", "d\\xe9p", "sub/loop"}


def test_the_walk_yields_paths_sorted_as_strings_for_folders_beside_like_named_files(
    tmp_path: Path,
) -> None:
    """Sorted as whole strings, a folder's files fall between its like-named siblings
    ('a-b.md' < 'a.md' < 'a/…' < 'a0.md'): the walk must yield that order as it goes, since
    a sync merges it with the manifest's (issue 27)."""
    names = ["a.md", "a/b.md", "a/c/d.md", "a-b.md", "a0.md", "ab.md", "a.b/x.md", "z.md"]
    names += ["Я/ё.md", "ж.md", "é.md", "日本/語.md", "a b/c.md", "a!/c.md"]
    for name in names:
        _write(tmp_path, name)
    assert _rels(tmp_path) == sorted(names)


def test_the_walk_streams_its_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first file comes before the last folder is listed: no list of every path is held
    (it was ~110 MB at a million files)."""
    for group in range(20):
        _write(tmp_path, f"g{group:02d}/doc.md")
    listed: list[str] = []
    real_scandir = os.scandir

    def counting(path: Any) -> Any:
        listed.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    walk = iter_files([tmp_path], errors=[])
    first = next(walk)
    assert first[1] == tmp_path / "g00" / "doc.md"
    assert len(listed) == 2  # the root and g00
    assert len(list(walk)) == 19 and len(listed) == 21


def test_a_link_to_a_folder_of_the_corpus_lists_it_under_its_real_path_wherever_it_sorts(
    tmp_path: Path,
) -> None:
    """A link sorting before the folder it leads to (``a-link`` → ``real``) does not take
    its files: they are listed once, under the real path, and the link is named. A link to a
    folder the walk skips (an excluded one) is refused and named: a link cannot reach what
    ``exclude`` keeps out (#38 row 13)."""
    root = tmp_path / "root"
    _write(root, "real/r.md")
    _write(root, "drafts/d.md")
    (root / "a-link").symlink_to(root / "real", target_is_directory=True)
    (root / "b-link").symlink_to(root / "drafts", target_is_directory=True)
    (root / "c-root").symlink_to(root, target_is_directory=True)
    errors: list[SourceError] = []
    found = list(iter_files([root], exclude=["drafts/"], errors=errors))
    assert [f.relative_to(root).as_posix() for _, f in found] == ["real/r.md"]
    assert {e.path: e.problem for e in errors} == {
        "a-link": "symlink to a folder read by another path (a loop?), skipped",
        "b-link": "symlink to drafts, which is excluded; skipped",
        "c-root": "symlink to a folder read by another path (a loop?), skipped",
    }


def test_two_links_to_one_folder_outside_read_it_once_under_the_first(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(tmp_path, "outside/o.md")
    _write(root, "x.md")
    for name in ("m-link", "b-link"):
        (root / name).symlink_to(tmp_path / "outside", target_is_directory=True)
    errors: list[SourceError] = []
    found = list(iter_files([root], errors=errors, follow_symlinks=True))
    assert [f.relative_to(root).as_posix() for _, f in found] == ["b-link/o.md", "x.md"]
    assert [(e.path, "loop" in e.problem) for e in errors] == [("m-link", True)]


def test_links_are_judged_by_their_targets_corpus_path(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ("ok.md", "private/p.md", "deep/keep/k.md", ".git/hooks/h.md", "notes.md"):
        _write(root, name)
    links = {
        "l-ok.md": "ok.md",  # a link to a file that is read anyway: read under its name too
        "l-private.md": "private/p.md",
        "l-git.md": ".git/hooks/h.md",
        "l-hooks": ".git/hooks",
        "l-drafts.md": "deep/keep/k.md",
    }
    for name, target in links.items():
        (root / name).symlink_to(root / target)
    errors: list[SourceError] = []
    found = iter_files([root], exclude=["private/", "deep/keep/k.md"], errors=errors)
    listed = [f.relative_to(root).as_posix() for _, f in found]
    assert listed == ["l-ok.md", "notes.md", "ok.md"]
    assert {e.path: e.problem for e in errors} == {
        "l-drafts.md": "symlink to deep/keep/k.md, which is excluded; skipped",
        "l-git.md": "symlink to .git/hooks/h.md: inside .git/, which is never read; skipped",
        "l-hooks": "symlink to .git/hooks: inside .git/, which is never read; skipped",
        "l-private.md": "symlink to private/p.md, which is excluded; skipped",
    }
    assert all(isinstance(e, RefusedFileError) for e in errors)
