"""Read the dev suite's manifest (``suite.json``): its corpora, golden files and held-out files.

One place for what the validator (``benchmarks/ru_devset/validate.py --suite``) and the runner
(``benchmarks/devsuite.py``) both need. Paths in the manifest are relative to the folder its
``root`` names: ``repo`` (this repository) or ``shared`` (``$NAREZKA_SHARED``, else the
``shared/`` folder beside the repository).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MANIFEST = HERE / "suite.json"


def shared_root() -> Path:
    """``$NAREZKA_SHARED``, else ``shared/`` beside the repository."""
    return Path(os.environ.get("NAREZKA_SHARED", REPO.parent / "shared"))


@dataclass(frozen=True, slots=True)
class Corpus:
    """One corpus of the suite, its paths resolved."""

    name: str
    root: Path
    language: str
    genre: str
    golden: tuple[Path, ...]
    near: Path | None
    held_out: tuple[str, ...]
    """Files or folders relative to ``root``; a folder holds out everything inside it."""
    exclude: tuple[str, ...] = ()
    """Files of ``root`` that are not documents (a golden set kept inside the corpus)."""
    chroma_id: str | None = None
    """For Chroma's corpora: the ``corpus_id`` whose questions (and ``<id>.md``) this is."""

    @property
    def include(self) -> tuple[str, ...] | None:
        """The globs to index: Chroma's corpora share one folder, one file each."""
        return (f"{self.chroma_id}.md",) if self.chroma_id else None

    def is_held_out(self, source: str) -> bool:
        """Whether ``source`` (relative to the corpus root) is held out of the index."""
        return any(source == h or source.startswith(h.rstrip("/") + "/") for h in self.held_out)


@dataclass(frozen=True, slots=True)
class Suite:
    """The manifest: corpora plus how far-unanswerable questions are drawn."""

    corpora: tuple[Corpus, ...]
    far_per_corpus: int
    far_seed: int

    def get(self, name: str) -> Corpus:
        """The corpus called ``name``; ValueError naming the known ones otherwise."""
        for corpus in self.corpora:
            if corpus.name == name:
                return corpus
        raise ValueError(f"no corpus {name!r} (one of {', '.join(c.name for c in self.corpora)})")


def load_suite(path: Path = MANIFEST, shared: Path | None = None) -> Suite:
    """Parse the manifest at ``path``; ValueError naming the file and the bad entry."""
    bases = {"repo": REPO, "shared": shared or shared_root()}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        corpora = []
        for entry in data["corpora"]:
            base = bases[entry["root"]]
            golden_base = bases[entry.get("golden_root", "repo")]
            near = entry.get("near")
            corpora.append(
                Corpus(
                    name=entry["name"],
                    root=base / entry["path"],
                    language=entry["language"],
                    genre=entry["genre"],
                    golden=tuple(golden_base / g for g in entry["golden"]),
                    near=REPO / near if near else None,
                    held_out=tuple(entry["held_out"]),
                    exclude=tuple(entry.get("exclude", ())),
                    chroma_id=entry.get("chroma_id"),
                )
            )
        far = data["far"]
        return Suite(tuple(corpora), int(far["per_corpus"]), int(far["seed"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: bad suite manifest ({type(exc).__name__}: {exc})") from exc
