"""Safety settings come from the user, not the corpus (#38, item 3): how the user confirms a
corpus's own narezka.toml, the user's own config file, and where each setting came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.cli import cli
from narezka.config import lowered_safety, read_user_config
from narezka.errors import ConfigError
from narezka.settings import Settings, resolve

SETTINGS = '[settings]\nfollow_symlinks = true\nstrategy = "recursive"\n'


def _corpus(tmp_path: Path, toml: str = SETTINGS) -> Path:
    corpus = tmp_path / "kb"
    corpus.mkdir(parents=True)
    (corpus / "notes.md").write_text("# Notes\n\nTea returns within 14 days.\n", encoding="utf-8")
    (corpus / "narezka.toml").write_text(toml, encoding="utf-8")
    return corpus


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path), **extra}


def _user_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config" / "narezka" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_refusal_names_the_file_the_setting_and_every_way_to_confirm(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    with pytest.raises(ConfigError) as caught:
        Settings.load(corpus, environ=_env(tmp_path))
    message = str(caught.value)
    assert str(corpus / "narezka.toml") in message and "follow_symlinks = true" in message
    assert "--trust-corpus-config" in message and "NAREZKA_TRUST_CORPUS=1" in message
    assert str(tmp_path / "config" / "narezka" / "config.toml") in message


@pytest.mark.parametrize("word", ["1", "yes", "true", "on"])
def test_the_environment_variable_confirms(tmp_path: Path, word: str) -> None:
    corpus = _corpus(tmp_path)
    env = _env(tmp_path, NAREZKA_TRUST_CORPUS=word)
    assert Settings.load(corpus, environ=env).follow_symlinks is True


def test_the_variable_set_to_no_confirms_nothing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        Settings.load(_corpus(tmp_path), environ=_env(tmp_path, NAREZKA_TRUST_CORPUS="0"))


def test_the_flag_confirms(tmp_path: Path) -> None:
    resolved = resolve(_corpus(tmp_path), environ=_env(tmp_path), trust=True)
    assert resolved.settings.follow_symlinks is True
    assert resolved.origins["follow_symlinks"] == "narezka.toml"


def test_a_corpus_listed_in_the_user_config_is_trusted_and_no_other(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    _user_config(tmp_path, f'[trust]\ncorpora = ["{corpus}/"]\n')
    assert Settings.load(corpus, environ=_env(tmp_path)).follow_symlinks is True
    other = _corpus(tmp_path / "other")
    with pytest.raises(ConfigError):
        Settings.load(other, environ=_env(tmp_path))


def test_the_user_config_may_set_safety_settings_and_the_corpus_may_raise_safety(
    tmp_path: Path,
) -> None:
    _user_config(tmp_path, '[settings]\nredact = false\nembedder = "openai:m@http://10.0.0.2"\n')
    corpus = _corpus(tmp_path, "[settings]\nredact = true\n")
    resolved = resolve(corpus, environ=_env(tmp_path))
    assert resolved.settings.redact is True and resolved.settings.embedder.startswith("openai:")
    assert resolved.origins == {"redact": "narezka.toml", "embedder": "user config"}


def test_origins_name_every_source(tmp_path: Path) -> None:
    _user_config(tmp_path, "[settings]\nmin_chars = 10\n")
    corpus = _corpus(tmp_path, '[settings]\nstrategy = "recursive"\n')
    resolved = resolve(corpus, environ=_env(tmp_path, NAREZKA_OVERLAP="5"), size=300)
    assert resolved.origins == {
        "min_chars": "user config", "strategy": "narezka.toml", "overlap": "environment",
        "size": "flags",
    }  # fmt: skip
    assert resolved.describe() == (
        "user config: min_chars; narezka.toml: strategy; environment: overlap; flags: size; "
        "the rest: defaults"
    )
    assert resolve(None, environ=_env(tmp_path / "none")).describe() == "defaults"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[trust]\ncorpora = 'one'\n", "list of folders"),
        ("[trust]\nall = true\n", "unknown [trust] key all"),
        ("[zones]\n", "unknown table or key 'zones'"),
        ("[settings\n", "config.toml"),
        ("[settings]\nsize = 'big'\n", "size = 'big' is not a valid value"),
    ],
)
def test_a_bad_user_config_is_named(tmp_path: Path, text: str, problem: str) -> None:
    _user_config(tmp_path, text)
    with pytest.raises(ConfigError, match=r"config\.toml") as caught:
        resolve(None, environ=_env(tmp_path))
    assert problem in str(caught.value)


def test_narezka_config_names_the_user_config_file(tmp_path: Path) -> None:
    own = tmp_path / "mine.toml"
    own.write_text('[settings]\nstrategy = "recursive"\n', encoding="utf-8")
    assert read_user_config({"NAREZKA_CONFIG": str(own)}).settings == {"strategy": "recursive"}


@pytest.mark.parametrize(
    ("values", "lowered"),
    [
        ({"follow_symlinks": False, "redact": True}, False),
        ({"embedder": "e5", "context_llm": "ollama:qwen2.5:3b"}, False),
        ({"embedder": "hash:64", "context_llm": "off"}, False),
        ({"embedder": "st:/tmp/model"}, True),
        ({"embedder": "ollama:nomic@http://10.1.1.1:11434"}, True),
        ({"context_llm": "openai:gpt@http://127.0.0.1:8000"}, True),
        ({"redact": False}, True),
        ({"follow_symlinks": True}, True),
    ],
)
def test_which_values_lower_safety(values: dict[str, object], lowered: bool) -> None:
    assert bool(lowered_safety(values)) is lowered


def test_a_corpus_cannot_trust_itself(tmp_path: Path) -> None:
    corpus = _corpus(
        tmp_path, f'[trust]\ncorpora = ["{tmp_path}/kb"]\n[settings]\nredact = false\n'
    )
    with pytest.raises(ConfigError, match="trust at the top level"):
        Settings.load(corpus, environ=_env(tmp_path))


def test_index_command_confirms_by_flag_and_says_where_settings_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path)
    for key, value in _env(tmp_path).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("NAREZKA_TRUST_CORPUS", raising=False)
    runner = CliRunner()
    refused = runner.invoke(cli, ["index", str(corpus), "--embedder", "hash"])
    assert refused.exit_code == 2 and "follow_symlinks" in refused.output
    assert not (corpus / ".narezka").exists()
    done = runner.invoke(
        cli, ["index", str(corpus), "--embedder", "hash", "--trust-corpus-config", "--json"]
    )
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["settings_from"] == {
        "follow_symlinks": "narezka.toml", "strategy": "narezka.toml", "embedder": "flags",
    }  # fmt: skip
    table = runner.invoke(
        cli, ["index", str(corpus), "--embedder", "hash", "--trust-corpus-config"]
    )
    assert "Settings from" in table.stdout and "narezka.toml: follow_symlinks" in table.stdout
