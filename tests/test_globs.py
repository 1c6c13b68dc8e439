"""Globs with .gitignore semantics, everywhere a pattern meets a path (issue 23, item 11):
``--include '*.md'`` once matched only top-level files and a sync deleted the nested ones."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from narezka import globs
from narezka.api.indexing import index
from narezka.embed import HashEmbedder
from narezka.enrich.payload import match_rule
from narezka.errors import ConfigError
from narezka.globs import MAX_GLOB_CHARS, Glob, compile_glob, glob_matches, glob_regex, literal_glob
from narezka.index import Index
from narezka.search import Filter
from narezka.serve.service import Service
from narezka.settings import Settings

segment = st.text(alphabet="abcxyz_-.", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..")
)
paths = st.lists(segment, min_size=1, max_size=4).map("/".join)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.md", "a.md", True),
        ("*.md", "sub/deep/a.md", True),  # no slash: any depth
        ("*.md", "a.mdx", False),
        ("/*.md", "a.md", True),  # a leading slash anchors
        ("/*.md", "sub/a.md", False),
        ("docs/*.md", "docs/a.md", True),  # a middle slash anchors
        ("docs/*.md", "x/docs/a.md", False),
        ("docs/*.md", "docs/sub/a.md", False),
        ("**/docs/*.md", "x/docs/a.md", True),
        ("docs/**", "docs/sub/a.md", True),
        ("drafts", "x/drafts/a.md", True),  # a folder's name: everything inside
        ("drafts/", "drafts/a.md", True),
        ("drafts/", "drafts", False),  # trailing slash: folders only
        ("drafts/", "drafts/", True),
        ("a/**/b.md", "a/b.md", True),
        ("a/**/b.md", "a/x/y/b.md", True),
        ("[!a].md", "sub/b.md", True),
        ("?.md", "sub/ab.md", False),
    ],
)
def test_gitignore_semantics(pattern: str, path: str, expected: bool) -> None:
    assert glob_matches(pattern, path) is expected


folders = st.lists(st.text(alphabet="abxyz_-", min_size=1, max_size=6), max_size=4)
suffixes = st.sampled_from([".md", ".txt", ".pdf"])


@given(folders, segment, suffixes, suffixes)
def test_a_suffix_pattern_matches_at_any_depth(
    dirs: list[str], stem: str, suffix: str, other: str
) -> None:
    path = "/".join([*dirs, stem + suffix])
    assert glob_matches(f"*{suffix}", path)
    assert glob_matches(f"*{other}", path) is path.endswith(other)
    assert glob_matches(f"/*{suffix}", path) is (not dirs)


@given(paths, paths)
def test_an_anchored_pattern_matches_only_below_its_own_folder(top: str, rest: str) -> None:
    assert glob_matches(f"{top}/**", f"{top}/{rest}")
    assert not glob_matches(f"{top}/**", f"other-{top}/{rest}")


def test_path_filters_and_rules_use_the_same_semantics() -> None:
    assert Filter(path="*.md").matches_path("sub/tariffs.md")
    assert not Filter(path="*.md").matches_path("sub/tariffs.mdx")
    assert match_rule("notes/MEMORY.md", (("MEMORY.md", "hot"),), "warm") == "hot"
    assert match_rule("memory/x.md.bak", (("memory/*.md", "warm"),), "cold") == "cold"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Тарифы\n\nБазовый тариф.\n", encoding="utf-8")
    (root / "sub" / "tariffs.md").write_text("# Тарифы\n\nВложенный тариф.\n", "utf-8")
    (root / "page.rst").write_text("Страница\n========\n\nтекст\n", encoding="utf-8")
    return root


def test_include_star_md_keeps_nested_files(notes: Path) -> None:
    model = HashEmbedder(64)
    first = index(notes, embedder=model)
    assert first.files_new == 2
    again = index(notes, embedder=model, include=["*.md", "*.rst"])
    assert (again.files_deleted, again.files_new, again.files_unchanged) == (0, 1, 2)
    assert again.unmatched == []


def test_a_pattern_change_keeps_and_names_files_until_prune(notes: Path) -> None:
    model = HashEmbedder(64)
    index(notes, embedder=model)
    kept = index(notes, embedder=model, exclude=["sub/"])
    assert kept.files_deleted == 0 and kept.unmatched == ["sub/tariffs.md"]
    assert any("1 indexed file(s) no longer match" in w and "--prune" in w for w in kept.warnings)
    with Index.open(notes, embedder=model) as ix:
        assert {s.path for s in ix.sources()} == {"a.md", "sub/tariffs.md"}
        ix.settings = ix.settings.replace(exclude=("sub/",))
        pruned = ix.sync(prune=True)
        assert pruned.files_deleted == 1 and pruned.unmatched == ["sub/tariffs.md"]
        assert {s.path for s in ix.sources()} == {"a.md"}
    # A file truly deleted needs no --prune.
    (notes / "a.md").unlink()
    (notes / "b.md").write_text("# Б\n\nтекст\n", encoding="utf-8")
    gone = index(notes, embedder=model, exclude=["sub/"])
    assert gone.files_deleted == 1 and gone.unmatched == []


def test_the_service_lists_nested_sources_for_a_name_glob(notes: Path) -> None:
    with Index.create(notes, Settings(embedder="hash")) as ix:
        ix.sync()
    with Service(notes, watch=False) as service:
        listed = service.list_sources("*.md")
    assert [row["path"] for row in listed["sources"]] == ["a.md", "sub/tariffs.md"]


def test_literal_globs_name_one_path_only() -> None:
    glob = literal_glob("idx")
    assert glob_matches(glob, "idx/") and glob_matches(glob, "idx/a.md")
    assert not glob_matches(glob, "sub/idx/a.md")
    odd = literal_glob("a[1]*?.md")
    assert glob_matches(odd, "a[1]*?.md") and not glob_matches(odd, "a1xy.md")


def test_a_store_inside_the_corpus_excludes_only_itself(notes: Path) -> None:
    (notes / "sub" / "idx").mkdir()
    (notes / "sub" / "idx" / "deep.md").write_text("# Глубоко\n\nтекст\n", encoding="utf-8")
    report = index(notes, store_dir=notes / "idx", embedder=HashEmbedder(64))
    assert report.files_new == 3


# The automaton against the regex it replaces, on patterns small enough for the regex to be fast.
glob_text = st.text(alphabet="ab/*?[]!-.", max_size=8)
path_text = st.text(alphabet="ab/.-!", max_size=10)


@given(glob_text, path_text)
def test_the_linear_matcher_agrees_with_the_regex(pattern: str, path: str) -> None:
    try:
        reference = glob_regex(pattern)
    except ConfigError:  # a malformed class: both refuse it
        with pytest.raises(ConfigError):
            compile_glob(pattern)
        return
    expected = reference.fullmatch(path) is not None
    glob = compile_glob(pattern)
    assert glob.run(path) is expected  # the automaton, whatever the pattern
    assert glob.matches(path) is expected  # the regex where it cannot backtrack far


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*.md", "a/" * 3000 + "x" * 6000),
        ("*.md", "/.md" * 3000),
        ("**/x/*.md", "x/" * 6000 + "q"),
        ("a/**/b.md", "a/" + "c/" * 6000),
        ("**/docs/*.md", "docs/" * 2400 + "a.mdx"),
        ("*[a-z]*[0-9]*!", "a1" * 6000),
        ("a**b**c**d", "a" + "b" * 12000),
    ],
)
def test_the_worst_paths_for_each_shape_stay_fast(pattern: str, path: str) -> None:
    glob = compile_glob(pattern)
    started = time.perf_counter()
    assert glob.matches(path) is glob.run(path)
    assert time.perf_counter() - started < 0.25


def test_a_hostile_glob_costs_milliseconds_not_minutes() -> None:
    # Exponential for a backtracking regex: 55 s of CPU per path before the matcher changed.
    hostile = "*[a-z]" * 12 + "*!"
    path = "a" * 4000 + "/" + "b" * 4000
    started = time.perf_counter()
    assert not glob_matches(hostile, path)
    assert glob_matches(hostile, "x/" + "a" * 4000 + "!")
    assert time.perf_counter() - started < 0.5


def test_a_full_automaton_goes_on_through_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globs, "MAX_DFA_STATES", 3)
    glob = Glob("a*b?c/**")
    assert glob.matches("axxbyc/d/e") and not glob.matches("axxbyd/d/e")
    assert glob.matches("abbyc/") and not glob.matches("abbycd")


def test_too_long_or_malformed_globs_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=f"longer than the limit of {MAX_GLOB_CHARS}"):
        glob_matches("a" * (MAX_GLOB_CHARS + 1), "a")
    with pytest.raises(ConfigError, match=r"'\[z-a\]': not a valid glob \(bad character range"):
        Filter(path="[z-a]")
    assert glob_matches("a" * MAX_GLOB_CHARS, "a" * MAX_GLOB_CHARS)
