"""A local fake of the Qdrant server's REST API, for tests.

No Qdrant server can run in this environment, so narezka's server path (``--qdrant-url``,
``Index.create(url=...)``, ``Index.open(URL)``, ``push``) is tested against this fake: a real
HTTP server on 127.0.0.1 that implements the documented REST routes narezka's client uses and
executes them with qdrant-client's own *local mode* (the same engine semantics qdrant-client
ships for tests). Requests are parsed into qdrant-client's request models and replies are
the documented envelope ``{"result": ..., "status": "ok", "time": ...}``, so qdrant-client's
real HTTP transport, its (de)serialization and narezka's error handling are all exercised.

Routes: ``GET /collections/{name}/exists``, ``GET|PUT|PATCH|DELETE /collections/{name}``,
``PUT /collections/{name}/index``, ``PUT /collections/{name}/points`` (upsert),
``POST /collections/{name}/points`` (retrieve), ``.../points/delete``, ``.../points/count``,
``.../points/scroll`` and ``.../points/query/batch``; aliases: ``POST /collections/aliases``
(the actions applied all or none), ``GET /aliases`` and ``GET /collections/{name}/aliases``.
Every collection route takes an alias for its collection, as the server resolves them.

Local mode has no cluster: it ignores shard count, replication, write consistency,
on-disk storage, quantization and payload indexes. The fake keeps what each collection was
created with (``created``) and the payload indexes made on it (``indexes``) and reports both
back in ``GET /collections/{name}`` as the server does (``config.params``,
``config.quantization_config``, ``payload_schema``); ``searches`` keeps the ``params`` of every
query (quantization rescore and oversampling), which local mode's exact search ignores.

An ``api_key`` makes every request without the ``api-key`` header fail with 401, as a server
with ``service.api_key`` does; a queued status makes the next request fail with it (an
outage), and ``fail_matching`` fails every request of one method and path after the first
``fail_skip`` of them. ``after_request`` runs once each request is done, before its answer
is sent: a test looks at the server there, between the steps of a client's work.
"""

from __future__ import annotations

import json
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import TypeAdapter
from qdrant_client import QdrantClient
from qdrant_client.http import models as qm

from fake_http import JsonHandler, serving

ROUTE = re.compile(r"^/collections/(?P<name>[^/]+)(?P<rest>/.*)?$")


@dataclass
class FakeQdrant:
    """The fake's state: its engine, the requests it saw, and scripted faults."""

    url: str = ""
    api_key: str | None = None
    fail_statuses: list[int] = field(default_factory=list)
    fail_matching: tuple[str, str, int] | None = None
    """(method, path, status): every such request fails with that status (a partial outage)."""
    fail_skip: int = 0
    """How many requests ``fail_matching`` lets through first (a failure midway)."""
    after_request: Callable[[str, str], None] | None = None
    """Called with each answered request's method and path before the answer is sent."""
    requests: list[tuple[str, str]] = field(default_factory=list)
    created: dict[str, qm.CreateCollection] = field(default_factory=dict)
    indexes: dict[str, dict[str, Any]] = field(default_factory=dict)
    searches: list[qm.SearchParams | None] = field(default_factory=list)
    updates: list[str] = field(default_factory=list)
    """The collections a ``PATCH`` changed, in order."""
    engine: QdrantClient = field(default_factory=lambda: QdrantClient(":memory:"))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def collections(self) -> list[str]:
        """The names of the collections it holds, sorted."""
        with self.lock:
            return sorted(c.name for c in self.engine.get_collections().collections)

    def aliases(self) -> dict[str, str]:
        """alias → the collection it points at."""
        with self.lock:
            return {a.alias_name: a.collection_name for a in self.engine.get_aliases().aliases}

    def resolve(self, name: str) -> str:
        """The collection ``name`` is, or its alias points at (the server's resolution)."""
        return next(
            (a.collection_name for a in self.engine.get_aliases().aliases if a.alias_name == name),
            name,
        )


def _parse(model: Any, body: dict[str, Any]) -> Any:
    return TypeAdapter(model).validate_python(body)


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def _collection_route(
    state: FakeQdrant, method: str, name: str, rest: str, body: dict[str, Any]
) -> Any:
    engine = state.engine
    if rest == "/exists" and method == "GET":
        return {"exists": engine.collection_exists(name)}
    if rest == "" and method == "GET":
        return _described(state, name)
    if rest == "" and method == "PUT":
        create = _parse(qm.CreateCollection, body)
        done = engine.create_collection(
            name, vectors_config=create.vectors or {}, sparse_vectors_config=create.sparse_vectors
        )
        state.created[name] = create
        return done
    if rest == "" and method == "PATCH":
        return _update(state, name, _parse(qm.UpdateCollection, body))
    if rest == "" and method == "DELETE":
        state.created.pop(name, None)
        state.indexes.pop(name, None)
        return engine.delete_collection(name)
    if rest == "/aliases" and method == "GET":
        return engine.get_collection_aliases(state.resolve(name))
    if rest == "/index" and method == "PUT":
        index = _parse(qm.CreateFieldIndex, body)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # local mode: "payload indexes have no effect"
            done = engine.create_payload_index(name, index.field_name, index.field_schema)
        state.indexes.setdefault(state.resolve(name), {})[index.field_name] = index.field_schema
        return done
    if rest == "/points/query/batch" and method == "POST":
        batch = _parse(qm.QueryRequestBatch, body)
        state.searches.extend(s.params for s in batch.searches)
        # Local mode's exact search has no use for them (and warns): kept above instead.
        exact = [s.model_copy(update={"params": None}) for s in batch.searches]
        return engine.query_batch_points(name, exact)
    return _points_route(engine, method, name, rest, body)


def _update(state: FakeQdrant, name: str, update: qm.UpdateCollection) -> bool:
    """``PATCH /collections/{name}``: the diff merged into what the collection was created
    with (the server applies it in the background; its config shows it at once)."""
    real = state.resolve(name)
    create = state.created.get(real)
    if create is None:
        raise ValueError(f"Collection {name} not found")
    changes: dict[str, Any] = {}
    if isinstance(update.vectors, dict) and isinstance(create.vectors, dict):
        changes["vectors"] = {
            key: params.model_copy(
                update=update.vectors[key].model_dump(exclude_none=True)
                if key in update.vectors
                else {}
            )
            for key, params in create.vectors.items()
        }
    if update.sparse_vectors:
        changes["sparse_vectors"] = {**(create.sparse_vectors or {}), **update.sparse_vectors}
    if update.params is not None:
        changes.update(update.params.model_dump(exclude_none=True))
    if isinstance(update.quantization_config, qm.Disabled):
        changes["quantization_config"] = None
    elif update.quantization_config is not None:
        changes["quantization_config"] = update.quantization_config
    state.created[real] = create.model_copy(update=changes)
    state.updates.append(real)
    return True


def _described(state: FakeQdrant, name: str) -> dict[str, Any]:
    """``GET /collections/{name}`` with what local mode drops put back, where the server
    reports it: ``config.params``, ``config.quantization_config`` and ``payload_schema``."""
    info = _dump(state.engine.get_collection(name))
    real = state.resolve(name)
    create = state.created.get(real)
    if create is not None:
        params = info["config"]["params"]
        for key in ("shard_number", "replication_factor", "write_consistency_factor"):
            params[key] = getattr(create, key) or 1  # the server's defaults, one node
        params["on_disk_payload"] = create.on_disk_payload is not False
        params["vectors"] = _dump(create.vectors)
        params["sparse_vectors"] = _dump(create.sparse_vectors)
        info["config"]["quantization_config"] = _dump(create.quantization_config)
    info["payload_schema"] = {
        field: {
            "data_type": _data_type(schema),
            "params": _dump(schema) if hasattr(schema, "model_dump") else None,
            "points": 0,
        }
        for field, schema in state.indexes.get(real, {}).items()
    }
    return info


def _data_type(schema: Any) -> str:
    kind = getattr(schema, "type", schema)  # an index's params name their type
    return str(getattr(kind, "value", kind))


def _alias_route(state: FakeQdrant, method: str, path: str, body: dict[str, Any]) -> Any:
    if path == "/collections/aliases" and method == "POST":
        change = _parse(qm.ChangeAliasesOperation, body)
        # The server refuses to delete an alias that is not there (local mode shrugs), and
        # then applies none of the actions.
        names = {a.alias_name for a in state.engine.get_aliases().aliases}
        for action in change.actions:
            if isinstance(action, qm.DeleteAliasOperation):
                if action.delete_alias.alias_name not in names:
                    raise LookupError(f"Alias {action.delete_alias.alias_name} does not exists!")
                names.discard(action.delete_alias.alias_name)
            elif isinstance(action, qm.CreateAliasOperation):
                names.add(action.create_alias.alias_name)
        return state.engine.update_collection_aliases(change.actions)
    if path == "/aliases" and method == "GET":
        return state.engine.get_aliases()
    return None


def _points_route(
    engine: QdrantClient, method: str, name: str, rest: str, body: dict[str, Any]
) -> Any:
    if rest == "/points" and method == "PUT":
        batch = _parse(qm.PointInsertOperations, body)
        points = batch.points if isinstance(batch, qm.PointsList) else batch.batch
        return engine.upsert(name, points)
    if rest == "/points" and method == "POST":
        wanted = _parse(qm.PointRequest, body)
        return engine.retrieve(
            name,
            wanted.ids,
            with_payload=wanted.with_payload if wanted.with_payload is not None else True,
            with_vectors=wanted.with_vector if wanted.with_vector is not None else False,
        )
    if rest == "/points/delete" and method == "POST":
        return engine.delete(name, _parse(qm.PointsSelector, body))
    if rest == "/points/count" and method == "POST":
        count = _parse(qm.CountRequest, body)
        return engine.count(name, count_filter=count.filter, exact=count.exact is not False)
    if rest == "/points/scroll" and method == "POST":
        scroll = _parse(qm.ScrollRequest, body)
        points, offset = engine.scroll(
            name,
            scroll_filter=scroll.filter,
            limit=scroll.limit or 10,
            offset=scroll.offset,
            with_payload=scroll.with_payload if scroll.with_payload is not None else True,
            with_vectors=scroll.with_vector or False,
        )
        return {"points": points, "next_page_offset": offset}
    raise LookupError(f"{method} /collections/{name}{rest} is not implemented by the fake")


def _handler(state: FakeQdrant) -> type[JsonHandler]:
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = urlsplit(self.path).path
            started = time.perf_counter()
            with state.lock:
                state.requests.append((method, path))
                fail = state.fail_statuses.pop(0) if state.fail_statuses else None
                if state.fail_matching and state.fail_matching[:2] == (method, path):
                    if state.fail_skip > 0:
                        state.fail_skip -= 1
                    else:
                        fail = state.fail_matching[2]
            if state.api_key is not None and self.headers.get("api-key") != state.api_key:
                return self.send_json(401, {"status": {"error": "Must provide an API key"}})
            if fail is not None:
                return self.send_json(fail, {"status": {"error": f"simulated failure {fail}"}})
            if path == "/":
                return self.send_json(200, {"title": "fake qdrant", "version": "1.15.0"})
            match = ROUTE.match(path)
            try:
                body = json.loads(raw) if raw else {}
                with state.lock:
                    result = _alias_route(state, method, path, body)
                    if result is None and match is None:
                        raise LookupError(f"no route {path}")
                    if result is None and match is not None:
                        result = _collection_route(
                            state, method, match["name"], match["rest"] or "", body
                        )
            except LookupError as exc:
                return self.send_json(404, {"status": {"error": str(exc)}})
            except (ValueError, TypeError) as exc:  # local mode: unknown collection, bad body
                return self.send_json(400, {"status": {"error": str(exc)}})
            if "wait" in parse_qs(urlsplit(self.path).query) and result is None:
                result = True
            if state.after_request is not None:  # before the client can take its next step
                state.after_request(method, path)
            self.send_json(
                200,
                {"result": _dump(result), "status": "ok", "time": time.perf_counter() - started},
            )

        def do_GET(self) -> None:
            self._serve("GET")

        def do_PUT(self) -> None:
            self._serve("PUT")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

    return Handler


@contextmanager
def fake_qdrant(
    api_key: str | None = None, configure: Callable[[FakeQdrant], None] | None = None
) -> Iterator[FakeQdrant]:
    """A running fake on a free localhost port; its ``url`` is what a client connects to."""
    state = FakeQdrant(api_key=api_key)
    if configure is not None:
        configure(state)
    try:
        with serving(_handler(state)) as url:
            state.url = url
            yield state
    finally:
        state.engine.close()
