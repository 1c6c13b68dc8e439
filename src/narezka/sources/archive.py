"""A Notion or Confluence export archive as a source (``narezka index space-export.zip``).

Each refresh stages the archive afresh beside the staging folder (``narezka.sources.exports``
says how each export is read) and then brings the staging folder to it: a file whose bytes
did not change is left alone (so the sync neither reads nor embeds it again), a changed one is
rewritten, and one the new export no longer holds is removed, only ever among the files this
source staged. A newer export of the same space, saved over the old archive, is a re-sync.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from narezka.errors import SourceUnavailableError, UnsafeFileError
from narezka.sources.base import STATE_FILE, CachedSource, Refresh, read_state, write_state
from narezka.sources.exports import export_kind, stage_export

__all__ = ["ArchiveSource", "is_export_archive"]


def is_export_archive(path: str | Path) -> bool:
    """Whether ``path`` is a zip file holding a Notion or Confluence export."""
    candidate = Path(path)
    if candidate.suffix.lower() != ".zip" or not candidate.is_file():
        return False
    try:
        return export_kind(candidate) is not None
    except UnsafeFileError:
        return True  # refused by name when it is read, not taken for a folder


class ArchiveSource(CachedSource):
    """The export in one zip file, staged into ``home/tree`` (see the module docstring)."""

    def __init__(
        self, archive: Path, *, link_template: str | None = None, cache: Path | None = None
    ) -> None:
        self.archive = archive.expanduser().resolve()
        self.link_template = link_template or ""
        self._settle(str(self.archive), cache)

    def refresh(self) -> Refresh:
        if not self.archive.is_file():
            raise SourceUnavailableError(self.spec, "no such export archive")
        self.staging.mkdir(parents=True, exist_ok=True)
        old = read_state(self.home / STATE_FILE)
        with tempfile.TemporaryDirectory(dir=self.home) as fresh:
            report = stage_export(self.archive, Path(fresh), self.link_template)
            fetched = [rel for rel in report.files if self._take(Path(fresh) / rel, rel)]
        deleted = []
        for rel in sorted(set(old.get("files", ())) - set(report.files)):
            target = self.staging / rel
            if target.is_file():
                target.unlink()
                deleted.append(rel)
        write_state(
            self.home / STATE_FILE,
            {"kind": report.kind, "files": report.files, "links": report.links},
        )
        self._links = report.links
        warnings = tuple(f"{self.archive.name} › {member}: {why}" for member, why in report.skipped)
        return Refresh(
            version=f"{report.kind} export, {len(report.files)} files",
            fetched=tuple(sorted(fetched)),
            deleted=tuple(deleted),
            fetched_bytes=sum((self.staging / rel).stat().st_size for rel in fetched),
            warnings=warnings,
        )

    def _take(self, fresh: Path, rel: str) -> bool:
        """Move a freshly staged file into place unless the staged copy has its bytes."""
        target = self.staging / rel
        if target.is_file() and target.read_bytes() == fresh.read_bytes():
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(fresh), str(target))
        return True

    def record(self) -> dict[str, Any]:
        return {"kind": "export", "spec": self.spec, "link_template": self.link_template}

    def _read_links(self) -> dict[str, str]:
        links = read_state(self.home / STATE_FILE).get("links")
        return {str(k): str(v) for k, v in links.items() if v} if isinstance(links, dict) else {}
