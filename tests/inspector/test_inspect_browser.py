"""The inspector page in a real headless Chromium, checked as a person would look at it."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from narezka.cli import cli
from narezka.runs import chunk_documents
from narezka.types import Chunk

from inspector.pages import write_corpus

SIZE = 300
COMPARE = "overlap:size=200,overlap=40"


@dataclass
class Built:
    corpus: Path
    single: Path
    compare: Path
    chunks: dict[str, list[Chunk]]
    """headings at SIZE chars, by source."""
    other: dict[str, list[Chunk]]
    """The compared strategy's chunks, by source."""
    texts: dict[str, str]


def _by_source(chunks: list[Chunk]) -> dict[str, list[Chunk]]:
    out: dict[str, list[Chunk]] = {}
    for c in chunks:
        out.setdefault(c.source, []).append(c)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("inspect")
    corpus = write_corpus(tmp / "kb")
    single, compare = tmp / "single.html", tmp / "compare.html"
    base = ["inspect", str(corpus), "--strategy", "headings", "--size", str(SIZE)]
    for args in (
        [*base, "--out", str(single)],
        [*base, "--compare", COMPARE, "--out", str(compare)],
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
    return Built(
        corpus,
        single,
        compare,
        _by_source(chunk_documents([corpus], "headings", size=SIZE).chunks),
        _by_source(chunk_documents([corpus], "overlap", size=200, overlap=40).chunks),
        {p.name: p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.md"))},
    )


def _bands(page: Any, run: int) -> list[tuple[int, str]]:
    return [
        (int(index), text)
        for index, text in page.eval_on_selector_all(
            f".pane[data-run='{run}'] .band",
            "bands => bands.map(b => [b.dataset.index, b.querySelector('.span').textContent])",
        )
    ]


def _without_breadcrumb(c: Chunk) -> str:
    crumb = " > ".join(c.section) + "\n\n"
    return c.embed_text.removeprefix(crumb) if c.section else c.embed_text


def _show(page: Any, source: str) -> None:
    page.click(f".files button[title='{source}']")
    page.wait_for_selector(f".pane .doc-title:has-text('{source}')")


def test_every_chunk_of_every_document_is_a_band_whose_text_is_its_span(
    built: Built, open_page: Any, tmp_path: Path
) -> None:
    page = open_page(built.single)
    assert sorted(built.chunks) == sorted(built.texts)
    for source, chunks in built.chunks.items():
        _show(page, source)
        text = built.texts[source]
        assert _bands(page, 0) == [(c.index, text[c.start : c.end]) for c in chunks]
        # Every band states its own size against the limit.
        meters = page.eval_on_selector_all(
            ".band .bar", "bars => bars.map(b => Number(b.getAttribute('aria-valuenow')))"
        )
        assert meters == [c.tokens for c in chunks]
    # The summary: totals, a histogram of every chunk's size, each file's chunk count.
    everything = [c for chunks in built.chunks.values() for c in chunks]
    totals = dict(
        page.eval_on_selector_all(
            "table.totals tr",
            "rows => rows.map(r => [r.cells[0].textContent, r.cells[1].textContent])",
        )
    )
    assert totals["chunks"] == str(len(everything)) and totals["over the limit"] == "0"
    assert totals["p50/p95/max chars"].endswith(f"/ {max(c.tokens for c in everything)}")
    bars = page.eval_on_selector_all("svg.hist rect title", "t => t.map(x => x.textContent)")
    assert len(bars) == 21
    assert sum(int(b.split(": ")[1].split()[0]) for b in bars) == len(everything)
    files = page.eval_on_selector_all(".files button .count", "c => c.map(x => x.textContent)")
    assert files == [f"{len(built.chunks[s])} chunks" for s in sorted(built.chunks)]
    page.screenshot(path=str(tmp_path / "inspect.png"))


def test_clicking_a_chunk_shows_its_embed_text(built: Built, open_page: Any) -> None:
    page = open_page(built.single)
    _show(page, "ru.md")
    assert page.is_hidden("#detail")
    for n, c in enumerate(built.chunks["ru.md"]):
        page.locator(".pane[data-run='0'] .band").nth(n).click()
        assert page.text_content("#detail .embed-text") == c.embed_text
        assert page.text_content("#detail .chunk-url") == c.url
        assert page.text_content("#detail h2") == f"headings · {SIZE} chars · chunk #{c.index}"
    page.keyboard.press("Escape")
    assert page.is_hidden("#detail")


def test_atoms_are_marked_and_what_embed_text_adds_is_shown(built: Built, open_page: Any) -> None:
    page = open_page(built.single)
    _show(page, "ru.md")
    chunks = built.chunks["ru.md"]
    header = "| Вес | Цена | Зона |"
    repeated = [n for n, c in enumerate(chunks) if header in c.embed_text and header not in c.text]
    assert repeated, "the table should be split with its header repeated"
    bands = page.locator(".pane[data-run='0'] .band")
    for n in repeated:
        assert header in bands.nth(n).locator(".added pre").text_content()
        assert bands.nth(n).locator(".atom-table.atom-start").get_attribute("data-label") == (
            "table (split)"
        )
    # A chunk whose embed_text is its breadcrumb line and its span shows no such box.
    plain = [n for n, c in enumerate(chunks) if _without_breadcrumb(c) == c.text]
    assert plain and all(bands.nth(n).locator(".added").count() == 0 for n in plain)
    # A code block too long for one chunk: each piece's embed_text has the fences restored.
    fenced = [n for n, c in enumerate(chunks) if "def cost" in c.text or "total +=" in c.text]
    assert len(fenced) > 1
    for n in fenced:
        added = bands.nth(n).locator(".added pre")
        assert any(line.startswith("```") for line in (added.text_content() or "").split("\n"))
    code = page.locator(".atom-code")
    assert code.count() >= 1 and "</script><b>" in code.first.text_content()


def test_a_script_in_a_document_renders_as_text_and_never_runs(
    built: Built, open_page: Any
) -> None:
    page = open_page(built.single)
    _show(page, "ru.md")
    assert page.evaluate("window.__pwned") is None
    assert page.title() != "pwned"
    text = "".join(t for _, t in _bands(page, 0))
    assert '<script>window.__pwned = 1; document.title = "pwned";</script>' in text
    assert '<img src="x" onerror="window.__pwned = 2">' in text
    # Only the page's own scripts exist: none came from the document.
    assert page.eval_on_selector_all("#app script, #app img, #app b", "n => n.length") == 0


def test_the_compare_view_shows_both_strategies_and_keeps_scroll_in_step(
    built: Built, open_page: Any, tmp_path: Path
) -> None:
    page = open_page(built.compare)
    page.set_viewport_size({"width": 1400, "height": 420})
    heads = page.eval_on_selector_all(".pane > h2", "h => h.map(x => x.textContent)")
    assert heads == [f"headings · {SIZE} chars", "overlap · 200 chars · overlap=40"]
    _show(page, "ru.md")
    text = built.texts["ru.md"]
    assert _bands(page, 0) == [(c.index, text[c.start : c.end]) for c in built.chunks["ru.md"]]
    other = built.other["ru.md"]
    assert _bands(page, 1) == [(c.index, text[c.start : c.end]) for c in other]
    # Overlaps are visible: each band marks exactly what it repeats from the one before.
    marked = page.eval_on_selector_all(
        ".pane[data-run='1'] .band",
        "bs => bs.map(b => [...b.querySelectorAll('.overlap')].map(o => o.textContent).join(''))",
    )
    expected = [""] + [text[c.start : min(c.end, p.end)] for p, c in pairwise(other)]
    assert marked == expected and any(marked)
    page.screenshot(path=str(tmp_path / "compare.png"))

    # Scrolling one side brings the other to the same place in the text.
    target = other[len(other) // 2]
    right_top = page.evaluate(
        "s => { const b = document.querySelectorAll('.pane-body')[1];"
        " b.querySelector(`.band[data-start='${s}']`).scrollIntoView(); return b.scrollTop; }",
        target.start,
    )
    assert right_top > 0
    page.wait_for_timeout(200)
    left = page.evaluate(
        "() => { const b = document.querySelectorAll('.pane-body')[0];"
        " const top = b.scrollTop; const bands = [...b.querySelectorAll('.band')];"
        " const at = bands.filter(x => x.offsetTop <= top + 1).pop();"
        " return [top, Number(at.dataset.start), Number(at.dataset.end)]; }"
    )
    top, start, end = left
    assert top > 0 and start <= target.start <= end
