"""Text a page's CSS hides from a reader, as far as it can be known without a browser.

``hide(root)`` removes from a parsed page what a sighted reader never sees, so that no index
holds text planted for machines only. What is understood:

- the ``style`` attribute, and ``<style>`` rules whose selectors are simple: one type, class
  and id compound each (``.x``, ``#y``, ``div``, ``p.note``, ``.a.b``), in lists
  (``.x, #y``). A selector with a combinator, an attribute, a pseudo-class or ``*`` is
  skipped, and so is a rule inside an at-rule (``@media print`` hides only on paper).
  Specificity, source order and ``!important`` decide between rules; external stylesheets
  and scripts are never read;
- a whole element (its text, images and children) goes with ``display:none``,
  ``opacity:0``, the ``hidden`` attribute, a zero width or height (``max-`` too) under
  ``overflow:hidden``, a ``clip``/``clip-path`` to nothing, or an absolute position or
  ``text-indent`` a thousand pixels off the page;
- an element's own text goes with ``visibility:hidden``, a font size under one pixel
  (``font-size:0``), a transparent
  colour, or a colour within a few units of the background's behind it (white on white): a
  child that sets them back (``visibility:visible``, its own size or colour) stays. With no
  background set, the page is white and its text black only if it links no stylesheet;
  otherwise each is unknown until the page itself sets it, and a child with a class or an
  id inherits no hiding colour, size or visibility (the linked sheet may set them back).

Content a reader can still reach stays, unless moved or clipped off the page: an element
named by a control on the page (``aria-controls``, ``data-target``, ``data-bs-target``, a
``href="#id"``), a tab panel, ``hidden="until-found"``, and an element faded in by a script
(``opacity:0`` beside a ``transition``, ``transform`` or ``animation``, or a ``data-w-id``,
``data-aos`` or ``data-sal`` attribute).
``aria-hidden="true"`` hides nothing: it hides from screen readers only, the text is on
screen (icons, visual duplicates), and dropping it cannot keep planted text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["hide"]

_PROPS = frozenset(
    "display visibility opacity font-size width height max-width max-height overflow "
    "overflow-x overflow-y position left top right bottom margin-left margin-top text-indent "
    "clip clip-path color background background-color transition transform animation".split()
)
_COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_SELECTOR = re.compile(r"^([a-zA-Z][\w-]*)?((?:[.#][\w-]+)*)$")
_PART = re.compile(r"([.#])([\w-]+)")
_LENGTH = re.compile(r"^(-?\d*\.?\d+)(px|em|rem|pt|%|vw|vh|ex|ch|cm|mm|in)?$")
_RGB = re.compile(r"^rgba?\(\s*([^)]*)\)$")
_UNIT_PX = {"px": 1.0, "em": 16.0, "rem": 16.0, "pt": 4 / 3, "ex": 8.0, "ch": 8.0, "in": 96.0}
_UNIT_PX |= {"cm": 96 / 2.54, "mm": 96 / 25.4}
_NAMED = {
    "white": (255, 255, 255),
    "black": (0, 0, 0),
    "snow": (255, 250, 250),
    "ivory": (255, 255, 240),
    "whitesmoke": (245, 245, 245),
    "ghostwhite": (248, 248, 255),
    "floralwhite": (255, 250, 240),
    "red": (255, 0, 0),
    "green": (0, 128, 0),
    "blue": (0, 0, 255),
    "yellow": (255, 255, 0),
    "gray": (128, 128, 128),
    "grey": (128, 128, 128),
    "silver": (192, 192, 192),
    "navy": (0, 0, 128),
}
_CLOSE = 8
"""Colour channels this close are one colour to an eye (``#fefefe`` on white)."""
_OFF_PAGE = -1000.0
_WHITE, _BLACK = (255, 255, 255), (0, 0, 0)
_TRANSPARENT = "transparent"
_REVEALERS = ("aria-controls", "data-target", "data-bs-target")
_FADERS = ("data-w-id", "data-aos", "data-sal")

Color = tuple[int, int, int] | str  # an RGB triple, "transparent", or a name not known here
Style = tuple[tuple[str, str], ...]  # an element's (property, value) pairs, sorted


@dataclass(frozen=True, slots=True)
class _Rule:
    tag: str | None
    classes: frozenset[str]
    ids: frozenset[str]
    rank: tuple[int, int, int, int]  # ids, classes, types, source order
    decls: Mapping[str, tuple[str, bool]]


@lru_cache(maxsize=4096)
def _declarations(text: str) -> Mapping[str, tuple[str, bool]]:
    """``prop: value`` pairs this module reads, with whether each is ``!important``."""
    out: dict[str, tuple[str, bool]] = {}
    for decl in text.split(";"):
        prop, colon, value = decl.partition(":")
        prop = prop.strip().lower()
        if not colon or prop not in _PROPS:
            continue
        value = " ".join(value.lower().split())
        important = value.endswith("!important")
        value = value.removesuffix("!important").strip()
        if value and (important or not out.get(prop, ("", False))[1]):
            out[prop] = (value, important)
    return out


def _top_level_rules(sheet: str) -> Iterator[tuple[str, str]]:
    """``(selectors, declarations)`` of the rules outside any at-rule block."""
    depth, start, prelude = 0, 0, ""
    in_at = False
    for at, char in enumerate(sheet):
        if char == "{":
            if depth == 0:
                prelude = sheet[start:at].strip()
                in_at = prelude.startswith("@")
                start = at + 1
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                if not in_at:
                    yield prelude, sheet[start:at]
                start = at + 1
        elif char == ";" and depth == 0:  # @import, @charset
            start = at + 1


def _rules(root: Any) -> list[_Rule]:
    rules: list[_Rule] = []
    for style in root.iter("style"):
        sheet = _COMMENT.sub("", style.text or "")
        for selectors, body in _top_level_rules(sheet):
            decls = _declarations(body)
            if not decls:
                continue
            for selector in selectors.split(","):
                match = _SELECTOR.match(selector.strip())
                if not match or not (match.group(1) or match.group(2)):
                    continue
                parts = _PART.findall(match.group(2))
                classes = frozenset(n for kind, n in parts if kind == ".")
                ids = frozenset(n for kind, n in parts if kind == "#")
                tag = match.group(1).lower() if match.group(1) else None
                rank = (len(ids), len(classes), int(tag is not None), len(rules))
                rules.append(_Rule(tag, classes, ids, rank, decls))
    return rules


class _Sheet:
    """The page's simple rules, found for an element by its type, classes and id."""

    def __init__(self, rules: list[_Rule]) -> None:
        self.seen: dict[tuple[str, str | None, str | None, str | None], Style] = {}
        self.by_key: dict[str, list[_Rule]] = {}
        for rule in rules:
            key = (
                "#" + next(iter(rule.ids))
                if rule.ids
                else "." + next(iter(rule.classes))
                if rule.classes
                else str(rule.tag)
            )
            self.by_key.setdefault(key, []).append(rule)

    def style(self, el: Any) -> Style:
        """The element's values for the properties read here: rules, then its ``style``."""
        key = (el.tag, el.get("class"), el.get("id"), el.get("style"))
        known = self.seen.get(key)
        if known is None:
            known = self.seen[key] = self._style(el)
        return known

    def _style(self, el: Any) -> Style:
        classes = frozenset((el.get("class") or "").split())
        ident = el.get("id") or ""
        keys = [el.tag, *("." + c for c in classes)] + (["#" + ident] if ident else [])
        found: dict[str, tuple[tuple[int, ...], str]] = {}
        for key in keys:
            for rule in self.by_key.get(key, ()):
                if rule.tag not in (None, el.tag) or not rule.classes <= classes:
                    continue
                if all(i == ident for i in rule.ids):
                    for prop, (value, important) in rule.decls.items():
                        rank: tuple[int, ...] = (int(important) * 2, *rule.rank)
                        if prop not in found or found[prop][0] < rank:
                            found[prop] = (rank, value)
        for prop, (value, important) in _declarations(el.get("style") or "").items():
            rank = (int(important) * 2 + 1,)
            if prop not in found or found[prop][0] < rank:
                found[prop] = (rank, value)
        return tuple(sorted((prop, value) for prop, (_, value) in found.items()))


def _px(value: str) -> float | None:
    match = _LENGTH.match(value.strip())
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2) or "px"
    if number == 0:
        return 0.0
    if unit == "%":
        return number * 10  # -100% off the page reads as -1000
    return number * _UNIT_PX.get(unit, 10.0)


def _color(value: str) -> Color | None:
    value = value.strip()
    if value in (_TRANSPARENT, "none"):
        return _TRANSPARENT
    if value.startswith("#") and len(value) in (4, 5, 7, 9):
        digits = value[1:]
        if len(digits) <= 4:
            digits = "".join(c * 2 for c in digits)
        try:
            rgba = [int(digits[i : i + 2], 16) for i in range(0, len(digits), 2)]
        except ValueError:
            return None
        return _TRANSPARENT if len(rgba) == 4 and rgba[3] == 0 else (rgba[0], rgba[1], rgba[2])
    rgb = _RGB.match(value)
    if rgb:
        parts = re.split(r"[\s,/]+", rgb.group(1).strip())
        try:
            nums = [float(p[:-1]) * 2.55 if p.endswith("%") else float(p) for p in parts[:3]]
            alpha = parts[3] if len(parts) > 3 else "1"
            opaque = float(alpha[:-1]) / 100 if alpha.endswith("%") else float(alpha)
            if opaque == 0:
                return _TRANSPARENT
        except ValueError:
            return None
        if len(nums) == 3:
            return (round(nums[0]), round(nums[1]), round(nums[2]))
        return None
    if re.fullmatch(r"[a-z]+", value):
        return _NAMED.get(value, value)
    return None


def _background(value: str) -> Color | None:
    """The colour a ``background`` shows, or None when an image or gradient may cover it."""
    if "url(" in value or "gradient" in value or "image" in value:
        return None
    for token in re.findall(r"#[0-9a-f]+|rgba?\([^)]*\)|[a-z]+", value):
        color = _color(token)
        if isinstance(color, tuple) or color == _TRANSPARENT:
            return color
    return None


def _same(a: Color, b: Color) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return all(abs(x - y) <= _CLOSE for x, y in zip(a, b, strict=True))


@dataclass(frozen=True, slots=True)
class _Inherited:
    color: Color | None
    backdrop: Color | None
    invisible: bool = False
    tiny: bool = False


@lru_cache(maxsize=1024)
def _hides_text(here: _Inherited) -> bool:
    if here.invisible or here.tiny or here.color == _TRANSPARENT:
        return True
    return here.color is not None and here.backdrop is not None and _same(here.color, here.backdrop)


@dataclass(frozen=True, slots=True)
class _Verdict:
    """What an element's style alone says of it."""

    off_page: bool  # moved or clipped out of sight: no control ever shows that
    hidden: bool  # display:none, or no room and no overflow
    transparent: bool  # opacity 0 and nothing here to fade it in


@lru_cache(maxsize=4096)
def _verdict(items: Style) -> _Verdict:
    style = dict(items)
    hidden = style.get("display") == "none"
    if any(style.get(f"overflow{s}") in ("hidden", "clip") for s in ("", "-x", "-y")):
        for prop in ("width", "height", "max-width", "max-height"):
            size = _px(style.get(prop, ""))
            hidden = hidden or (size is not None and size <= 1)
    opacity = _px(style.get("opacity", "1"))
    fades = any(p in style for p in ("transition", "transform", "animation"))
    transparent = opacity is not None and opacity <= 0.01 and not fades
    return _Verdict(_off_page(style), hidden, transparent)


def _off_page(style: dict[str, str]) -> bool:
    """Placed, indented or clipped out of sight (the screen-reader-only tricks included)."""
    off_page = False
    if style.get("position") in ("absolute", "fixed"):
        for prop in ("left", "top", "right", "bottom", "margin-left", "margin-top"):
            offset = _px(style.get(prop, ""))
            off_page = off_page or (offset is not None and offset <= _OFF_PAGE)
        clip = style.get("clip", "")
        edges = re.split(r"[\s,]+", clip[5:].rstrip(")").strip())
        off_page = off_page or (clip.startswith("rect(") and all((_px(v) or 0) <= 1 for v in edges))
    indent = _px(style.get("text-indent", ""))
    off_page = off_page or (indent is not None and indent <= _OFF_PAGE)
    clip_path = style.get("clip-path", "")
    return off_page or clip_path in ("inset(50%)", "inset(100%)", "circle(0)", "circle(0px)")


def _gone(el: Any, style: Style, revealable: frozenset[str]) -> bool:
    """Whether the element and all inside it are out of sight."""
    verdict = _verdict(style)
    if verdict.off_page:
        return True
    if el.get("id") in revealable or (el.get("role") or "").lower() == "tabpanel":
        return False  # hidden until a tab, a button or a link on the page shows it
    if el.get("hidden") is not None and el.get("hidden").lower() != "until-found":
        return True
    if verdict.hidden:
        return True
    # A fader's attribute means a script fades it in later.
    return verdict.transparent and not any(el.get(a) is not None for a in _FADERS)


@lru_cache(maxsize=4096)
def _inherit(parent: _Inherited, items: Style) -> _Inherited:
    style = dict(items)
    color, backdrop = parent.color, parent.backdrop
    if "color" in style:
        color = _color(style["color"])
    for prop in ("background", "background-color"):
        if prop in style:
            shown = _background(style[prop])
            if shown != _TRANSPARENT:
                backdrop = shown
    invisible = parent.invisible
    if "visibility" in style:
        invisible = style["visibility"] in ("hidden", "collapse")
    tiny = parent.tiny
    if "font-size" in style:
        size = _px(style["font-size"])
        tiny = size is not None and size < 1
    return _Inherited(color, backdrop, invisible, tiny)


def _revealable(root: Any) -> frozenset[str]:
    """Ids a control on the page can show: tabs, toggles, "read more" links."""
    ids: set[str] = set()
    for value in root.xpath(" | ".join(f"//@{attr}" for attr in _REVEALERS)):
        ids.update(v.lstrip("#") for v in str(value).split())
    ids.update(str(href)[1:] for href in root.xpath("//@href[starts-with(., '#')]"))
    ids.discard("")
    return frozenset(ids)


def _sweep(
    root: Any, page: _Inherited, sheet: _Sheet, revealable: frozenset[str], styled: bool
) -> tuple[list[Any], list[tuple[Any, bool]]]:
    """The elements the CSS removes and those whose text it hides (with whether invisible)."""
    gone: list[Any] = []
    muted: list[tuple[Any, bool]] = []
    # A stack, not recursion: a generated page may nest elements two thousand deep.
    stack: list[tuple[Any, _Inherited]] = [(root, page)]
    while stack:
        el, inherited = stack.pop()
        style = sheet.style(el)
        if _gone(el, style, revealable):
            gone.append(el)
            continue
        here = _inherit(inherited, style)
        if _hides_text(here):
            muted.append((el, here.invisible))
        # An unseen stylesheet may set a named child's colour, size or visibility back.
        reset = _Inherited(None, here.backdrop) if styled else here
        for child in el:
            if isinstance(child.tag, str):
                named = child.get("class") or child.get("id")
                stack.append((child, reset if named else here))
    return gone, muted


def hide(root: Any) -> int:
    """Remove from the parsed page ``root`` what its CSS hides (see the module docstring);
    returns how many elements lost their text or went."""
    # A linked or imported stylesheet may set any colour: then none is known by default.
    styled = any("stylesheet" in (link.get("rel") or "").lower() for link in root.iter("link"))
    styled = styled or any("@import" in (style.text or "") for style in root.iter("style"))
    page = _Inherited(None, None) if styled else _Inherited(_BLACK, _WHITE)
    gone, muted = _sweep(root, page, _Sheet(_rules(root)), _revealable(root), styled)
    for el, invisible in muted:
        el.text = None
        for child in el:
            child.tail = None
        if invisible and el.tag == "img":  # colour and font size leave a picture in sight
            el.attrib.pop("alt", None)
    for el in gone:
        el.drop_tree()
    return len(gone) + len(muted)
