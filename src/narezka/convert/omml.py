"""Office Math (OMML) → linear text: ``x^2/(a+b)``, ``√(x)``, ``∑_(i=1)^n i``, as one would
type the formula, so an equation's words and symbols are indexed, not dropped."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["M", "linear"]

M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_BRACKETED = re.compile(r"^(?:\(.*\)|\[.*\]|\{.*\})$")
_OPERATOR = re.compile(r"[\s+\-−=±∓×·*/<>≤≥≠≈|,;]")
_MAX_DEPTH = 64
"""Nesting an equation may have: Word's own stops far below; a file nesting fractions ten
thousand deep is read to this depth only."""


def _group(text: str) -> str:
    """``text`` bracketed when an operator in it would bind looser than the bar or script
    around it: ``a+b`` under a fraction bar reads ``(a+b)``; ``x^2``, ``12``, ``(a+b)`` stay."""
    text = text.strip()
    if not _OPERATOR.search(text) or (_BRACKETED.match(text) and text.count("(") == 1):
        return text
    return f"({text})"


def _prop(node: Any, name: str, default: str) -> str:
    """The ``m:val`` of property ``name`` under ``node``'s properties (``m:chr`` of ``m:dPr``)."""
    for props in node:
        if isinstance(props.tag, str) and props.tag.endswith("Pr"):
            found = props.find(M + name)
            if found is not None:
                return str(found.get(M + "val", default))
    return default


def _arg(node: Any, name: str, depth: int) -> str:
    child = node.find(M + name)
    return _children(child, depth + 1) if child is not None else ""


def _scripts(node: Any, depth: int) -> str:
    sub, sup = _arg(node, "sub", depth), _arg(node, "sup", depth)
    return (f"_{_group(sub)}" if sub else "") + (f"^{_group(sup)}" if sup else "")


def _fraction(node: Any, depth: int) -> str:
    num, den = _arg(node, "num", depth), _arg(node, "den", depth)
    if _prop(node, "type", "bar") == "noBar":  # a binomial coefficient's stacked pair
        return f"({num} over {den})"
    return f"{_group(num)}/{_group(den)}"


def _radical(node: Any, depth: int) -> str:
    degree = _arg(node, "deg", depth)
    root = "√" if not degree else {"3": "∛", "4": "∜"}.get(degree, f"{_group(degree)}√")
    return root + f"({_arg(node, 'e', depth)})"


def _delimiter(node: Any, depth: int) -> str:
    begin, end = _prop(node, "begChr", "("), _prop(node, "endChr", ")")
    separator = _prop(node, "sepChr", "|")
    parts = [_children(e, depth + 1) for e in node.findall(M + "e")]
    return begin + separator.join(parts) + end


def _nary(node: Any, depth: int) -> str:
    return _prop(node, "chr", "∫") + _scripts(node, depth) + " " + _group(_arg(node, "e", depth))


def _matrix(node: Any, depth: int) -> str:
    rows = [
        ", ".join(_children(e, depth + 1) for e in row.findall(M + "e"))
        for row in node.findall(M + "mr")
    ]
    return "[" + "; ".join(rows) + "]"


def _text(node: Any, _depth: int) -> str:
    return "".join(t.text or "" for t in node.iter(M + "t", _W + "t"))


_FORMS: dict[str, Callable[[Any, int], str]] = {
    "r": _text,
    "f": _fraction,
    "sSup": lambda n, d: _group(_arg(n, "e", d)) + _scripts(n, d),
    "sSub": lambda n, d: _group(_arg(n, "e", d)) + _scripts(n, d),
    "sSubSup": lambda n, d: _group(_arg(n, "e", d)) + _scripts(n, d),
    "sPre": lambda n, d: _scripts(n, d) + _group(_arg(n, "e", d)),
    "rad": _radical,
    "d": _delimiter,
    "nary": _nary,
    "func": lambda n, d: _arg(n, "fName", d) + " " + _group(_arg(n, "e", d)),
    "limLow": lambda n, d: _arg(n, "e", d) + "_" + _group(_arg(n, "lim", d)),
    "limUpp": lambda n, d: _arg(n, "e", d) + "^" + _group(_arg(n, "lim", d)),
    "eqArr": lambda n, d: "; ".join(_children(e, d + 1) for e in n.findall(M + "e")),
    "m": _matrix,
    "bar": lambda n, d: _arg(n, "e", d),
    "acc": lambda n, d: _arg(n, "e", d),
    "box": lambda n, d: _arg(n, "e", d),
    "borderBox": lambda n, d: _arg(n, "e", d),
    "groupChr": lambda n, d: _arg(n, "e", d),
    "phant": lambda n, d: _arg(n, "e", d),
    "oMath": lambda n, d: _children(n, d + 1),
    "e": lambda n, d: _children(n, d + 1),
}


def _children(node: Any, depth: int) -> str:
    if depth > _MAX_DEPTH:
        return _text(node, depth)
    out = []
    for child in node:
        tag = child.tag if isinstance(child.tag, str) else ""
        if not tag.startswith(M):
            if tag == _W + "r":  # a Word run inside an equation (plain text in it)
                out.append(_text(child, depth))
            continue
        form = _FORMS.get(tag[len(M) :])
        if form is not None:
            out.append(form(child, depth))
    return "".join(out)


def linear(node: Any) -> str:
    """The linear text of an ``m:oMath`` or ``m:oMathPara`` element, spaces collapsed."""
    if node.tag == M + "oMathPara":
        text = " ".join(_children(m, 0) for m in node.iter(M + "oMath"))
    else:
        text = _children(node, 0)
    return " ".join(text.split())
