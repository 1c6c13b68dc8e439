"""Links to a file at a commit: the known forges' own URL shapes, a template for others, and
the lines a span covers."""

from __future__ import annotations

import pytest

from narezka.sources.links import check_template, forge_template, line_span, render_link

SHA = "5e1c0ffee"


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("https://github.com/org/repo.git", f"https://github.com/org/repo/blob/{SHA}/d/a%20b.md#L3-L5"),
        ("https://www.github.com/org/repo", f"https://github.com/org/repo/blob/{SHA}/d/a%20b.md#L3-L5"),
        ("https://gitlab.com/g/sub/repo", f"https://gitlab.com/g/sub/repo/-/blob/{SHA}/d/a%20b.md#L3-5"),
        ("https://bitbucket.org/team/repo.git", f"https://bitbucket.org/team/repo/src/{SHA}/d/a%20b.md#lines-3:5"),
        ("https://codeberg.org/o/r", f"https://codeberg.org/o/r/src/commit/{SHA}/d/a%20b.md#L3-L5"),
    ],
)  # fmt: skip
def test_known_forges_link_to_the_file_at_its_lines(url: str, link: str) -> None:
    template = forge_template(url)
    assert template is not None
    assert render_link(template, commit=SHA, path="d/a b.md", lines=(3, 5)) == link


@pytest.mark.parametrize(
    "url", ["https://git.example.org/org/repo", "file:///srv/repo", "/srv/repo", "https://github.com/org"]
)  # fmt: skip
def test_other_hosts_and_local_repositories_have_no_forge_link(url: str) -> None:
    assert forge_template(url) is None


def test_without_lines_the_fragment_is_dropped() -> None:
    template = "https://h/{commit}/{path}#L{first}-L{last}"
    assert render_link(template, commit=SHA, path="Чай.md", lines=None) == (
        f"https://h/{SHA}/%D0%A7%D0%B0%D0%B9.md"
    )


def test_a_template_with_an_unknown_field_is_refused() -> None:
    assert check_template("https://h/{commit}/{path}") == "https://h/{commit}/{path}"
    with pytest.raises(ValueError, match="sha"):
        check_template("https://h/{sha}/{path}")


@pytest.mark.parametrize(
    ("start", "end", "lines"),
    [
        (0, 3, (1, 1)),
        (0, 4, (1, 1)),
        (4, 9, (2, 3)),
        (4, 8, (2, 2)),
        (11, 13, (4, 4)),
        (10, 12, (3, 4)),
    ],
)
def test_line_span_counts_the_lines_a_span_covers(
    start: int, end: int, lines: tuple[int, int]
) -> None:
    text = "abc\ndef\ngh\nij"
    assert line_span(text, start, end) == lines
