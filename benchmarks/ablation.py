#!/usr/bin/env python3
"""Ablate retrieval levers on a golden set: BM25 analyzers, FAQ pairs, the LangChain baseline.

    OMP_NUM_THREADS=1 python benchmarks/ablation.py ru_devset [--modes hybrid,bm25] [--out F]
    OMP_NUM_THREADS=1 python benchmarks/ablation.py kb
    OMP_NUM_THREADS=1 python benchmarks/ablation.py ru_devset --embedders use,e5 --modes dense

Every configuration is indexed and asked through ``narezka.api.evaluate`` (the harness of
``narezka eval``), with one embedding cache, so configurations that cut the same chunks embed
nothing twice. Each row is compared with the current default (``headings``, Snowball BM25) by
a paired two-sided sign test at k = 1, 3 and 5: ``+a/−b`` counts the questions only that row
(a) or only the default (b) hit, then the p value. A second table times BM25 query analysis
per analyzer on the set's own questions (cold: a fresh process cache; warm: asked again), as
ratios to Snowball in the same run. Results go to ``benchmarks/results/ablation_<set>.md``.

With ``--embedders A,B``, ``headings`` is run once per embedder instead and each embedder is
compared with the first (``benchmarks/results/embedders_<set>.md``); embeddings come from the
user cache when an earlier run made them, so the seconds are then search time, not indexing.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from narezka.api.evaluating import evaluate  # noqa: E402
from narezka.evaluate import EvalRun, StrategyResult, load_golden  # noqa: E402
from narezka.evaluate.metrics import sign_test  # noqa: E402
from narezka.tokens.bm25 import ANALYZERS, Bm25Encoder, russian_lemma  # noqa: E402

SHARED = Path(os.environ.get("NAREZKA_SHARED", REPO.parent / "shared"))
BASELINE = "headings"
KS = (1, 3, 5)
ANALYZED = [BASELINE, *(f"headings:bm25={a}" for a in ANALYZERS[1:4])]
LANGCHAIN = "recursive:unit=chars,size=800,overlap=150"


@dataclass(frozen=True)
class GoldenSetup:
    corpus: Path
    golden: Path
    strategies: tuple[str, ...]
    note: str
    exclude: tuple[str, ...] = ()
    """Corpus files that are not documents (``auto`` reads *.jsonl as chats)."""


SETS = {
    "ru_devset": GoldenSetup(
        SHARED / "data" / "md_corpus" / "ru" / "fastapi",
        REPO / "benchmarks" / "ru_devset" / "fastapi.jsonl",
        (*ANALYZED, LANGCHAIN),
        "162 Russian questions over FastAPI's Russian docs (benchmarks/ru_devset), 54 % answered "
        "inside code blocks or tables.",
    ),
    "kb": GoldenSetup(
        REPO / "examples" / "kb",
        REPO / "examples" / "kb" / "golden.jsonl",
        (*ANALYZED, "faq", "auto", LANGCHAIN),
        "The bundled example KB (18 pages, one of them faq.md) and its 40-question golden set.",
    ),
    "kb_faq": GoldenSetup(
        REPO / "examples" / "kb",
        REPO / "benchmarks" / "ru_devset" / "kb_faq.jsonl",
        (BASELINE, "faq", "auto", LANGCHAIN),
        "15 questions on the answers of the example KB's faq.md (benchmarks/ru_devset/"
        "kb_faq.jsonl), asked against the whole KB: the FAQ page's own lever.",
        exclude=("golden.jsonl",),
    ),
}


def compare(row: StrategyResult, base: StrategyResult, k: int) -> str:
    if row.label == base.label:
        return "—"
    test = sign_test(row.outcomes(k), base.outcomes(k))
    return f"+{test.a_only}/−{test.b_only}, p={test.p_value:.3f}"


def results_table(run: EvalRun) -> list[str]:
    base = next(s for s in run.strategies if s.label == BASELINE)
    n = len(base.questions)
    lines = [
        "| configuration | chunks | hit@1 | hit@3 | hit@5 | MRR | "
        + " | ".join(f"vs {BASELINE} @{k}" for k in KS)
        + " | seconds |",
        "|---|---:|---:|---:|---:|---:|" + "---|" * len(KS) + "---:|",
    ]
    for s in run.strategies:
        cells = [
            f"`{s.label}`",
            str(s.chunks),
            *(f"{s.hits[k]:.3f} ({round(s.hits[k] * n)})" for k in KS),
            f"{s.mrr:.3f}",
            *(compare(s, base, k) for k in KS),
            f"{s.seconds:.0f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def latency_table(golden: Path) -> list[str]:
    queries = [q.q for q in load_golden(golden).questions]
    rows = []
    for analyzer in ANALYZERS:
        russian_lemma.cache_clear()
        encoder = Bm25Encoder(analyzer=analyzer)
        started = time.perf_counter()
        for q in queries:
            encoder.encode_query(q)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(5):
            fresh = Bm25Encoder(analyzer=analyzer)  # as each search() call would
            for q in queries:
                fresh.encode_query(q)
        warm = (time.perf_counter() - started) / 5
        rows.append((analyzer, cold, warm))
    snow_cold, snow_warm = rows[0][1], rows[0][2]
    lines = [
        "| analyzer | cold µs/query | ratio | warm µs/query | ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    per = 1e6 / len(queries)
    for analyzer, cold, warm in rows:
        lines.append(
            f"| `{analyzer}` | {cold * per:.0f} | {cold / snow_cold:.2f}× | {warm * per:.0f} | "
            f"{warm / snow_warm:.2f}× |"
        )
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", choices=sorted(SETS))
    parser.add_argument("--modes", default="hybrid,bm25")
    parser.add_argument("--embedder", default="use")
    parser.add_argument("--embedders", default=None, help="Compare these on headings.")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--configs",
        default=None,
        help="Space-separated specs to run instead of the set's rows (the first is the base), "
        'e.g. "headings headings:bm25=snowball+title"',
    )
    args = parser.parse_args(argv)
    if args.embedders:
        return compare_embedders(args.set, args.embedders.split(","), args.modes, args.out)
    setup = SETS[args.set]
    if args.configs:
        setup = replace(setup, strategies=tuple(args.configs.split()))
    if not setup.corpus.is_dir():
        print(f"{setup.corpus} not found (set NAREZKA_SHARED)", file=sys.stderr)
        return 2
    out = args.out or REPO / "benchmarks" / "results" / f"ablation_{args.set}.md"
    command = f"OMP_NUM_THREADS=1 python benchmarks/ablation.py {args.set} --modes {args.modes}"
    if args.embedder != "use":
        command += f" --embedder {args.embedder}"
    if args.configs:
        command += f' --configs "{args.configs}"'
    if args.out:
        command += f" --out {args.out}"
    lines = [
        f"# Ablation on {args.set}",
        "",
        "```",
        command,
        "```",
        "",
        setup.note,
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other work while "
        "this ran (seconds are wall time, indexing included, and only roughly comparable).",
        f"Each row is compared with `{BASELINE}` (the default: Snowball BM25) by a paired "
        "two-sided sign test: `+a/−b` = questions only this row / only the default hit at k.",
        "",
    ]
    for mode in args.modes.split(","):
        started = time.perf_counter()
        run = evaluate(
            setup.corpus,
            setup.golden,
            strategies=" ".join(setup.strategies),
            ks=KS,
            mode=mode,
            embedder=args.embedder,
            exclude=setup.exclude,
            on_progress=lambda m: print(m, file=sys.stderr, flush=True),
        )
        lines += [
            f"## {mode}, embedder `{run.embedder}` ({time.perf_counter() - started:.0f} s)",
            "",
            *results_table(run),
            "",
        ]
        print("\n".join(lines[-len(run.strategies) - 4 :]), flush=True)
    lines += [
        "## BM25 query analysis time",
        "",
        "The set's questions encoded as BM25 queries; cold = a fresh lemma cache, warm = "
        "the same questions again through new encoders (what repeated searches cost).",
        "",
        *latency_table(setup.golden),
        "",
    ]
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines[-len(ANALYZERS) - 3 :]))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def compare_embedders(name: str, embedders: list[str], modes: str, out: Path | None) -> int:
    setup = SETS[name]
    command = (
        f"OMP_NUM_THREADS=1 python benchmarks/ablation.py {name} --embedders "
        f"{','.join(embedders)} --modes {modes}"
    )
    lines = [f"# Embedders on {name}", "", "```", command, "```", "", setup.note, ""]
    for mode in modes.split(","):
        results = []
        for spec in embedders:
            run = evaluate(
                setup.corpus,
                setup.golden,
                strategies=BASELINE,
                ks=KS,
                mode=mode,
                embedder=spec,
                exclude=setup.exclude,
                on_progress=lambda m: print(m, file=sys.stderr, flush=True),
            )
            results.append((run.embedder, run.strategies[0]))
        first = results[0][1]
        n = len(first.questions)
        lines += [
            f"## {mode}, `{BASELINE}` at each embedder's own budget",
            "",
            "| embedder | chunks | hit@1 | hit@3 | hit@5 | MRR | "
            + " | ".join(f"vs {results[0][0].split(':')[0]} @{k}" for k in KS)
            + " |",
            "|---|---:|---:|---:|---:|---:|" + "---|" * len(KS),
        ]
        for embedder, s in results:
            vs = [
                "—" if s is first else compare_outcomes(s.outcomes(k), first.outcomes(k))
                for k in KS
            ]
            cells = [
                f"`{embedder}`",
                str(s.chunks),
                *(f"{s.hits[k]:.3f} ({round(s.hits[k] * n)})" for k in KS),
                f"{s.mrr:.3f}",
                *vs,
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    target = out or REPO / "benchmarks" / "results" / f"embedders_{name}.md"
    target.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


def compare_outcomes(a: list[bool], b: list[bool]) -> str:
    test = sign_test(a, b)
    return f"+{test.a_only}/−{test.b_only}, p={test.p_value:.3f}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
