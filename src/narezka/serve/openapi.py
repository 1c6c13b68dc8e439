"""The HTTP API described as OpenAPI 3.1 (served at ``/openapi.json``; schemathesis tests the
server against it). ``/search``'s parameters are the table of search options
(:mod:`narezka.search.options`), each with its schema, default and help."""

from __future__ import annotations

from typing import Any

from narezka.search.options import Option, shown_at
from narezka.serve.service import MAX_CONTEXT, MAX_K, MAX_QUERY_CHARS

_ERROR = {
    "description": "Refused: the reason is in `error`.",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"error": {"type": "string"}},
                "required": ["error"],
            }
        }
    },
}
_JSON = {"application/json": {"schema": {"type": "object"}}}


def _param(name: str, schema: dict[str, Any], text: str, *, where: str = "query") -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": where == "path",
        "schema": schema,
        "description": text,
    }


def _said(option: Option) -> str:
    """An option's help, with its default in words where the schema cannot say it."""
    return option.help + (f" Default: {option.shown}." if option.shown else "")


_REFUSALS = {code: _ERROR for code in ("400", "401", "403", "413", "421", "500", "503")}
"""Every route's errors: a bad request, no key, a foreign Origin, a body over the limit, a
Host the server does not answer for (DNS rebinding), the server's own fault, too slow."""


def _get(summary: str, params: list[dict[str, Any]], *, text: bool = False) -> dict[str, Any]:
    ok = {"text/markdown": {"schema": {"type": "string"}}} if text else _JSON
    return {
        "get": {
            "summary": summary,
            "parameters": params,
            "responses": {
                "200": {"description": "OK", "content": ok},
                **_REFUSALS,
                "404": _ERROR,
            },
        }
    }


def openapi_document() -> dict[str, Any]:
    string = {"type": "string"}
    cursor = _param("cursor", string, "next_cursor from the previous page of the same request.")
    search = [
        _param(
            "q",
            {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
            "The query.",
        ),
        *(
            _param(o.name, o.json_schema(maximum=MAX_K if o.name == "k" else None), _said(o))
            for o in shown_at("http")
        ),
        cursor,
    ]
    search[0]["required"] = True
    around = {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "default": 0}
    return {
        "openapi": "3.1.0",
        "info": {"title": "narezka", "version": "1"},
        "paths": {
            "/search": _get("Search the index (hits bounded by the reply budget).", search),
            "/chunks/{chunk_id}": _get(
                "One chunk, or with before/after its neighbours in its file.",
                [
                    _param("chunk_id", string, "A hit's chunk_id.", where="path"),
                    _param("before", around, "Chunks before."),
                    _param("after", around, "Chunks after."),
                ],
            ),
            "/sources": _get(
                "Indexed files, paged.",
                [_param("path_glob", string, "Only paths matching this glob."), cursor],
            ),
            "/sources/{path}": _get(
                "An indexed file's text (redacted), cut to the reply budget.",
                [_param("path", string, "Its path inside the corpus.", where="path")],
                text=True,
            ),
            "/status": _get("What is indexed and how fresh it is.", []),
            "/sync": {
                "post": {
                    "summary": "Sync now (the server's writer runs it) and return its report.",
                    "responses": {
                        "200": {"description": "OK", "content": _JSON},
                        **_REFUSALS,
                        "415": _ERROR,
                    },
                }
            },
        },
    }
