"""``--plot``: hit@k (and IoU for span golden sets) against mean chunk size in tokens, one line
per strategy across a sweep's sizes, a point for a strategy run at one size.

matplotlib is an optional extra (``narezka[plot]``), imported only here and only when a plot is
asked for; it draws with the Agg backend through its object API, so no display and no global
pyplot state are involved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from narezka.errors import MissingDependencyError
from narezka.evaluate.normalize import Metric, groups
from narezka.evaluate.runner import EvalRun


def require_matplotlib() -> None:
    """Raise :class:`MissingDependencyError` naming the ``plot`` extra when matplotlib is
    missing; call before a long run that ends in a plot."""
    _agg()


def _agg() -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError("matplotlib", "plot") from None
    return Figure, FigureCanvasAgg


def _panels(run: EvalRun) -> list[tuple[str, Metric]]:
    k = run.headline_k
    panels: list[tuple[str, Metric]] = [(f"hit@{k}", lambda s: s.hits[k])]
    if run.spans:
        panels.append((f"IoU@{k} (characters)", lambda s: s.span[k].iou if k in s.span else 0.0))
    return panels


def plot_run(run: EvalRun, path: str | Path) -> Path:
    """Write the plot as a PNG (or any format matplotlib infers from the suffix)."""
    figure_cls, canvas_cls = _agg()
    panels = _panels(run)
    fig = figure_cls(figsize=(6.4 * len(panels), 4.8), layout="constrained")
    canvas_cls(fig)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    model = run.embedder.split("@")[0]
    for ax, (title, metric) in zip(axes, panels, strict=True):
        for number, (name, results) in enumerate(groups(run).items()):
            points = sorted(
                ((s.tokens.mean, 100 * metric(s), s.spec.params.get("size")) for s in results),
                key=lambda p: (p[0], p[1]),
            )
            xs = [p[0] for p in points]
            ys = [p[1] for p in points]
            if len(points) > 1:
                (line,) = ax.plot(xs, ys, marker="o", label=name)
                for x, y, size in points:
                    ax.annotate(
                        str(size),
                        (x, y),
                        textcoords="offset points",
                        # Alternate above and below so labels of lines that meet stay legible.
                        xytext=(0, 6) if number % 2 == 0 else (0, -12),
                        ha="center",
                        fontsize=7,
                        color=line.get_color(),
                    )
            else:
                ax.plot(xs, ys, marker="s", linestyle="none", markersize=7, label=name)
        ax.set_title(title)
        ax.set_xlabel(f"mean chunk size (tokens of {model})")
        ax.set_ylabel(f"{title.split()[0]} (%)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    best = run.best()
    n = len(best.questions) if best else 0
    sweep = f", sizes {','.join(map(str, run.sizes))}" if run.sizes else ""
    fig.suptitle(f"{n} questions · {run.mode} · {model}{sweep}", fontsize=10)
    out = Path(path)
    fig.savefig(out, dpi=120)
    return out


__all__ = ["plot_run", "require_matplotlib"]
