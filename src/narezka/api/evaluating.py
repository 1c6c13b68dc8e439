"""Evaluate chunking strategies on a golden set: the wiring of chunk → index → search → score.

Per strategy (and per size of a ``sizes`` sweep) the corpus is indexed into its own temporary
store with one shared embedder whose vectors sit in one cache file, so a second strategy
re-embeds only chunks it cut differently and a re-run embeds nothing; the run counts the cache
hits. Golden-set problems (bad lines, strings that occur nowhere, references outside the
corpus) and bad strategy parameters are found before any embedding.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from narezka import environment
from narezka.api.searching import MODES, Hit
from narezka.defaults import EMBEDDER, MODE, STRATEGY
from narezka.discover import iter_files, read_document
from narezka.embed import CachedEmbedder, Embedder, EmbeddingCache, get_embedder
from narezka.embed.cache import default_cache_path
from narezka.errors import ConfigError, SourceError
from narezka.evaluate import (
    ChunkView,
    EvalRun,
    GoldenQuestion,
    GoldenSet,
    Retrieved,
    StrategySpec,
    check_against_corpus,
    compare_all,
    load_golden,
    parse_ks,
    parse_sizes,
    parse_strategies,
    score_strategy,
    sweep,
)
from narezka.evaluate.chroma import token_ends
from narezka.globs import literal_glob
from narezka.index import Index
from narezka.runs.chunking import include_for
from narezka.search import Filter, Fusion
from narezka.search.folding import AUTO, Fold
from narezka.search.fusion import DEFAULT as DEFAULT_FUSION
from narezka.settings import Settings, chunk_config, convert_options, servers
from narezka.split import SplitParams, get_strategy
from narezka.tokens.bm25 import check_analyzer
from narezka.types import RawDocument

Progress = Callable[[str], None]
INDEX_PARAMS = frozenset({"bm25"})
"""Spec keys that configure the index rather than the split (``headings:bm25=lemma``)."""
_PARAM_NAMES = frozenset(f.name for f in dataclasses.fields(SplitParams))


def evaluate(
    corpus: str | Path,
    golden: str | Path | GoldenSet,
    *,
    strategies: str | Sequence[str] = STRATEGY,
    sizes: str | Sequence[int] | None = None,
    ks: str | Sequence[int] = (1, 3, 5),
    mode: str = MODE,
    embedder: str | Embedder = EMBEDDER,
    cache_path: str | Path | None = None,
    include_archived: bool = False,
    expand: str | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    work_dir: str | Path | None = None,
    on_progress: Progress | None = None,
    params: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    context_llm: str | None = None,
    fusion: Fusion | None = None,
    fold: Fold = AUTO,
) -> EvalRun:
    """Index ``corpus`` once per strategy spec (``"fixed:size=1500 headings"``), ask every
    golden question with ``k = max(ks)`` and score it; see :class:`~narezka.evaluate.EvalRun`.

    ``golden`` is a JSONL golden set (strings or reference spans) or Chroma's questions CSV
    (see :mod:`narezka.evaluate.golden`). ``sizes`` (``"128,256,512"``) runs every spec at
    each size unless the spec sets ``size`` itself; sizes are in the spec's unit (by default
    the embedder's tokens). ``expand`` is passed to :func:`~narezka.api.searching.search`
    (``"section"``, ``"parent"``…) and the expanded hits are scored. ``cache_path`` is the
    one embedding cache shared by all strategies (default: the user cache); temporary stores
    go under ``work_dir`` (default: the system temp dir) and are removed afterwards.
    ``params`` are split parameters every spec starts from (a spec's own override them): the
    options ``narezka chunk`` and ``index`` take. ``jobs`` worker processes chunk each
    spec's corpus while it is embedded (default: the machine's cores). ``context_llm`` turns
    on LLM-written chunk context for every spec (cached beside the embedding cache, so a
    re-run asks nothing). ``fusion`` and ``fold`` are :meth:`narezka.Index.search`'s.
    """
    say = on_progress or (lambda _: None)
    base = dict(params or {})
    root = Path(corpus)
    if not root.exists():
        raise ConfigError(f"{root}: no such file or directory")
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    specs = sweep(parse_strategies(strategies), parse_sizes(sizes))
    for spec in specs:
        _check_spec(spec)
    k_values = parse_ks(ks)
    golden_set = golden if isinstance(golden, GoldenSet) else load_golden(golden)
    globs = _shared_globs(specs, include)
    if not isinstance(golden, GoldenSet):
        # A golden file kept inside the corpus (kb/golden.jsonl) quotes every answer; a
        # strategy that reads *.jsonl or *.csv would index it and answer itself.
        exclude = (*exclude, *paths_inside(root, Path(golden)))
    raws = _read_corpus(root, globs, exclude)
    texts = {raw.source: raw.text for raw in raws}
    checked, absent = check_against_corpus(golden_set, texts)
    if not checked.questions:
        raise ConfigError("the golden set has no usable question")
    say(f"{len(checked.questions)} questions, {len(raws)} files")

    model = _cached(embedder, cache_path)
    # Every spec resolves as `index` will resolve it: the base settings with the spec's own
    # strategy and parameters, through the one chunk_config. A bad size or unit fails here,
    # before any embedding.
    settings = Settings(embedder=embedder if isinstance(embedder, str) else model.name).replace(
        include=tuple(globs), exclude=tuple(exclude), context_llm=context_llm, **base
    )
    for spec in specs:
        chunk_config(settings.replace(strategy=spec.name, **spec.params), model)
    # The token variant of the span metrics maps ranges onto cl100k tokens of every document
    # a hit may come from.
    ends = {raw.source: token_ends(raw.text) for raw in raws} if checked.format == "spans" else None
    run = EvalRun(
        corpus=str(root),
        golden=str(golden) if not isinstance(golden, GoldenSet) else "<golden set>",
        embedder=model.name,
        max_tokens=model.max_tokens,
        mode=mode,
        ks=k_values,
        include_archived=include_archived,
        problems=checked.problems,
        format=checked.format,
        sizes=parse_sizes(sizes),
        expand=expand,
        ranking=_ranking(mode, fusion, fold),
    )
    try:
        with tempfile.TemporaryDirectory(prefix="narezka-eval-", dir=work_dir) as tmp:
            for number, spec in enumerate(specs):
                say(f"{spec.label}: indexing")
                started = time.perf_counter()
                hits_before, misses_before = _cache_counts(model)
                store = Path(tmp) / f"store-{number}"
                chosen = settings.replace(strategy=spec.name, **spec.params)
                with Index.create(root, chosen, store=store, embedder=model) as writing:
                    report = writing.sync(jobs=jobs)
                # The index is held open for the whole spec: its chunks are read back rather
                # than cut a second time, and every question searches the open store.
                with Index.open(store, embedder=model) as held:
                    chunks = _views(held)

                    def retrieve(question: GoldenQuestion, held: Index = held) -> list[Retrieved]:
                        hits = held.search(
                            question.q,
                            k=max(k_values),
                            mode=mode,
                            filters=Filter(include_archived=include_archived),
                            expand=expand,
                            fusion=fusion,
                            fold=fold,
                            # Every hit: the scores count what ranked, the refusal
                            # table weighs each threshold against all of them.
                            min_relevance=0.0,
                        )
                        counts = model.counter.count_batch([h.text for h in hits])
                        return [_retrieved(h, n) for h, n in zip(hits, counts, strict=True)]

                    say(f"{spec.label}: {len(chunks)} chunks, searching")
                    result = score_strategy(
                        spec,
                        checked.questions,
                        chunks,
                        retrieve,
                        k_values,
                        max_tokens=model.max_tokens,
                        absent=absent,
                        token_ends=ends,
                    )
                result.warnings = [str(e) for e in report.skipped]
                result.seconds = time.perf_counter() - started
                hits_after, misses_after = _cache_counts(model)
                result.cached = hits_after - hits_before
                result.embedded = misses_after - misses_before
                run.strategies.append(result)
    finally:
        run.cache_hits, run.cache_misses = _cache_counts(model)
        if isinstance(model, CachedEmbedder):
            model.cache.close()
    run.comparisons = compare_all(run.strategies, run.headline_k)
    return run


def paths_inside(corpus: Path, *paths: Path | None) -> tuple[str, ...]:
    """Those of ``paths`` that lie inside the corpus folder, as exclude globs (POSIX,
    relative): evaluation inputs and outputs must never be indexed as documents."""
    if not corpus.is_dir():
        return ()
    inside = []
    for path in paths:
        if path is None:
            continue
        try:
            inside.append(literal_glob(path.resolve().relative_to(corpus.resolve()).as_posix()))
        except ValueError:
            continue
    return tuple(inside)


def _shared_globs(specs: Sequence[StrategySpec], include: Sequence[str] | None) -> tuple[str, ...]:
    """The files every spec reads, so the comparison is fair: the union of the strategies'
    default globs unless the caller names some."""
    if include:
        return tuple(include)
    return tuple(
        dict.fromkeys(g for spec in specs for g in include_for(get_strategy(spec.name), None))
    )


def _check_spec(spec: StrategySpec) -> None:
    """Fail on an unknown strategy or parameter before anything is embedded."""
    get_strategy(spec.name)
    unknown = sorted(set(spec.params) - _PARAM_NAMES - INDEX_PARAMS)
    if unknown:
        raise ConfigError(
            f"strategy {spec.label!r}: unknown parameter {', '.join(unknown)} "
            f"(known: {', '.join(sorted(_PARAM_NAMES | INDEX_PARAMS))})"
        )
    if "bm25" in spec.params:
        check_analyzer(str(spec.params["bm25"]))


def split_params(spec: StrategySpec) -> dict[str, Any]:
    """The spec's split parameters, without the keys that configure the index."""
    return {k: v for k, v in spec.params.items() if k not in INDEX_PARAMS}


def _cached(spec: str | Embedder, cache_path: str | Path | None) -> Embedder:
    model = get_embedder(spec, servers=servers()) if isinstance(spec, str) else spec
    if isinstance(model, CachedEmbedder):
        return model
    return CachedEmbedder(
        model, EmbeddingCache(cache_path or default_cache_path(environment.current()))
    )


def _cache_counts(model: Embedder) -> tuple[int, int]:
    return (model.hits, model.misses) if isinstance(model, CachedEmbedder) else (0, 0)


def _read_corpus(root: Path, include: Sequence[str], exclude: Sequence[str]) -> list[RawDocument]:
    # Unreadable files are skipped here silently: indexing meets them too and reports them.
    raws = []
    for base, file in iter_files([root], include, exclude, errors=[]):
        try:
            raws.append(read_document(base, file, options=convert_options())[0])
        except SourceError:
            continue
    return raws


def _views(index: Index) -> list[ChunkView]:
    """What the metrics need of every chunk the index holds: its span, its text, and the
    size of its ``embed_text`` in characters and in the model's tokens (both recorded when
    it was stored)."""
    return [
        ChunkView(h.file_path, h.text, h.record.embed_chars, h.record.embed_tokens, h.start, h.end)
        for h in index.chunks()
    ]


def _retrieved(hit: Hit, tokens: int) -> Retrieved:
    return Retrieved(
        url=hit.url,
        file_path=hit.file_path,
        text=hit.text,
        category=str(hit.payload.get("category") or ""),
        archived=bool(hit.payload.get("archived", False)),
        score=hit.score,
        start=hit.start,
        end=hit.end,
        tokens=tokens,
        relevance=hit.relevance,
    )


__all__ = ["evaluate", "paths_inside"]


def _ranking(mode: str, fusion: Fusion | None, fold: Fold) -> str:
    """The report's words for how hits were fused and folded."""
    folding = "no folding" if fold is None else f"fold {fold}"
    if mode != "hybrid":
        return folding
    return f"{(fusion or DEFAULT_FUSION).label} fusion, {folding}"
