"""An open index of the example KB (hash embedder) for the framework retrievers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from narezka import Index, Settings

from conftest import copy_examples


@pytest.fixture(scope="module")
def kb_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    corpus = copy_examples(tmp_path_factory.mktemp("adapters") / "kb")
    with Index.create(corpus, Settings(embedder="hash")) as index:
        index.sync()
        yield index
