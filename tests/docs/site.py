"""The documentation site built once per test session (``mkdocs build --strict``), for the
docs tests to read."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import REPO

DOCS = REPO / "docs"


def mkdocs_or_skip() -> None:
    """The site's tools are in the test extra; without them the docs tests skip, saying so,
    except under CI=true, where they must run."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        reason = "mkdocs-material is not installed (pip install -e '.[test]' or '.[docs]')"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must build the documentation")
        pytest.skip(reason)


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site``: every warning fails it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def reference_module() -> ModuleType:
    """``docs/gen_reference.py``, the generator the build's hook calls."""
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code_blocks(page: str) -> list[str]:
    """The text of every ``<pre>`` code block of a built page, tags (highlighting) removed."""
    blocks = re.findall(r"<pre[^>]*>(.*?)</pre>", page, flags=re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", block)) for block in blocks]
