"""``narezka calibrate`` against the local fake Ollama server (no live Ollama was available)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_servers import FakeState, fake_server

from narezka.cli import cli
from narezka.embed import get_embedder
from narezka.embed.calibrate import calibrated_budget, calibration_path
from narezka.environment import Environment
from narezka.settings import Settings, chunk_config, servers

from conftest import EXAMPLES


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(tmp_path / "cache"))
    with fake_server(FakeState(models={"fake-embed": (64, 16)})) as url:
        monkeypatch.setenv("OLLAMA_HOST", url)
        yield url


def test_calibrate_stores_a_budget_that_index_then_uses(ollama: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(EXAMPLES / "faq.md"),
            "--embedder",
            "ollama:fake-embed",
            "--sample",
            "5",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout)
    assert measured["samples"] + measured["rejected"] == 5
    assert Path(measured["stored"]).is_file()
    model = get_embedder("ollama:fake-embed", servers=servers())  # OLLAMA_HOST, as the top reads it
    assert Path(measured["stored"]).parent == tmp_path / "cache"  # NAREZKA_CACHE_DIR reached it
    stored = calibration_path(Environment.read({"NAREZKA_CACHE_DIR": str(tmp_path / "cache")}))
    assert calibrated_budget(model.name, stored) == measured["safe_local_tokens"]
    config = chunk_config(Settings(), model)
    assert config.size == config.budget == min(model.budget, measured["safe_local_tokens"])


def test_calibrating_a_local_model_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(tmp_path))
    result = CliRunner().invoke(cli, ["calibrate", str(EXAMPLES), "--embedder", "hash"])
    assert result.exit_code == 2 and "nothing to calibrate" in result.stderr
