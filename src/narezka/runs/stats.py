"""Summary figures of a chunking run (the seed script's ``--stats`` and a few more)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from narezka.runs import ChunkReport


def percentile(values: list[int], share: float) -> int:
    """Nearest-rank percentile of integer values (0 for an empty list)."""
    if not values:
        return 0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, -(-int(share * 100) * len(ordered) // 100) - 1))
    return ordered[rank]


def total_kinds(per_file: dict[str, dict[str, int]]) -> Counter[str]:
    """Redacted secrets by kind over all files (``per_file`` as in the reports)."""
    total: Counter[str] = Counter()
    for kinds in per_file.values():
        total.update(kinds)
    return total


def chunk_stats(report: ChunkReport) -> dict[str, Any]:
    """Files, chunks, sizes and losses of a run, as JSON-friendly numbers."""
    sizes = [c.chars for c in report.chunks] + [chars for chars, _ in report.written]
    units = [c.tokens for c in report.chunks] + [tokens for _, tokens in report.written]
    total = sum(sizes)
    return {
        "files": report.files,
        "chunks": len(sizes),
        "avg_chars": round(total / len(sizes), 1) if sizes else 0,
        "total_chars": total,
        "p50_chars": percentile(sizes, 0.5),
        "p95_chars": percentile(sizes, 0.95),
        "max_chars": max(sizes, default=0),
        "max_tokens": max(units, default=0),
        "empty_files": len(report.empty_files),
        "skipped_files": len(report.skipped),
        "skipped": [{"path": e.path, "problem": e.problem} for e in report.skipped],
        "not_read_files": len(report.not_read),
        "not_read": report.not_read,
        "removed_chars": report.removed_chars,
        "secrets_redacted": sum(n for kinds in report.secrets.values() for n in kinds.values()),
        "secret_kinds": dict(total_kinds(report.secrets).most_common()),
        "secrets": report.secrets,
        "strategies": report.strategies,
        "strategy_counts": dict(Counter(report.strategies.values()).most_common()),
        "embedding": report.embedding,
    }
