"""Globs over POSIX relative paths with .gitignore semantics, shared by file discovery, path
filters and path rules.

* A pattern with no slash (but a trailing one) matches a name at any depth: ``*.md`` is
  every Markdown file, ``drafts`` every file or folder named so.
* A pattern with a slash at its start or in its middle is anchored to the root:
  ``docs/*.md`` is the Markdown directly in ``docs/``; ``/todo.md`` only the top one.
* ``**/`` is any number of folders (also none), ``/**`` everything inside, ``**`` anything;
  ``*`` and ``?`` stay inside one path segment; ``[...]`` is a class (``[!...]`` negated).
* A trailing ``/`` matches folders only.
* A pattern that matches a folder matches everything inside it.

Folders are tested with a trailing slash (``"docs/"``), files without one.

Patterns come from callers of the server too, so matching must cost the same whatever the
pattern: a backtracking regex spends exponential time on ``*[a-z]*[a-z]…*!`` (55 s of CPU for
one path). :func:`compile_glob` therefore runs the pattern as an automaton, one step per
character of the path (a DFA built lazily, its states capped, then a set of NFA states): the
time is linear in the path's length for any pattern. A pattern whose regex cannot backtrack
far (``*.md``, ``docs/**``: one run of wildcards) is matched by that regex, which is faster.
:func:`glob_regex` is the same language as a regex, the reference the automaton is tested
against. A pattern longer than :data:`MAX_GLOB_CHARS` or with a malformed class is a
:class:`~narezka.errors.ConfigError`.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable, Iterator
from functools import lru_cache

from narezka.errors import ConfigError

__all__ = ["MAX_GLOB_CHARS", "Glob", "compile_glob", "glob_matches", "glob_regex", "literal_glob"]

MAX_GLOB_CHARS = 1000
"""The longest pattern accepted (any path filter, rule or include/exclude)."""
MAX_DFA_STATES = 1024
"""States a pattern's automaton keeps; past them a match steps through sets, still linear."""

# What one piece of a pattern is: one character, a run of characters (optional), or an
# optional group of the next two pieces.
_ONE, _STAR, _OPT2 = 0, 1, 2


def _tokens(pattern: str) -> Iterator[tuple[int, str, Callable[[str], bool]]]:
    """The pattern's pieces in order: (kind, regex fragment, test of one character)."""
    folder_only = pattern.endswith("/") and pattern.strip("/") != ""
    body = pattern.rstrip("/") if folder_only else pattern
    # Only a slash before the end anchors the pattern, as in .gitignore.
    anchored = "/" in body
    body = body.removeprefix("/")
    if not anchored and not body.startswith("**"):
        yield from _any_folders()
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            yield from _any_folders()
            i += 3
        elif body.startswith("**", i):
            yield _STAR, ".*", _anything
            i += 2
        elif body[i] == "*":
            yield _STAR, "[^/]*", _in_segment
            i += 1
        elif body[i] == "?":
            yield _ONE, "[^/]", _in_segment
            i += 1
        elif body[i] == "[" and (end := body.find("]", i + 2)) != -1:
            chars = body[i + 1 : end]
            negate = chars.startswith("!")
            chars = re.sub(r"([\\^\[])", r"\\\1", chars[1:] if negate else chars)
            fragment = f"[^/{chars}]" if negate else f"[{chars}]"
            try:
                one = _compile(fragment)
            except re.error as exc:
                raise ConfigError(f"{pattern!r}: not a valid glob ({exc.msg})") from None
            yield _ONE, fragment, _class_test(one)
            i = end + 1
        else:
            yield _ONE, re.escape(body[i]), body[i].__eq__
            i += 1
    # What matches a folder matches everything inside it; a folder-only pattern needs the
    # slash that only a folder's path (or a path inside it) has.
    if folder_only:
        yield _ONE, "/", "/".__eq__
        yield _STAR, ".*", _anything
    else:
        yield _OPT2, "(?:", _anything
        yield _ONE, "/", "/".__eq__
        yield _STAR, ".*)?", _anything


def _any_folders() -> Iterator[tuple[int, str, Callable[[str], bool]]]:
    """``(?:.*/)?``: any number of whole folders, also none."""
    yield _OPT2, "(?:", _anything
    yield _STAR, ".*", _anything
    yield _ONE, "/)?", "/".__eq__


def _class_test(one: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda c: one.fullmatch(c) is not None


def _compile(regex: str) -> re.Pattern[str]:
    # A class like ``[a--z]`` gets a FutureWarning about set operations Python may add; a
    # glob means what re reads today, and a warning is no news for whoever wrote the pattern.
    with warnings.catch_warnings(action="ignore", category=FutureWarning):
        return re.compile(regex, re.DOTALL)


def _anything(_: str) -> bool:
    return True


def _in_segment(c: str) -> bool:
    return c != "/"


def _check(pattern: str) -> None:
    if len(pattern) > MAX_GLOB_CHARS:
        raise ConfigError(
            f"a glob of {len(pattern)} characters is longer than the limit of {MAX_GLOB_CHARS}"
        )


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """The glob (see the module docstring) as a regex: ``fullmatch`` a path against it, a
    folder's path with a trailing ``/``. It backtracks: match with :func:`compile_glob`."""
    _check(pattern)
    return _compile("".join(fragment for _, fragment, _ in _tokens(pattern)))


class Glob:
    """A compiled glob: :meth:`matches` takes time linear in the path's length."""

    def __init__(self, pattern: str) -> None:
        _check(pattern)
        tokens = list(_tokens(pattern))
        # Most patterns (``*.md``, ``docs/**``, ``**/x/*.md``) have no two runs that can
        # share characters: a regex never backtracks far on them and is 5-10 times faster.
        self._regex = _compile("".join(t[1] for t in tokens)) if _unambiguous(tokens) else None
        pieces = [(kind, test) for kind, _, test in tokens]
        # An optional group is an empty step past its two pieces; what is left are steps.
        self._kinds = [kind for kind, _ in pieces]
        self._tests = [test for _, test in pieces]
        self._end = len(pieces)
        self._lock = threading.Lock()
        self._ids: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._moves: list[dict[str, int]] = []
        self._accepts: list[bool] = []
        self._start = self._intern(self._closure({0}))

    def matches(self, path: str) -> bool:
        """Whether the POSIX relative ``path`` (a folder's with a trailing ``/``) matches."""
        if self._regex is not None:
            return self._regex.fullmatch(path) is not None
        return self.run(path)

    def run(self, path: str) -> bool:
        """:meth:`matches` by the automaton, whatever the pattern."""
        state = self._start
        moves = self._moves
        for at, c in enumerate(path):
            next_state = moves[state].get(c)
            if next_state is None:
                next_state = self._learn(state, c)
                if next_state < 0:  # the automaton is full: go on through sets
                    return self._matches_from(self._step(self._sets[state], c), path[at + 1 :])
            state = next_state
        return self._accepts[state]

    def _matches_from(self, states: frozenset[int], rest: str) -> bool:
        for c in rest:
            if not states:
                return False
            states = self._step(states, c)
        return self._end in states

    def _learn(self, state: int, c: str) -> int:
        """The state after ``state`` on ``c``, remembered; -1 once the automaton is full."""
        with self._lock:
            known = self._moves[state].get(c)
            if known is not None:
                return known
            target = self._step(self._sets[state], c)
            if target not in self._ids and len(self._sets) >= MAX_DFA_STATES:
                return -1
            self._moves[state][c] = found = self._intern(target)
            return found

    def _intern(self, states: frozenset[int]) -> int:
        found = self._ids.get(states)
        if found is None:
            found = self._ids[states] = len(self._sets)
            self._sets.append(states)
            self._moves.append({})
            self._accepts.append(self._end in states)
        return found

    def _step(self, states: frozenset[int], c: str) -> frozenset[int]:
        moved: set[int] = set()
        for at in states:
            if at == self._end or not self._tests[at](c):
                continue
            moved.add(at + 1 if self._kinds[at] == _ONE else at)
        return self._closure(moved)

    def _closure(self, states: set[int]) -> frozenset[int]:
        """``states`` with every state reachable without reading a character."""
        todo = list(states)
        seen = set(states)
        while todo:
            at = todo.pop()
            if at == self._end:
                continue
            kind = self._kinds[at]
            skips = (at + 1,) if kind == _STAR else (at + 1, at + 3) if kind == _OPT2 else ()
            for nxt in skips:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        # An optional group's marker reads nothing: only its pieces and the others stay.
        return frozenset(s for s in seen if s == self._end or self._kinds[s] != _OPT2)


def _unambiguous(tokens: list[tuple[int, str, Callable[[str], bool]]]) -> bool:
    """Whether the regex of ``tokens`` runs in time linear in the path (times the pattern):
    at most one run of characters, or any folders (``(?:.*/)?``, tried at each slash) then
    one run inside a segment. The end (what is inside a folder) runs to the end of the path
    and never backs up."""
    end = 2 if tokens[-1][1] == ".*" else 3
    runs = [
        "folders" if at and tokens[at - 1][0] == _OPT2 else fragment
        for at, (kind, fragment, _) in enumerate(tokens[:-end])
        if kind == _STAR
    ]
    return len(runs) <= 1 or runs == ["folders", "[^/]*"]


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> Glob:
    """The glob compiled once (cached); a :class:`~narezka.errors.ConfigError` if it is too
    long or malformed."""
    return Glob(pattern)


def literal_glob(path: str) -> str:
    """A glob matching exactly the POSIX relative ``path`` (and what is inside it): anchored
    to the root, its ``*``, ``?`` and ``[`` taken literally."""
    return "/" + re.sub(r"([*?\[])", r"[\1]", path.strip("/"))


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the POSIX relative ``path`` (a folder's with a trailing ``/``) matches."""
    return compile_glob(pattern).matches(path)
