"""The trust audit as a repeatable script: secrets planted everywhere, a hostile corpus
(symlinks out of it, a FIFO, nested files under a top-level-looking glob, files of types
narezka does not read), hostile HTTP and MCP input, stale hits. Each probe runs the real
console script or a real server on localhost and prints one row: what was tried, what a
trustworthy tool must do, what happened.

Usage::

    python benchmarks/audit_trust.py [--out benchmarks/results/audit_trust.md]

The per-format rows plant secrets in every place each converted format offers (the corpus of
``tests/trust/planted_formats.py``, shared with ``tests/trust/test_trust_cache.py``) and read
every file under ``.narezka/`` as bytes after ``index``, ``cache clear``, ``index --rebuild``,
``compact`` and deleting the files then syncing.

Faults of the disk and of the files under ``.narezka/`` are probed by
``benchmarks/audit_faults.py``; kill -9 trials by ``tests/index/test_crash_safety.py``.
Exit status 1 when any probe fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]

# Secrets of the shapes the detectors know, one per position a Markdown file offers.
SECRETS = {
    "heading": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "front matter": "AKIA" + "QWERTYUIOPASDFGH",
    "table cell": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "link url": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "image alt": "glpat-" + "xY9zA8bC7dE6fG5hI4jK",
    "code": "AIza" + "SyD-1234567890abcdefghijklmnopqrstu",
    "list item": "npm_" + "abcdefghijklmnopqrstuvwxyz0123456789",
}
SECRET_DOC = f"""---
title: Keys {SECRETS["front matter"]}
---
# Token {SECRETS["heading"]} rotation

| service | key |
|---|---|
| chat | {SECRETS["table cell"]} |

See [the dashboard](https://pay.example/keys?k={SECRETS["link url"]}) and
![key {SECRETS["image alt"]}](shot.png).

```bash
export GOOGLE_API_KEY={SECRETS["code"]}
```

- publish with {SECRETS["list item"]}
"""
OUTSIDE = "this line lives outside the corpus and must never be served"


@dataclass
class Row:
    item: str
    probe: str
    required: str
    observed: str
    ok: bool


def narezka(*args: str, timeout: float = 300, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the console script; (exit code, stdout + stderr). A hang is exit code -9."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "narezka", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired:
        return -9, f"hung for {timeout:.0f} s"
    return done.returncode, done.stdout + done.stderr


def raw_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def leaked(blob: str | bytes) -> list[str]:
    """Which planted secrets the blob holds, also lowercased or with punctuation changed (a
    slug of a heading lowercases it and turns ``_`` into ``-``)."""
    text = blob.decode("utf-8", "replace") if isinstance(blob, bytes) else blob
    squeezed = "".join(c for c in text.lower() if c.isalnum())
    return [
        where
        for where, secret in SECRETS.items()
        if "".join(c for c in secret.lower() if c.isalnum()) in squeezed
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``narezka serve CORPUS --http 127.0.0.1:PORT`` until closed."""

    def __init__(self, corpus: Path, *extra: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = corpus.parent / f"serve-{self.port}.log"
        with self.log.open("wb") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "narezka", "serve", str(corpus), "--http",
                 f"127.0.0.1:{self.port}", *extra],
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )  # fmt: skip
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                httpx.get(f"{self.base}/status", timeout=5)
                return
            except httpx.HTTPError:
                time.sleep(0.3)
        self.proc.kill()
        raise RuntimeError(f"the server did not start: {self.log.read_text()[-1500:]}")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def secrets_probes(work: Path) -> list[Row]:
    corpus = work / "secrets"
    corpus.mkdir()
    (corpus / "keys.md").write_text(SECRET_DOC, encoding="utf-8")
    (corpus / "plain.md").write_text("# Чай\n\nВскрытый чай не возвращается.\n", "utf-8")
    rows = []
    code, _ = narezka("index", str(corpus), "--embedder", "hash", "--json")
    found = leaked(raw_bytes(corpus / ".narezka"))
    rows.append(
        Row(
            "2",
            "secrets in 7 positions, raw bytes under .narezka/",
            "none found",
            f"exit {code}; found: {found or 'none'}",
            code == 0 and not found,
        )
    )
    searched = "".join(
        narezka(
            "search", query, "--store", str(corpus), "--format", "json", "-k", "10",
            "--min-relevance", "0",
        )[1]
        for query in ("Token rotation", "Keys", "dashboard key", "GOOGLE_API_KEY publish")
    )  # fmt: skip
    found, served = leaked(searched), searched.count('"chunk_id"')
    rows.append(
        Row(
            "2",
            "search --format json over the same index (4 queries, every hit)",
            "hits served, no secret in any field",
            f"{served} hit fields; found: {found or 'none'}",
            served > 0 and not found,
        )
    )
    _, chunked = narezka("chunk", str(corpus / "keys.md"), "--format", "jsonl")
    found = leaked(chunked)
    # JSONL's text is the exact span of the user's own file (the chunk contract); every
    # other field is derived and must not carry a secret.
    fields = {
        key
        for line in chunked.splitlines()
        if line.startswith("{")
        for key, value in json.loads(line).items()
        if key not in ("text", "start", "end") and leaked(json.dumps(value, ensure_ascii=False))
    }
    rows.append(
        Row(
            "2",
            "chunk --format jsonl: every field but the exact-span text",
            "no secret",
            f"in fields: {sorted(fields) or 'none'}",
            not fields,
        )
    )
    server = Server(corpus, "--no-watch")
    try:
        query = {"q": "Token rotation", "k": 10, "min_relevance": 0}
        reply = httpx.get(f"{server.base}/search", params=query)
        ids = [h.get("chunk_id") for h in reply.json().get("hits", [])]
        bodies = reply.text + "".join(httpx.get(f"{server.base}/chunks/{i}").text for i in ids if i)
        found = leaked(bodies)
        rows.append(
            Row(
                "2",
                "HTTP /search and /chunks/{id}",
                "hits served, no secret",
                f"{len(ids)} hits; found: {found or 'none'}",
                reply.status_code == 200 and bool(ids) and not found,
            )
        )
    finally:
        server.close()
    # Redaction off, then on: the old plaintext must not survive anywhere on disk.
    again = work / "policy"
    again.mkdir()
    (again / "keys.md").write_text(SECRET_DOC, encoding="utf-8")
    narezka("index", str(again), "--embedder", "hash", "--no-redact")
    before = leaked(raw_bytes(again / ".narezka"))
    code, _ = narezka("index", str(again), "--embedder", "hash")
    after = leaked(raw_bytes(again / ".narezka"))
    rows.append(
        Row(
            "3",
            "index --no-redact, then index",
            "no plaintext left on disk",
            f"before {len(before)} kinds on disk, after {len(after)}",
            code == 0 and not after,
        )
    )
    return rows


def format_probes(work: Path) -> list[Row]:
    """One row per converted format: its planted secrets under ``.narezka/`` at each stage
    of the index's life, and in every field a search serves."""
    sys.path.insert(0, str(REPO / "tests" / "trust"))
    from planted_formats import CANARIES, FILES, PLANTED, found, write_corpus

    corpus = write_corpus(work / "formats")
    home = corpus / ".narezka"

    def under_home(values: dict[str, str]) -> set[str]:
        return {
            label for p in home.rglob("*") if p.is_file() for label in found(p.read_bytes(), values)
        }

    stages: dict[str, set[str]] = {}
    code, _ = narezka("index", str(corpus), "--embedder", "hash")
    stages["index"] = under_home(PLANTED)
    args = ("--store", str(corpus), "--format", "json", "-k", "50", "--min-relevance", "0")
    shown = "".join(
        narezka("search", q, *args)[1] for q in ("Token rotation", "Keys", "key", "Deploy")
    )
    served = set(found(shown.encode(), PLANTED))
    narezka("cache", "clear", "--store", str(corpus))
    stages["cache clear"] = under_home(PLANTED)
    narezka("index", str(corpus), "--embedder", "hash", "--rebuild")
    stages["--rebuild"] = under_home(PLANTED)
    narezka("compact", str(corpus))
    stages["compact"] = under_home(PLANTED)
    for name in FILES:
        (corpus / name).unlink()
    narezka("index", str(corpus), "--embedder", "hash")
    stages["deleted, synced"] = under_home(PLANTED)
    left = {p.name for p in home.glob("converted.sqlite*") if found(p.read_bytes(), CANARIES)}
    rows = []
    for name in FILES:
        kind = name.rsplit(".", 1)[1]
        mine = [label for label in PLANTED if label.startswith(f"{kind}:")]
        counts = [
            f"{stage} {len([m for m in mine if m in seen])}" for stage, seen in stages.items()
        ]
        leaks = [m for m in mine if any(m in seen for seen in stages.values()) or m in served]
        shown_here = len([m for m in mine if m in served])
        rows.append(
            Row(
                "2",
                f"{name}: {len(mine)} secrets ({', '.join(m.split(': ')[1] for m in mine)})",
                "none under .narezka/ at any stage, none served",
                f"exit {code}; found: {'; '.join(counts)}; served {shown_here}",
                code == 0 and not leaks,
            )
        )
    rows.append(
        Row(
            "2",
            "the converted files deleted, synced: their text in converted.sqlite*",
            "gone",
            f"canaries found in: {sorted(left) or 'none'}",
            not left,
        )
    )
    return rows


def corpus_probes(work: Path) -> list[Row]:
    rows = []
    outside = work / "outside.md"
    outside.write_text(f"# Outside\n\n{OUTSIDE}\n", encoding="utf-8")
    corpus = work / "hostile"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "note.md").write_text("# Note\n\nA note inside.\n", encoding="utf-8")
    (corpus / "sub" / "tariffs.md").write_text("# Тарифы\n\nКурьер 390 ₽.\n", "utf-8")
    (corpus / "escape.md").symlink_to(outside)
    (corpus / "notes.odt").write_bytes(b"PK\x03\x04" + bytes(64))
    (corpus / "book.epub").write_bytes(b"PK\x03\x04" + bytes(64))
    os.mkfifo(corpus / "pipe.md")
    code, out = narezka("index", str(corpus), "--embedder", "hash", timeout=120)
    _, hits = narezka("search", "outside the corpus", "--store", str(corpus), "--format", "json")
    served = OUTSIDE in hits
    rows.append(
        Row(
            "4",
            "symlink escape.md -> ../outside.md",
            "not followed, named",
            f"exit {code}; served: {served}; named: {'escape.md' in out}",
            not served and "escape.md" in out,
        )
    )
    rows.append(
        Row(
            "10",
            "FIFO pipe.md inside the corpus",
            "never opened, named",
            f"exit {code}; named: {'pipe.md' in out}",
            code != -9 and "pipe.md" in out,
        )
    )
    indexed = out
    code, out = narezka("chunk", str(corpus / "pipe.md"), "--strict", timeout=30)
    rows.append(
        Row(
            "10",
            "chunk pipe.md --strict (a FIFO given by path)",
            "named, no hang, exit 1",
            f"exit {code}: {out.strip().splitlines()[-1][:80] if out.strip() else ''}",
            code == 1 and "pipe.md" in out,
        )
    )
    out = indexed
    rows.append(
        Row(
            "12",
            "notes.odt and book.epub (types no converter reads) beside the notes",
            "counted and named",
            f"named: {'notes.odt' in out and 'book.epub' in out}",
            "notes.odt" in out and "book.epub" in out,
        )
    )
    code, out = narezka(
        "index", str(corpus), "--embedder", "hash", "--include", "*.md", timeout=120
    )
    _, hits = narezka(
        "search", "Курьер 390", "--store", str(corpus), "--format", "json", "--mode", "bm25"
    )
    rows.append(
        Row(
            "11",
            "--include '*.md' with sub/tariffs.md",
            "nested file stays indexed",
            f"exit {code}; nested hit: {'sub/tariffs.md' in hits}",
            "sub/tariffs.md" in hits,
        )
    )
    return rows


def http_probes(work: Path) -> list[Row]:
    corpus = work / "http"
    corpus.mkdir()
    (corpus / "tea.md").write_text("# Чай\n\nВскрытый чай не возвращается.\n", "utf-8")
    narezka("index", str(corpus), "--embedder", "hash")
    rows = []
    server = Server(corpus, "--no-watch")
    try:
        rebind = {"Host": "rebind.attacker.example"}
        for method, path in (("GET", "/search?q=чай"), ("GET", "/sources/tea.md")):
            status = httpx.request(method, server.base + path, headers=rebind).status_code
            rows.append(
                Row(
                    "5",
                    f"{method} {path.split('?')[0]} with a foreign Host",
                    "refused (421/403)",
                    f"HTTP {status}",
                    status in (400, 403, 421),
                )
            )
        status = httpx.post(
            f"{server.base}/sync",
            content="x",
            headers={"Content-Type": "text/plain", "Origin": "http://evil.example"},
        ).status_code
        rows.append(
            Row(
                "5",
                "POST /sync, text/plain, foreign Origin",
                "refused",
                f"HTTP {status}",
                status in (400, 403, 415),
            )
        )
        (corpus / "tea.md").write_text("# Чай\n\nТеперь вскрытый чай можно вернуть.\n", "utf-8")
        hits = httpx.get(f"{server.base}/search", params={"q": "чай"}).json().get("hits", [])
        stale = [h.get("stale") for h in hits if h.get("file_path") == "tea.md"]
        rows.append(
            Row(
                "15",
                "a hit from a file changed since the last sync",
                "stale: true",
                f"stale flags {stale}",
                bool(stale) and all(stale),
            )
        )
        body = b"x" * (8 << 20)
        reply = httpx.post(
            f"{server.base}/mcp",
            content=iter([body]),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        rows.append(
            Row(
                "14",
                "8 MB chunked body to /mcp",
                "413 with a JSON body",
                f"HTTP {reply.status_code} {reply.headers.get('content-type', '')}",
                reply.status_code == 413 and "json" in reply.headers.get("content-type", ""),
            )
        )
    finally:
        server.close()
    code, out = narezka("serve", str(corpus), "--http", "127.0.0.1:99999", timeout=60)
    rows.append(
        Row(
            "13",
            "serve --http 127.0.0.1:99999",
            "a usage error like any bad option: exit 2, no traceback",
            f"exit {code}, {len(out.strip().splitlines())} lines",
            code == 2 and "Traceback" not in out and len(out.strip().splitlines()) <= 4,
        )
    )
    code, out = narezka(
        "serve", str(corpus), "--http", "0.0.0.0:8799", timeout=60, env={"NAREZKA_API_KEY": "   "}
    )
    rows.append(
        Row(
            "13",
            "blank NAREZKA_API_KEY on a non-loopback bind",
            "refused",
            f"exit {code}",
            code not in (0, -9),
        )
    )
    rows.extend(mcp_probes(corpus))
    return rows


def mcp_probes(corpus: Path) -> list[Row]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def unknown_argument() -> bool:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "narezka", "serve", str(corpus), "--no-watch"]
        )
        async with Client(params, read_timeout_seconds=60) as client:
            result = await client.call_tool("search", {"query": "чай", "bogus": 1})
            return bool(result.is_error)

    refused = asyncio.run(unknown_argument())
    rows = [
        Row(
            "14",
            "MCP search with an unknown argument",
            "a tool error",
            f"is_error={refused}",
            refused,
        )
    ]
    for label, line in (("malformed JSON", b"{not json\n"), ("a non-object line", b"[1, 2]\n")):
        proc = subprocess.Popen(
            [sys.executable, "-m", "narezka", "serve", str(corpus), "--no-watch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            out, _ = proc.communicate(line, timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        answered = b'"error"' in out
        rows.append(
            Row(
                "14",
                f"MCP stdio: {label}",
                "a JSON-RPC error reply",
                f"reply: {out[:60]!r}",
                answered,
            )
        )
    return rows


def table(rows: list[Row]) -> str:
    lines = ["| item | probe | required | observed | ok |", "|---|---|---|---|---|"]
    for r in rows:
        cells = [r.item, r.probe, r.required, r.observed.replace("|", "/"), "yes" if r.ok else "NO"]
        lines.append("| " + " | ".join(cells) + " |")
    passed = sum(r.ok for r in rows)
    return "\n".join([*lines, "", f"{passed} of {len(rows)} probes hold."])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="Also write the table here.")
    args = parser.parse_args()
    probes: list[Callable[[Path], list[Row]]] = [
        secrets_probes,
        format_probes,
        corpus_probes,
        http_probes,
    ]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for probe in probes:
            rows.extend(probe(Path(tmp)))
    text = table(rows)
    print(text)
    if args.out is not None:
        args.out.write_text(f"# Trust audit\n\n`python benchmarks/audit_trust.py`\n\n{text}\n")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
