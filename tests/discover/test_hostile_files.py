"""Files a corpus may hold that narezka must never read: symlinks leading out of the corpus
(issue 23, item 4) and FIFOs, sockets, devices (item 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from narezka.api.indexing import index
from narezka.discover import iter_files, read_document
from narezka.embed import HashEmbedder
from narezka.errors import RefusedFileError, SourceError
from narezka.index import Index
from narezka.runs import chunk_documents
from narezka.search.expansion import read_source
from narezka.settings import Settings

SECRET = "root:x:0:0:не-для-индекса"
CLI_TIMEOUT = 120
"""Seconds a CLI run may take: a regression that opens a FIFO blocks forever, and must fail."""

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A corpus beside a private file, linked into the corpus as ``passwd.md``."""
    root = tmp_path / "kb"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Доставка\n\nКурьер приезжает утром.\n", encoding="utf-8")
    (root / "sub" / "b.md").write_text("# Возврат\n\nВернуть можно за 14 дней.\n", "utf-8")
    private = tmp_path / "private"
    private.mkdir()
    (private / "passwd").write_text(f"{SECRET}\n", encoding="utf-8")
    (private / "notes.md").write_text(f"# Пароли\n\n{SECRET}\n", encoding="utf-8")
    (root / "passwd.md").symlink_to(private / "passwd")
    (root / "linked").symlink_to(private, target_is_directory=True)
    (root / "inner.md").symlink_to(root / "sub" / "b.md")  # stays inside: followed
    return root


def _walk(root: Path, *, follow: bool = False) -> tuple[list[str], dict[str, SourceError]]:
    errors: list[SourceError] = []
    found = iter_files([root], errors=errors, follow_symlinks=follow)
    rels = [f.relative_to(r).as_posix() for r, f in found]
    return rels, {e.path: e for e in errors}


def test_links_out_of_the_corpus_are_named_not_followed(corpus: Path) -> None:
    rels, errors = _walk(corpus)
    assert rels == ["a.md", "inner.md", "sub/b.md"]
    assert set(errors) == {"passwd.md", "linked"}
    assert all(isinstance(e, RefusedFileError) for e in errors.values())
    assert "outside the corpus" in errors["passwd.md"].problem
    assert "--follow-symlinks" in errors["linked"].problem


def test_follow_symlinks_reads_them(corpus: Path) -> None:
    rels, errors = _walk(corpus, follow=True)
    assert rels == ["a.md", "inner.md", "linked/notes.md", "passwd.md", "sub/b.md"]
    assert errors == {}


def test_a_corpus_reached_through_a_link_still_reads_its_own_links(corpus: Path) -> None:
    alias = corpus.parent / "alias"
    alias.symlink_to(corpus, target_is_directory=True)
    rels, errors = _walk(alias)
    assert rels == ["a.md", "inner.md", "sub/b.md"]
    assert set(errors) == {"passwd.md", "linked"}


def _stored_texts(root: Path) -> str:
    with Index.open(root) as ix:
        return "\n".join(hit.text for hit in ix.chunks())


def test_sync_indexes_nothing_from_outside_and_drops_what_it_had(corpus: Path) -> None:
    report = index(corpus, embedder=HashEmbedder(64))
    assert {e.path for e in report.skipped} == {"passwd.md", "linked"}
    assert SECRET not in _stored_texts(corpus)

    # An index built with the links followed holds the text; a sync without the option
    # removes it, though the link is still there (no "could not be read, kept").
    index(corpus, embedder=HashEmbedder(64), follow_symlinks=True)
    assert SECRET in _stored_texts(corpus)
    again = index(corpus, embedder=HashEmbedder(64))
    assert again.files_deleted == 2
    assert SECRET not in _stored_texts(corpus)


def test_a_link_swapped_in_after_indexing_is_never_read_back(tmp_path: Path) -> None:
    """The query-time re-read (expand, fold, MCP get_context, /sources) refuses a file whose
    real path is outside the corpus, even with the very text the index holds."""
    root = tmp_path / "kb"
    root.mkdir()
    text = "# Раздел\n\nТекст раздела.\n"
    (root / "a.md").write_text(text, encoding="utf-8")
    assert read_source(root, "a.md") is not None
    outside = tmp_path / "outside.md"
    outside.write_text(text, encoding="utf-8")
    (root / "a.md").unlink()
    (root / "a.md").symlink_to(outside)
    assert read_source(root, "a.md") is None
    (root / "b.md").symlink_to(root / "c.md")
    (root / "c.md").write_text(text, encoding="utf-8")
    assert read_source(root, "b.md") is not None  # a link inside the corpus still reads


def _cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "narezka", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=CLI_TIMEOUT,
        check=False,
    )


def test_index_and_chunk_name_the_link_on_the_command_line(corpus: Path) -> None:
    done = _cli("chunk", corpus, "--format", "jsonl", "--strict", cwd=corpus.parent)
    assert SECRET not in done.stdout
    assert "skipped: passwd.md: symlink leading outside the corpus" in done.stderr
    assert done.returncode == 1  # --strict: something was skipped
    followed = _cli("chunk", corpus, "--format", "jsonl", "--follow-symlinks", cwd=corpus.parent)
    assert SECRET in followed.stdout and followed.returncode == 0


@needs_fifo
def test_a_fifo_inside_a_folder_is_named_and_never_opened(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nтекст\n", encoding="utf-8")
    os.mkfifo(root / "pipe.md")
    os.mkfifo(root / "pipe.bin")  # the globs do not want it: nothing to say
    rels, errors = _walk(root)
    assert rels == ["a.md"]
    assert list(errors) == ["pipe.md"]
    assert isinstance(errors["pipe.md"], RefusedFileError)
    assert errors["pipe.md"].problem.startswith("a FIFO, not a regular file")
    report = chunk_documents([root], size=200, unit="chars")
    assert [e.path for e in report.skipped] == ["pipe.md"] and report.files == 1


@needs_fifo
def test_read_document_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    """A FIFO put where the walk saw a file is opened without blocking and refused."""
    os.mkfifo(tmp_path / "x.md")
    code = (
        "import sys; from pathlib import Path; from narezka.discover import read_document\n"
        "from narezka.errors import RefusedFileError\n"
        "try:\n    read_document(Path(sys.argv[1]), Path(sys.argv[1]) / 'x.md')\n"
        "except RefusedFileError as exc:\n    print(exc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert "a FIFO, not a regular file" in done.stdout


@needs_fifo
@pytest.mark.parametrize("command", ["chunk", "index"])
def test_a_fifo_given_as_a_path_is_an_error_naming_it(tmp_path: Path, command: str) -> None:
    """``chunk x.md`` and ``index x.md`` on a FIFO once waited forever for a writer."""
    (tmp_path / "a.md").write_text("# A\n\nтекст про доставку\n", encoding="utf-8")
    os.mkfifo(tmp_path / "x.md")
    if command == "chunk":
        done = _cli("chunk", "x.md", "a.md", "--format", "jsonl", cwd=tmp_path)
        assert [json.loads(line)["source"] for line in done.stdout.splitlines()] == ["a.md"]
    else:
        store = tmp_path / "store"
        done = _cli("index", "x.md", "--embedder", "hash:64", "--store", store, cwd=tmp_path)
        assert done.returncode == 2 and not store.exists()  # the whole corpus: nothing to do
    assert "x.md: a FIFO, not a regular file" in done.stderr


def test_read_document_still_reads_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"# A\r\n")
    doc, _ = read_document(tmp_path, tmp_path / "a.md")
    assert (doc.text, doc.size) == ("# A\n", 5)


def test_sync_watch_and_serve_change_the_recorded_choice(corpus: Path) -> None:
    from narezka.api.maintenance import sync
    from narezka.serve.service import Service

    with Index.create(corpus, Settings(embedder="hash")) as ix:
        ix.sync()
    assert SECRET not in _stored_texts(corpus)
    sync(corpus, follow_symlinks=True)
    sync(corpus)  # the choice is recorded: still followed
    assert SECRET in _stored_texts(corpus)
    with Service(corpus, watch=False, follow_symlinks=False) as service:
        service.index.sync()
    assert SECRET not in _stored_texts(corpus)
    assert sync(corpus).skipped  # and recorded again: named, not read


def test_the_service_serves_nothing_from_outside(corpus: Path) -> None:
    """What HTTP /search, /chunks and MCP search/get_context answer comes from here."""
    from narezka.serve.service import Service

    with Index.create(corpus, Settings(embedder="hash")) as ix:
        ix.sync()
    with Service(corpus, watch=False) as service:
        for expand in (None, "section"):
            query = "курьер утром root не-для-индекса"
            reply = service.search(query, k=50, mode="bm25", expand=expand)
            assert reply["hits"] and SECRET not in json.dumps(reply, ensure_ascii=False)
            for hit in reply["hits"]:
                context = service.get_context(hit["chunk_id"], before=3, after=3)
                assert SECRET not in json.dumps(context, ensure_ascii=False)
