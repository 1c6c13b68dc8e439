"""Two crates the native core could take, against what Python runs today, on md_corpus.

* ``sha2`` against ``hashlib`` (OpenSSL) for the chunk ids: SHA-256 of 800-character slices
  of every file (about a chunk each), the first 16 bytes in hex.
* ``rust-stemmers`` against PyStemmer (C libstemmer) for BM25: every word of the corpus's
  vocabulary (as the encoder finds and routes them), stemmed by both; the differing words
  are counted and the first ones listed. A single difference changes BM25 ids: no switch.

    cd benchmarks/native_candidates && cargo build --release
    PYTHONPATH=src python benchmarks/native_candidates/compare.py --corpus DIR --bin PATH
"""

from __future__ import annotations

import argparse
import hashlib
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import Stemmer

from narezka.tokens.bm25 import _CYRILLIC, _LATIN, _WORD


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--bin", type=Path, required=True, help="the crate's release binary")
    args = parser.parse_args()
    texts = [p.read_text("utf-8", "surrogateescape") for p in sorted(args.corpus.rglob("*.md"))]
    strings = ["fp\0" + t[i : i + 800] for t in texts for i in range(0, len(t), 800)]
    data = [s.encode("utf-8", "surrogatepass") for s in strings]
    tmp = Path(tempfile.mkdtemp())
    (tmp / "records").write_bytes(b"".join(struct.pack("<I", len(d)) + d for d in data))
    full = hashed = float("inf")
    for _ in range(5):
        started = time.process_time()
        for s in strings:
            hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        full = min(full, time.process_time() - started)
        started = time.process_time()
        for d in data:
            hashlib.sha256(d).digest()
        hashed = min(hashed, time.process_time() - started)
    rust = subprocess.run(
        [args.bin, "sha", tmp / "records"], capture_output=True, text=True, check=True
    ).stdout.split()
    mb = sum(map(len, data)) / 1e6
    print("| row | records | MB | best s of 5 |\n|---|---:|---:|---:|")
    print(f"| Python: encode + hashlib.sha256 + hex[:32] | {len(data)} | {mb:.1f} | {full:.4f} |")
    print(f"| Python: hashlib.sha256 of bytes only | {len(data)} | {mb:.1f} | {hashed:.4f} |")
    print(f"| Rust sha2 0.10: digest + hex of 16 bytes | {rust[0]} | {mb:.1f} | {rust[1]} |")

    vocab = {m.group() for t in texts for m in _WORD.finditer(t.lower())}
    pairs = [
        ("ru", w.replace("ё", "е")) if _CYRILLIC.search(w) else ("en", w)
        for w in sorted(vocab)
        if _CYRILLIC.search(w) or _LATIN.search(w)
    ]
    (tmp / "words").write_text("".join(f"{lang}\t{w}\n" for lang, w in pairs), "utf-8")
    stemmers = {"ru": Stemmer.Stemmer("russian"), "en": Stemmer.Stemmer("english")}
    started = time.process_time()
    ours = [str(stemmers[lang].stemWord(w)) for lang, w in pairs]
    py_s = time.process_time() - started
    done = subprocess.run(
        [args.bin, "stem", tmp / "words"], capture_output=True, text=True, check=True
    )
    theirs = [line.split("\t")[2] for line in done.stdout.splitlines()]
    differ = [(p, a, b) for p, a, b in zip(pairs, ours, theirs, strict=True) if a != b]
    print("\n| stemmer | words | s | differing (ru / en) |\n|---|---:|---:|---|")
    print(f"| PyStemmer {Stemmer.version()} | {len(pairs)} | {py_s:.4f} | |")
    n_ru = sum(p[0] == "ru" for p, _, _ in differ)
    print(
        f"| rust-stemmers 1.2 | {len(pairs)} | {float(done.stderr):.4f} | "
        f"{len(differ)} ({n_ru} / {len(differ) - n_ru}) |"
    )
    print(
        "\nFirst differing words (PyStemmer → rust-stemmers): "
        + ", ".join(f"{w} {a}→{b}" for (_, w), a, b in differ[:12])
    )


if __name__ == "__main__":
    main()
