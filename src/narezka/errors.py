"""Exceptions and warnings raised by narezka: every one of them can be imported from here
(those defined in a stage's own module are loaded from it on first use).

::

    NarezkaError
    ├── ConfigError            bad parameters or settings (the CLI exits 2)
    │   ├── UnknownStrategyError
    │   └── ServiceError                 (narezka.serve.errors) a request the server refuses
    │       └── NotFoundError            the chunk id or file is not in the index
    ├── SourceError            one input file cannot be used; the run goes on with the others
    │   ├── BinaryFileError
    │   ├── DecodeError
    │   ├── RefusedFileError     never opened: a link out of the corpus, a FIFO, a device
    │   └── ConvertError       a PDF, Word, HTML, slide or sheet file cannot be converted
    │       ├── PasswordProtectedError   encrypted and the empty password does not open it
    │       ├── NoTextLayerError         no text, or only unmapped glyphs (a scan: needs OCR)
    │       └── UnsafeFileError          a zip bomb, an XML DTD (entity expansion), too big
    │           └── ConversionLimitError     its conversion broke a memory, time or output limit
    ├── SourceUnavailableError a git repository (or other source) cannot be read: git is
    │   │                      missing, the url unreachable, the ref unknown (names the source)
    │   └── PageFailed                   (narezka.sources.live_http) one live page failed for
    │                                    now: its staged copy is kept
    ├── DiskFullError          too little free space to write: names the folder, device, bytes
    ├── MissingDependencyError an optional extra is not installed
    │   └── MissingModelPackageError     (narezka.embed.errors) a model wheel needs a manual step
    ├── EmbedError             (narezka.embed.errors) an embedding backend failed
    │   ├── ContextLengthError           inputs over the model's window; nothing truncated
    │   ├── InputTooLongError            an input still too long with no way to re-split it
    │   ├── ModelNotFoundError           unknown model (says how to get it: ollama pull …)
    │   └── BackendUnavailableError      host down or failing after retries (names host, model)
    ├── ContextLLMError        (narezka.enrich.llm_client) one chunk's context failed
    │   ├── LLMUnavailableError          the server cannot be reached: the run stops asking
    │   ├── LLMModelNotFoundError        the server does not know the model
    │   └── LLMReplyError                an answer with nothing usable as context
    ├── CompactionError        (narezka.index.compaction) the copy differs: the live one stays
    ├── RequestTimeoutError    (narezka.serve.errors) a served request stopped at the time limit
    └── StoreError             (narezka.store.errors) the vector index cannot be used as asked
        ├── IndexInUseError              another live process holds the index (names its PID)
        ├── DimensionMismatchError       built with another embedder's dimension: --rebuild
        ├── StoreConfigError             also a ConfigError
        ├── StoreUnavailableError        a Qdrant server cannot be reached (URL and reason)
        └── IndexDamagedError            files of the index are damaged: `narezka check`

    NarezkaWarning (a UserWarning)  something degraded but the run went on; the pipeline
    │                               records it in the run's warnings
    ├── MissingGrammarWarning        (narezka.split.code) no tree-sitter grammar: like recursive
    ├── AtomContextWarning           (narezka.split.atom_frame) a split table's header dropped
    ├── CacheDamagedWarning          (narezka.sqlite_cache) a damaged cache moved aside
    └── IndexDamagedWarning          (narezka.index.integrity) store and manifest disagree

    Exception  signals a remote embedder's request function raises to its dispatcher: public
    │          for whoever writes a request function, caught inside narezka, never raised to
    │          a caller
    ├── TransientError               (narezka.embed.remote) worth retrying: a timeout, a 5xx
    ├── LengthRejected               (narezka.embed.remote) a probe's batch refused as too long
    ├── BatchTooLarge                (narezka.embed.dispatch) refused for the batch's size
    └── PartlyRejected               (narezka.embed.dispatch) some inputs refused, others embedded

``_Bail``, ``_BadRequest``, ``_Died`` and ``_Stop`` are private signals: they never leave the
module that defines them. ``_Named`` is the private base of ``SourceError`` and
``SourceUnavailableError``, the errors that name their file or source first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Self

from narezka._lazy import lazy_exports

# The errors of a stage live beside it (a worker that chunks never loads the store's);
# this module hands each on by name, loading its module only when asked (by name, not by an
# import: those modules import this one).
_HOMES = {
    "narezka.embed.errors": (
        "BackendUnavailableError ContextLengthError EmbedError InputTooLongError "
        "MissingModelPackageError ModelNotFoundError"
    ),
    "narezka.enrich.llm_client": (
        "ContextLLMError LLMModelNotFoundError LLMReplyError LLMUnavailableError"
    ),
    "narezka.embed.dispatch": "BatchTooLarge PartlyRejected",
    "narezka.embed.remote": "LengthRejected TransientError",
    "narezka.index.compaction": "CompactionError",
    "narezka.index.integrity": "IndexDamagedWarning",
    "narezka.serve.errors": "NotFoundError RequestTimeoutError ServiceError",
    "narezka.split.atom_frame": "AtomContextWarning",
    "narezka.split.code": "MissingGrammarWarning",
    "narezka.sources.live_http": "PageFailed",
    "narezka.sqlite_cache": "CacheDamagedWarning",
    "narezka.store.errors": (
        "DimensionMismatchError IndexDamagedError IndexInUseError StoreConfigError StoreError "
        "StoreUnavailableError"
    ),
}
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)


class NarezkaWarning(UserWarning):
    """Root of narezka's warnings: the pipeline adds them to a run's report."""


class NarezkaError(Exception):
    """Root of every error narezka raises on purpose."""


class ConfigError(NarezkaError, ValueError):
    """Parameters that cannot work together, e.g. an overlap not smaller than the size."""


class UnknownStrategyError(ConfigError):
    """A strategy name that is not registered."""


class _Named(Exception):
    """An error that names one thing, a file or a source, before its ``problem``; a worker
    process sends it back, so it is rebuilt from (name, problem), not from the message."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self._name = name
        self.problem = problem

    def __reduce__(self) -> tuple[type[Self], tuple[str, str]]:
        return type(self), (self._name, self.problem)


class SourceError(_Named, NarezkaError):
    """A file that cannot be chunked; carries the file so messages can name it."""

    @property
    def path(self) -> str:
        return self._name


class BinaryFileError(SourceError):
    """The file is binary: a known binary signature (PNG, PDF, ZIP…) or mostly control bytes."""


class DecodeError(SourceError):
    """The bytes are not UTF-8 and no supported legacy encoding explains them."""


class RefusedFileError(SourceError):
    """A file narezka will not open: a symlink leading outside the corpus (unless
    ``follow_symlinks``), a FIFO, a socket or a device. Unlike a file that could not be read
    for now, what the index held under its name is removed."""


class ConvertError(SourceError):
    """A file of a convertible format (PDF, Word, HTML, slides, sheets) is truncated, corrupt or
    otherwise cannot be turned into Markdown."""


class PasswordProtectedError(ConvertError):
    """The file is encrypted and the empty password does not open it."""


class NoTextLayerError(ConvertError):
    """A PDF without text (a scan: OCR is needed) or whose text layer is unmapped glyphs."""


class UnsafeFileError(ConvertError):
    """Refused before parsing: a zip bomb, an XML DTD (entity expansion, external entities)."""


class ConversionLimitError(UnsafeFileError):
    """A conversion exceeded its memory, CPU time, wall time or output limit (or its process
    died): it was stopped, and the file is not converted again until its bytes change."""


class SourceUnavailableError(_Named, NarezkaError):
    """A whole source cannot be read: git is not installed, the repository or ref does not
    exist, the URL cannot be reached or a fetch timed out. Names the source, never its
    credentials; nothing indexed is changed."""

    @property
    def source(self) -> str:
        return self._name


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
