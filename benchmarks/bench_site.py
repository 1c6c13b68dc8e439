#!/usr/bin/env python3
"""A documentation site read by crawling (issue 36): retrieval, crawl cost and re-sync.

Part 1: the Russian FastAPI docs of ``md_corpus/ru/fastapi`` built into a site by
mkdocs-material (from PyPI, the theme FastAPI builds them with; a minimal ``mkdocs.yml``, so
FastAPI's own plugins and code includes are not run), served on 127.0.0.1, crawled into a
folder, indexed and asked the 162 questions of ``benchmarks/ru_devset/fastapi.jsonl`` through
the harness of ``narezka eval`` (``headings``, hybrid, USE), in the same run as the Markdown
itself. Goal: hit@5 within 3 points of the Markdown.

Part 2: 500 generated pages served on 127.0.0.1 (Python's file server, which sends
Last-Modified and answers 304): a first crawl plus index (``hash`` embedder, no model) against
indexing the same 500 files from disk (goal ≤ 2×); then one page changed and the crawl and
index run again: pages downloaded, answered 304, chunks embedded.

    NAREZKA_SHARED=../shared python benchmarks/bench_site.py [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p
)
SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO.parent / "shared"))
DOCS = SHARED / "data" / "md_corpus" / "ru" / "fastapi" / "docs" / "ru" / "docs"
GOLDEN = REPO / "benchmarks" / "ru_devset" / "fastapi.jsonl"
KS = (1, 3, 5)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def build_site(work: Path) -> Path:
    config = work / "mkdocs.yml"
    config.write_text(
        "site_name: FastAPI\n"
        f"docs_dir: {DOCS}\n"
        "theme:\n  name: material\n  language: ru\n"
        "markdown_extensions:\n  - admonition\n  - attr_list\n  - md_in_html\n"
        "  - pymdownx.details\n  - pymdownx.superfences\n"
        "  - pymdownx.tabbed:\n      alternate_style: true\n"
        "plugins: []\n",
        encoding="utf-8",
    )
    site = work / "site"
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(site)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    return site


def golden_for_site(work: Path) -> Path:
    """The dev set with each ``source`` renamed to the page mkdocs makes of it."""
    out = work / "golden-site.jsonl"
    rows = []
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        source = Path(row["source"]).relative_to("docs/ru/docs")
        stem = source.with_suffix("")
        row["source"] = "index.html" if str(stem) == "index" else f"{stem}/index.html"
        if stem.name == "index":
            row["source"] = f"{stem.parent}/index.html"
        rows.append(json.dumps(row, ensure_ascii=False))
    out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return out


def golden_for_md(work: Path) -> Path:
    out = work / "golden-md.jsonl"
    rows = []
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            row["source"] = str(Path(row["source"]).relative_to("docs/ru/docs"))
            rows.append(json.dumps(row, ensure_ascii=False))
    out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return out


def ask(corpus: Path, golden: Path) -> Any:
    from narezka.api.evaluating import evaluate

    return evaluate(corpus, golden, strategies="headings", ks=KS, mode="hybrid").strategies[0]


def part1(work: Path) -> list[str]:
    from narezka.sources.crawl import CrawlLimits
    from narezka.sources.site_staging import stage_site

    t0 = time.perf_counter()
    site = build_site(work)
    built = time.perf_counter() - t0
    pages = sum(1 for _ in site.rglob("*.html"))
    with serve(site) as base:
        t0 = time.perf_counter()
        staged = stage_site(base + "/", work / "crawled", CrawlLimits(rate=0, concurrency=4))
        crawled = time.perf_counter() - t0
    md = ask(DOCS, golden_for_md(work))
    web = ask(work / "crawled", golden_for_site(work))
    lines = [
        f"mkdocs-material built {pages} HTML pages in {built:.1f} s; the crawl took "
        f"{len(staged.report.pages)} pages in {crawled:.1f} s "
        f"({staged.report.requests} requests, {len(staged.report.skipped)} skipped).",
        "",
        "| corpus | hit@1 | hit@3 | hit@5 | MRR |",
        "|---|---|---|---|---|",
    ]
    for name, row in (("Markdown (md_corpus)", md), ("the site, crawled", web)):
        hits = " | ".join(f"{row.hits[k]:.3f}" for k in KS)
        lines.append(f"| {name} | {hits} | {row.mrr:.3f} |")
    gap = (md.hits[5] - web.hits[5]) * 100
    lines += ["", f"hit@5 gap: {gap:+.1f} points (goal: within 3) {'✓' if gap <= 3 else '✗'}"]
    return lines


WORDS = (
    "заказ доставка оплата возврат курьер склад тариф гарантия клиент договор счёт чай кофе "
    "пакет подарок скидка неделя зона карта сорт вкус аромат урожай чайник"
).split()


def make_pages(folder: Path, count: int) -> None:
    rng = random.Random(36)
    for n in range(count):
        paras = "".join(
            "<p>" + " ".join(rng.choice(WORDS) for _ in range(60)) + ".</p>" for _ in range(6)
        )
        links = "".join(f'<a href="p{m}.html">{m}</a> ' for m in (n + 1, n + 7) if m < count)
        page = (
            f"<html><body><main><h1>Страница {n}</h1>{paras}<nav>{links}</nav></main></body></html>"
        )
        (folder / f"p{n}.html").write_text(page, encoding="utf-8")
    (folder / "index.html").write_text(
        "<html><body>"
        + "".join(f'<a href="p{n}.html">{n}</a>' for n in range(count))
        + "</body></html>",
        encoding="utf-8",
    )


def index_seconds(folder: Path) -> tuple[float, Any]:
    import narezka

    t0 = time.perf_counter()
    with narezka.Index.create(folder, narezka.Settings(embedder="hash")) as index:
        report = index.sync(jobs=1)
    return time.perf_counter() - t0, report


def part2(work: Path, count: int) -> list[str]:
    from narezka.sources.crawl import CrawlLimits
    from narezka.sources.site_staging import stage_site

    served = work / "served"
    served.mkdir()
    make_pages(served, count)
    disk = work / "disk"
    disk.mkdir()
    for page in served.iterdir():
        (disk / page.name).write_bytes(page.read_bytes())
    from_disk, _ = index_seconds(disk)
    limits = CrawlLimits(rate=0, concurrency=4, max_pages=count + 10)
    with serve(served) as base:
        t0 = time.perf_counter()
        first = stage_site(base + "/", work / "crawled500", limits)
        crawl_s = time.perf_counter() - t0
        indexed_s, _ = index_seconds(work / "crawled500")
        changed = served / "p250.html"
        time.sleep(1.1)  # Last-Modified has a resolution of one second
        changed.write_text(
            changed.read_text(encoding="utf-8").replace("Страница", "Глава"), "utf-8"
        )
        t0 = time.perf_counter()
        second = stage_site(base + "/", work / "crawled500", limits)
        recrawl_s = time.perf_counter() - t0
        resync_s, report = index_seconds(work / "crawled500")
    total = crawl_s + indexed_s
    return [
        f"| {count} pages | seconds |",
        "|---|---|",
        f"| index from disk (hash embedder, jobs 1) | {from_disk:.2f} |",
        f"| first crawl | {crawl_s:.2f} |",
        f"| index of the crawled folder | {indexed_s:.2f} |",
        f"| crawl + index ÷ index from disk | {total / from_disk:.2f}× (goal ≤ 2) "
        f"{'✓' if total / from_disk <= 2 else '✗'} |",
        "",
        f"First crawl: {first.report.fetched} downloaded, {first.report.requests} requests. "
        f"After one page changed: {second.report.fetched} downloaded "
        f"({', '.join(second.written)}), {second.report.not_modified} answered 304, "
        f"crawl {recrawl_s:.2f} s; the sync then: {report.files_changed} file changed, "
        f"{report.files_unchanged} unchanged, {report.chunks_embedded} chunks embedded "
        f"({resync_s:.2f} s).",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--pages", type=int, default=500)
    args = parser.parse_args()
    if not DOCS.is_dir():
        print(f"no corpus at {DOCS} (set NAREZKA_SHARED)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lines = ["# A documentation site, crawled", "", "## Retrieval", ""]
        lines += part1(work)
        lines += ["", "## Crawl cost and re-sync", ""]
        lines += part2(work, args.pages)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
