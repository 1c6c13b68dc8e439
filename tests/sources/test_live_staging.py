"""Where a live service's pages are staged: each at its breadcrumbs, every path safe and apart
from every other whatever the titles and the parents the service claims."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from narezka.sources import safe_member
from narezka.sources.live_staging import LivePage, page_paths, trail

TITLES = st.text(min_size=0, max_size=12) | st.sampled_from(
    ["..", ".", "a/b", ".git", "Дом", "дом"]
)


@st.composite
def trees(draw: st.DrawFn) -> dict[str, LivePage]:
    n = draw(st.integers(1, 12))
    ids = [f"{i:04d}" for i in range(n)]
    parents = st.sampled_from([None, "gone", *ids])  # a cycle, a self-parent, a missing one
    return {i: LivePage(i, draw(TITLES), "1", draw(parents), "", ".md") for i in ids}


@given(trees())
def test_every_page_gets_its_own_safe_path(pages: dict[str, LivePage]) -> None:
    paths = page_paths(pages)
    assert set(paths) == set(pages)
    assert len({p.lower() for p in paths.values()}) == len(pages)
    for path in paths.values():
        assert safe_member(path) is None, path
        assert path.endswith(".md")


def test_a_path_is_the_breadcrumbs() -> None:
    pages = {
        "1": LivePage("1", "Home", "1", None, "", ".html"),
        "2": LivePage("2", "Tea: green/black", "1", "1", "", ".html"),
        "3": LivePage("3", "Oolong", "1", "2", "", ".html"),
        "4": LivePage("4", "oolong", "1", "2", "", ".html"),
    }
    assert trail(pages["3"], pages) == ("Home", "Tea: green/black")
    assert page_paths(pages) == {
        "1": "Home.html",
        "2": "Home/Tea_ green_black.html",
        "3": "Home/Tea_ green_black/Oolong.html",
        "4": "Home/Tea_ green_black/oolong (4).html",
    }
    twins = {**pages, "5": LivePage("5", "Tea: green/black", "1", "1", "", ".html"),
             "6": LivePage("6", "Sencha", "1", "5", "", ".html")}  # fmt: skip
    assert page_paths(twins)["6"] == "Home/Tea_ green_black (5)/Sencha.html"
