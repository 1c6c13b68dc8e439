"""HTML tables read as a grid: rowspan and colspan put each value under its own header."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from narezka.convert import convert
from narezka.convert.html import MAX_TABLE_COLUMNS


def _table(markdown: str) -> list[list[str]]:
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    return [rows[0], *rows[2:]]  # without the delimiter row


def test_spanning_cells_fill_every_slot_they_cover_and_header_rows_merge() -> None:
    page = b"""<table>
    <tr><th rowspan=2>Region</th><th colspan=2>2023</th></tr>
    <tr><th>Q1</th><th>Q2</th></tr>
    <tr><td rowspan=2>North</td><td>10</td><td>11</td></tr>
    <tr><td>12</td><td>13</td></tr>
    <tr><td>South</td><td colspan=2>n/a</td></tr>
    </table>"""
    assert _table(convert(page, ".html", "t.html").markdown) == [
        ["Region", "2023 Q1", "2023 Q2"],
        ["North", "10", "11"],
        ["North", "12", "13"],
        ["South", "n/a", "n/a"],
    ]


def test_rowspan_zero_covers_the_rest_of_the_table_and_thead_rows_are_headers() -> None:
    page = b"""<table><thead><tr><td>Plan</td><td>Price</td></tr>
    <tr><td></td><td>per month</td></tr></thead>
    <tr><td rowspan="0">Basic</td><td>5</td></tr><tr><td>6</td></tr></table>"""
    assert _table(convert(page, ".html", "t.html").markdown) == [
        ["Plan", "Price per month"],
        ["Basic", "5"],
        ["Basic", "6"],
    ]


def test_odd_span_values_count_as_one() -> None:
    page = b"""<table><tr><th>A</th><th>B</th></tr>
    <tr><td colspan="x">1</td><td rowspan="-3">2</td></tr></table>"""
    assert _table(convert(page, ".html", "t.html").markdown) == [["A", "B"], ["1", "2"]]


def test_a_few_bytes_of_huge_spans_cannot_make_a_huge_grid() -> None:
    cell = '<td colspan="99999" rowspan="99999">x</td>'
    page = ("<table>" + "<tr>" + cell * 20 + "</tr>" * 30 + "</table>").encode()
    started = time.perf_counter()
    rows = _table(convert(page, ".html", "bomb.html").markdown)
    assert time.perf_counter() - started < 10
    assert max(len(r) for r in rows) == MAX_TABLE_COLUMNS


@given(
    st.lists(
        st.lists(st.text(alphabet="абвгxyz019", min_size=1, max_size=5), min_size=3, max_size=3),
        min_size=2,
        max_size=6,
    )
)
def test_a_table_without_spans_keeps_every_cell_in_place(cells: list[list[str]]) -> None:
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in cells)
    markdown = convert(f"<table>{body}</table>".encode(), ".html", "t.html").markdown
    assert _table(markdown) == cells


def test_what_a_table_holds_outside_its_cells_is_read_before_it() -> None:
    # Broken markup from a real page: a table right in a row (no cell around it), which a
    # browser shows before the outer table; and a caption.
    page = b"""<table><caption>Prices, 2024</caption><tr><td>Tea</td><td>5</td></tr>
    <tr><table><tr><td>All rights reserved. The contents may not be reproduced.</td></tr>
    </table></tr></table>"""
    text = convert(page, ".html", "t.html").markdown
    assert "All rights reserved. The contents may not be reproduced." in text
    assert "Prices, 2024" in text
    assert text.index("Prices, 2024") < text.index("| Tea | 5 |")


def test_a_script_in_a_cell_is_not_its_text() -> None:
    page = b"""<table><tr><td>Tweet<script>(function(d) { var js; })(document);</script></td>
    <td><style>td { color: red }</style>Share</td></tr></table>"""
    text = convert(page, ".html", "t.html").markdown
    assert "| Tweet | Share |" in text and "function" not in text and "color" not in text


def test_a_list_right_in_a_list_nests_under_the_item_before_it() -> None:
    page = b"""<ul><li>A test list</li><ul><li>With sub-bullets!</li><li>And another</li></ul>
    <li>Back at the root</li></ul>"""
    text = convert(page, ".html", "t.html").markdown
    assert text.split("\n\n") == [
        "- A test list",
        "   - With sub-bullets!",
        "   - And another",
        "- Back at the root\n",
    ]


def test_a_table_of_one_cell_is_read_as_the_blocks_it_holds() -> None:
    # An old layout: the site's title in a one-cell banner table, a footer line in another.
    page = b"""<table><tr><td><font><h1>SteelJIS: Japanese Steels</h1></font></td></tr></table>
    <table><tr><td>Grade</td><td>SNB22-3</td></tr></table>
    <table><tr><th>Only a header</th></tr><tr></tr></table>"""
    text = convert(page, ".html", "t.html").markdown
    assert text.startswith("# SteelJIS: Japanese Steels\n")
    assert "| Grade | SNB22-3 |" in text  # two cells: a table
    assert "\n\nOnly a header\n" in text and "| Only a header |" not in text
