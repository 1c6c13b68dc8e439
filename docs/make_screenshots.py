#!/usr/bin/env python3
"""Regenerate docs/inspect.png and docs/eval.png from the example KB (headless Chromium).

    python docs/make_screenshots.py

The eval page uses the deterministic ``hash`` embedder so the picture does not depend on a
model; its numbers are therefore not the README's retrieval results.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
KB = Path("examples") / "kb"
CHROMIUM = os.environ.get("NAREZKA_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]


def narezka(*args: str) -> None:
    # From the repository, so the pages name examples/kb rather than an absolute path.
    subprocess.run(
        [sys.executable, "-m", "narezka", *args], check=True, capture_output=True, cwd=REPO
    )


def small_png(path: Path) -> None:
    # A palette keeps a text-heavy screenshot well under 300 KB.
    Image.open(path).convert("RGB").quantize(colors=64).save(path, optimize=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        inspect, report = Path(tmp) / "inspect.html", Path(tmp) / "eval.html"
        compare = "overlap:size=300,overlap=60"
        narezka("inspect", str(KB), "--compare", compare, "--out", str(inspect))
        narezka(
            "eval", str(KB), "--golden", str(KB / "golden.jsonl"), "--embedder", "hash",
            "--strategies", "fixed:size=120 headings", "--cache", str(Path(tmp) / "c.sqlite"),
            "--html", str(report),
        )  # fmt: skip
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 860})
            page.goto(inspect.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            page.click(".files button[title='delivery.md']")
            page.locator(".pane[data-run='0'] .band").nth(1).click()
            page.evaluate("document.querySelector('.side').scrollTop = 0")
            page.screenshot(path=str(REPO / "docs" / "inspect.png"))
            page = browser.new_page(viewport={"width": 1366, "height": 1100})
            page.goto(report.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            page.check("#only-misses")
            # A question one strategy answers and the other misses: a marked answer and a cause.
            page.locator(".questions tbody tr:has(td.hit):has(td.miss)").first.click()
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(REPO / "docs" / "eval.png"), full_page=True)
            browser.close()
    for name in ("inspect.png", "eval.png"):
        small_png(REPO / "docs" / name)
        print(name, (REPO / "docs" / name).stat().st_size // 1024, "KB")


if __name__ == "__main__":
    main()
