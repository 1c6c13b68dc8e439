"""Fixtures for the served index: a built copy of the example KB (hash embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from narezka import Index, Settings

from conftest import copy_examples


@pytest.fixture
def built_kb(tmp_path: Path) -> Path:
    corpus = copy_examples(tmp_path / "kb")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
    return corpus
