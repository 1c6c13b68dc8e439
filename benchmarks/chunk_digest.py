"""Digests of narezka's chunks over a corpus, one per configuration: proof that a change to
the chunking code left its output byte for byte as it was.

    python benchmarks/chunk_digest.py > before.txt      # on the old tree
    python benchmarks/chunk_digest.py > after.txt       # on the new one
    diff before.txt after.txt                           # nothing: the same chunks

Each line: configuration, number of chunks, the first 16 hex digits of a SHA-256 over every
chunk's JSON (all its fields) in corpus order. ``--src`` picks the tree to import.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
# From a worktree the repository's parent is not where shared/ lives: NAREZKA_SHARED says.
SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO_ROOT.parent / "shared"))
DEFAULT_CORPUS = SHARED / "data/md_corpus"


def configs(use_counter: Any) -> dict[str, tuple[str, dict[str, Any], Any]]:
    from narezka.tokens import get_counter

    chars, cl100k = get_counter("chars"), get_counter("tokens", "cl100k_base")
    tokens = {"unit": "tokens", "tokenizer": "cl100k_base"}
    return {
        "headings-chars800": ("headings", {"size": 800, "unit": "chars"}, chars),
        "recursive-chars800": ("recursive", {"size": 800, "unit": "chars"}, chars),
        "fixed-chars800": ("fixed", {"size": 800, "unit": "chars"}, chars),
        "parent-chars800": ("parent-child", {"size": 800, "unit": "chars"}, chars),
        "sentences-chars800": ("sentences", {"size": 800, "unit": "chars"}, chars),
        "headings-cl100k256": ("headings", {"size": 256, **tokens}, cl100k),
        "recursive-cl100k256": ("recursive", {"size": 256, **tokens}, cl100k),
        "headings-use384": (
            "headings",
            {"size": 384, "unit": "tokens", "tokenizer": use_counter.name},
            use_counter,
        ),
        "headings-chars200": ("headings", {"size": 200, "unit": "chars"}, chars),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", type=Path, default=REPO_ROOT / "src", help="the tree to import")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--only", default="", help="configurations whose name contains this")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src))
    if not args.corpus.is_dir():
        sys.exit(f"no corpus at {args.corpus} (pass --corpus or set NAREZKA_SHARED)")
    from narezka.discover.walk import iter_files, read_document
    from narezka.embed.local import UseEmbedder
    from narezka.errors import SourceError

    try:
        from narezka.runs.chunking import chunk_raw
    except ImportError:  # a tree from before narezka.runs
        from narezka.pipeline.chunking import chunk_raw  # type: ignore[no-redef]
    from narezka.split import SplitParams, get_strategy

    docs = []
    for top, file in iter_files([args.corpus]):
        try:
            docs.append(read_document(top, file)[0])
        except SourceError as exc:  # the digest covers what is read; a refusal is said
            print(f"not read: {exc}", file=sys.stderr)
    for name, (strategy, params, counter) in configs(UseEmbedder().counter).items():
        if args.only not in name:
            continue
        chosen, split_params = get_strategy(strategy), SplitParams(**params)
        digest, count = hashlib.sha256(), 0
        for doc in docs:
            for chunk in chunk_raw(doc, chosen, split_params, counter).chunks:
                count += 1
                data = json.dumps(chunk.to_json(), sort_keys=True, ensure_ascii=False, default=str)
                digest.update(data.encode("utf-8"))
            digest.update(b"|")
        print(f"{name}\t{count}\t{digest.hexdigest()[:16]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
