"""The eval page's drill-down in headless Chromium: a click (or Enter) on a question brings
the drill-down into view with the keyboard focus on it, and its cards show whole lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from narezka.api.evaluating import evaluate
from narezka.embed import HashEmbedder
from narezka.evaluate.html import html_report

from conftest import EXAMPLES

# Every line box of a card's text against the card's visible box: a line whose top is inside
# and whose bottom is outside is cut in half. Also what the card shows against what it holds.
CARDS = """() => [...document.querySelectorAll('#drill .retrieved .text')].map((t) => {
  const box = t.getBoundingClientRect(), range = document.createRange();
  range.selectNodeContents(t);
  const lines = [...range.getClientRects()].filter((r) => r.height > 0);
  const cut = lines.filter((r) => r.top < box.bottom - 0.5 && r.bottom > box.bottom + 0.5);
  const more = t.nextElementSibling && t.nextElementSibling.matches('button.more');
  return {cut: cut.length, clipped: t.scrollHeight > t.clientHeight + 1, more: !!more,
          shown: t.clientHeight, line: parseFloat(getComputedStyle(t).lineHeight)};
})"""

IN_VIEW = """() => {
  const r = document.getElementById('drill').getBoundingClientRect();
  return {top: r.top, height: innerHeight, focused: document.activeElement.id,
          scrolled: scrollY};
}"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("drill")
    run = evaluate(
        EXAMPLES,
        EXAMPLES / "golden.jsonl",
        strategies="fixed:size=120 headings",
        ks="1,3,5",
        embedder=HashEmbedder(64),
        cache_path=tmp / "c.sqlite",
    )
    out = tmp / "report.html"
    out.write_text(html_report(run, command="narezka eval …"), encoding="utf-8")
    return out


def _assert_in_view(page: Any) -> None:
    where = page.evaluate(IN_VIEW)
    assert where["scrolled"] > 0, "the page did not scroll to the drill-down"
    assert 0 <= where["top"] < where["height"] / 4, where
    assert where["focused"] == "drill", "the keyboard focus stayed behind"


def test_a_click_on_a_question_brings_the_drill_down_into_view_and_focus(
    report: Path, open_page: Any, tmp_path: Path
) -> None:
    page = open_page(report)
    last = page.locator(".questions tbody tr").count() - 1
    page.click(f".questions tr[data-question='{last}']")
    _assert_in_view(page)
    page.screenshot(path=str(tmp_path / "drill.png"))


def test_enter_on_a_question_row_does_the_same(report: Path, open_page: Any) -> None:
    page = open_page(report)
    page.focus(".questions tr[data-question='0']")
    page.keyboard.press("Enter")
    _assert_in_view(page)
    page.evaluate("() => scrollTo(0, 0)")
    page.focus(".questions tr[data-question='2']")
    page.keyboard.press(" ")
    _assert_in_view(page)
    assert page.text_content("#drill .q") == page.text_content(
        ".questions tr[data-question='2'] td:nth-child(2)"
    )


def test_cards_show_whole_lines_and_a_long_one_opens_in_full(report: Path, open_page: Any) -> None:
    page = open_page(report)
    rows = page.locator(".questions tbody tr").count()
    clamped = 0
    for n in range(rows):
        page.click(f".questions tr[data-question='{n}']")
        cards = page.evaluate(CARDS)
        assert cards
        for card in cards:
            assert card["cut"] == 0, (n, card)
            assert card["shown"] % card["line"] == 0, (n, card)  # a whole number of lines
            # A card holds more than it shows only behind its "show all" button.
            assert card["clipped"] == card["more"], (n, card)
        if any(c["clipped"] for c in cards):
            clamped += 1
            buttons = page.locator("#drill button.more")
            for i in range(buttons.count()):
                buttons.nth(i).click()
                assert buttons.nth(i).get_attribute("aria-expanded") == "true"
            assert not any(c["clipped"] or c["cut"] for c in page.evaluate(CARDS))
    assert clamped, "no question had a card long enough to clamp: the test proves nothing"
