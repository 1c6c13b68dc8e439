"""Inline marks inside a line: monospace runs as code spans, bold runs as strong emphasis,
told from each character's font."""

from __future__ import annotations

import bisect
import ctypes
import math
import re
from collections.abc import Callable
from functools import lru_cache

from narezka.convert.pdf.base import _MONO, _WORD_SPAN

_BOLD_NAME = re.compile(
    r"bold|black|heavy|demi|semibold|-medi(?:um)?(?:$|[^a-z])|(?:^|\+)(?:cm|sf|ec|tc|lm)bx|(?:^|\+)cmb\d|[-,]bd(?:$|[-,])",
    re.IGNORECASE,
)
"""A bold face by its name: ``Arial-BoldMT``, ``Calibri,Bold``, TeX's ``CMBX12`` and
``SFBX1440`` (cm-super, the Cyrillic faces), Times' bold ``NimbusRomNo9L-Medi``."""
_FORCE_BOLD = 1 << 18
"""The font descriptor's ForceBold flag."""


def _bold_face(name: str, flags: int) -> bool:
    """Bold by the font's name or its ForceBold flag only. PDFium's font weight is guessed
    from the stem width when a font does not state it, and that guess made plain text of a
    lecture bold."""
    return bool(flags & _FORCE_BOLD) or _bold_name(name)


def _size(tp: object, index: int) -> float:
    """The character's printed size: the font size times the text matrix's vertical scale.
    A generator that sets the font at size 1 and scales the matrix (InDesign, Chromium) gets
    its real size so, not 1."""
    import pypdfium2.raw as raw

    size = float(raw.FPDFText_GetFontSize(tp, index))
    matrix = raw.FS_MATRIX()
    if raw.FPDFText_GetMatrix(tp, index, ctypes.byref(matrix)):
        scale = math.hypot(matrix.c, matrix.d)
        if scale > 0:
            size *= scale
    return size


def _font(faces: _Faces, index: int) -> tuple[float, bool, bool]:
    """Printed size, bold and monospace of the character at ``index``."""
    name, flags = faces.at(index)
    mono = bool(flags & 1) or _mono_name(name)
    return _size(faces.handle, index), _bold_face(name, flags), mono


class _Units:
    """Python string indexes of a page's text as PDFium's text indexes, which count UTF-16
    units: after an emoji or another astral character they are one further on (reading
    fonts at the string's index picked the next character's: "Install `S`QLModel")."""

    def __init__(self, text: str) -> None:
        self.astral = [i for i, ch in enumerate(text) if ord(ch) > 0xFFFF]

    def __call__(self, index: int) -> int:
        return index + bisect.bisect_left(self.astral, index) if self.astral else index


def _char(tp: object, units: _Units, index: int) -> int:
    """PDFium's character index of the page text's character at string ``index``."""
    import pypdfium2.raw as raw

    return int(raw.FPDFText_GetCharIndexFromTextIndex(tp, units(index)))


@lru_cache(maxsize=256)
def _mono_name(name: str) -> bool:
    return bool(_MONO.search(name))


@lru_cache(maxsize=256)
def _bold_name(name: str) -> bool:
    return bool(_BOLD_NAME.search(name))


@lru_cache(maxsize=1)
def _text_object() -> Callable[[int | None, int], int | None]:
    """PDFium's ``FPDFText_GetTextObject`` giving the object's address (None for none):
    pypdfium2's binding gives a pointer object, which costs more to turn into a key than
    the call itself."""
    import pypdfium2.raw as raw

    address = ctypes.c_void_p
    function = ctypes.cast(raw.FPDFText_GetTextObject, address).value or 0
    prototype = ctypes.CFUNCTYPE(address, address, ctypes.c_int)
    return prototype(function)


class _Faces:
    """The faces of a page's characters, each read from PDFium once: code and bold marks ask
    about the same characters. ``handle`` is the text page's raw handle: pypdfium2's
    wrapper object costs a Python property call on every PDFium call made with it, and a
    page makes thousands."""

    def __init__(self, tp: object, units: _Units) -> None:
        self.handle = tp.raw  # type: ignore[attr-defined]
        self.address = ctypes.cast(self.handle, ctypes.c_void_p).value
        self.objects: dict[int | None, tuple[str, int]] = {}
        self.units = units
        self.seen: dict[int, tuple[str, int] | None] = {}
        # One buffer for every name: PDFium copies a name only when it fits (under 256
        # bytes, as ``at`` reads it), so a call that returns the length fills it too.
        self.buffer = ctypes.create_string_buffer(256)
        self.flags = ctypes.c_int(0)
        self.flags_ref = ctypes.byref(self.flags)
        self.stretch: tuple[int, int, int] | None = None
        """PDFium's text indexes ``[0]`` to ``[1]`` are its character indexes from ``[2]``
        on, one for one (``span``)."""

    def span(self, first: int, last: int) -> None:
        """Let ``face`` take the characters from string index ``first`` to ``last`` (one
        line) as PDFium's ends say, not a PDFium call each: PDFium's text-to-character map
        skips characters and never goes back (consecutive runs of indexes), so ends as far
        apart as the text's have every index between one for one."""
        import pypdfium2.raw as raw

        start, end = self.units(first), self.units(last)
        begins = int(raw.FPDFText_GetCharIndexFromTextIndex(self.handle, start))
        ends = int(raw.FPDFText_GetCharIndexFromTextIndex(self.handle, end))
        one_for_one = begins >= 0 and ends - begins == end - start
        self.stretch = (start, end, begins) if one_for_one else None

    def at(self, index: int) -> tuple[str, int]:
        """The font name and descriptor flags of the character at PDFium's ``index``: its
        text object's (PDFium reads them from the object's font, none for no object), read
        once per object."""
        key = _text_object()(self.address, index)
        face = self.objects.get(key)
        if face is None:
            face = self.objects[key] = self._read(index)
        return face

    def _read(self, index: int) -> tuple[str, int]:
        import pypdfium2.raw as raw

        self.flags.value = 0
        need = raw.FPDFText_GetFontInfo(self.handle, index, self.buffer, 256, self.flags_ref)
        if not 0 < need < 256:
            return "", self.flags.value
        return self.buffer.value.decode("latin-1"), self.flags.value

    def face(self, text_index: int) -> tuple[str, int] | None:
        """The face of the page text's character at string index ``text_index``."""
        if text_index not in self.seen:
            unit, stretch = self.units(text_index), self.stretch
            if stretch is not None and stretch[0] <= unit <= stretch[1]:
                index = stretch[2] + unit - stretch[0]
            else:
                index = _char(self.handle, self.units, text_index)
            self.seen[text_index] = self.at(index) if index >= 0 else None
        return self.seen[text_index]

    def mono(self, text_index: int) -> bool:
        """Whether the character is in a monospace font."""
        face = self.face(text_index)
        return face is not None and (bool(face[1] & 1) or _mono_name(face[0]))

    def bold(self, text_index: int) -> bool:
        """Whether the character is set in a bold face (``_bold_face``)."""
        face = self.face(text_index)
        return face is not None and (bool(face[1] & _FORCE_BOLD) or _bold_name(face[0]))


def _flagged(line: str, flag: Callable[[int], bool]) -> list[list[int]]:
    """The spans of ``line`` whose characters ``flag`` (by index in the line), over whole
    words and the blanks between them. A word is checked at its first, middle and last
    character, and letter by letter only where those differ."""
    spans: list[list[int]] = []
    for word in _WORD_SPAN.finditer(line):
        a, b = word.start(), word.end()
        head, tail = flag(a), flag(b - 1)
        if head and tail:
            found = [(a, b)]
        elif head or tail or (b - a > 2 and flag((a + b) // 2)):  # "(**required**):"
            flags = [flag(k) for k in range(a, b)]
            found = []
            for k, on in enumerate(flags):
                if on and (k == 0 or not flags[k - 1]):
                    found.append((a + k, a + k + 1))
                elif on:
                    found[-1] = (found[-1][0], a + k + 1)
        else:
            continue
        for s, e in found:
            if spans and not line[spans[-1][1] : s].strip():
                spans[-1][1] = e  # "allow_origins = ['*']": one span over several words
            else:
                spans.append([s, e])
    return spans


def _inline_marks(faces: _Faces, line: str, start: int) -> str:
    """``line`` (at ``start`` in the page's text) with its monospace runs as code spans (the
    `name` a document sets in a code font inside a sentence) and its bold runs as strong
    emphasis (**this**). A line bold from end to end (a heading, a bold paragraph) gets no
    marks: its weight is the line's own, told by ``_Line.bold``."""
    if line.strip():
        first = len(line) - len(line.lstrip())
        faces.span(start + first, start + len(line.rstrip()) - 1)
    code = _flagged(line, lambda k: faces.mono(start + k))
    bold = _flagged(line, lambda k: faces.bold(start + k))
    text = line.strip()
    first = len(line) - len(line.lstrip())
    if len(bold) == 1 and bold[0] == [first, first + len(text)]:
        bold = []
    bold = [b for b in bold if not any(b[0] < c[1] and c[0] < b[1] for c in code)]
    marks = sorted([(s, e, "code") for s, e in code] + [(s, e, "bold") for s, e in bold])
    if not marks:
        return line
    out, at = [], 0
    for s, e, kind in marks:
        inner = line[s:e]
        if kind == "bold":
            out += [line[at:s], "**", inner, "**"]
        else:
            fence = "``" if "`" in inner else "`"
            pad = " " if fence == "``" else ""
            out += [line[at:s], fence, pad, inner, pad, fence]
        at = e
    out.append(line[at:])
    return "".join(out)
