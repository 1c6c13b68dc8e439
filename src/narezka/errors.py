"""Exceptions raised by narezka.

::

    NarezkaError
    ├── ConfigError            bad parameters or settings (the CLI exits 2)
    │   └── UnknownStrategyError
    ├── SourceError            one input file cannot be used; the run goes on with the others
    │   ├── BinaryFileError
    │   ├── DecodeError
    │   └── ConvertError       a PDF, Word, HTML, slide or sheet file cannot be converted
    │       ├── PasswordProtectedError   encrypted and the empty password does not open it
    │       ├── NoTextLayerError         no text, or only unmapped glyphs (a scan: needs OCR)
    │       └── UnsafeFileError          a zip bomb, an XML DTD (entity expansion), too big
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
        └── StoreUnavailableError        a Qdrant server cannot be reached (URL and reason)

    NarezkaWarning (a UserWarning)  something degraded but the run went on; the pipeline
    └── MissingGrammarWarning        (narezka.split.code) records it in the run's warnings
"""

from __future__ import annotations


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


class ConvertError(SourceError):
    """A file of a convertible format (PDF, Word, HTML, slides, sheets) is truncated, corrupt or
    otherwise cannot be turned into Markdown."""


class PasswordProtectedError(ConvertError):
    """The file is encrypted and the empty password does not open it."""


class NoTextLayerError(ConvertError):
    """A PDF without text (a scan: OCR is needed) or whose text layer is unmapped glyphs."""


class UnsafeFileError(ConvertError):
    """Refused before parsing: a zip bomb, an XML DTD (entity expansion, external entities)."""


class MissingDependencyError(NarezkaError, ImportError):
    """An optional dependency is needed: the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(f"{package} is not installed: pip install 'narezka[{extra}]'")
        self.package = package
        self.extra = extra
