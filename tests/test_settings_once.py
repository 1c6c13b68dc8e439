"""Settings are read once, at the top: one module reads the process environment
(:mod:`narezka.environment`) and one parses ``narezka.toml`` and the user's config file
(:mod:`narezka.config`). A stage that reads either itself fails here, naming the line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from narezka import environment
from narezka.environment import Environment
from narezka.errors import ConfigError

SRC = Path(__file__).resolve().parents[1] / "src" / "narezka"

ALLOWED = {
    "environment": {"narezka/environment.py"},
    "toml": {"narezka/config.py"},
}
"""Who may read what: the environment's one reader, the config files' one parser."""


def _reads(tree: ast.AST) -> list[tuple[str, int, str]]:
    """(kind, line, what) for every read of the environment or a TOML parse in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name = f"{node.value.id}.{node.attr}"
            if name in ("os.environ", "os.environb", "os.getenv", "os.putenv", "os.unsetenv"):
                found.append(("environment", node.lineno, name))
            if node.value.id == "tomllib" and node.attr in ("load", "loads"):
                found.append(("toml", node.lineno, name))
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "tomllib"):
            for alias in node.names:
                if node.module == "tomllib" or alias.name in ("environ", "environb", "getenv"):
                    kind = "toml" if node.module == "tomllib" else "environment"
                    found.append((kind, node.lineno, f"from {node.module} import {alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("tomllib", "tomli"):
                    found.append(("toml", node.lineno, f"import {alias.name}"))
    return found


def _offences(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        for kind, line, what in sorted(_reads(ast.parse(path.read_text(encoding="utf-8")))):
            if rel not in ALLOWED[kind]:
                out.append(f"{rel}:{line}: {what}")
    return out


def test_only_the_top_reads_the_environment_and_narezka_toml() -> None:
    assert _offences(SRC) == []


def test_the_scan_finds_each_kind_of_read(tmp_path: Path) -> None:
    pkg = tmp_path / "narezka"
    (pkg / "convert").mkdir(parents=True)
    (pkg / "convert" / "ocr.py").write_text(
        "import os\nfrom os import getenv\nimport tomllib\n"
        "off = os.environ.get('NAREZKA_OCR')\nx = os.getenv('A')\n"
        "data = tomllib.loads('')\n",
        encoding="utf-8",
    )
    (pkg / "environment.py").write_text("import os\nos.environ.get('A')\n", encoding="utf-8")
    assert _offences(pkg) == [
        "narezka/convert/ocr.py:2: from os import getenv",
        "narezka/convert/ocr.py:4: os.environ",
        "narezka/convert/ocr.py:5: os.getenv",
        "narezka/convert/ocr.py:3: import tomllib",
        "narezka/convert/ocr.py:6: tomllib.loads",
    ]


STAGES = (
    *("tokens", "parse", "convert", "discover", "split", "embed", "enrich"),
    *("config", "sources", "store", "search", "evaluate", "runs"),
)
"""The packages below the settings and the index (``tests/test_layering.py``'s floors): they
get what the environment says handed down from the top, in an ``Environment``."""

STILL_READING: dict[str, str] = {}
"""Stage modules that still fall back on ``environment.current()`` when their caller hands
them no ``Environment``, and why; the list only shrinks."""


def _current_reads(tree: ast.AST) -> list[int]:
    """Lines that call ``environment.current()`` (or a ``current`` imported from it)."""
    imported = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "narezka.environment"
        and any(alias.name == "current" for alias in node.names)
        for node in ast.walk(tree)
    )
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "current":
            if isinstance(func.value, ast.Name) and func.value.id == "environment":
                lines.append(node.lineno)
        elif isinstance(func, ast.Name) and func.id == "current" and imported:
            lines.append(node.lineno)
    return lines


def _stage_readers(root: Path) -> dict[str, list[int]]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        unit = rel.split("/")[1].removesuffix(".py")
        if unit in STAGES and (lines := _current_reads(ast.parse(path.read_text("utf-8")))):
            out[rel] = lines
    return out


def test_no_stage_reads_the_environment_beyond_the_few_still_listed() -> None:
    readers = _stage_readers(SRC)
    new = {rel: lines for rel, lines in readers.items() if rel not in STILL_READING}
    assert new == {}, "hand these stages an Environment from the top instead"
    assert set(STILL_READING) - set(readers) == set(), "no longer reads it: strike it off"


def test_the_stage_scan_finds_both_spellings_of_a_read(tmp_path: Path) -> None:
    pkg = tmp_path / "narezka"
    (pkg / "embed").mkdir(parents=True)
    (pkg / "cli").mkdir()
    (pkg / "embed" / "a.py").write_text(
        "from narezka import environment\nx = environment.current().ocr\n", encoding="utf-8"
    )
    (pkg / "embed" / "b.py").write_text(
        "from narezka.environment import current\n\ny = current()\n", encoding="utf-8"
    )
    (pkg / "cli" / "c.py").write_text("x = environment.current()\n", encoding="utf-8")
    assert _stage_readers(pkg) == {"narezka/embed/a.py": [2], "narezka/embed/b.py": [3]}


def test_the_environment_is_parsed_and_checked_in_one_place() -> None:
    env = Environment.read(
        {
            "NAREZKA_OCR": "Off",
            "NAREZKA_CACHE_DIR": "/tmp/c",
            "NAREZKA_EMBED_CONCURRENCY": "3",
            "NAREZKA_CONVERT_SECONDS": "2.5",
            "NAREZKA_JOBS": "4",
            "NAREZKA_TRUST_CORPUS": "yes",
            "NAREZKA_SIZE": "300",
            "NAREZKA_EMBEDDER": "",
            "OPENAI_API_KEY": "sk-secret",
        }
    )
    assert env.ocr is False and env.cache_dir == Path("/tmp/c")
    assert (env.embed_concurrency, env.convert_seconds, env.jobs) == (3, 2.5, 4)
    assert env.trust_corpus and env.openai_api_key == "sk-secret"
    # Process variables are not settings; empty ones are not set.
    assert dict(env.settings) == {"size": "300"}
    assert "sk-secret" not in repr(env)
    assert Environment.read({}) == Environment()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("NAREZKA_EMBED_BATCH", "many", "NAREZKA_EMBED_BATCH must be an integer, not 'many'"),
        ("NAREZKA_JOBS", "0", "NAREZKA_JOBS must be above 0"),
        ("NAREZKA_MAX_FILE_MB", "lots", "NAREZKA_MAX_FILE_MB must be a number"),
        ("NAREZKA_CONVERT_MEMORY_MB", "-1", "NAREZKA_CONVERT_MEMORY_MB must be above 0"),
    ],
)
def test_a_bad_variable_is_named(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Environment.read({name: value})


def test_current_follows_the_process_and_parses_once_per_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NAREZKA_OCR", raising=False)
    first = environment.current()
    assert first.ocr and environment.current() is first  # unchanged: not parsed again
    monkeypatch.setenv("NAREZKA_OCR", "off")
    assert environment.current().ocr is False


def test_children_get_the_parents_variables_and_lent_ones_go_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NAREZKA_OCR", "off")
    assert environment.for_child(OMP_THREAD_LIMIT="1")["NAREZKA_OCR"] == "off"
    with environment.lend({"NAREZKA_TEST_MESSAGE": "hi"}):
        assert environment.for_child()["NAREZKA_TEST_MESSAGE"] == "hi"
    assert "NAREZKA_TEST_MESSAGE" not in environment.for_child()
    with environment.lend({"NAREZKA_TEST_MESSAGE": "once"}):
        assert environment.take("NAREZKA_TEST_MESSAGE") == "once"
        assert environment.take("NAREZKA_TEST_MESSAGE") == ""
    # A converter child takes its parent's variables over, and sees them at once.
    parent = environment.for_child()
    parent.pop("NAREZKA_OCR")
    assert environment.current().ocr is False
    environment.adopt(parent)  # monkeypatch puts NAREZKA_OCR back as it was
    assert environment.current().ocr is True


def _settings_writes(root: Path) -> list[str]:
    """Assignments to some object's ``settings`` outside the index package (the one that
    owns ``Index.settings``)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel.startswith("narezka/index/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                mine = isinstance(target, ast.Attribute) and target.attr == "settings"
                own = isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self"
                if mine and not own:
                    out.append(f"{rel}:{node.lineno}")
    return out


def test_nothing_outside_the_index_writes_its_settings(tmp_path: Path) -> None:
    assert _settings_writes(SRC) == []
    planted = tmp_path / "narezka" / "serve"
    planted.mkdir(parents=True)
    (planted / "service.py").write_text("index.settings = s\nself.settings = s\n", "utf-8")
    assert _settings_writes(tmp_path / "narezka") == ["narezka/serve/service.py:1"]


def _linked_corpus(tmp_path: Path) -> Path:
    root, outside = tmp_path / "kb", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "a.md").write_text("# Доставка\n\nКурьер приезжает утром.\n", encoding="utf-8")
    (outside / "b.md").write_text("# Снаружи\n\nФайл вне корпуса.\n", encoding="utf-8")
    (root / "b.md").symlink_to(outside / "b.md")
    return root


def test_follow_symlinks_reaches_an_index_through_its_settings_only(tmp_path: Path) -> None:
    from narezka import Index, Settings

    corpus = _linked_corpus(tmp_path)
    with Index.create(corpus, Settings(embedder="hash")) as ix:
        assert [e.path for e in ix.sync().skipped] == ["b.md"]
    with Index.open(corpus, follow_symlinks=True) as ix:
        assert ix.settings.follow_symlinks is True and ix.chunk_config().follow_symlinks
        assert {c.file_path for c in ix.chunks()} == {"a.md"}  # taken in, not yet synced
        report = ix.sync()
    assert not report.skipped
    with Index.open(corpus) as ix:  # recorded by that sync
        assert ix.settings.follow_symlinks is True
        assert {c.file_path for c in ix.chunks()} == {"a.md", "b.md"}
    with Index.open(corpus, follow_symlinks=False, context_llm="off") as ix:
        assert ix.settings.follow_symlinks is False and ix.settings.context_llm is None


def test_a_served_new_corpus_takes_the_flag_into_its_settings(tmp_path: Path) -> None:
    pytest.importorskip("watchfiles")
    from narezka.serve.service import Service

    corpus = _linked_corpus(tmp_path)
    (corpus / "narezka.toml").write_text('[settings]\nembedder = "hash"\n', encoding="utf-8")
    with Service(corpus, watch=False, follow_symlinks=True) as service:
        assert service.index.settings.follow_symlinks is True
        assert service.index.settings.embedder == "hash"  # the rest as resolved


def test_one_resolution_checks_the_split_values_twice_at_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once as settings (before the embedder decides the size), once as the ChunkConfig:
    not again for every layer that sets one."""
    import narezka.runs.config as run_config
    import narezka.settings as settings_module
    from narezka.runs.file_chunks import make_params

    checks: list[dict[str, object]] = []

    def counted(**params: object) -> object:
        checks.append(params)
        return make_params(**params)

    monkeypatch.setattr(run_config, "make_params", counted)
    monkeypatch.setattr(settings_module, "make_params", counted)
    (tmp_path / "narezka.toml").write_text(
        '[settings]\nsize = 300\nlevels = "2-3"\nunit = "chars"\n', encoding="utf-8"
    )
    env = {"NAREZKA_OVERLAP": "20", "NAREZKA_CONFIG": str(tmp_path / "none.toml")}
    resolved = settings_module.resolve(tmp_path, environ=env, size=400, min_chars=100)
    config = settings_module.chunk_config(resolved.settings)
    assert (config.size, config.params.overlap, config.params.levels) == (400, 20, (2, 3))
    assert resolved.origins["size"] == "flags" and resolved.origins["levels"] == "narezka.toml"
    assert len(checks) == 2


def test_narezka_toml_is_parsed_once_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import tomllib

    import narezka.config as config

    parses: list[str] = []

    class Counting:
        TOMLDecodeError = tomllib.TOMLDecodeError

        @staticmethod
        def loads(text: str) -> dict[str, object]:
            parses.append(text)
            return tomllib.loads(text)

    monkeypatch.setattr(config, "tomllib", Counting)
    toml = tmp_path / "narezka.toml"
    toml.write_text('[settings]\nstrategy = "recursive"\n[zones]\n"a.md" = "hot"\n', "utf-8")
    first = config.read_toml(tmp_path)
    assert first is not None
    first[1]["settings"]["strategy"] = "changed by a caller"  # not by the next reader
    assert config.load_rules(tmp_path).zones == (("a.md", "hot"),)
    again = config.read_toml(tmp_path)
    assert again is not None and again[1]["settings"] == {"strategy": "recursive"}
    assert len(parses) == 1
    toml.write_text('[settings]\nstrategy = "sentences"\n', "utf-8")
    os.utime(toml, ns=(1, 1))
    assert config.read_toml(tmp_path) is not None
    os.utime(toml, ns=(1, 1))  # the same stat as before, another text: read again
    toml.write_text('[settings]\nstrategy = "parent-child"\n', "utf-8")
    os.utime(toml, ns=(1, 1))
    edited = config.read_toml(tmp_path)
    assert edited is not None and edited[1]["settings"] == {"strategy": "parent-child"}
    assert len(parses) == 3
    toml.write_text("[settings\n", "utf-8")
    with pytest.raises(ConfigError, match=r"narezka\.toml: "):
        config.read_toml(tmp_path)


def test_one_chunk_config_for_an_open_index_however_many_syncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import narezka.index.lifecycle as lifecycle
    import narezka.index.state as state
    from narezka import Index, Settings

    made: list[Settings] = []
    resolve_config = state.chunk_config

    def counted(settings: Settings, embedder: object = None) -> object:
        made.append(settings)
        return resolve_config(settings, embedder)  # type: ignore[arg-type]

    monkeypatch.setattr(state, "chunk_config", counted)
    monkeypatch.setattr(lifecycle, "chunk_config", counted)
    corpus = _linked_corpus(tmp_path)
    with Index.create(corpus, Settings(embedder="hash", size=120)) as ix:
        ix.sync()
        (corpus / "c.md").write_text("# Новый\n\nЕщё один файл.\n", encoding="utf-8")
        ix.sync()
        assert ix.chunk_config().size == 120
        assert len(made) == 1  # create resolved it; the syncs and the call reuse it
        ix.settings = ix.settings.replace(size=100)  # new settings: resolved anew
        assert ix.chunk_config().size == 100 and len(made) == 2
    with Index.open(corpus) as ix:
        ix.sync()
        ix.sync()
    assert len(made) == 3


def test_the_conversion_limits_set_at_the_top_reach_the_cli_and_an_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from narezka import Index, Settings
    from narezka.cli import cli

    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Доставка\n\n" + "Курьер приезжает утром. " * 80, "utf-8")
    (corpus / "b.md").write_text("# Оплата\n\nКартой.\n", encoding="utf-8")
    tiny = {"NAREZKA_MAX_FILE_MB": "0.001"}  # about 1 KB: a.md is over it, b.md is not
    done = CliRunner().invoke(cli, ["chunk", str(corpus), "--format", "jsonl"], env=tiny)
    assert "a.md: 3.5 KB, over the limit of 1.0 KB" in done.stderr
    assert '"source": "b.md"' in done.stdout and '"source": "a.md"' not in done.stdout
    monkeypatch.setenv("NAREZKA_MAX_FILE_MB", "0.001")
    with Index.create(corpus, Settings(embedder="hash")) as ix:
        report = ix.sync(jobs=1)
    assert [e.path for e in report.skipped] == ["a.md"] and report.files_new == 1


def test_a_stage_converts_under_the_options_it_is_handed_and_reads_no_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.convert.options import DEFAULT, ConvertOptions
    from narezka.discover import read_document
    from narezka.errors import RefusedFileError

    pdf = Path(__file__).resolve().parents[1] / "examples" / "kb" / "returns.pdf"
    (tmp_path / "returns.pdf").write_bytes(pdf.read_bytes())

    def unread() -> Environment:
        raise AssertionError("a stage read the environment")

    monkeypatch.setattr(environment, "current", unread)
    monkeypatch.setattr("narezka.convert.isolate.INLINE", True)  # the converter runs here
    monkeypatch.setenv("NAREZKA_MAX_FILE_MB", "1000")  # not what the stage goes by
    doc, _ = read_document(tmp_path, tmp_path / "returns.pdf", options=ConvertOptions(ocr=False))
    assert "Возврат" in doc.text
    small = ConvertOptions(max_file_mb=0.001)
    with pytest.raises(RefusedFileError, match=r"returns\.pdf: .* over the limit of 1.0 KB"):
        read_document(tmp_path, tmp_path / "returns.pdf", options=small)
    assert read_document(tmp_path, tmp_path / "returns.pdf", options=DEFAULT)[0].text == doc.text


def test_the_memory_limit_set_at_the_top_reaches_the_converter_child(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from narezka.cli import cli
    from narezka.convert import isolate

    pdf = Path(__file__).resolve().parents[1] / "examples" / "kb" / "returns.pdf"
    (tmp_path / "returns.pdf").write_bytes(pdf.read_bytes())
    # A child warm from earlier tests has PDFium loaded and heap to spare, so a few MB more of
    # address space may convert the file after all: the limit is shown on a fresh child.
    isolate.shutdown()
    done = CliRunner().invoke(
        cli, ["chunk", str(tmp_path), "--format", "jsonl"], env={"NAREZKA_CONVERT_MEMORY_MB": "1"}
    )
    # The floor of 1 MB, raised for the file's size: the child cannot convert it under that.
    assert "returns.pdf: conversion" in done.stderr and "3.0 MB" in done.stderr
    assert not done.stdout
    assert "Возврат" in CliRunner().invoke(cli, ["chunk", str(tmp_path)], env={}).stdout
