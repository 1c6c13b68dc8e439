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
        "Filter",
        "Hit",
        "Index",
        "IndexStats",
        "NarezkaError",
        "Query",
        "Settings",
        "SourceError",
        "SourceInfo",
        "SplitParams",
        "SyncReport",
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


def test_every_public_name_has_a_docstring() -> None:
    import inspect

    missing = []
    for name in narezka.__all__:
        obj = getattr(narezka, name)
        if name.startswith("__") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not inspect.isfunction(member):
                    continue
                if not (member.__doc__ or "").strip():
                    missing.append(f"{name}.{attr}")
    assert not missing, f"public names without a docstring: {missing}"
