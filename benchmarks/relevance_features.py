#!/usr/bin/env python3
"""Which per-hit signals separate near-unanswerable questions? A study for narezka's relevance.

    OMP_NUM_THREADS=1 python benchmarks/relevance_features.py collect [--corpora a,b]
    python benchmarks/relevance_features.py fit [--out benchmarks/results/relevance_features.md]

``collect`` asks every dev-suite question (answerable, near, far; default hybrid search, k=5,
the runner's cached stores, as ``calibrate_relevance.py collect``) and records, per hit, the
shipped signals and candidates beside them:

* ``idf_cover``: the chunk's saturated term weights times the terms' IDF, over the query's
  summed IDF: ``term_cover`` with rare terms counting more;
* ``idf_share``: the query's IDF mass the chunk contains;
* ``missing_idf``: the largest IDF among the query terms the chunk lacks, over the largest an
  IDF can be (a term in no chunk): 1 when the chunk misses a term the corpus never uses;
* ``known``: the query's IDF mass the corpus contains at all (a query-level signal: a question
  about a held-out topic uses words the corpus does not);
* ``terms``: the query's unique BM25 terms;
* ``dense_best``, ``dense_margin``: the corpus's best cosine for the query and its lead over the
  second best (query-level, from a dense search of depth 50, which no k changes).

IDF is the engine's, ``ln(1 + (N − n + 0.5) / (n + 0.5))`` over the corpus's N chunks, n of them
holding the term, counted from every stored sparse vector. ``fit`` fits a logistic regression on
named feature sets and measures each leave-one-corpus-out (each corpus predicted by a model
fitted on the eight others): AUROC of the top hit's relevance, answered at rank 1 against near
and far unanswerable questions, ECE over every hit, and at a threshold the share of
unanswerable questions refused and of correct top answers dropped.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "devsuite"))

from manifest import MANIFEST, load_suite  # noqa: E402

from calibrate_relevance import ece, fit_logistic, predict  # noqa: E402
from devsuite import (  # noqa: E402
    DEFAULT_CACHE,
    K,
    answerable,
    auroc,
    far_questions,
    near,
    rank_of,
    store_for,
)
from narezka import Index  # noqa: E402
from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder  # noqa: E402
from narezka.embed.cache import default_cache_path  # noqa: E402
from narezka.evaluate import parse_strategy  # noqa: E402
from narezka.search import Filter  # noqa: E402
from narezka.tokens.bm25 import DEFAULT_ANALYZER, bm25_encoder  # noqa: E402

FEATURES = DEFAULT_CACHE / "relevance_features_ext.jsonl"
DENSE_DEPTH = 50


def idf(n: int, total: int) -> float:
    """The engine's BM25 IDF of a term in ``n`` of ``total`` chunks."""
    return math.log(1.0 + (total - n + 0.5) / (n + 0.5))


def collect(args: argparse.Namespace) -> int:
    suite = load_suite(MANIFEST)
    chosen = [suite.get(n) for n in args.corpora.split(",")] if args.corpora else suite.corpora
    pools = {c.name: answerable(c) for c in suite.corpora}
    model = CachedEmbedder(get_embedder("use"), EmbeddingCache(default_cache_path()))
    label = parse_strategy("headings").label
    with args.features.open("a" if args.corpora else "w", encoding="utf-8") as sink:
        for corpus in chosen:
            path = store_for(args.cache, corpus, label, "use")
            asked = [*pools[corpus.name], *near(corpus), *far_questions(suite, corpus, pools)]
            with Index.open(path, embedder=model) as held:
                meta = held._state.record()
                store = held._state.shared.store_for(meta)
                encoder = bm25_encoder(str(meta.get("bm25") or DEFAULT_ANALYZER))
                ids = [h.chunk_id for h in held.chunks()]
                df: Counter[int] = Counter()
                for start in range(0, len(ids), 256):
                    for point in store.get(ids[start : start + 256], with_vectors=True):
                        if point.sparse is not None:
                            df.update(set(point.sparse.indices))
                total = len(ids)
                top_idf = idf(0, total)
                for n, question in enumerate(asked):
                    hits = held.search(
                        question.q,
                        k=K,
                        mode="hybrid",
                        filters=Filter(include_archived=False),
                        min_relevance=0.0,  # every hit
                    )
                    rank = rank_of(question.golden, hits) if question.golden else None
                    sparse = encoder.encode_query(question.q)
                    terms = sorted(set(sparse.indices))
                    weights = {t: idf(df.get(t, 0), total) for t in terms}
                    mass = sum(weights.values())
                    dense = model.embed_queries([question.q])[0]
                    ranked = store.query(dense, None, k=DENSE_DEPTH, mode="dense")
                    cosines = [h.score for h in ranked] + [0.0, 0.0]
                    points = {
                        p.id: p for p in store.get([h.chunk_id for h in hits], with_vectors=True)
                    }
                    for position, hit in enumerate(hits, start=1):
                        good = question.golden is not None and rank_of(question.golden, [hit]) == 1
                        assert hit.signals is not None
                        point = points.get(hit.chunk_id)
                        stored = (
                            dict(zip(point.sparse.indices, point.sparse.values, strict=True))
                            if point is not None and point.sparse is not None
                            else {}
                        )
                        inside = [t for t in terms if t in stored]
                        missing = [weights[t] for t in terms if t not in stored]
                        row = {
                            "corpus": corpus.name,
                            "kind": question.kind,
                            "question": n,
                            "rank": rank,
                            "position": position,
                            "label": int(good),
                            **hit.signals.to_json(),
                            "idf_cover": (
                                sum(weights[t] * stored[t] for t in inside)
                                / ((encoder.k1 + 1.0) * mass)
                                if mass
                                else 0.0
                            ),
                            "idf_share": sum(weights[t] for t in inside) / mass if mass else 0.0,
                            "missing_idf": max(missing, default=0.0) / top_idf,
                            "known": (
                                sum(w for t, w in weights.items() if df.get(t, 0)) / mass
                                if mass
                                else 0.0
                            ),
                            "terms": len(terms),
                            "dense_best": cosines[0],
                            "dense_margin": cosines[0] - cosines[1],
                            "score": hit.score,
                        }
                        sink.write(json.dumps(row) + "\n")
            print(f"{corpus.name}: {len(asked)} questions", file=sys.stderr, flush=True)
    model.cache.close()
    return 0


E5 = DEFAULT_CACHE / "relevance_e5.jsonl"
E5_CHARS = 1000
"""The top hit's text is cut here before e5 embeds it (its window is 512 tokens)."""


def collect_e5(args: argparse.Namespace) -> int:
    """e5's cosine between each question and its top hit (hybrid, default), for the corpora
    with near questions: does a stronger semantic model separate them? Only the top hit, as
    e5 embeds ~2 texts a second on one core here."""
    suite = load_suite(MANIFEST)
    names = args.corpora.split(",") if args.corpora else [c.name for c in suite.corpora if c.near]
    pools = {c.name: answerable(c) for c in suite.corpora}
    use = CachedEmbedder(get_embedder("use"), EmbeddingCache(default_cache_path()))
    e5 = CachedEmbedder(get_embedder("e5"), EmbeddingCache(default_cache_path()))
    label = parse_strategy("headings").label
    with args.out.open("w", encoding="utf-8") as sink:
        for corpus in (suite.get(n) for n in names):
            path = store_for(args.cache, corpus, label, "use")
            asked = [*pools[corpus.name], *near(corpus), *far_questions(suite, corpus, pools)]
            with Index.open(path, embedder=use) as held:
                for n, question in enumerate(asked):
                    hits = held.search(
                        question.q,
                        k=K,
                        mode="hybrid",
                        filters=Filter(include_archived=False),
                        min_relevance=0.0,  # every hit
                    )
                    if not hits:
                        continue
                    q = np.asarray(e5.embed_queries([question.q])[0], dtype=np.float64)
                    d = np.asarray(e5.embed([hits[0].text[:E5_CHARS]])[0], dtype=np.float64)
                    cosine = float(q @ d / (np.linalg.norm(q) * np.linalg.norm(d)))
                    rank = rank_of(question.golden, hits) if question.golden else None
                    row = {"corpus": corpus.name, "kind": question.kind, "question": n}
                    sink.write(json.dumps({**row, "rank": rank, "e5": cosine}) + "\n")
            print(f"{corpus.name}: {len(asked)} questions", file=sys.stderr, flush=True)
    use.cache.close()
    e5.cache.close()
    return 0


SETS: dict[str, tuple[str, ...]] = {
    "shipped": ("cosine", "term_cover", "term_share"),
    "+idf": ("cosine", "term_cover", "term_share", "idf_cover", "idf_share"),
    "+missing": ("cosine", "term_cover", "term_share", "missing_idf"),
    "+known": ("cosine", "term_cover", "term_share", "known"),
    "+terms": ("cosine", "term_cover", "term_share", "log_terms"),
    "+dense": ("cosine", "term_cover", "term_share", "dense_best", "dense_margin"),
    "+margin": ("cosine", "term_cover", "term_share", "dense_margin"),
    "+gap": ("cosine", "term_cover", "term_share", "cos_gap"),
    "+idf+missing+known": (
        "cosine",
        "term_cover",
        "term_share",
        "idf_cover",
        "idf_share",
        "missing_idf",
        "known",
    ),
    "+terms+dense": (
        "cosine",
        "term_cover",
        "term_share",
        "log_terms",
        "dense_best",
        "dense_margin",
    ),
    "+terms+gap": ("cosine", "term_cover", "term_share", "log_terms", "cos_gap"),
    "+terms+gap+margin": (
        "cosine",
        "term_cover",
        "term_share",
        "log_terms",
        "cos_gap",
        "dense_margin",
    ),
    "+terms+idf": ("cosine", "term_cover", "term_share", "log_terms", "idf_cover", "idf_share"),
    "+terms+dense+idf": (
        "cosine",
        "term_cover",
        "term_share",
        "log_terms",
        "dense_best",
        "dense_margin",
        "idf_cover",
        "idf_share",
    ),
    "lexical": ("term_cover", "term_share"),
    "lexical+terms": ("term_cover", "term_share", "log_terms"),
    "all": (
        "cosine",
        "term_cover",
        "term_share",
        "idf_cover",
        "idf_share",
        "missing_idf",
        "known",
        "log_terms",
        "dense_best",
        "dense_margin",
    ),
}


def value(row: dict[str, Any], name: str) -> float:
    if name == "log_terms":
        return math.log1p(float(row["terms"]))
    if name == "cos_gap":
        return float(row["dense_best"]) - float(row["cosine"])
    return float(row[name])


def design(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> np.ndarray:
    cols = [[1.0] * len(rows)] + [[value(r, n) for r in rows] for n in names]
    return np.array(cols).T


def held_out(rows: list[dict[str, Any]], names: Sequence[str]) -> np.ndarray:
    """Each corpus's hits predicted by a model fitted on the other corpora."""
    x, y = design(rows, names), np.array([r["label"] for r in rows], dtype=float)
    corpora = np.array([r["corpus"] for r in rows])
    p = np.zeros(len(rows))
    for name in sorted(set(corpora)):
        inside = corpora == name
        p[inside] = predict(x[inside], fit_logistic(x[~inside], y[~inside]))
    return p


def per_question(rows: Sequence[dict[str, Any]], p: np.ndarray) -> list[dict[str, Any]]:
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    for row, v in zip(rows, p, strict=True):
        q = out.setdefault(
            (row["corpus"], row["kind"], row["question"]),
            {
                "corpus": row["corpus"],
                "kind": row["kind"],
                "question": row["question"],
                "rank": row["rank"],
                "terms": row["terms"],
                "best": 0.0,
            },
        )
        q["best"] = max(q["best"], float(v))
        if row["position"] == 1:
            q["first"] = float(v)
    return list(out.values())


def threshold_for(qs: Sequence[dict[str, Any]], drop: float = 0.05) -> float:
    """The highest threshold dropping at most ``drop`` of the correct top answers, pooled
    (as ``calibrate_relevance.py`` chose the default), rounded down to 0.01."""
    answered = sorted(q["first"] for q in qs if q["kind"] == "answerable" and q["rank"] == 1)
    value = answered[int(drop * len(answered))] if answered else 0.5
    return math.floor(value * 100) / 100


def matched_auroc(
    good: Sequence[dict[str, Any]], bad: Sequence[dict[str, Any]], slack: int = 1
) -> float | None:
    """AUROC over the pairs whose questions have about as many terms (within ``slack``): the
    suite's near questions are shorter than its answerable ones (5.1 terms against 7.2 on
    average), so a signal that grows with the query's length separates them on the suite
    without telling answers from non-answers."""
    wins = pairs = 0.0
    for g in good:
        for b in bad:
            if abs(g["terms"] - b["terms"]) <= slack:
                pairs += 1
                wins += (g["first"] > b["first"]) + 0.5 * (g["first"] == b["first"])
    return wins / pairs if pairs else None


def summary(rows: list[dict[str, Any]], name: str, threshold: float | None) -> list[str]:
    """One table row per corpus (and pooled) for one feature set."""
    p = held_out(rows, SETS[name])
    y = np.array([r["label"] for r in rows], dtype=float)
    qs = per_question(rows, p)
    if threshold is None:
        threshold = threshold_for(qs)
        name = f"{name} @ {threshold:.2f}"
    corpora = np.array([r["corpus"] for r in rows])
    lines = []
    for corpus in [*sorted(set(corpora)), "all"]:
        mine = [q for q in qs if corpus in ("all", q["corpus"])]
        correct = [q for q in mine if q["kind"] == "answerable" and q["rank"] == 1]
        good = [q["first"] for q in correct]
        cells = [name, corpus]
        for kind in ("near", "far"):
            a = auroc(good, [q["first"] for q in mine if q["kind"] == kind])
            cells.append("—" if a is None else f"{a:.3f}")
        m = matched_auroc(correct, [q for q in mine if q["kind"] == "near"])
        cells.append("—" if m is None else f"{m:.3f}")
        inside = corpora == corpus if corpus != "all" else np.ones(len(rows), dtype=bool)
        cells.append(f"{ece(p[inside], y[inside]):.3f}")
        for kind in ("near", "far"):
            bad = [q for q in mine if q["kind"] == kind]
            refused = sum(q["best"] < threshold for q in bad) / len(bad) if bad else None
            cells.append("—" if refused is None else f"{refused:.1%}")
        cells.append(f"{sum(g < threshold for g in good) / max(1, len(good)):.1%}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def fit(args: argparse.Namespace) -> int:
    rows = [json.loads(line) for line in args.features.read_text().splitlines() if line]
    names = args.sets.split(",") if args.sets else list(SETS)
    lines = [
        f"{len(rows)} hits; every figure leave-one-corpus-out; threshold "
        + (
            f"{args.threshold}."
            if args.threshold is not None
            else "per feature set, the "
            "highest that drops at most 5 % of correct top answers pooled (held out)."
        ),
        "",
        "| features | corpus | AUROC near | AUROC far | AUROC near, length-matched | ECE "
        "| near refused | far refused | correct dropped |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name in names:
        lines += summary(rows, name, args.threshold)
    if args.e5.is_file():
        lines += [
            "",
            "e5 (multilingual-e5-small) cosine of each question and its top hit "
            f"(`{args.e5.name}`):",
            "",
            *e5_report(rows, args.e5),
        ]
    for name in names:
        x, y = design(rows, SETS[name]), np.array([r["label"] for r in rows], dtype=float)
        w = fit_logistic(x, y)
        lines.append(f"\n{name} fitted on all: " + ", ".join(f"{v:.3f}" for v in w))
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def e5_report(rows: list[dict[str, Any]], path: Path) -> list[str]:
    """Near and far AUROC of the top hit's e5 cosine, alone and beside the shipped model's
    held-out relevance (a question-level logistic regression, leave-one-corpus-out over the
    corpora e5 was measured on)."""
    e5 = {
        (r["corpus"], r["kind"], r["question"]): r["e5"]
        for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    }
    shipped = per_question(rows, held_out(rows, SETS["shipped"]))
    qs = [
        {**q, "e5": e5[key]}
        for q in shipped
        if (key := (q["corpus"], q["kind"], q["question"])) in e5 and "first" in q
    ]
    x = np.array(
        [[1.0, math.log(q["first"] / (1 - q["first"] + 1e-12) + 1e-12), q["e5"]] for q in qs]
    )
    kept = [q for q in qs if q["kind"] != "answerable" or q["rank"] == 1]
    y = np.array([float(q["kind"] == "answerable") for q in qs])
    corpora = np.array([q["corpus"] for q in qs])
    # Trained on answered-at-1 against unanswerable, as the AUROC reads it.
    mask = np.array([q in kept for q in qs])
    both = np.zeros(len(qs))
    for name in sorted(set(corpora)):
        inside = corpora == name
        train = ~inside & mask
        both[inside] = predict(x[inside], fit_logistic(x[train], y[train]))
    lines = [
        "| corpus | correct@1 | near | shipped: near / far | e5 cosine: near / far "
        "| shipped + e5: near / far |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for name in [*sorted(set(corpora)), "all"]:
        idx = [i for i, q in enumerate(qs) if name in ("all", q["corpus"])]
        good = [i for i in idx if qs[i]["kind"] == "answerable" and qs[i]["rank"] == 1]
        cells = [name, str(len(good)), str(sum(qs[i]["kind"] == "near" for i in idx))]
        for score in (
            [q["first"] for q in qs],
            [q["e5"] for q in qs],
            list(both),
        ):
            pair = []
            for kind in ("near", "far"):
                bad = [i for i in idx if qs[i]["kind"] == kind]
                a = auroc([score[i] for i in good], [score[i] for i in bad])
                pair.append("—" if a is None else f"{a:.3f}")
            cells.append(" / ".join(pair))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--corpora", default=None)
    c.add_argument("--features", type=Path, default=FEATURES)
    c.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    e = sub.add_parser("e5", help="e5's cosine of each question's top hit (slow).")
    e.add_argument("--corpora", default=None)
    e.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    e.add_argument("--out", type=Path, default=E5)
    f = sub.add_parser("fit")
    f.add_argument("--features", type=Path, default=FEATURES)
    f.add_argument("--sets", default=None)
    f.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="Default: per feature set, the highest dropping ≤ 5 %% of correct top answers.",
    )
    f.add_argument("--out", type=Path, default=None)
    f.add_argument("--e5", type=Path, default=E5, help="The e5 command's output (if present).")
    args = parser.parse_args(argv)
    if args.command == "e5":
        return collect_e5(args)
    return collect(args) if args.command == "collect" else fit(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
