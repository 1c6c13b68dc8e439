"""A real headless Chromium (Debian's, driven by Playwright) for the HTML page tests.

Without Chromium or Playwright the browser tests skip, saying why, except under CI=true,
where a missing browser is a failure: CI installs it (.ci/run).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("NAREZKA_CHROMIUM", "/usr/bin/chromium"))
# Offline and quiet: no first-run, sync, component or network chatter of its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run the browser tests (.ci/run installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    if not CHROMIUM.is_file():
        _unavailable(f"{CHROMIUM} not found: apt-get install chromium (or set NAREZKA_CHROMIUM)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


OpenPage = Callable[[Path], Any]


@pytest.fixture
def open_page(browser: Any) -> Iterator[OpenPage]:
    """Open a page from disk, wait for its ready marker; page errors fail the test."""
    opened: list[tuple[Any, list[str]]] = []

    def _open(path: Path) -> Any:
        page = browser.new_page(viewport={"width": 1400, "height": 860})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        # A request of any kind would mean the page is not self-contained.
        page.on(
            "request",
            lambda r: (
                None
                if r.url in (path.as_uri(),) or r.url.startswith("data:")
                else errors.append(f"request {r.url}")
            ),
        )
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=15_000)
        opened.append((page, errors))
        return page

    yield _open
    for page, errors in opened:
        page.close()
        assert not errors, errors
