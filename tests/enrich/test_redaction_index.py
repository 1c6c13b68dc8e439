"""End to end: index the planted-secrets notes and show no secret can be got back out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from narezka.api.indexing import index
from narezka.api.maintenance import sync
from narezka.api.searching import search
from narezka.cli import cli
from narezka.embed import HashEmbedder
from narezka.store import Manifest, open_store

from conftest import TEST_DATA, index_data

SECRETS = TEST_DATA / "secrets"
PLANTED: list[dict[str, str]] = json.loads((SECRETS / "planted.json").read_text("utf-8"))
MD_PLANTED = [p for p in PLANTED if p["file"].endswith(".md")]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    corpus = tmp_path / "notes"
    corpus.mkdir()
    for file in SECRETS.glob("*.md"):
        shutil.copy(file, corpus / file.name)
    return corpus


def model() -> HashEmbedder:
    return HashEmbedder(64)


def stored_payloads(corpus: Path) -> list[dict[str, Any]]:
    with Manifest(index_data(corpus / ".narezka")) as manifest:
        ids = [c.point_id for p in manifest.paths() for c in manifest.get(p).chunks]  # type: ignore[union-attr]
    store = open_store(index_data(corpus / ".narezka"))
    try:
        store.ensure(64, sparse=True)
        return [dict(p.payload) for p in store.get(ids)]
    finally:
        store.close()


def leaked(texts: list[str]) -> list[str]:
    return [p["value"][:24] for p in MD_PLANTED for t in texts if p["value"] in t]


def test_no_planted_secret_is_stored_or_found_by_search(notes: Path) -> None:
    report = index(notes, embedder=model())
    assert report.files_new == 5 and not report.skipped
    assert sorted(report.secrets) == sorted({p["file"] for p in MD_PLANTED})
    payloads = stored_payloads(notes)
    assert len(payloads) == report.chunks_embedded
    assert leaked([json.dumps(p, ensure_ascii=False) for p in payloads]) == []
    assert any("[REDACTED:private-key]" in p["text"] for p in payloads)
    for plant in MD_PLANTED:
        hits = search(plant["value"], notes, mode="bm25", k=10, embedder=model())
        shown = [json.dumps(h.to_json(), ensure_ascii=False) for h in hits]
        assert leaked(shown) == [], plant["kind"]


def test_expanded_sections_are_redacted_too(notes: Path) -> None:
    index(notes, embedder=model(), size=60)
    hits = search("REDACTED", notes, mode="bm25", k=10, expand="section", embedder=model())
    assert hits
    assert leaked([h.text for h in hits]) == []


def test_an_index_built_before_redaction_loses_its_secrets_on_the_next_sync(
    notes: Path,
) -> None:
    # redact=False has exactly the fingerprint main wrote before redaction existed.
    old = index(notes, embedder=model(), redact=False)
    assert old.secrets == {}
    assert leaked([p["text"] for p in stored_payloads(notes)])
    meta = json.loads((notes / ".narezka" / "index.json").read_text("utf-8"))
    del meta["params"]["redact"]  # as an index written before the option existed,
    del meta["settings"]  # and before index.json kept the whole settings
    (notes / ".narezka" / "index.json").write_text(json.dumps(meta), encoding="utf-8")

    again = sync(notes, embedder=model())

    # Rebuilt in a fresh generation (the old one's log and pages held the plaintext).
    assert again.files_new == 5 and again.files_unchanged == 0
    assert not (notes / ".narezka" / "data-1").exists()
    assert leaked([json.dumps(p, ensure_ascii=False) for p in stored_payloads(notes)]) == []


def test_no_redact_is_remembered_by_sync(notes: Path) -> None:
    index(notes, embedder=model(), redact=False)
    meta = json.loads((notes / ".narezka" / "index.json").read_text("utf-8"))
    assert meta["params"]["redact"] is False
    again = sync(notes, embedder=model())
    assert again.files_unchanged == 5


def test_cli_chunk_counts_secrets_and_no_redact_keeps_them(notes: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["chunk", str(notes), "--format", "json", "--stats"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)["stats"]
    assert stats["secrets_redacted"] == len(MD_PLANTED) + 1  # one password sits twice
    assert stats["secret_kinds"]["private-key"] == 3
    assert stats["secrets"]["kubeconfig.md"] == {"jwt": 1, "kube-client-key": 1, "password": 1}
    assert "Secrets redacted" in result.stderr

    previews = runner.invoke(cli, ["chunk", str(notes), "--size", "120"])
    assert previews.exit_code == 0 and "[REDACTED:" in previews.stdout
    assert leaked([previews.stdout]) == []

    kept = runner.invoke(cli, ["chunk", str(notes), "--format", "jsonl", "--no-redact"])
    assert kept.exit_code == 0
    rows = [json.loads(line) for line in kept.stdout.splitlines()]
    assert leaked([r["embed_text"] for r in rows])
    assert not any("secrets" in r for r in rows)


def test_cli_index_no_redact_and_json_summary(notes: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["index", str(notes), "--embedder", "hash:64", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["secrets"]["env-snippets.md"]["openai-key"] == 1
    rebuilt = runner.invoke(
        cli, ["index", str(notes), "--embedder", "hash:64", "--rebuild", "--no-redact", "--json"]
    )
    assert rebuilt.exit_code == 0, rebuilt.output
    assert json.loads(rebuilt.stdout)["secrets"] == {}
