"""The text inside a rectangle of a PDF page, as PDFium's ``FPDFText_GetBoundedText`` gives
it, in time proportional to what the rectangle meets.

PDFium answers each such call by walking every character of the page (twice: pypdfium2 asks
once for the length, once for the text). A line's text runs are read one rectangle each, so
a page of 10k, 20k and 40k text objects cost 4.9, 20 and 79 s: quadratic. Here the page's
characters are read once (code point, box, baseline) into a grid of cells, and a
rectangle's text is made from the characters whose boxes meet it, by PDFium's own rule
(``CPDF_TextPage::GetTextByPredicate``: a space between runs kept once, a line break where a
character of another baseline follows something left out), with prefix counts standing in
for its walk over the characters between two that meet the rectangle.
"""

from __future__ import annotations

import array
import ctypes
import itertools
import math

__all__ = ["BoundedText", "paired"]

_CELL = 16.0
"""Grid cell side in points: about a line of body text."""
_BIG_CELLS = 256
"""A character box over this many cells (a giant glyph) is checked against every rectangle
instead of being put in each cell."""


def paired(text: str) -> str:
    """Text built from PDFium's characters one index at a time that holds surrogates, as
    valid Unicode. PDFium counts UTF-16 units, so an emoji comes as two lone surrogates:
    joined here into one character, as PDFium's own text calls decode it; a unit without
    its other half is dropped, as pypdfium2 drops it. Called only where surrogates were met
    (a scan of every text for them would cost more than reading it)."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")


def _single(value: float) -> float:
    return float(ctypes.c_float(value).value)


class BoundedText:
    """A page's characters, indexed to answer ``text(left, bottom, right, top)``."""

    def __init__(self, tp: object, count: int) -> None:
        import pypdfium2.raw as raw

        self.codes: list[int] = []
        self.boxes: list[tuple[float, float, float, float]] = []
        self.cells: dict[tuple[int, int], list[int]] = {}
        self.big: list[int] = []
        # The raw handle: pypdfium2's wrapper costs a Python property call per PDFium call.
        handle = getattr(tp, "raw", tp)
        unicode_of, box_of = raw.FPDFText_GetUnicode, raw.FPDFText_GetCharBox
        origin_of = raw.FPDFText_GetCharOrigin
        left, right, bottom, top = (ctypes.c_double() for _ in range(4))
        x, y = ctypes.c_double(), ctypes.c_double()
        refs = (ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top))
        origin = (ctypes.byref(x), ctypes.byref(y))
        ys: list[float] = []
        for index in range(count):
            self.codes.append(int(unicode_of(handle, index)))
            if not box_of(handle, index, *refs):
                left.value = right.value = bottom.value = top.value = 0.0
            origin_of(handle, index, *origin)
            # As PDFium normalises a rectangle before it intersects it.
            x0, x1, y0, y1 = left.value, right.value, bottom.value, top.value
            box = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
            self.boxes.append(box)
            ys.append(y.value)
            if box[0] >= box[2] or box[1] >= box[3]:
                continue  # an empty box meets no rectangle
            self._place(index, box)
        # PDFium keeps baselines in single precision: one conversion for the page.
        self.baselines: list[float] = array.array("f", ys).tolist()
        # How many characters before each index are not a space: PDFium's walk between two
        # characters that meet a rectangle asks only whether one of them is not a space.
        self.not_spaces = [0, *itertools.accumulate(c != 0x20 for c in self.codes)]
        # An emoji is two of PDFium's characters (its UTF-16 units), joined in each text
        # read; a page with none reads its texts without that step.
        self.halves = any(0xD800 <= c <= 0xDFFF for c in self.codes)

    def _place(self, index: int, box: tuple[float, float, float, float]) -> None:
        col, row = math.floor(box[0] / _CELL), math.floor(box[1] / _CELL)
        if col == math.floor(box[2] / _CELL) and row == math.floor(box[3] / _CELL):
            self.cells.setdefault((col, row), []).append(index)  # most glyphs: one cell
            return
        xs = range(math.floor(box[0] / _CELL), math.floor(box[2] / _CELL) + 1)
        ys = range(math.floor(box[1] / _CELL), math.floor(box[3] / _CELL) + 1)
        if len(xs) * len(ys) > _BIG_CELLS:
            self.big.append(index)
            return
        for cell in itertools.product(xs, ys):
            self.cells.setdefault(cell, []).append(index)

    def _matching(self, rect: tuple[float, float, float, float]) -> list[int]:
        xs = range(math.floor(rect[0] / _CELL), math.floor(rect[2] / _CELL) + 1)
        ys = range(math.floor(rect[1] / _CELL), math.floor(rect[3] / _CELL) + 1)
        found: set[int] = set()
        for cell in itertools.product(xs, ys):
            found.update(self.cells.get(cell, ()))
        found.update(self.big)
        left, bottom, right, top = rect
        boxes = self.boxes
        # PDFium's test: the intersection (emptied when inside out) is not empty, i.e. it
        # has width and height.
        return sorted(
            i
            for i in found
            if max(left, boxes[i][0]) < min(right, boxes[i][2])
            and max(bottom, boxes[i][1]) < min(top, boxes[i][3])
        )

    def text(self, left: float, bottom: float, right: float, top: float) -> str:
        """What ``FPDFText_GetBoundedText`` gives for this rectangle (its ``\\r\\n`` too)."""
        # PDFium takes the rectangle in single precision.
        left, bottom, right, top = (_single(v) for v in (left, bottom, right, top))
        rect = (min(left, right), min(bottom, top), max(left, right), max(bottom, top))
        matches = self._matching(rect)
        if not matches:
            return ""
        out: list[str] = []
        posy = 0.0
        previous = -1
        for index in matches:
            if previous < 0:
                contains_previous = False
                line_feed = self._not_spaces(0, index) > 0
            else:
                contains_previous = index == previous + 1
                if not contains_previous and self.codes[previous + 1] == 0x20:
                    out.append(" ")
                line_feed = self._not_spaces(previous + 1, index) > 0
            baseline = self.baselines[index]
            if abs(posy - baseline) > 0 and not contains_previous and line_feed:
                posy = baseline
                if out:
                    out.append("\r\n")
            code = self.codes[index]
            if code and (self.halves or not 0xD800 <= code <= 0xDFFF) and code <= 0x10FFFF:
                out.append(chr(code))
            previous = index
        if previous + 1 < len(self.codes) and self.codes[previous + 1] == 0x20:
            out.append(" ")
        return paired("".join(out)) if self.halves else "".join(out)

    def _not_spaces(self, start: int, end: int) -> int:
        """Characters in ``[start, end)`` that are not a space."""
        return self.not_spaces[end] - self.not_spaces[start]
