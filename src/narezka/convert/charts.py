"""A chart part (DrawingML ``c:chartSpace``) → Markdown: its title, then its data as a table
(one row per category, one column per series), from the values cached in the part."""

from __future__ import annotations

from typing import Any

from narezka.convert.markdown import escape_line, inline_text, table_markdown

__all__ = ["chart_markdown"]

C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_MAX_POINTS = 10_000
"""Points read per series: a chart's cache is the data it draws, rarely past a few hundred;
a part declaring millions of indexes is cut here."""


def _title(chart: Any) -> str:
    title = chart.find(f"{C}chart/{C}title")
    if title is None:
        return ""
    texts = [t.text or "" for t in title.iter(_A + "t")] or [
        v.text or "" for v in title.iter(C + "v")
    ]
    return inline_text(" ".join(texts))


def _points(node: Any) -> dict[int, str]:
    """A cache's points by index (``c:pt idx="3"``)."""
    found: dict[int, str] = {}
    if node is None:
        return found
    for point in node.iter(C + "pt"):
        idx = point.get("idx", "")
        value = point.find(C + "v")
        if idx.isdigit() and int(idx) < _MAX_POINTS and value is not None:
            found[int(idx)] = value.text or ""
    return found


def _series_name(series: Any, number: int) -> str:
    name = series.find(C + "tx")
    texts = [v.text or "" for v in name.iter(C + "v")] if name is not None else []
    return inline_text(" ".join(texts)) or f"Series {number}"


def chart_markdown(chart: Any) -> str:
    """The chart's title (``Chart: …``) and data table; ``Chart`` alone for one without
    either."""
    title = _title(chart)
    names: list[str] = []
    labels: dict[int, str] = {}
    columns: list[dict[int, str]] = []
    for number, series in enumerate(chart.iter(C + "ser"), 1):
        names.append(_series_name(series, number))
        labels.update(_points(series.find(C + "cat")) or _points(series.find(C + "xVal")))
        columns.append(_points(series.find(C + "val")) or _points(series.find(C + "yVal")))
    indexes = sorted(set(labels).union(*columns)) if columns else []
    parts = [escape_line(f"Chart: {title}" if title else "Chart")]
    if indexes:
        rows = [["", *names]]
        rows += [[labels.get(i, ""), *(column.get(i, "") for column in columns)] for i in indexes]
        parts.append(table_markdown(rows))
    return "\n\n".join(parts)
