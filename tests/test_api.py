"""The public API is exactly what __all__ says, and the doctest in the package docstring runs."""

from __future__ import annotations

import doctest

import narezka


def test_public_names_are_pinned() -> None:
    assert sorted(narezka.__all__) == [
        "Chunk",
        "ChunkReport",
        "ConfigError",
        "Document",
        "NarezkaError",
        "SourceError",
        "SplitParams",
        "__version__",
        "chunk_documents",
        "chunk_path",
        "chunk_text",
        "strategy_names",
    ]
    for name in narezka.__all__:
        assert hasattr(narezka, name), name


def test_package_docstring_example_runs() -> None:
    failures, tried = doctest.testmod(narezka, report=False)
    assert tried > 0 and failures == 0


def test_chunk_path_reads_a_folder_and_a_file() -> None:
    from conftest import EXAMPLES

    folder = narezka.chunk_path(EXAMPLES, size=800)
    single = narezka.chunk_path(EXAMPLES / "faq.md", size=800)
    assert {c.source for c in single} == {"faq.md"}
    assert [c.text for c in single] == [c.text for c in folder if c.source == "faq.md"]
