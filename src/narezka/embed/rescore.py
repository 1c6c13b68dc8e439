"""The quality tier's model: a second, slower embedder whose vector every chunk also gets.

With ``rescore = "e5"`` an index stores each chunk's e5 vector beside its first one, and a
search re-scores its first stage's candidates with the e5 vector of the query
(:mod:`narezka.search.rescoring`). :class:`RescoreModel` is the one object both sides use: the
sync embeds passages with it, the search its query.

Chunks are cut to fit the *first* embedder (USE: 384 of its tokens), and e5 counts other
tokens (XLM-R's): a chunk of code or of a rare script can run past e5's window of 512. e5
never sees more than its window, and narezka never lets an engine cut silently, so such a
text is shortened here, by characters, to the longest head that fits, and that head is what
gets the second vector. The chunk itself, its first vector and its BM25 terms are whole: the
second vector only re-orders candidates, it retrieves nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from narezka._forward import Forward
from narezka.embed.base import Embedder, Matrix
from narezka.embed.registry import get_embedder
from narezka.errors import ConfigError

SHRINK = 0.97
"""A too-long text is cut to this share of the length its token count allows, then counted
again (tokens are not spread evenly: two or three rounds at most in practice)."""


def rescore_model(spec: str, cache: Any = None) -> RescoreModel:
    """The tier's model named by ``spec`` (``e5``), with ``cache`` (an
    :class:`~narezka.embed.EmbeddingCache`) if given, so a re-sync or a rebuild embeds no
    passage twice; ``MissingDependencyError`` when its package is not installed."""
    from narezka.defaults import check_rescore

    name = check_rescore(spec)
    if name is None:
        raise ConfigError("rescore is off: there is no second model to load")
    model = get_embedder(name)
    if cache is not None:
        from narezka.embed.cache import CachedEmbedder

        model = CachedEmbedder(model, cache)
    return RescoreModel(name, model)


class RescoreModel:
    """Embeds passages and queries for the second vector, each fitted to the model's window."""

    def __init__(self, spec: str, embedder: Embedder) -> None:
        self.spec = spec
        """The setting's value (``e5``)."""
        self.embedder = embedder

    name = Forward[str]("embedder")
    """The model's full name (revision included), as ``index.json`` records it."""
    dim = Forward[int]("embedder")

    def passages(self, texts: Sequence[str]) -> Matrix:
        """The second vectors of chunks' ``embed_text``."""
        counter = self.embedder.counter
        return self.embedder.embed(fit_window(texts, counter, self.embedder.max_tokens))

    def query(self, text: str) -> Matrix:
        """The query's vector (one row)."""
        # e5 counts a query with its own prefix; a cached model hides that counter, and the
        # passage one counts a token or two more: fitting by it is safe.
        inner = getattr(self.embedder, "inner", self.embedder)
        counter = getattr(inner, "query_counter", None) or self.embedder.counter
        fitted = fit_window([text], counter, self.embedder.max_tokens)
        return self.embedder.embed_queries(fitted)


def fit_window(texts: Sequence[str], counter: Any, window: int | None) -> list[str]:
    """Each text, or its longest head (cut at a character) that ``counter`` finds within
    ``window`` tokens."""
    if window is None or not texts:
        return list(texts)
    out = []
    for text, count in zip(texts, counter.count_batch(list(texts)), strict=True):
        while count > window and text:
            text = text[: int(len(text) * window / count * SHRINK)]
            count = counter.count(text)
        out.append(text)
    return out


__all__ = ["RescoreModel", "fit_window", "rescore_model"]
