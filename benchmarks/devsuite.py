#!/usr/bin/env python3
"""Run narezka over the dev suite (benchmarks/devsuite): hit@k, MRR, and scores of unanswerables.

    OMP_NUM_THREADS=1 python benchmarks/devsuite.py run [--strategy headings] [--embedder use]
        [--mode hybrid] [--fusion score|rrf|score:0.5|rrf:60] [--fold auto|off|0.8]
        [--corpora a,b] [--cache DIR] [--out results.jsonl] [--table table.md]
    python benchmarks/devsuite.py compare A.jsonl B.jsonl
    python benchmarks/devsuite.py table RUN.jsonl [MORE.jsonl ...]
    python benchmarks/devsuite.py decide BASELINE.jsonl RUN.jsonl [MORE.jsonl ...]

``run`` indexes every corpus of ``benchmarks/devsuite/suite.json`` minus its held-out files,
once per (strategy spec, embedder, held-out list), into a store under ``--cache`` (outside the
repository; a re-run only syncs it, embedding nothing new), then asks every question through
``Index.search(k=5)`` as ``narezka eval`` does (``Filter(include_archived=False)``) and scores
it the same way: a string question is hit when a hit contains all its strings, a Chroma
question when a hit's range overlaps a reference. Three kinds of question per corpus:
``answerable`` (its golden files; a question whose ``source`` is held out is not asked),
``near`` (the corpus's near file: answered only by held-out documents) and ``far`` (other
corpora's answerable questions, drawn as :func:`far_questions` says). Every answer is one JSONL
line with the top hit's raw score (and ``relevance`` when the library has it) and the length
of every hit in characters (folding grows hits: a longer hit contains more, so hit@k has to be
read beside the text returned).

``table`` prints the table of one configuration run in parts (say one corpus at a time).
``compare`` reads two such files and prints, per corpus, hit@1 / hit@5 with the paired sign
test of ``benchmarks/ablation.py`` and the AUROC with which the top score separates
correctly answered questions (hit@1) from unanswerable ones, near and far. ``decide`` puts
several runs against a baseline on every corpus and applies issue #26's rule (a default changes
only on a significant win on one corpus and no significant loss on any). ``run --grid`` asks
several search settings (fusion/fold) in one pass over the stores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "devsuite"))

from manifest import MANIFEST, Corpus, Suite, load_suite  # noqa: E402

from ablation import compare_outcomes  # noqa: E402
from narezka import Index  # noqa: E402
from narezka.api.indexing import index  # noqa: E402
from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder  # noqa: E402
from narezka.embed.cache import default_cache_path  # noqa: E402
from narezka.evaluate import GoldenQuestion, load_golden, parse_strategy  # noqa: E402
from narezka.evaluate.metrics import first_hit_rank, sign_test  # noqa: E402
from narezka.evaluate.runner import first_overlap_rank  # noqa: E402
from narezka.evaluate.spans import Span  # noqa: E402
from narezka.search import Filter, Fusion  # noqa: E402
from narezka.search.folding import Fold  # noqa: E402

K = 5
DEFAULT_CACHE = Path.home() / ".cache" / "narezka-devsuite"


@dataclass(frozen=True, slots=True)
class Question:
    """One question as the runner asks it."""

    corpus: str
    kind: str
    """``answerable``, ``near`` or ``far``."""
    golden: GoldenQuestion | None
    """How an answerable question is scored (None for unanswerable ones)."""
    q: str
    category: str = ""
    origin: str = ""
    """Where the question comes from: its golden file (far: the corpus it was drawn from)."""


def answerable(corpus: Corpus) -> list[Question]:
    """The corpus's golden questions, minus those whose answering file is held out."""
    out = []
    for path in corpus.golden:
        for g in load_golden(path).questions:
            if corpus.chroma_id and not any(
                r.doc == f"{corpus.chroma_id}.md" for r in g.references
            ):
                continue
            if g.source and corpus.is_held_out(g.source):
                continue
            out.append(Question(corpus.name, "answerable", g, g.q, g.category, path.name))
    return out


def near(corpus: Corpus) -> list[Question]:
    """The corpus's near-unanswerable questions (lines with ``"answerable": false``)."""
    if corpus.near is None:
        return []
    lines = corpus.near.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [
        Question(corpus.name, "near", None, r["q"], r.get("kind", ""), corpus.near.name)
        for r in rows
    ]


def far_questions(suite: Suite, corpus: Corpus, pools: dict[str, list[Question]]) -> list[Question]:
    """``suite.far_per_corpus`` answerable questions of the *other* corpora, asked of this one.

    Round-robin over the other corpora in manifest order, each pool shuffled by a generator
    seeded with the suite's seed and the corpus name (CRC-32), so the draw is the same on every
    run and machine and no corpus dominates; two corpora over the same documents (none today)
    would have to be left out of each other's pools by hand."""
    rng = random.Random(suite.far_seed * 1_000_003 + zlib.crc32(corpus.name.encode()))
    queues = []
    for other in suite.corpora:
        if other.name == corpus.name:
            continue
        pool = sorted(pools[other.name], key=lambda q: q.q)
        rng.shuffle(pool)
        queues.append(pool)
    drawn: list[Question] = []
    while len(drawn) < suite.far_per_corpus and any(queues):
        for queue in queues:
            if queue and len(drawn) < suite.far_per_corpus:
                q = queue.pop()
                drawn.append(Question(corpus.name, "far", None, q.q, q.category, q.corpus))
    return drawn


def rank_of(question: GoldenQuestion, hits: Sequence[Any]) -> int | None:
    """1-based rank of the first hit that answers ``question`` (as ``narezka eval`` scores)."""
    if question.references:
        spans = [Span(h.file_path, h.start, h.end) for h in hits]
        return first_overlap_rank(spans, [r.span for r in question.references])
    return first_hit_rank([h.text for h in hits], question.must_contain)


def store_for(
    cache: Path, corpus: Corpus, spec: str, embedder: str, rescore: str | None = None
) -> Path:
    """The corpus's store folder for one index configuration (its settings hashed; the
    quality tier's model, when asked, too)."""
    parts: list[Any] = [spec, embedder, corpus.held_out, corpus.include, corpus.exclude]
    key = json.dumps([*parts, rescore] if rescore else parts)
    return cache / "stores" / f"{corpus.name}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"


def parse_fusion(value: str | None) -> Fusion | None:
    """``score``, ``rrf``, ``score:0.5`` (dense weight) or ``rrf:60`` (RRF's k); None: default."""
    if not value:
        return None
    method, _, arg = value.partition(":")
    if method == "rrf":
        return Fusion("rrf", rrf_k=int(arg)) if arg else Fusion("rrf")
    return Fusion(method, dense_weight=float(arg)) if arg else Fusion(method)  # type: ignore[arg-type]


def set_rescore_fusion(value: str) -> str:
    """Set how the quality tier fuses (``score``, ``score:0.3`` its weight, ``rrf``): a
    benchmark's knob on :mod:`narezka.search.rescoring`'s constants, not a user option."""
    from narezka.search import rescoring

    method, _, weight = value.partition(":")
    if method not in ("score", "rrf"):
        raise SystemExit(f"--rescore-fusion: score, score:WEIGHT or rrf, not {value!r}")
    rescoring.METHOD = method
    if weight:
        rescoring.WEIGHT = float(weight)
    return value


def parse_fold(value: str) -> Fold:
    """``auto``, ``off`` (no folding) or a ratio."""
    if value == "auto":
        return "auto"
    return None if value == "off" else float(value)


def grid(args: argparse.Namespace) -> list[tuple[str | None, str]]:
    """The (fusion, fold) settings a run asks: ``--grid``'s, else ``--fusion`` and ``--fold``."""
    if not args.grid:
        return [(args.fusion, args.fold)]
    out: list[tuple[str | None, str]] = []
    for item in args.grid:
        fusion, _, fold = item.partition("/")
        setting = (None if fusion == "default" else fusion), fold or "auto"
        parse_fusion(setting[0]), parse_fold(setting[1])  # refuse a bad one before indexing
        out.append(setting)
    return out


def slug(fusion: str | None, fold: str) -> str:
    """A file name for one search setting: ``score_auto``, ``rrf-30_0``."""
    return f"{fusion or 'default'}_{fold}".replace(":", "-").replace("/", "-")


def run(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    chosen = [suite.get(n) for n in args.corpora.split(",")] if args.corpora else suite.corpora
    missing = [c.name for c in chosen if not c.root.is_dir()]
    if missing:
        print(f"corpora not found (set NAREZKA_SHARED): {', '.join(missing)}", file=sys.stderr)
        return 2
    pools = {} if args.index_only else {c.name: answerable(c) for c in suite.corpora}
    spec = parse_strategy(args.strategy)
    params: dict[str, Any] = dict(spec.params)  # split parameters, and bm25 for the index
    settings = grid(args)
    model = CachedEmbedder(get_embedder(args.embedder), EmbeddingCache(default_cache_path()))
    tier = {"rescore": args.rescore} if args.rescore else {}
    if args.rescore:
        params["rescore"] = args.rescore
        tier["rescore_fusion"] = set_rescore_fusion(args.rescore_fusion)
        if args.rescore_depth:
            from narezka.search import rescoring

            rescoring.DEPTH = args.rescore_depth
            tier["rescore_fusion"] += f", depth {args.rescore_depth}"
    configs = [
        {
            "strategy": spec.label,
            "embedder": model.name,
            "mode": args.mode,
            "fusion": fusion or "default",
            "fold": fold,
            **tier,
        }
        for fusion, fold in settings
    ]
    stamp = time.strftime("%Y%m%dT%H%M%S")
    if args.grid:  # one file per setting, in --out (a folder)
        folder = args.out or args.cache / "results" / stamp
        outs = [folder / f"{slug(*setting)}.jsonl" for setting in settings]
    else:
        outs = [args.out or args.cache / "results" / f"{stamp}.jsonl"]
    for out in outs:
        out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[list[dict[str, Any]]] = [[] for _ in settings]
    sinks = [out.open("w", encoding="utf-8") for out in outs]
    try:
        for corpus in chosen:
            started = time.perf_counter()
            store = store_for(args.cache, corpus, spec.label, args.embedder, args.rescore)
            report = index(
                corpus.root,
                store_dir=store,
                strategy=spec.name,
                embedder=model,
                include=corpus.include,
                exclude=(*corpus.held_out, *corpus.exclude),
                **params,
            )
            indexed = time.perf_counter() - started
            print(
                f"{corpus.name}: indexed in {indexed:.0f} s ({report.chunks_embedded} chunks "
                f"embedded, {report.cache_misses} by the model, "
                f"{report.chunks_kept + report.chunks_reused} kept)",
                file=sys.stderr,
                flush=True,
            )
            if args.index_only:
                continue
            asked = [*pools[corpus.name], *near(corpus), *far_questions(suite, corpus, pools)]
            with Index.open(store, embedder=model) as held:
                for (fusion, fold), config, sink, got in zip(
                    settings, configs, sinks, rows, strict=True
                ):
                    for question in asked:
                        asked_at = time.perf_counter()
                        hits = held.search(
                            question.q,
                            k=K,
                            mode=args.mode,
                            filters=Filter(include_archived=False),
                            fusion=parse_fusion(fusion),
                            fold=parse_fold(fold),
                            min_relevance=0.0,  # every hit: refusal is scored apart
                        )
                        row = result_row(question, hits, config)
                        row["ms"] = round((time.perf_counter() - asked_at) * 1000, 2)
                        got.append(row)
                        sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            print(
                f"{corpus.name}: {len(asked)} questions × {len(settings)} settings in "
                f"{time.perf_counter() - started - indexed:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    finally:
        for sink in sinks:
            sink.close()
    model.cache.close()
    for got, config in zip(rows, configs, strict=True):
        if got:
            lines = table(got, config)
            print("\n".join(lines))
            if args.table and not args.grid:
                args.table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for out in outs:
        print(f"per-question results: {out}", file=sys.stderr)
    return 0


def result_row(question: Question, hits: Sequence[Any], config: dict[str, str]) -> dict[str, Any]:
    """One JSONL line: the question, its rank (answerable only) and the top hits' scores."""
    top = hits[0] if hits else None
    return {
        "corpus": question.corpus,
        "kind": question.kind,
        "q": question.q,
        "category": question.category,
        "origin": question.origin,
        "rank": rank_of(question.golden, hits) if question.golden else None,
        "top_score": top.score if top else None,
        "top_relevance": getattr(top, "relevance", None) if top else None,
        "signals": [s.to_json() if (s := getattr(h, "signals", None)) else None for h in hits],
        "scores": [h.score for h in hits],
        "chars": [h.end - h.start for h in hits],
        "top_file": top.file_path if top else None,
        "config": config,
    }


def table(rows: Sequence[dict[str, Any]], config: dict[str, str]) -> list[str]:
    """The per-corpus Markdown table of one run."""
    lines = [
        "Configuration: " + ", ".join(f"{k} `{v}`" for k, v in config.items()) + ".",
        "",
        "| corpus | answerable | hit@1 | hit@5 | MRR | top score: hit@1 | near | top score: "
        "near | far | top score: far |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name in dict.fromkeys(r["corpus"] for r in rows):
        mine = [r for r in rows if r["corpus"] == name]
        ans = [r for r in mine if r["kind"] == "answerable"]
        ranks = [r["rank"] for r in ans]
        n = max(1, len(ans))
        cells = [
            name,
            str(len(ans)),
            f"{sum(r == 1 for r in ranks) / n:.3f}",
            f"{sum(r is not None and r <= K for r in ranks) / n:.3f}",
            f"{sum(1 / r for r in ranks if r) / n:.3f}",
            _scores([r for r in ans if r["rank"] == 1]),
        ]
        for kind in ("near", "far"):
            some = [r for r in mine if r["kind"] == kind]
            cells += [str(len(some)), _scores(some)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Top score columns: median (min–max) of the top hit's raw score over correctly "
        "answered (hit@1), near- and far-unanswerable questions.",
    ]
    return lines


def _scores(rows: Sequence[dict[str, Any]]) -> str:
    values = [r["top_score"] for r in rows if r["top_score"] is not None]
    if not values:
        return "—"
    return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """P(a positive scores above a negative), ties counting half; None when a side is empty."""
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def compare(a_path: Path, b_path: Path) -> int:
    a_rows, b_rows = _read(a_path), _read(b_path)
    print(f"A = {a_path} ({_label(a_rows)})\nB = {b_path} ({_label(b_rows)})\n")
    print(
        "| corpus | n | A hit@1 | B hit@1 | A vs B @1 | A hit@5 | B hit@5 | A vs B @5 "
        "| AUROC A near | B near | A far | B far |"
    )
    print("|---|--:|--:|--:|---|--:|--:|---|--:|--:|--:|--:|")
    for name in dict.fromkeys(r["corpus"] for r in a_rows):
        a_ans = {r["q"]: r for r in a_rows if r["corpus"] == name and r["kind"] == "answerable"}
        b_ans = {r["q"]: r for r in b_rows if r["corpus"] == name and r["kind"] == "answerable"}
        shared = [q for q in a_ans if q in b_ans]
        cells = [name, str(len(shared))]
        for k in (1, K):
            a_hit = [_hit(a_ans[q], k) for q in shared]
            b_hit = [_hit(b_ans[q], k) for q in shared]
            n = max(1, len(shared))
            cells += [f"{sum(a_hit) / n:.3f}", f"{sum(b_hit) / n:.3f}"]
            cells.append(compare_outcomes(a_hit, b_hit))
        for kind in ("near", "far"):
            for rows in (a_rows, b_rows):
                value = separation(rows, name, kind)
                cells.append("—" if value is None else f"{value:.3f}")
        print("| " + " | ".join(cells) + " |")
    print(
        "\n`A vs B`: paired two-sided sign test, +questions only A hit / −only B hit. AUROC: "
        "how well the top hit's score separates questions answered at rank 1 from near / far "
        "unanswerable ones (uses `top_relevance` when the run recorded it, else `top_score`)."
    )
    return 0


ALPHA = 0.05
"""Significance level of the sign tests a default change needs (issue #26)."""


def decide(base_path: Path, run_paths: Sequence[Path]) -> list[str]:
    """The decision table: each run against ``base_path`` on every corpus, and the rule's verdict.

    Issue #26's rule: a setting replaces the default only on a significant win (sign test,
    p < :data:`ALPHA`) at hit@1 or hit@5 on at least one corpus and no significant loss on any."""
    base = _read(base_path)
    corpora = list(dict.fromkeys(r["corpus"] for r in base))
    summary = [
        f"Baseline: `{base_path.name}` ({_label(base)}).",
        "",
        "| setting | mean hit@1 | mean hit@5 | mean MRR | chars per answer | significant wins "
        "| significant losses | verdict |",
        "|---|--:|--:|--:|--:|---|---|---|",
    ]
    detail = [
        "| setting | corpus | n | hit@1 | hit@5 | MRR | vs baseline @1 | vs baseline @5 |",
        "|---|---|--:|--:|--:|--:|---|---|",
    ]
    for path in (base_path, *run_paths):
        rows = _read(path)
        name = _setting(rows)
        wins: list[str] = []
        losses: list[str] = []
        means: list[tuple[float, float, float]] = []
        for corpus in corpora:
            mine = {r["q"]: r for r in rows if r["corpus"] == corpus and r["kind"] == "answerable"}
            theirs = {
                r["q"]: r for r in base if r["corpus"] == corpus and r["kind"] == "answerable"
            }
            shared = [q for q in theirs if q in mine]
            if not shared:
                continue
            n = len(shared)
            ranks = [mine[q]["rank"] for q in shared]
            scores = (
                sum(r == 1 for r in ranks) / n,
                sum(r is not None and r <= K for r in ranks) / n,
                sum(1 / r for r in ranks if r) / n,
            )
            means.append(scores)
            cells = [name, corpus, str(n), *(f"{v:.3f}" for v in scores)]
            for k in (1, K):
                test = sign_test(
                    [_hit(mine[q], k) for q in shared], [_hit(theirs[q], k) for q in shared]
                )
                cell = f"+{test.a_only}/−{test.b_only}, p={test.p_value:.3f}"
                if test.p_value < ALPHA:
                    (wins if test.a_only > test.b_only else losses).append(f"{corpus} @{k}")
                    cell = f"**{cell}**"
                cells.append(cell)
            detail.append("| " + " | ".join(cells) + " |")
        if path == base_path:
            verdict = "the default"
        elif wins and not losses:
            verdict = "**replaces the default**"
        else:
            verdict = "loses somewhere" if losses else "no significant win"
        mean = [statistics.fmean(m[i] for m in means) for i in range(3)] if means else [0.0] * 3
        summary.append(
            f"| {name} | {mean[0]:.3f} | {mean[1]:.3f} | {mean[2]:.3f} | {_chars(rows)} | "
            f"{', '.join(wins) or '—'} | {', '.join(losses) or '—'} | {verdict} |"
        )
    return [*summary, "", *detail]


def _chars(rows: Sequence[dict[str, Any]]) -> str:
    """Mean characters of text returned (all five hits) per answerable question, if recorded."""
    sizes = [sum(r["chars"]) for r in rows if r["kind"] == "answerable" and "chars" in r]
    return f"{statistics.fmean(sizes):,.0f}" if sizes else "—"


def _setting(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "empty"
    config = rows[0]["config"]
    strategy = config.get("strategy", "headings")
    prefix = "" if strategy == "headings" else f"{strategy}, "
    if config.get("rescore"):
        prefix += f"rescore {config['rescore']} ({config.get('rescore_fusion', 'score')}), "
    return f"{prefix}fusion {config.get('fusion', 'default')}, fold {config.get('fold', 'auto')}"


def separation(rows: Sequence[dict[str, Any]], corpus: str, kind: str) -> float | None:
    """AUROC of the top score: hit@1 answerable questions against ``kind`` unanswerables."""

    def score(r: dict[str, Any]) -> float:
        value = r["top_relevance"] if r.get("top_relevance") is not None else r["top_score"]
        return float(value) if value is not None else 0.0

    mine = [r for r in rows if r["corpus"] == corpus]
    good = [score(r) for r in mine if r["kind"] == "answerable" and r["rank"] == 1]
    return auroc(good, [score(r) for r in mine if r["kind"] == kind])


def _hit(row: dict[str, Any], k: int) -> bool:
    return row["rank"] is not None and row["rank"] <= k


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _label(rows: Sequence[dict[str, Any]]) -> str:
    return ", ".join(f"{k} {v}" for k, v in rows[0]["config"].items()) if rows else "empty"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="Index and ask the suite under one configuration.")
    r.add_argument("--suite", type=Path, default=MANIFEST)
    r.add_argument("--corpora", default=None, help="Comma-separated names (default: all).")
    r.add_argument("--strategy", default="headings", help='A spec: "headings:size=300,bm25=lemma"')
    r.add_argument("--embedder", default="use")
    r.add_argument("--mode", default="hybrid")
    r.add_argument("--fusion", default=None, help="score, rrf, score:0.5, rrf:60")
    r.add_argument("--fold", default="auto", help="auto, off or a ratio such as 0.8")
    r.add_argument(
        "--grid",
        nargs="+",
        default=None,
        metavar="FUSION/FOLD",
        help="Several search settings in one pass (score/auto rrf:30/0 default/off); "
        "--out is then a folder with one JSONL per setting.",
    )
    r.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    r.add_argument("--out", type=Path, default=None, help="Per-question JSONL.")
    r.add_argument("--table", type=Path, default=None, help="Also write the table here.")
    r.add_argument("--index-only", action="store_true", help="Build the stores, ask nothing.")
    r.add_argument("--rescore", default=None, help="Build the stores with the quality tier (e5).")
    r.add_argument(
        "--rescore-fusion",
        default="score",
        help="How the tier fuses: score, score:WEIGHT (the second model's share) or rrf.",
    )
    r.add_argument(
        "--rescore-depth", type=int, default=None, help="Candidates the tier re-scores (≥ 4k)."
    )
    t = sub.add_parser("table", help="The table of runs' JSONL of one configuration.")
    t.add_argument("runs", type=Path, nargs="+")
    c = sub.add_parser("compare", help="Sign tests and AUROC between two runs' JSONL.")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    d = sub.add_parser("decide", help="The decision table: runs against a baseline, the rule.")
    d.add_argument("baseline", type=Path)
    d.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "decide":
        print("\n".join(decide(args.baseline, args.runs)))
        return 0
    if args.command == "compare":
        return compare(args.a, args.b)
    if args.command == "table":
        rows = [row for path in args.runs for row in _read(path)]
        configs = {json.dumps(r["config"], sort_keys=True) for r in rows}
        if len(configs) != 1:
            print(f"the runs mix {len(configs)} configurations", file=sys.stderr)
            return 2
        print("\n".join(table(rows, rows[0]["config"])))
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
