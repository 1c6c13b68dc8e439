#!/usr/bin/env python3
"""Served embedding at the server's pace: concurrent batched requests against a fake server.

    python benchmarks/bench_remote_embed.py
    python benchmarks/bench_remote_embed.py --texts 4096 --files 300 \\
        --out benchmarks/results/bench_remote_embed.md

No real Ollama, TEI or vLLM can run here, so the server is the local fake of
``tests/embed/fake_servers.py`` in its own process, playing a GPU server that answers any
batch up to its limit (``--batch``, refused above it with TEI's 413) in ``--latency`` seconds,
whatever else is in flight, with deterministic vectors computed from the text. Tables:

1. throughput through ``embed_all`` at 1 … 16 requests in flight, against the bound
   ``in flight × batch ÷ latency``, with b71bcf2's code (one batch of 32 at a time, run from a
   ``git archive`` of that commit in a subprocess) measured in the same run;
2. 5 % of requests failing (503, 429 with ``Retry-After``, 500, in turn): the rows must equal
   a clean run's, every text embedded exactly once;
3. end to end, ``narezka index`` with the ``openai`` embedder on a generated corpus (this
   tree at 1 and 8 in flight, and b71bcf2's), against the same run with the ``hash`` embedder
   (no server: how fast chunking and storing go).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
MODEL = "bench-embed"
NAREZKA = (sys.executable, "-m", "narezka")
SIZE = ("--unit", "chars", "--size", "1000", "--json")  # the same chunks for every embedder

import numpy as np  # noqa: E402

from narezka.embed import embed_all  # noqa: E402
from narezka.embed.dispatch import DEFAULT_CONCURRENCY, DispatchPolicy  # noqa: E402
from narezka.embed.openai import OpenAIEmbedder  # noqa: E402
from narezka.embed.remote import RetryPolicy  # noqa: E402

# The fake server, in a process of its own so its JSON work does not share our GIL.
_SERVER = textwrap.dedent(
    """
    import json, sys
    sys.path[:0] = [{tests!r}, {embed_tests!r}]
    from fake_servers import FakeState, fake_server
    config = json.loads(sys.argv[1])
    state = FakeState(
        models={{config["model"]: (8192, config["dim"])}},
        always_delay=config["latency"],
        max_batch=config["batch"],
        retry_after=config["retry_after"],
        fail_rate=config["fail_rate"],
        keep_alive=True,
        digest_vectors=True,
    )
    with fake_server(state) as url:
        print(url, flush=True)
        sys.stdin.read()
        print(json.dumps({{"max_in_flight": state.max_in_flight,
                           "failed": len(state.failed_at),
                           "embedded": len(state.embedded_texts()),
                           "distinct": len(set(state.embedded_texts()))}}), flush=True)
    """
).format(tests=str(REPO_ROOT / "tests"), embed_tests=str(REPO_ROOT / "tests/embed"))


class Server:
    """The fake in a subprocess; ``stats()`` stops it and returns its counters."""

    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc, self.url = proc, url

    def stats(self) -> dict[str, int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        line = self.proc.stdout.readline()
        self.proc.wait(timeout=10)
        result: dict[str, int] = json.loads(line)
        return result


@contextmanager
def server(
    *, latency: float, batch: int, dim: int, fail_rate: float = 0.0, retry_after: str = "0.2"
) -> Iterator[Server]:
    config = {
        "model": MODEL,
        "dim": dim,
        "latency": latency,
        "batch": batch,
        "fail_rate": fail_rate,
        "retry_after": retry_after,
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER, json.dumps(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        yield Server(proc, proc.stdout.readline().strip())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def make_texts(n: int) -> list[str]:
    """``n`` distinct passages of ~60 words."""
    words = "delivery tariff refund parcel warehouse courier order invoice customs".split()
    return [
        f"passage {i}: "
        + " ".join(f"{words[(i * 7 + k) % len(words)]}{(i + k) % 97}" for k in range(60))
        for i in range(n)
    ]


RETRY = RetryPolicy(attempts=6, base_delay=0.05, max_delay=1.0, timeout=30.0)


def embedder(url: str, concurrency: int, batch: int) -> OpenAIEmbedder:
    policy = DispatchPolicy(concurrency=concurrency, max_batch=batch)
    return OpenAIEmbedder(MODEL, url + "/v1", window=8192, retry=RETRY, dispatch=policy)


def timed_embed(
    url: str, texts: Sequence[str], concurrency: int, batch: int
) -> tuple[float, np.ndarray]:
    emb = embedder(url, concurrency, batch)
    emb.embed(texts[:1])  # connect and learn the dimension outside the timing
    started = time.perf_counter()
    rows = embed_all(texts, emb)
    return time.perf_counter() - started, rows


@contextmanager
def old_tree(commit: str) -> Iterator[Path | None]:
    """``src`` of ``commit`` unpacked in a temporary folder (None when git cannot give it)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "archive", commit, "src"],
            capture_output=True,
            check=False,
        )
        if archive.returncode != 0:
            yield None
            return
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield Path(tmp) / "src"


def old_code_seconds(url: str, texts: Sequence[str], src: Path | None) -> float | None:
    """Seconds the old OpenAIEmbedder (in ``src``) took for ``texts`` through its embed_all,
    in a subprocess, or None without the old tree."""
    if src is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "texts.json"
        data.write_text(json.dumps(list(texts)), encoding="utf-8")
        script = textwrap.dedent(
            f"""
            import json, time
            from narezka.embed import embed_all
            from narezka.embed.openai import OpenAIEmbedder
            texts = json.load(open({str(data)!r}, encoding="utf-8"))
            emb = OpenAIEmbedder({MODEL!r}, {url + "/v1"!r}, window=8192)
            emb.embed(texts[:1])
            started = time.perf_counter()
            embed_all(texts, emb)
            print(time.perf_counter() - started)
            """
        )
        env = dict(os.environ, PYTHONPATH=str(src))
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        return float(out.stdout.strip().splitlines()[-1])


def make_corpus(folder: Path, files: int) -> None:
    """``files`` Markdown files of 6 sections of two paragraphs each (deterministic)."""
    texts = make_texts(files * 12)
    for f in range(files):
        parts = [f"# Document {f}\n"]
        for s in range(6):
            a, b = texts[f * 12 + 2 * s], texts[f * 12 + 2 * s + 1]
            parts.append(f"## Section {s}\n\n{a}\n\n{b}\n")
        sub = folder / f"d{f % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{f:05d}.md").write_text("\n".join(parts), encoding="utf-8")


def index_run(
    corpus: Path, spec: str, concurrency: int, src: Path = REPO_ROOT / "src"
) -> tuple[float, int]:
    """Wall seconds of ``narezka index`` (the one in ``src``) into a fresh index and cache,
    and the chunks it embedded."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(
            os.environ,
            NAREZKA_CACHE_DIR=tmp,
            NAREZKA_EMBED_CONCURRENCY=str(concurrency),
            PYTHONPATH=str(src),
        )
        store = Path(tmp) / "store"
        started = time.perf_counter()
        out = subprocess.run(
            [*NAREZKA, "index", str(corpus), "--store", str(store), "--embedder", spec, *SIZE],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        if out.returncode != 0:
            raise SystemExit(f"narezka index failed ({out.returncode}): {out.stderr[-2000:]}")
        report = json.loads(out.stdout)
        return seconds, int(report.get("chunks_embedded", 0))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=32, help="the server's batch limit")
    ap.add_argument("--latency", type=float, default=0.1, help="seconds per batch")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--concurrency", default="1,2,4,8,16")
    ap.add_argument("--files", type=int, default=300, help="generated corpus for narezka index")
    ap.add_argument("--old", default="b71bcf2", help="commit whose sequential code is measured")
    ap.add_argument("--repeat", type=int, default=2, help="best of N for table 1")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    texts = make_texts(args.texts)
    levels = [int(c) for c in args.concurrency.split(",")]
    lines = [
        f"## bench_remote_embed — {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}, Python {platform.python_version()}",
        "",
        f"Fake OpenAI-compatible server (tests/embed/fake_servers.py, own process): any batch "
        f"of up to {args.batch} texts answered in {args.latency * 1000:.0f} ms, {args.dim}-d "
        f"vectors; {args.texts} texts of ~60 words through `embed_all`, best of {args.repeat}.",
        "",
        "### 1. Throughput by requests in flight",
        "",
        "| code | in flight | seconds | texts/s | bound | share of bound | × sequential |",
        "|---|---|---|---|---|---|---|",
    ]
    with old_tree(args.old) as old_src:
        lines += measure(args, texts, levels, old_src)
    lines.append(f"Load average at the end: {os.getloadavg()[0]:.1f}.")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def measure(
    args: argparse.Namespace, texts: list[str], levels: list[int], old_src: Path | None
) -> list[str]:
    """The three tables (see the module docstring)."""
    lines: list[str] = []
    with server(latency=args.latency, batch=args.batch, dim=args.dim) as srv:
        old = old_code_seconds(srv.url, texts, old_src)
        results = {
            c: min(
                (timed_embed(srv.url, texts, c, args.batch) for _ in range(args.repeat)),
                key=lambda run: run[0],
            )
            for c in levels
        }
        peak = srv.stats()["max_in_flight"]
    sequential = results[1][0] if 1 in results else None
    if old is not None:
        bound = args.batch / args.latency
        lines.append(
            f"| {args.old} | 1 | {old:.2f} | {args.texts / old:.0f} | {bound:.0f} | "
            f"{args.texts / old / bound:.2f} | {(sequential or old) / old:.2f} |"
        )
    for c, (seconds, _) in results.items():
        bound = c * args.batch / args.latency
        rate = args.texts / seconds
        ratio = f"{sequential / seconds:.2f}" if sequential else "—"
        lines.append(
            f"| this | {c} | {seconds:.2f} | {rate:.0f} | {bound:.0f} | {rate / bound:.2f} | "
            f"{ratio} |"
        )
    lines += ["", f"Most requests the server saw at once: {peak}.", ""]

    clean = results[max(levels)][1]
    with server(latency=args.latency, batch=args.batch, dim=args.dim, fail_rate=0.05) as srv:
        seconds, flaky = timed_embed(srv.url, texts, DEFAULT_CONCURRENCY, args.batch)
        counts = srv.stats()
    equal = bool(np.array_equal(clean, flaky))
    lines += [
        f"### 2. 5 % of requests failing (503, 429 with Retry-After 0.2 s, 500), "
        f"{DEFAULT_CONCURRENCY} in flight",
        "",
        "| failed requests | seconds | texts/s | rows equal to the clean run | texts embedded "
        "| distinct |",
        "|---|---|---|---|---|---|",
        f"| {counts['failed']} | {seconds:.2f} | {args.texts / seconds:.0f} | {equal} | "
        f"{counts['embedded'] - 1} | {counts['distinct']} |",
        "",
        "(The first text is also embedded once before timing, to connect; not counted above.)",
        "",
    ]

    if args.files:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "corpus"
            make_corpus(corpus, args.files)
            rows = []
            seconds, chunks = index_run(corpus, "hash:64", 1)
            rows.append(("hash:64 (no server)", "—", seconds, chunks))
            with server(latency=args.latency, batch=args.batch, dim=args.dim) as srv:
                spec = f"openai:{MODEL}@{srv.url}/v1"
                served = f"openai (fake, {args.latency * 1000:.0f} ms)"
                if old_src is not None:
                    seconds, chunks = index_run(corpus, spec, 1, old_src)
                    rows.append((f"{served}, {args.old}", "1", seconds, chunks))
                for c in (1, DEFAULT_CONCURRENCY):
                    seconds, chunks = index_run(corpus, spec, c)
                    rows.append((served, str(c), seconds, chunks))
                srv.stats()
        lines += [
            f"### 3. `narezka index` end to end: {args.files} generated files, cold cache",
            "",
            "| embedder | in flight | seconds | chunks | chunks/s |",
            "|---|---|---|---|---|",
            *(f"| {n} | {c} | {s:.2f} | {k} | {k / s:.0f} |" for n, c, s, k in rows),
            "",
        ]
    return lines


if __name__ == "__main__":
    sys.exit(main())
