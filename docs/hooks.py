"""mkdocs hooks (``hooks:`` in mkdocs.yml): the generated reference pages are filled in while
the site builds, from the code itself (``docs/gen_reference.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_spec = importlib.util.spec_from_file_location(
    "narezka_docs_reference", Path(__file__).with_name("gen_reference.py")
)
assert _spec is not None and _spec.loader is not None
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return str(reference.expand(markdown))
