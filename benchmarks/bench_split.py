#!/usr/bin/env python3
"""The split stage alone (packing, sizing, context, making chunks) against a baseline checkout.

    python benchmarks/bench_split.py --baseline ../main/src            # md_corpus, chars
    python benchmarks/bench_split.py --baseline ../main/src --config cl100k --rounds 3

Documents are read, parsed and scanned for secrets before the clock starts, so only
``strategy.split`` is timed: the code under ``src/narezka/split`` and ``tokens``, plus the
parse stage's sanitizing check and ``sanitize`` calls it makes. Each source tree runs in its
own subprocess, the two alternating round by round; a round reports the best CPU time of
``--repeat`` passes (CPU time, not wall: the machine is shared). The "without the sanitizing
check" column answers ``needs_sanitizing`` from a table filled before timing, to show what the
split code itself costs; the chunks made are the same either way.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared/data/md_corpus"
CONFIGS = {
    "chars": dict(size=800, unit="chars"),
    "chars200": dict(size=200, unit="chars"),
    "cl100k": dict(size=256, unit="tokens", tokenizer="cl100k_base"),
    "use": dict(size=384, unit="tokens"),
}


def worker(src: str, corpus: Path, config: str, repeat: int, strategy: str) -> dict[str, Any]:
    """One timing pass of ``src``'s narezka (imported ahead of any installed copy)."""
    sys.path.insert(0, src)
    import narezka
    from narezka.discover import iter_files, read_document
    from narezka.parse.markdown import parse_document
    from narezka.parse.redaction import find_secrets
    from narezka.parse.sanitize import needs_sanitizing
    from narezka.split import SplitParams, get_strategy
    from narezka.split import context as context_module
    from narezka.tokens import TokenCounter, get_counter

    assert narezka.__file__ is not None and narezka.__file__.startswith(src), narezka.__file__
    docs = []
    for top, file in iter_files([corpus]):
        doc, _ = parse_document(read_document(top, file)[0])
        docs.append(dataclasses.replace(doc, secrets=find_secrets(doc.text)))
    settings = dict(CONFIGS[config])
    counter: TokenCounter
    if config == "use":
        from narezka.embed.local import UseEmbedder

        counter = UseEmbedder().counter
        settings["tokenizer"] = counter.name
    else:
        counter = get_counter(str(settings["unit"]), str(settings.get("tokenizer", "")))
    params = SplitParams(**settings)  # type: ignore[arg-type]
    chosen = get_strategy(strategy)
    warnings.simplefilter("ignore")

    def best() -> tuple[float, int]:
        times, chunks = [], 0
        for _ in range(repeat):
            start = time.process_time()
            chunks = sum(len(chosen.split(d, params, counter)) for d in docs)
            times.append(time.process_time() - start)
        return min(times), chunks

    full, chunks = best()
    known = {d.text[d.body_start :]: needs_sanitizing(d.text[d.body_start :]) for d in docs}
    context_module.needs_sanitizing = known.__getitem__  # type: ignore[attr-defined]
    split_only, same = best()
    assert same == chunks
    return {"full": full, "split_only": split_only, "chunks": chunks}


def run(src: Path, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", str(src), "--corpus", str(args.corpus)]
    cmd += ["--config", args.config, "--repeat", str(args.repeat), "--strategy", args.strategy]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ.copy())
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", type=Path, help="another checkout's src/ (required)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--config", choices=sorted(CONFIGS), default="chars")
    ap.add_argument("--strategy", default="headings")
    ap.add_argument("--repeat", type=int, default=5, help="passes per round (best is kept)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds per tree")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.corpus, args.config, args.repeat, args.strategy)))
        return 0
    if args.baseline is None:
        ap.error("--baseline is required")
    trees = {"this tree": REPO_ROOT / "src", "baseline": args.baseline.resolve()}
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, src in trees.items():
            rounds[name].append(run(src, args))
    best = {
        name: {k: min(r[k] for r in rs) for k in ("full", "split_only")}
        for name, rs in rounds.items()
    }
    chunks = {name: rs[0]["chunks"] for name, rs in rounds.items()}
    settings = ", ".join(f"{k}={v}" for k, v in CONFIGS[args.config].items())
    lines = [
        "# narezka split-stage benchmark",
        "",
        f"- corpus: {args.corpus}; {args.strategy}, {settings}; best CPU seconds of "
        f"{args.repeat} passes, {args.rounds} alternating rounds per tree; 1-minute load "
        f"average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
        f"- baseline: {args.baseline}",
        "",
        "| tree | chunks | split s | without the sanitizing check s |",
        "|---|---:|---:|---:|",
    ]
    for name in trees:
        lines.append(
            f"| {name} | {chunks[name]} | {best[name]['full']:.3f} | "
            f"{best[name]['split_only']:.3f} |"
        )
    ratio = {k: best["baseline"][k] / best["this tree"][k] for k in ("full", "split_only")}
    lines += [
        "",
        f"- speed-up of this tree over the baseline: {ratio['full']:.2f}× "
        f"({ratio['split_only']:.2f}× without the sanitizing check)",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
