"""What every command shares: exit codes, the one error path, the splitting options.

Exit codes (the README has the same table)::

    0    success
    1    nothing found (search), a file was skipped and --strict was given, or check found
         damage it did not repair
    2    usage or configuration error: bad option, missing path, empty query, no index; too
         little free space; damaged index files
    130  interrupted (Ctrl-C); whatever was committed to the index stays searchable

A closed pipe (``narezka chunk … | head``) ends quietly with 0.

The splitting options come as one decorator, so a setting tuned with ``narezka chunk`` can be
passed to ``index`` and ``eval`` as it is. Every default there is None ("not given"): each
command resolves them through :func:`narezka.settings.chunk_config` (``chunk``: 800
characters; ``index``: the embedder's budget in its tokens; :mod:`narezka.defaults` holds
them), and an index records the values it used so ``sync`` repeats them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

import narezka.defaults as defaults
from narezka import environment
from narezka.cli.terminal import echo
from narezka.errors import ConfigError

if TYPE_CHECKING:
    from narezka.settings import Resolved, Settings

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_NOTHING = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def fail(exc: Exception) -> NoReturn:
    """Report a library error the way every command does: one line, exit status 2."""
    echo(f"Error: {exc}", err=True)
    sys.exit(EXIT_USAGE)


def _levels(_: click.Context, __: click.Parameter, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    lo, _sep, hi = value.partition("-")
    try:
        return int(lo), int(hi or lo)
    except ValueError:
        raise click.BadParameter(f"expected FROM-TO like 2-3, got {value!r}") from None


def _separators(_: click.Context, __: click.Parameter, value: Sequence[str]) -> tuple[str, ...]:
    # Shells make typing a newline awkward: accept backslash escapes like ``\n``.
    return tuple(s.encode("latin-1", "backslashreplace").decode("unicode_escape") for s in value)


@cache
def _options() -> list[Callable[[F], F]]:
    # Built on first use, not at import: the strategy names load the split stage, which
    # ``import narezka.cli`` (``narezka --help``, a --jobs worker's start) does not need.
    from narezka.split import SENTENCE, strategy_names

    return [
        click.option(
            "--strategy",
            "-s",
            type=click.Choice(strategy_names()),
            default=None,
            help=f"How to split  [default: {defaults.STRATEGY}, or narezka.toml / "
            "NAREZKA_STRATEGY].",
        ),
        click.option(
            "--size",
            type=int,
            default=None,
            help="Maximum size of each chunk's embed_text, in --unit  [default: chunk: "
            f"{defaults.SIZE} {defaults.PREVIEW_UNIT}; index: the embedder's budget in its "
            "tokens].",
        ),
        click.option(
            "--unit",
            type=click.Choice(["chars", "tokens"]),
            default=None,
            help=f"Unit of --size  [default: chunk: {defaults.PREVIEW_UNIT}; index: "
            f"{defaults.UNIT}].",
        ),
        click.option(
            "--tokenizer",
            default=None,
            help=f"With --unit tokens: a tiktoken encoding ({defaults.TOKENIZER}) or a "
            "tokenizer.json path; default: the embedder's own tokenizer.",
        ),
        click.option(
            "--overlap",
            type=int,
            default=None,
            help="Units each chunk repeats from the previous one (overlap, recursive, sentences).",
        ),
        click.option(
            "--levels",
            callback=_levels,
            default=None,
            help="Heading levels that open sections, e.g. 2-3  [default: "
            f"{defaults.LEVELS[0]}-{defaults.LEVELS[1]}].",
        ),
        click.option(
            "--min-chars",
            type=int,
            default=None,
            help="Merge chunks shorter than this into a neighbour when they fit (headings)  "
            f"[default: {defaults.MIN_CHARS}].",
        ),
        click.option(
            "--breadcrumbs/--no-breadcrumbs",
            default=None,
            help="Prefix the section path to embed_text (default: the strategy's own: on for "
            "headings, parent-child, semantic, code and legal).",
        ),
        click.option(
            "--threshold",
            type=float,
            default=None,
            help="semantic: cut where neighbouring sentences' cosine similarity drops below this.",
        ),
        click.option(
            "--percentile",
            type=float,
            default=None,
            help="semantic: cut at the lowest PERCENTILE percent of neighbour similarities.",
        ),
        click.option(
            "--parent-size",
            type=int,
            default=None,
            help="parent-child: the parents' size limit, in --unit  [default: 4 × --size].",
        ),
        click.option(
            "--separator",
            "separators",
            multiple=True,
            callback=_separators,
            help="recursive: a separator, coarsest first (repeatable; '\\n' escapes work; "
            f"'{SENTENCE}' means sentence ends).",
        ),
        click.option(
            "--include",
            multiple=True,
            help="Glob of files to read (repeatable; .gitignore-style: '*.md' at any depth, "
            "'docs/*.md' from the corpus root)  [default: the strategy's: Markdown and text; "
            "code reads source files, chat JSON/JSONL/text, auto all of them].",
        ),
        click.option(
            "--exclude", multiple=True, help="Glob of files or folders to skip (as --include)."
        ),
        click.option(
            "--follow-symlinks",
            is_flag=True,
            default=None,
            help="Also read what symlinks lead to outside the corpus (by default such a link is "
            "named as skipped; links inside the corpus are always followed).",
        ),
        click.option(
            "--context-llm",
            default=None,
            metavar="SPEC",
            help="Prepend one or two sentences an LLM writes about each chunk's place in its "
            "document to embed_text, within --size: ollama:MODEL[@HOST], openai:MODEL@URL, or off  "
            "[default: off, or narezka.toml / NAREZKA_CONTEXT_LLM]. Cached; an estimate is printed "
            "first.",
        ),
        click.option(
            "--no-redact",
            "redact",
            flag_value=False,
            default=None,
            help="Keep secrets (keys, tokens, passwords) in embed_text and the stored text instead "
            "of [REDACTED:kind].",
        ),
        click.option(
            "--trust-corpus-config",
            is_flag=True,
            default=None,
            help="Let the corpus's own narezka.toml set safety settings (follow_symlinks, "
            "redact = false, a model that sends text off this machine), refused from it "
            "otherwise; also NAREZKA_TRUST_CORPUS=1, or [trust] in your own config file.",
        ),
    ]


def file_option(*names: str, help: str, required: bool = False) -> Callable[[F], F]:
    """An option naming one file (never a folder) as a ``Path``; None when not given."""
    return click.option(
        *names,
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        required=required,
        help=help,
    )


def format_option(*formats: str, help: str | None = None) -> Callable[[F], F]:
    """``--format`` (into ``fmt``): one of ``formats``, the first by default."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(formats)),
        default=formats[0],
        show_default=True,
        help=help,
    )


def _jobs_or_environment(_: click.Context, __: click.Parameter, jobs: int | None) -> int | None:
    # NAREZKA_JOBS counts as --jobs N; read here, at the top, and handed down as jobs.
    return jobs if jobs is not None else environment.current().jobs


def jobs_option(command: F) -> F:
    """``--jobs N``: worker processes that read and chunk files side by side."""
    return click.option(
        "--jobs",
        "-j",
        type=click.IntRange(min=1),
        default=None,
        callback=_jobs_or_environment,
        help="Worker processes that read and chunk files side by side; the output is the same "
        "for any N  [default: NAREZKA_JOBS, else by the input's size: 1 below 2 MB, then one "
        "more per 2 MB, up to the machine's cores].",
    )(command)


def split_options(*, strategy: bool = True) -> Callable[[F], F]:
    """Add the shared splitting options (``strategy=False`` leaves out ``--strategy``, for
    ``eval``, whose specs name their strategies)."""

    def decorate(func: F) -> F:
        for option in reversed(_options()[0 if strategy else 1 :]):
            func = option(func)
        return func

    return decorate


def split_values(options: Mapping[str, Any]) -> dict[str, Any]:
    """The split parameters that were given (None and empty values left out)."""
    from narezka.settings import SPLIT_FIELDS  # the settings load the chunking stage

    return {key: options[key] for key in SPLIT_FIELDS if options.get(key) not in (None, (), [])}


def settings_for(
    location: str | Path | None,
    options: Mapping[str, Any],
    *,
    base: Mapping[str, Any] | None = None,
) -> Settings:
    """The settings of a run: defaults → ``base`` (the command's own: ``chunk`` measures in
    characters) → the user's config → ``narezka.toml`` of ``location`` (a corpus folder, or
    a file's folder) → ``NAREZKA_*`` → the flags that were given."""
    return resolved_for(location, options, base=base).settings


def resolved_for(
    location: str | Path | None,
    options: Mapping[str, Any],
    *,
    base: Mapping[str, Any] | None = None,
) -> Resolved:
    """:func:`settings_for`, with where each setting came from."""
    from narezka.settings import resolve  # as in split_values

    root = None
    if location is not None:
        path = Path(location)
        root = path if path.is_dir() else path.parent
    include, exclude = file_globs(options)
    flags = {
        **split_values(options),
        "strategy": options.get("strategy"),
        "embedder": options.get("embedder"),
        "bm25": options.get("bm25"),
        "context_llm": options.get("context_llm"),
        "rescore": options.get("rescore"),
        "include": include,
        "exclude": exclude or None,
        "follow_symlinks": options.get("follow_symlinks") or None,
    }
    try:
        return resolve(root, base=base, trust=options.get("trust_corpus_config"), **flags)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


def file_globs(options: Mapping[str, Any]) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """``(include or None, exclude)`` from the options."""
    return tuple(options.get("include") or ()) or None, tuple(options.get("exclude") or ())
