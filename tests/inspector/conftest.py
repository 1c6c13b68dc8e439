"""Pages from disk in the session's headless Chromium (the ``browser`` fixture of
``tests/conftest.py``, one for the whole run: Playwright's sync API allows one per thread)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

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
