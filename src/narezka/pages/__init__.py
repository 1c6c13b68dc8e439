"""One self-contained HTML page: the shared stylesheet, a page script, and its data as JSON
blocks (``<script type="application/json">``) that the script parses on demand.

Nothing is fetched: the Content-Security-Policy forbids every network load, and document
text reaches the screen only through ``textContent`` in the scripts. The JSON is escaped so
that no ``<`` (hence no ``</script>`` or ``<!--``), ``>`` or ``&`` occurs literally inside a
block, and U+2028/U+2029 are escaped for older JavaScript parsers.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element.

    The escaped characters can only occur inside JSON strings, where ``\\uXXXX`` means the
    same character, so ``JSON.parse`` gives back exactly ``value``.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_ESCAPES)


def asset(name: str) -> str:
    """A stylesheet or script shipped in ``narezka/pages/assets``."""
    return resources.files("narezka.pages").joinpath("assets", name).read_text("utf-8")


def render_page(
    kind: str,
    title: str,
    index: Any,
    parts: Sequence[Any] = (),
    *,
    scripts: Sequence[str] = (),
) -> str:
    """The page: ``index`` in the block ``narezka-index``, each of ``parts`` in its own block
    ``part-N`` (parsed only when shown), then ``common.js`` and the given scripts."""
    blocks = [f'<script type="application/json" id="narezka-index">{script_json(index)}</script>']
    blocks += [
        f'<script type="application/json" id="part-{n}">{script_json(part)}</script>'
        for n, part in enumerate(parts)
    ]
    code = "\n".join(asset(name) for name in ("common.js", *scripts))
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(title)}</title>",
            f"<style>\n{asset('common.css')}</style>",
            "</head>",
            f'<body data-page="{html.escape(kind)}">',
            '<div id="app"><noscript>This page needs JavaScript to show its data.</noscript></div>',
            *blocks,
            f"<script>\n{code}\n</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


__all__ = ["asset", "render_page", "script_json"]
