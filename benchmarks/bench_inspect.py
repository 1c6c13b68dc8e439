#!/usr/bin/env python3
"""How fast the inspector page of a ~10 MB corpus opens in a real browser, against peers.

    python benchmarks/bench_inspect.py --trials 3 --out benchmarks/results/bench_inspect.md

The corpus is the whole shared/data/md_corpus (EN + RU Markdown, ~11 MB UTF-8). Pages, all
opened from disk in the same headless Chromium (Debian's, driven by Playwright) in this run:

* narezka inspect: ``headings`` at 800 characters; and with ``--compare fixed:size=400``;
* chonkie's ``Visualizer.save`` over the same text (all documents joined, chunked by its
  ``RecursiveChunker`` at 800 characters): the peer that ships an HTML chunk view;
* plain ``<pre>``: the corpus text escaped in one element, the floor of showing it at all.

"open" is navigation start to the moment the page is usable: narezka's ``narezka-ready``
performance mark (its first document is rendered) or, for pages without one, the end of the
load event, whichever is later; median of --trials fresh tabs, all network blocked. "switch"
is narezka's time to render the corpus' largest document after a click (layout included).
Generation (chunking + page) is timed once. A peer that is missing or fails shows its error.
"""

from __future__ import annotations

import argparse
import html
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from narezka import __version__
from narezka.inspector import InspectRun, inspector_page, read_sources
from narezka.runs import chunk_documents
from narezka.tokens import get_counter

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO.parent / "shared"))
CHROMIUM = os.environ.get("NAREZKA_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
OPENED = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const ready = performance.getEntriesByName("narezka-ready")[0];
  const start = performance.getEntriesByName("narezka-start")[0];
  return [Math.max(nav.loadEventEnd, ready ? ready.startTime : 0),
          ready && start ? ready.startTime - start.startTime : null];
}"""
SWITCH = """(n) => {
  const t = performance.now();
  document.querySelector(`.files button[data-file="${n}"]`).click();
  document.body.getBoundingClientRect();  // force layout inside the timed region
  const bands = document.querySelectorAll(".band").length;
  return [performance.now() - t, bands];
}"""


def narezka_page(corpus: Path, out: Path, compare: bool) -> tuple[float, int]:
    """Write the inspector page; return (seconds, chunks)."""
    start = time.perf_counter()
    runs = [InspectRun("headings · 800 chars", chunk_documents([corpus], "headings"), 800, "chars")]
    if compare:
        report = chunk_documents([corpus], "fixed", size=400)
        runs.append(InspectRun("fixed · 400 chars", report, 400, "chars"))
    sources = read_sources([corpus], runs)
    page = inspector_page(runs, sources, display=get_counter("tokens", "cl100k_base"))
    out.write_text(page, encoding="utf-8")
    return time.perf_counter() - start, sum(len(r.report.chunks) for r in runs)


def corpus_text(corpus: Path) -> str:
    return "\n\n".join(
        p.read_text(encoding="utf-8") for p in sorted(corpus.rglob("*.md")) if p.is_file()
    )


def chonkie_page(corpus: Path, out: Path) -> tuple[float, int]:
    from chonkie import RecursiveChunker, Visualizer

    text = corpus_text(corpus)
    start = time.perf_counter()
    chunks = RecursiveChunker(tokenizer="character", chunk_size=800)(text)
    Visualizer().save(str(out), chunks, full_text=text, title="chonkie")
    return time.perf_counter() - start, len(chunks)


def pre_page(corpus: Path, out: Path) -> tuple[float, int]:
    start = time.perf_counter()
    body = html.escape(corpus_text(corpus))
    out.write_text(f"<!doctype html><meta charset=utf-8><pre>{body}</pre>", encoding="utf-8")
    return time.perf_counter() - start, 0


def largest_document(page: Any) -> int:
    sizes = page.evaluate(
        "() => JSON.parse(document.getElementById('narezka-index').textContent)"
        ".files.map(f => f.chars)"
    )
    return max(range(len(sizes)), key=sizes.__getitem__)


def measure(browser: Any, path: Path, trials: int, narezka: bool) -> dict[str, Any]:
    opened, scripts, switched, bands = [], [], [], 0
    for _ in range(trials):
        page = browser.new_page(viewport={"width": 1400, "height": 860})
        page.route("http*://**", lambda route: route.abort())
        page.goto(path.as_uri(), wait_until="load", timeout=120_000)
        if narezka:
            page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        usable, script = page.evaluate(OPENED)
        opened.append(usable)
        if script is not None:
            scripts.append(script)
        if narezka:
            ms, bands = page.evaluate(SWITCH, largest_document(page))
            switched.append(ms)
        page.close()
    return {
        "open": statistics.median(opened),
        "open_all": opened,
        "script": statistics.median(scripts) if scripts else None,
        "switch": statistics.median(switched) if switched else None,
        "bands": bands,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "data" / "md_corpus")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    load_start = os.getloadavg()[0]
    began = time.perf_counter()
    files = [p for p in args.corpus.rglob("*.md") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    rows: list[dict[str, Any]] = []
    makers: list[tuple[str, str, bool, Callable[[Path, Path], tuple[float, int]]]] = [
        (
            "narezka inspect (headings 800)",
            __version__,
            True,
            lambda c, o: narezka_page(c, o, False),
        ),
        (
            "narezka inspect --compare fixed:size=400",
            __version__,
            True,
            lambda c, o: narezka_page(c, o, True),
        ),
        ("chonkie Visualizer (recursive 800)", _version("chonkie"), False, chonkie_page),
        ("plain <pre> of the text", "—", False, pre_page),
    ]
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for n, (name, version, is_narezka, make) in enumerate(makers):
            out = Path(tmp) / f"page{n}.html"
            row: dict[str, Any] = {"name": name, "version": version}
            try:
                row["generate"], row["chunks"] = make(args.corpus, out)
                row["mb"] = out.stat().st_size / 1e6
                row.update(measure(browser, out, args.trials, is_narezka))
            except Exception as exc:  # a broken peer fails its own row only
                row["error"] = f"{type(exc).__name__}: {exc}"[:120]
            rows.append(row)
            print(row, file=sys.stderr)
        chromium = browser.version
        browser.close()
    floor = next((r["open"] for r in rows if r["name"].startswith("plain") and "open" in r), None)
    lines = [
        "# narezka inspect: opening a 10 MB corpus page",
        "",
        f"- {args.corpus.name}: {len(files)} files, {size / 1e6:.2f} MB UTF-8; Chromium "
        f"{chromium} headless (Debian), Playwright; median of {args.trials} fresh tabs; Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; load average "
        f"{load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (a shared machine: "
        f"absolute times are noisy); whole run {time.perf_counter() - began:.0f} s.",
        "- open: navigation start to usable (narezka: its ready mark, first document rendered; "
        "others: load event end); script: of that, narezka's own script (data index parsed, file "
        "list and first document built); vs pre: open over the plain <pre> page's open (< 1 is "
        "faster); switch: render the largest document after a click, layout included; "
        "generate: chunking and writing the page, once.",
        "",
        "| page | version | page MB | chunks | generate s | open ms | script ms | vs pre "
        "| switch ms | opens (ms) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['name']} | {r['version']} | — | — | — | — | — | — | — | {r['error']} |"
            )
            continue
        ratio = f"{r['open'] / floor:.2f}×" if floor else "—"
        switch = f"{r['switch']:.0f} ({r['bands']} bands)" if r["switch"] is not None else "—"
        opens = ", ".join(f"{x:.0f}" for x in r["open_all"])
        script = f"{r['script']:.0f}" if r["script"] is not None else "—"
        lines.append(
            f"| {r['name']} | {r['version']} | {r['mb']:.1f} | {r['chunks'] or '—'} "
            f"| {r['generate']:.1f} | {r['open']:.0f} | {script} | {ratio} | {switch} | {opens} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "missing"


if __name__ == "__main__":
    main()
