"""What CSS hides goes, what a reader can see or reveal stays (narezka.convert.css)."""

from __future__ import annotations

import pytest

from narezka.convert import convert

_PLANT = "Planted sentence."


def _md(body: str, head: str = "") -> str:
    page = f"<html><head>{head}</head><body><p>Visible.</p>{body}</body></html>"
    return convert(page.encode(), ".html", "p.html").markdown


@pytest.mark.parametrize(
    ("head", "body"),
    [
        ("", f'<p style="display: none">{_PLANT}</p>'),
        ("", f'<p style="visibility:hidden">{_PLANT}</p>'),
        ("", f'<p style="color:#fefefe">{_PLANT}</p>'),  # near-white on the white page
        ("", f'<p style="font-size:0.5px">{_PLANT}</p>'),
        ("", f'<p style="color:rgba(0,0,0,0)">{_PLANT}</p>'),
        ("", f'<p style="position:fixed;top:-200em">{_PLANT}</p>'),
        ("", f'<p style="max-height:0;overflow-y:hidden">{_PLANT}</p>'),
        ("", f'<p style="clip-path:inset(50%)">{_PLANT}</p>'),
        ("<style>p.x{display:none}</style>", f'<p class="x">{_PLANT}</p>'),
        ("<style>span{display:none}</style>", f"<p><span>{_PLANT}</span></p>"),
        ("<style>/* c */ .x, .y {display:none}</style>", f'<p class="y">{_PLANT}</p>'),
        (
            "<style>.x{display:none!important}</style>",
            f'<p class="x" style="display:block">{_PLANT}</p>',
        ),
        ("<style>.x{display:block}#y{display:none}</style>", f'<p class="x" id="y">{_PLANT}</p>'),
        ("<style>body{background:#000;color:#eee}</style>", f'<p style="color:#010101">{_PLANT}'),
        ("", f'<p style="visibility:hidden"><img alt="{_PLANT}"></p>'),
    ],
)
def test_hidden_text_goes(head: str, body: str) -> None:
    assert _md(body, head) == "Visible.\n"


@pytest.mark.parametrize(
    ("head", "body"),
    [
        ("", f'<p aria-hidden="true">{_PLANT}</p>'),  # on screen: only screen readers skip it
        ("", f'<div role="tabpanel" hidden><p>{_PLANT}</p></div>'),
        ("", f'<button aria-controls="faq1">Q</button><div id="faq1" hidden>{_PLANT}</div>'),
        ("", f'<a href="#more">More</a><div id="more" style="display:none">{_PLANT}</div>'),
        ("", f'<div hidden="until-found">{_PLANT}</div>'),
        ("", f'<p style="opacity:0;transform:translateY(20px)">{_PLANT}</p>'),
        ("", f'<p data-w-id="a1" style="opacity:0">{_PLANT}</p>'),
        ("", f'<p style="color:#fff;background:#123">{_PLANT}</p>'),
        ("", f'<p style="color:#ccc">{_PLANT}</p>'),  # light grey: low contrast, still seen
        ('<link rel="stylesheet" href="dark.css">', f'<p style="color:white">{_PLANT}</p>'),
        ("", f'<div style="background:url(bg.png)"><p style="color:#fff">{_PLANT}</p></div>'),
        (
            '<link rel="stylesheet" href="site.css">',
            f'<div style="font-size:0;background:#fff;color:#fff"><p class="c">{_PLANT}</p></div>',
        ),
        ("<style>@media print{.x{display:none}}</style>", f'<p class="x">{_PLANT}</p>'),
        ("<style>.a .x{display:none}</style>", f'<div class="a"><p class="x">{_PLANT}</p></div>'),
        ("<style>.x{display:none}.x{display:block}</style>", f'<p class="x">{_PLANT}</p>'),
        ("<style>.x{display:none}</style>", f'<p class="x" style="display:block">{_PLANT}</p>'),
        ("", f'<p style="position:relative;left:-20px">{_PLANT}</p>'),
        ("", f'<p style="width:0">{_PLANT}</p>'),  # no overflow:hidden: the text spills out
    ],
)
def test_text_a_reader_sees_or_can_reveal_stays(head: str, body: str) -> None:
    assert _PLANT in _md(body, head)


def test_a_child_that_sets_visibility_or_size_back_stays() -> None:
    body = (
        f'<div style="visibility:hidden">{_PLANT}<p style="visibility:visible">Shown.</p></div>'
        f'<div style="font-size:0">{_PLANT}<span style="font-size:14px">Sized.</span></div>'
        f'<div style="color:#fff">{_PLANT}<p style="color:#222">Dark.</p></div>'
    )
    md = _md(body)
    assert _PLANT not in md
    assert "Shown." in md and "Sized." in md and "Dark." in md


def test_a_link_to_text_moved_off_the_page_does_not_keep_it() -> None:
    body = f'<a href="#x">x</a><p id="x" style="position:absolute;left:-5000px">{_PLANT}</p>'
    assert _PLANT not in _md(body)


def test_hidden_table_cells_and_links_go_too() -> None:
    body = (
        '<table><tr><td>Tariff</td><td style="display:none">Secret</td></tr></table>'
        '<p>Go <a href="/x" style="font-size:0">hidden link</a> there.</p>'
    )
    md = _md(body)
    assert "Secret" not in md and "hidden link" not in md
    # Its hidden cell gone, the table is one cell: read as the paragraph it holds.
    assert "\n\nTariff\n\n" in md and "Go there." in md


def test_the_bundled_example_page_loses_nothing() -> None:
    from conftest import EXAMPLES

    data = (EXAMPLES / "delivery-zones.html").read_bytes()
    md = convert(data, ".html", "delivery-zones.html").markdown
    for part in ("# Зоны доставки", "## Таблица регионов", "| Москва |"):
        assert part in md
