"""Digests of narezka's search results, one per corpus and mode: proof that a change to the
code between a query and its hits left every answer as it was (ids, order, scores).

    python benchmarks/search_digest.py --keep /tmp/sd > after.txt                   # new tree
    python benchmarks/search_digest.py --keep /tmp/sd --src OLD/src > before.txt    # old tree
    diff before.txt after.txt                                       # nothing: the same hits

Each corpus is indexed (``use`` embedder, default settings) into a temporary folder, or into
``--keep DIR`` once and reused from there: the engine's vector graph is not built the same
twice, so a candidate deep in the dense ranking can move and shift a fused score in the
sixth place — compare two trees over one built index. Then every golden question is asked in
each mode (and with the fold off, RRF fusion and section expansion). Each line: corpus,
configuration, number of hits, the first 16 hex digits of a SHA-256 over every hit's chunk
id, score and relevance (rounded to 6 places) in order. ``--src`` picks the tree to import;
it works on trees from before ``Query`` existed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
# From a worktree the repository's parent is not where shared/ lives: NAREZKA_SHARED says.
SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO_ROOT.parent / "shared"))
CORPORA = {
    "kb": (REPO_ROOT / "examples/kb", REPO_ROOT / "examples/kb/golden.jsonl"),
    "ru-fastapi": (
        SHARED / "data/md_corpus/ru/fastapi",
        REPO_ROOT / "benchmarks/ru_devset/fastapi.jsonl",
    ),
}
CONFIGS: dict[str, dict[str, Any]] = {
    "hybrid": {"mode": "hybrid"},
    "dense": {"mode": "dense"},
    "bm25": {"mode": "bm25"},
    "hybrid-rrf-nofold": {"mode": "hybrid", "fusion": ("rrf",), "fold": None},
    "hybrid-section": {"mode": "hybrid", "expand": "section"},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", type=Path, default=REPO_ROOT / "src", help="the tree to import")
    ap.add_argument("--only", default="", help="corpora whose name contains this")
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--mode", default="", help="configurations whose name contains this")
    ap.add_argument("--dump", type=Path, help="also write every hit's line here, to diff")
    ap.add_argument("--keep", type=Path, help="build each corpus's index here once; reuse it")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src))
    # Worker processes (a corpus of a megabyte or more is chunked by --jobs workers) must
    # import the same tree.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(args.src), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    import narezka
    from narezka.search import Fusion

    dump = None if args.dump is None else args.dump.open("w", encoding="utf-8")
    for name, (corpus, golden) in CORPORA.items():
        if args.only not in name or not corpus.is_dir():
            continue
        questions = [json.loads(line)["q"] for line in golden.read_text("utf-8").splitlines()]
        with tempfile.TemporaryDirectory() as tmp:
            place = (args.keep or Path(tmp)) / name
            copy, store = place / "corpus", place / "store"
            if not (store / "index.json").is_file():
                # Only the Markdown: an index of the copy must not meet another index's folder.
                shutil.rmtree(place, ignore_errors=True)
                shutil.copytree(corpus, copy, ignore=shutil.ignore_patterns(".narezka"))
                settings = narezka.Settings(embedder="use")
                with narezka.Index.create(copy, settings, store=store) as index:
                    index.sync()
            with narezka.Index.open(store) as index:
                for label, options in CONFIGS.items():
                    if args.mode not in label:
                        continue
                    kwargs = dict(options)
                    if "fusion" in kwargs:
                        kwargs["fusion"] = Fusion(*kwargs["fusion"])
                    digest, count = hashlib.sha256(), 0
                    for question in questions:
                        # Every hit (0 keeps them all, in trees before and after the
                        # index's min_relevance became Index.search's default).
                        hits = index.search(question, k=args.k, min_relevance=0.0, **kwargs)
                        for hit in hits:
                            count += 1
                            line = f"{hit.chunk_id}\t{hit.score:.6f}\t{hit.relevance:.6f}\n"
                            digest.update(line.encode("utf-8"))
                            if dump is not None:
                                dump.write(f"{name}\t{label}\t{question}\t{line}")
                        digest.update(b"|")
                    print(f"{name}\t{label}\t{count}\t{digest.hexdigest()[:16]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
