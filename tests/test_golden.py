"""Golden chunk lists for the bundled example knowledge base, one file per strategy.

Regenerate after an intended change with ``NAREZKA_UPDATE_GOLDEN=1 pytest tests/test_golden.py``
and review the diff: every changed line is a chunk that moved.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import narezka

from conftest import EXAMPLES

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "fixed": {"size": 500},
    "overlap": {"size": 500, "overlap": 80},
    "recursive": {"size": 500},
    "sentences": {"size": 500},
    "headings": {"size": 500},
    "headings-tokens": {"size": 160, "unit": "tokens"},
}


def _rows(case: str) -> list[str]:
    params = dict(CASES[case])
    strategy = case.split("-")[0]
    report = narezka.chunk_documents([EXAMPLES], strategy, **params)
    assert not report.skipped
    return [
        json.dumps(
            {
                "source": c.source,
                "index": c.index,
                "span": [c.start, c.end],
                "section": list(c.section),
                "url": c.url,
                "size": [c.chars, c.tokens],
                "hash": c.content_hash,
                "head": c.text[:48],
            },
            ensure_ascii=False,
        )
        for c in report.chunks
    ]


@pytest.mark.parametrize("case", list(CASES))
def test_example_kb_matches_golden(case: str) -> None:
    path = GOLDEN / f"{case}.jsonl"
    rows = _rows(case)
    if os.environ.get("NAREZKA_UPDATE_GOLDEN"):
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    expected = path.read_text(encoding="utf-8").splitlines()
    assert rows == expected
