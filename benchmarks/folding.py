#!/usr/bin/env python3
"""Score-gated neighbour folding on Chroma's benchmark, through the product path.

    OMP_NUM_THREADS=1 python benchmarks/folding.py --strategies "headings:size=150" \
        --folds off,0,0.7,0.8,0.9 [--fusions rrf,score:0.5] [--out F]

Each strategy spec is indexed once (``Index`` with MiniLM, sizes in MiniLM tokens, as
``narezka eval`` does), then every question is asked once per fold setting through
``Index.search(k=5, mode="hybrid", fold=…)``: ``off`` is no folding (every chunk its own
result), ``0`` folds every neighbour that ranked (today's default), and a ratio r folds a
neighbour only when its score is at least r × its hit's. Metrics are Chroma's character-range
recall / precision / IoU over the returned spans (a folded hit counts with its grown span).
Each row is compared with ``fold=0`` per question by a paired sign test (questions whose IoU,
or recall, went up against down). Embeddings are cached in ``--cache``, so a re-run embeds
nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO.parent / "shared"))

from narezka import Index  # noqa: E402
from narezka.api.indexing import index  # noqa: E402
from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder  # noqa: E402
from narezka.evaluate import load_golden, parse_strategies  # noqa: E402
from narezka.evaluate.metrics import sign_test  # noqa: E402
from narezka.evaluate.spans import Span, SpanScores, span_metrics  # noqa: E402
from narezka.search import Fusion  # noqa: E402

K = 5
CHROMA = SHARED / "data" / "chroma_eval"


Setting = tuple[Fusion, float | None]


def parse_fusion(value: str) -> Fusion:
    method, _, weight = value.partition(":")
    return Fusion(method, dense_weight=float(weight) if weight else 0.5)  # type: ignore[arg-type]


def parse_fold(value: str) -> float | None:
    return None if value == "off" else float(value)


def label(fold: float | None) -> str:
    if fold is None:
        return "off (no folding)"
    return "0 (every neighbour, today)" if fold == 0 else f"{fold:g}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strategies", default="headings:size=150")
    ap.add_argument("--folds", default="off,0,0.7,0.8,0.9")
    ap.add_argument(
        "--fusions",
        default="rrf",
        help="Comma-separated fusions, each METHOD or METHOD:DENSE_WEIGHT (rrf, score:0.5)",
    )
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "narezka-chroma-eval-minilm.sqlite",
    )
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--set",
        default=None,
        help="Instead of Chroma: a string golden set of benchmarks/ablation.py (kb, ru_devset), "
        "indexed with USE; hit@1 / hit@5 per setting, against rrf at fold 0",
    )
    args = ap.parse_args(argv)
    folds = [parse_fold(f) for f in args.folds.split(",")]
    if args.set:
        return string_set(args.set, [parse_fusion(f) for f in args.fusions.split(",")], folds)
    fusions = [parse_fusion(f) for f in args.fusions.split(",")]
    golden = [q for q in load_golden(CHROMA / "questions_df.csv").questions if q.references]
    model = CachedEmbedder(get_embedder(args.embedder), EmbeddingCache(args.cache))
    lines = [
        "# Score-gated neighbour folding on Chroma (MiniLM, hybrid, k=5, product path)",
        "",
        "```",
        "OMP_NUM_THREADS=1 python benchmarks/folding.py "
        f'--strategies "{args.strategies}" --folds {args.folds} --fusions {args.fusions}',
        "```",
        "",
        f"{len(golden)} questions; `Index.search(k=5, mode='hybrid', fusion=…, fold=…)`; sizes "
        f"in MiniLM tokens; {platform.machine()}, {os.cpu_count()} cores shared with other "
        "work. `vs fold 0`: questions whose IoU / recall went up against down, against the "
        "same fusion at fold 0, with the paired sign test's p.",
        "",
        "| strategy | chunks | fusion | fold | recall | precision | IoU | retrieved chars / q "
        "| IoU vs fold 0 | recall vs fold 0 |",
        "|---|--:|---|---|--:|--:|--:|--:|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for spec in parse_strategies(args.strategies):
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="narezka-folding-") as tmp:
            index(
                CHROMA / "corpora",
                store_dir=Path(tmp) / "store",
                strategy=spec.name,
                embedder=model,
                **dict(spec.params),
            )
            with Index.open(Path(tmp) / "store", embedder=model) as held:
                chunks = held.stats().chunks
                settings = [(fusion, fold) for fusion in fusions for fold in folds]
                scores: dict[Setting, list[SpanScores]] = {s: [] for s in settings}
                chars: dict[Setting, list[int]] = {s: [] for s in settings}
                for question in golden:
                    refs = [r.span for r in question.references]
                    for fusion, fold in settings:
                        hits = held.search(
                            question.q, k=K, fusion=fusion, fold=fold, min_relevance=0.0
                        )
                        spans = [Span(h.file_path, h.start, h.end) for h in hits]
                        scores[fusion, fold].append(span_metrics(spans, refs))
                        chars[fusion, fold].append(sum(len(s) for s in spans))
        seconds = time.perf_counter() - started
        for fusion, fold in settings:
            base = scores.get((fusion, 0.0))
            rows = scores[fusion, fold]
            vs = []
            for metric in ("iou", "recall"):
                if base is None or fold == 0.0:
                    vs.append("—")
                    continue
                mine = [getattr(s, metric) for s in rows]
                theirs = [getattr(s, metric) for s in base]
                test = sign_test(
                    [a > b for a, b in zip(mine, theirs, strict=True)],
                    [b > a for a, b in zip(mine, theirs, strict=True)],
                )
                vs.append(f"+{test.a_only}/−{test.b_only}, p={test.p_value:.3f}")
            row = (
                f"| {spec.label} | {chunks} | {fusion.label} | {label(fold)} "
                f"| {100 * statistics.mean(s.recall for s in rows):.1f} "
                f"| {100 * statistics.mean(s.precision for s in rows):.1f} "
                f"| {100 * statistics.mean(s.iou for s in rows):.1f} "
                f"| {statistics.mean(chars[fusion, fold]):.0f} | {vs[0]} | {vs[1]} |"
            )
            lines.append(row)
            print(row, flush=True)
        print(f"  ({spec.label}: {seconds:.0f} s, cache hits {model.hits}, misses {model.misses})")
    model.cache.close()
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


def string_set(name: str, fusions: list[Fusion], folds: list[float | None]) -> int:
    """hit@1 and hit@5 of each (fusion, fold) on a string golden set, through Index.search."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from ablation import SETS
    from narezka.api.evaluating import paths_inside
    from narezka.embed.cache import default_cache_path
    from narezka.evaluate.metrics import contains_all

    setup = SETS[name]
    golden = [q for q in load_golden(setup.golden).questions if q.must_contain]
    model = CachedEmbedder(get_embedder("use"), EmbeddingCache(default_cache_path()))
    settings = list(
        dict.fromkeys([(Fusion(), 0.0), *((f, fold) for f in fusions for fold in folds)])
    )
    ranks: dict[Setting, list[int | None]] = {s: [] for s in settings}
    with tempfile.TemporaryDirectory(prefix="narezka-folding-") as tmp:
        exclude = (*setup.exclude, *paths_inside(setup.corpus, setup.golden))
        index(setup.corpus, store_dir=Path(tmp), embedder=model, exclude=exclude)
        with Index.open(Path(tmp), embedder=model) as held:
            for question in golden:
                for fusion, fold in settings:
                    hits = held.search(question.q, k=K, fusion=fusion, fold=fold, min_relevance=0.0)
                    found = [contains_all(h.text, question.must_contain) for h in hits]
                    ranks[fusion, fold].append(found.index(True) + 1 if True in found else None)
    base = ranks[settings[0]]
    print(f"{name}: {len(golden)} questions")
    print("| fusion | fold | hit@1 | hit@5 | vs rrf, fold 0 @1 | @5 |")
    print("|---|---|--:|--:|---|---|")
    for fusion, fold in settings:
        cells = [fusion.label, label(fold)]
        for k in (1, 5):
            cells.append(str(sum(r is not None and r <= k for r in ranks[fusion, fold])))
        for k in (1, 5):
            test = sign_test(
                [r is not None and r <= k for r in ranks[fusion, fold]],
                [r is not None and r <= k for r in base],
            )
            cells.append(f"+{test.a_only}/−{test.b_only}, p={test.p_value:.3f}")
        print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
