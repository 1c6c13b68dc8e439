"""Trust audit (#38), rows 3, 10, 11, 13, 15 and 16: a corpus cannot switch off its own
safety, a read-only index is searchable, a disk filling during a run is named, links inside
the corpus obey ``exclude`` and ``.git/``, the stale flag sees a size change under an old
mtime, and junk bytes under a text suffix are named as binary."""

from __future__ import annotations

import gc
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from narezka.api.indexing import index
from narezka.discover.walk import read_document
from narezka.errors import BinaryFileError, ConfigError, NarezkaError
from narezka.index import Index
from narezka.settings import Settings

SECRET = "AKIAIOSFODNN7EXAMPLE"
NOTE = "# Notes\n\nThe tea return policy: an opened pack can be returned within 14 days.\n"


def _clean_env(tmp: Path) -> dict[str, str]:
    """The environment of a user who confirmed nothing: no NAREZKA_* and an empty config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NAREZKA_")}
    env["XDG_CONFIG_HOME"] = str(tmp / "user-config")
    return env


def _narezka(
    *args: str, env: dict[str, str], user: int | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "narezka", *args],
        capture_output=True, text=True, timeout=180, env=env, user=user,
    )  # fmt: skip


def _hostile_corpus(tmp_path: Path, setting: str) -> tuple[Path, Path]:
    outside = tmp_path / "home" / ".ssh"
    outside.mkdir(parents=True)
    key = outside / "id_rsa.md"
    key.write_text(f"# key\n\naws_access_key_id = {SECRET}\n", encoding="utf-8")
    corpus = tmp_path / "downloaded"
    corpus.mkdir()
    (corpus / "readme.md").write_text(NOTE, encoding="utf-8")
    (corpus / "stolen.md").symlink_to(key)
    (corpus / "narezka.toml").write_text(f"[settings]\n{setting}\n", encoding="utf-8")
    return corpus, key


# ---- row 3: a corpus cannot switch off its own safety ----------------------------------


@pytest.mark.parametrize(
    ("setting", "name"),
    [
        ("follow_symlinks = true", "follow_symlinks"),
        ("redact = false", "redact"),
        ('embedder = "openai:text-embedding-3-small@http://203.0.113.9:8080"', "embedder"),
        ('context_llm = "ollama:qwen2.5:3b@http://203.0.113.9:11434"', "context_llm"),
    ],
)
def test_a_corpus_narezka_toml_cannot_lower_its_own_safety(
    tmp_path: Path, setting: str, name: str
) -> None:
    corpus, _ = _hostile_corpus(tmp_path, setting)
    env = _clean_env(tmp_path)
    with pytest.raises(ConfigError, match=rf"narezka\.toml.*{name}"):
        Settings.load(corpus, environ=env)


def test_index_of_a_hostile_corpus_exits_2_and_reads_nothing_outside(tmp_path: Path) -> None:
    corpus, _ = _hostile_corpus(tmp_path, "follow_symlinks = true\nredact = false")
    done = _narezka("index", str(corpus), "--embedder", "hash", env=_clean_env(tmp_path))
    assert done.returncode == 2, done.stderr
    assert str(corpus / "narezka.toml") in done.stderr
    assert "follow_symlinks" in done.stderr and "--trust-corpus-config" in done.stderr
    assert "Traceback" not in done.stderr
    leaked = (
        [p for p in (corpus / ".narezka").rglob("*") if p.is_file()]
        if (corpus / ".narezka").exists()
        else []
    )
    assert not any(SECRET.encode() in p.read_bytes() for p in leaked)


# ---- row 13: links inside the corpus obey exclude and .git/ ----------------------------


def _linked_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "kb"
    (corpus / ".git").mkdir(parents=True)
    (corpus / ".git" / "config").write_text(
        f'[remote "origin"]\n\turl = https://user:{SECRET}@example.com/repo\n', encoding="utf-8"
    )
    (corpus / "private").mkdir()
    (corpus / "private" / "salaries.md").write_text(f"# Pay\n\n{SECRET}\n", encoding="utf-8")
    (corpus / "notes.md").write_text(NOTE, encoding="utf-8")
    (corpus / "git.md").symlink_to(corpus / ".git" / "config")
    (corpus / "pay.md").symlink_to(Path("private") / "salaries.md")
    (corpus / "gitdir").symlink_to(".git")
    (corpus / ".git" / "HEAD.md").write_text(f"# head\n\n{SECRET}\n", encoding="utf-8")
    return corpus


def test_links_to_git_or_excluded_files_are_not_indexed_and_are_named(tmp_path: Path) -> None:
    corpus = _linked_corpus(tmp_path)
    report = index(corpus, embedder="hash", exclude=["private/**"])
    with Index.open(corpus) as ix:
        indexed = {s.path for s in ix.sources()}
        texts = [h.text for h in ix.chunks()]
    assert indexed == {"notes.md"}
    assert not any(SECRET in t for t in texts)
    skipped = {e.path: str(e) for e in report.skipped}
    assert {"git.md", "pay.md", "gitdir"} <= set(skipped), skipped
    assert ".git" in skipped["git.md"] and "excluded" in skipped["pay.md"]


def test_a_served_source_swapped_for_a_link_to_git_config_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from narezka.serve.service import Service

    corpus = _linked_corpus(tmp_path)
    index(corpus, embedder="hash", exclude=["private/**"])
    gc.collect()
    service = Service(corpus, watch=False)
    try:
        assert "tea return policy" in service.source_text("notes.md")
        (corpus / "notes.md").unlink()
        (corpus / "notes.md").symlink_to(corpus / ".git" / "config")
        with pytest.raises(NarezkaError, match=r"\.git"):
            service.source_text("notes.md")
        (corpus / "notes.md").unlink()
        (corpus / "notes.md").symlink_to(corpus / "private" / "salaries.md")
        with pytest.raises(NarezkaError, match="excluded"):
            service.source_text("notes.md")
    finally:
        service.index.close()


# ---- row 15: the stale flag on size or mtime -------------------------------------------


def test_an_edit_that_restores_the_old_mtime_is_stale(tmp_path: Path) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    note = corpus / "tea.md"
    note.write_text(NOTE, encoding="utf-8")
    index(corpus, embedder="hash")
    before = note.stat()
    note.write_text(NOTE + "\nAppended: returns now take 30 days.\n", encoding="utf-8")
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert note.stat().st_size != before.st_size
    with Index.open(corpus) as ix:
        hits = ix.search("tea return policy", mode="bm25")
        assert hits and all(h.stale for h in hits)
        assert ix.stats().changed_files == ("tea.md",)


# ---- row 16: junk bytes under a text suffix are named as binary ------------------------


def _sparse_junk(size: int) -> bytes:
    """Random bytes with a few control codes (3 %): below the 10 % that always meant binary,
    so before the fix a ``.md`` of them was a decoding error, not binary."""
    rng = random.Random(size)
    controls = [b for b in range(32) if b not in b"\t\n\r\f"]
    return bytes(
        rng.choice(controls) if rng.random() < 0.03 else rng.randrange(32, 256) for _ in range(size)
    )


@pytest.mark.parametrize("suffix", [".html", ".htm", ".csv"])
@pytest.mark.parametrize("size", [300, 4096, 50_000])
def test_random_bytes_under_a_text_suffix_are_binary(
    tmp_path: Path, suffix: str, size: int
) -> None:
    junk = tmp_path / f"junk{suffix}"
    junk.write_bytes(os.urandom(size))
    with pytest.raises(BinaryFileError, match=rf"junk\{suffix}.*binary"):
        read_document(tmp_path, junk)


@pytest.mark.parametrize("suffix", [".html", ".csv", ".md", ".txt"])
def test_junk_with_few_control_codes_is_binary(tmp_path: Path, suffix: str) -> None:
    junk = tmp_path / f"junk{suffix}"
    junk.write_bytes(_sparse_junk(20_000))
    with pytest.raises(BinaryFileError, match=rf"junk\{suffix}.*binary"):
        read_document(tmp_path, junk)


def test_junk_under_a_text_suffix_is_skipped_by_name_and_the_rest_indexed(tmp_path: Path) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "notes.md").write_text(NOTE, encoding="utf-8")
    for name in ("page.html", "table.csv", "log.txt"):
        (corpus / name).write_bytes(os.urandom(20_000))
    report = index(corpus, embedder="hash")
    with Index.open(corpus) as ix:
        assert {s.path for s in ix.sources()} == {"notes.md"}
    named = {e.path.rsplit("/", 1)[-1]: str(e) for e in report.skipped}
    assert {"page.html", "table.csv", "log.txt"} <= set(named)
    assert all("binary" in named[n] for n in ("page.html", "table.csv", "log.txt"))


# ---- row 10: a read-only index is searchable -------------------------------------------


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder another user can read (pytest's own tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="narezka-ro-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _search(corpus: Path) -> tuple[int, str]:
    from click.testing import CliRunner

    from narezka.cli import cli

    result = CliRunner().invoke(cli, ["search", "tea return policy", "--store", str(corpus)])
    raised = result.exception
    shown = "" if raised is None or isinstance(raised, SystemExit) else repr(raised)
    return result.exit_code, result.output + shown


def _as_nobody(corpus: Path) -> tuple[int, str]:
    """:func:`_search` in a forked child that has become ``nobody``: it owns nothing in the
    index, so it can write nothing there (root's chmod stops nobody; the venv's Python lies
    under /root, so a child process could not even start)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.close(read)
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            answer = _search(corpus)
        except BaseException as exc:
            answer = (99, repr(exc))
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    code, output = json.loads(data)
    return int(code), str(output)


def test_search_of_an_index_the_user_cannot_write(
    shared_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = shared_tmp / "kb"
    corpus.mkdir()
    (corpus / "tea.md").write_text(NOTE, encoding="utf-8")
    monkeypatch.setenv("NAREZKA_CACHE_DIR", str(shared_tmp / "cache"))
    index(corpus, embedder="hash")
    gc.collect()
    assert _search(corpus)[0] == 0  # as the index's owner: every module is loaded now
    dirs = [corpus / ".narezka", *(p for p in (corpus / ".narezka").rglob("*") if p.is_dir())]
    if os.geteuid() == 0:
        code, output = _as_nobody(corpus)
    else:
        for path in dirs:
            path.chmod(0o555)
        try:
            code, output = _search(corpus)
        finally:
            for path in dirs:
                path.chmod(0o755)
    assert code == 0, output
    assert "tea.md" in output
    assert "PermissionError" not in output and "Traceback" not in output


# ---- row 11: a disk filling during a run is named, and the next run repairs ------------


_FILL_DURING_RUN = """
import sys
from pathlib import Path
from narezka.index import Index
from narezka.index.syncing import Progress
from narezka.errors import NarezkaError

corpus, store, filler = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
left = int(sys.argv[4])
done = []

def fill(source):
    done.append(source)
    if len(done) == 1:  # after the first file: another program takes the space left
        with open(filler, "wb") as out:
            try:
                while True:
                    out.write(b"x" * 65536)
            except OSError:
                pass
        with open(filler, "r+b") as out:  # all of it, or all but ``left`` bytes
            out.truncate(max(0, filler.stat().st_size - left))

try:
    with Index.create(corpus, store=store) as ix:
        ix.sync(progress=Progress(on_file=fill), jobs=1)
except NarezkaError as exc:
    print(f"Error: {exc}", file=sys.stderr)
    sys.exit(2)
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("left", [0, 3 * 2**20, 12 * 2**20])
def test_a_disk_filling_during_a_run_is_named_and_the_next_run_repairs(
    tmp_path: Path, small_disk: Path, left: int
) -> None:
    corpus = tmp_path / "kb"
    corpus.mkdir()
    (corpus / "narezka.toml").write_text('[settings]\nembedder = "hash"\n', encoding="utf-8")
    for n in range(30):
        (corpus / f"note{n:02}.md").write_text(
            f"# Note {n}\n\n" + f"Paragraph {n} about tea returns and shipping. " * 400,
            encoding="utf-8",
        )
    store, filler = small_disk / "idx", small_disk / "filler"
    script = tmp_path / "fill.py"
    script.write_text(_FILL_DURING_RUN, encoding="utf-8")
    env = _clean_env(tmp_path)
    done = subprocess.run(
        [sys.executable, str(script), str(corpus), str(store), str(filler), str(left)],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "free space" in done.stderr or "disk" in done.stderr
    assert str(small_disk) in done.stderr
    filler.unlink()
    again = _narezka("index", str(corpus), "--store", str(store), env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    with Index.open(store) as ix:
        assert len(ix.sources()) == 30
