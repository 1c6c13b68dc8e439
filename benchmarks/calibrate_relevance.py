#!/usr/bin/env python3
"""Fit and measure narezka's relevance (narezka.search.relevance) on the dev suite.

    OMP_NUM_THREADS=1 python benchmarks/calibrate_relevance.py collect [--corpora a,b]
    python benchmarks/calibrate_relevance.py fit [--out benchmarks/results/relevance.md]
    OMP_NUM_THREADS=1 python benchmarks/calibrate_relevance.py collect --rescore e5 \
        --features ~/.cache/narezka-devsuite/relevance_features_tier.jsonl
    OMP_NUM_THREADS=1 python benchmarks/calibrate_relevance.py collect \
        --features ~/.cache/narezka-devsuite/relevance_features_tier_base.jsonl
    python benchmarks/calibrate_relevance.py fit --rescore \
        --features ~/.cache/narezka-devsuite/relevance_features_tier.jsonl \
        --check ~/.cache/narezka-devsuite/relevance_features_tier_base.jsonl \
        --out benchmarks/results/relevance_tier.md

``collect`` asks every question of ``benchmarks/devsuite`` (answerable, near, far; as
``benchmarks/devsuite.py run`` does, from its cached stores, default configuration, k=5)
and writes one line per hit: the hit's raw signals (cosine, term_cover, term_share), its
label (1 when it contains the question's answer: its ``must_contain`` strings, or Chroma's
reference range; 0 for every hit of an unanswerable question), the question's kind and rank.

``fit`` fits the logistic regression (numpy, Newton's method, L2 1e-3) twice: with the
cosine (HYBRID) and without it (LEXICAL, for searches that embed no query). It measures
leave-one-corpus-out: each corpus is predicted by a model fitted on the eight others, so
every figure is on a corpus the model never saw. Per corpus it prints the AUROC with which
a question's best relevance separates questions answered at rank 1 from near and from far
unanswerable ones, the expected calibration error (10 equal-width bins over every hit),
and, at the threshold, the share of unanswerable questions left with no hit (nothing
relevant) and of correctly answered ones whose answer is dropped. The threshold is the
highest one that drops at most 5 % of the correct answers over the pooled held-out
predictions. Last it prints the coefficients fitted on all corpora, for the module.

With ``--rescore e5`` ``collect`` asks the runner's stores built with the quality tier
(``devsuite.py run --rescore e5``), searching as such an index does (candidates re-scored by
e5), and records each hit's e5 cosine (``second``) too; ``fit --rescore`` then fits RESCORED
(the four signals) beside HYBRID refitted on the same hits, the before and after of folding
e5's cosine into relevance for an index with the tier.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "benchmarks" / "devsuite"))

from manifest import MANIFEST, load_suite  # noqa: E402

from devsuite import (  # noqa: E402
    DEFAULT_CACHE,
    K,
    answerable,
    auroc,
    far_questions,
    near,
    rank_of,
    separation,
    store_for,
)
from narezka import Index  # noqa: E402
from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder  # noqa: E402
from narezka.embed.cache import default_cache_path  # noqa: E402
from narezka.evaluate import parse_strategy  # noqa: E402
from narezka.search import Filter  # noqa: E402
from narezka.search.relevance import MIN_RELEVANCE, Signals, relevance  # noqa: E402

FEATURES = DEFAULT_CACHE / "relevance_features.jsonl"
RAW = REPO / "benchmarks" / "results" / "devsuite_defaults.jsonl"
"""The runner's results of the defaults: the raw top score's AUROC, for comparison."""
L2 = 1e-3
DROP_ANSWERED = 0.05


def collect(args: argparse.Namespace) -> int:
    suite = load_suite(MANIFEST)
    chosen = [suite.get(n) for n in args.corpora.split(",")] if args.corpora else suite.corpora
    pools = {c.name: answerable(c) for c in suite.corpora}
    model = CachedEmbedder(get_embedder("use"), EmbeddingCache(default_cache_path()))
    label = parse_strategy("headings").label
    mode = "a" if args.corpora else "w"
    with args.features.open(mode, encoding="utf-8") as sink:
        for corpus in chosen:
            store = store_for(args.cache, corpus, label, "use", args.rescore)
            asked = [*pools[corpus.name], *near(corpus), *far_questions(suite, corpus, pools)]
            with Index.open(store, embedder=model) as held:
                for n, question in enumerate(asked):
                    hits = held.search(
                        question.q,
                        k=K,
                        mode=args.mode,
                        filters=Filter(include_archived=False),
                        min_relevance=0.0,  # every hit: the fit sees the weak ones too
                    )
                    rank = rank_of(question.golden, hits) if question.golden else None
                    for position, hit in enumerate(hits, start=1):
                        good = question.golden is not None and rank_of(question.golden, [hit]) == 1
                        assert hit.signals is not None
                        row = {
                            "corpus": corpus.name,
                            "kind": question.kind,
                            "question": n,
                            "rank": rank,
                            "position": position,
                            "label": int(good),
                            **hit.signals.to_json(),
                        }
                        sink.write(json.dumps(row) + "\n")
            print(f"{corpus.name}: {len(asked)} questions", file=sys.stderr, flush=True)
    model.cache.close()
    return 0


def design(rows: Sequence[dict[str, Any]], lexical: bool, second: bool = False) -> np.ndarray:
    """The feature matrix with a leading column of ones (and the e5 cosine last)."""
    cols = [[1.0] * len(rows)]
    cols.append([0.0 if lexical else float(r["cosine"]) for r in rows])
    cols.append([float(r["term_cover"]) for r in rows])
    cols.append([float(r["term_share"]) for r in rows])
    if second:
        cols.append([float(r["second"]) for r in rows])
    return np.array(cols).T


def fit_logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weights of an L2-regularised logistic regression (Newton's method)."""
    w = np.zeros(x.shape[1])
    ridge = L2 * np.eye(x.shape[1])
    ridge[0, 0] = 0.0  # the intercept is not shrunk
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + ridge @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + ridge + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def predict(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ w)))


def ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error over equal-width bins."""
    edges = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            total += inside.sum() / len(p) * abs(p[inside].mean() - y[inside].mean())
    return total


def questions(rows: Sequence[dict[str, Any]], p: np.ndarray) -> list[dict[str, Any]]:
    """Per question: kind, rank, best relevance and the relevance of its rank-1 hit."""
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    for row, value in zip(rows, p, strict=True):
        key = (row["corpus"], row["kind"], row["question"])
        q = out.setdefault(
            key,
            {
                "corpus": row["corpus"],
                "kind": row["kind"],
                "rank": row["rank"],
                "best": 0.0,
                "first": 0.0,
            },
        )
        q["best"] = max(q["best"], float(value))
        if row["position"] == 1:
            q["first"] = float(value)
    return list(out.values())


def shipped_predictions(rows: Sequence[dict[str, Any]]) -> np.ndarray:
    """What narezka itself says of each hit (the module's constants)."""
    values = [
        relevance(Signals(r["cosine"], r["term_cover"], r["term_share"]), cosine=True) for r in rows
    ]
    return np.array(values)


def cross_validate(rows: list[dict[str, Any]], lexical: bool, second: bool = False) -> np.ndarray:
    """Each corpus's hits predicted by a model fitted on the other corpora."""
    corpora = sorted({r["corpus"] for r in rows})
    x, y = design(rows, lexical, second), np.array([r["label"] for r in rows], dtype=float)
    names = np.array([r["corpus"] for r in rows])
    p = np.zeros(len(rows))
    for name in corpora:
        held = names == name
        p[held] = predict(x[held], fit_logistic(x[~held], y[~held]))
    return p


def threshold_for(qs: Sequence[dict[str, Any]]) -> float:
    """The highest threshold dropping at most DROP_ANSWERED of the rank-1 answers."""
    answered = sorted(q["first"] for q in qs if q["kind"] == "answerable" and q["rank"] == 1)
    allowed = int(DROP_ANSWERED * len(answered))
    return float(answered[allowed]) if answered else 0.5


def report(
    rows: list[dict[str, Any]],
    lexical: bool,
    threshold: float | None,
    shipped: bool = False,
    second: bool = False,
) -> list[str]:
    p = shipped_predictions(rows) if shipped else cross_validate(rows, lexical, second)
    y = np.array([r["label"] for r in rows], dtype=float)
    qs = questions(rows, p)
    t = threshold if threshold is not None else round(threshold_for(qs), 2)
    model = "LEXICAL (no cosine)" if lexical else "HYBRID"
    if second:
        model = "RESCORED (HYBRID's signals and the e5 cosine)"
    if shipped:
        model = "as narezka applies it (HYBRID with a cosine, else LEXICAL)"
    how = "fitted on the hybrid run" if shipped else "every figure leave-one-corpus-out"
    lines = [
        f"Model {model}; threshold {t:.2f}; {how}.",
        "",
        "| corpus | answered@1 | near | far | AUROC near | AUROC far | ECE | unanswerable "
        "dropped | near dropped | far dropped | answered dropped |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    names = np.array([r["corpus"] for r in rows])
    for name in [*sorted({r["corpus"] for r in rows}), "all"]:
        mine = [q for q in qs if name in ("all", q["corpus"])]
        good = [q for q in mine if q["kind"] == "answerable" and q["rank"] == 1]
        bad = {kind: [q for q in mine if q["kind"] == kind] for kind in ("near", "far")}
        cells = [name, str(len(good)), str(len(bad["near"])), str(len(bad["far"]))]
        for kind in ("near", "far"):
            value = auroc([q["first"] for q in good], [q["first"] for q in bad[kind]])
            cells.append("—" if value is None else f"{value:.3f}")
        held = names == name if name != "all" else np.ones(len(rows), dtype=bool)
        cells.append(f"{ece(p[held], y[held]):.3f}")
        for unans in (bad["near"] + bad["far"], bad["near"], bad["far"]):
            share = sum(q["best"] < t for q in unans) / len(unans) if unans else None
            cells.append("—" if share is None else f"{share:.1%}")
        cells.append(f"{sum(q['first'] < t for q in good) / max(1, len(good)):.1%}")
        lines.append("| " + " | ".join(cells) + " |")
    if shipped:
        return [*lines, ""]
    w = fit_logistic(design(rows, lexical, second), y)
    lines += ["", f"Fitted on all corpora: {tuple(round(float(v), 3) for v in w)}", ""]
    return lines


def baseline(path: Path) -> list[str]:
    """The AUROC of the raw top score (the runner's run of the defaults), per corpus."""
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    lines = [f"Raw top score before relevance (`{path.relative_to(REPO)}`):", ""]
    lines += ["| corpus | AUROC near | AUROC far |", "|---|--:|--:|"]
    for name in sorted({r["corpus"] for r in rows}):
        cells = [separation(rows, name, kind) for kind in ("near", "far")]
        lines.append(f"| {name} | " + " | ".join("—" if c is None else f"{c:.3f}" for c in cells))
    return lines


def fit(args: argparse.Namespace) -> int:
    rows = [json.loads(line) for line in args.features.read_text().splitlines() if line]
    title = "Relevance with the quality tier" if args.rescore else "Relevance calibration"
    lines = [f"# {title} (`benchmarks/calibrate_relevance.py`)", ""]
    lines += [
        f"{len(rows)} hits of {len({(r['corpus'], r['kind'], r['question']) for r in rows})}"
        " questions (top 5, default hybrid search).",
        "",
    ]
    if args.rescore:  # the tier's hits: the shipped model, HYBRID refitted, then RESCORED
        for threshold in (MIN_RELEVANCE, None):
            lines += ["As narezka scores these hits without the e5 cosine:", ""]
            lines += report(rows, lexical=False, threshold=threshold, shipped=True)
            lines += report(rows, lexical=False, threshold=threshold)
            lines += report(rows, lexical=False, threshold=threshold, second=True)
        for extra in args.check:  # the same questions without the tier, as narezka scores them
            other = [json.loads(line) for line in extra.read_text().splitlines() if line]
            lines += [f"Without the tier (`{extra.name}`), as narezka scores them:", ""]
            lines += report(other, lexical=False, threshold=MIN_RELEVANCE, shipped=True)
        text = "\n".join(lines)
        print(text)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
        return 0
    lines += report(rows, lexical=False, threshold=args.threshold)
    lines += report(rows, lexical=True, threshold=args.threshold)
    for extra in args.check:
        other = [json.loads(line) for line in extra.read_text().splitlines() if line]
        lines += [
            f"Another mode's hits (`{extra.name}`), scored as narezka scores them (questions "
            "without any hit, as bm25 leaves some, are not counted: they get nothing anyway):",
            "",
        ]
        lines += report(other, lexical=False, threshold=MIN_RELEVANCE, shipped=True)
    lines += baseline(RAW)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="Ask the suite and record every hit's signals.")
    c.add_argument("--corpora", default=None)
    c.add_argument("--mode", default="hybrid")
    c.add_argument("--features", type=Path, default=FEATURES)
    c.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="The runner's stores.")
    c.add_argument("--rescore", default=None, help="The stores built with the tier (e5).")
    f = sub.add_parser("fit", help="Fit, cross-validate by corpus and print the report.")
    f.add_argument("--features", type=Path, default=FEATURES)
    f.add_argument("--threshold", type=float, default=None)
    f.add_argument("--out", type=Path, default=None)
    f.add_argument("--check", type=Path, nargs="*", default=[], help="Other modes' features.")
    f.add_argument("--rescore", action="store_true", help="Fit RESCORED on the tier's hits.")
    args = parser.parse_args(argv)
    return collect(args) if args.command == "collect" else fit(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
