"""The URL a reader opens for a hit in a repository: the file at the indexed commit, at its
lines, on the forge that hosts it (GitHub, GitLab, Bitbucket, Gitea/Forgejo), or by a template
the user gives for any other host.

A template names ``{commit}``, ``{path}`` (URL-quoted), and, for the lines, ``{first}`` and
``{last}``; the part from ``#`` on is dropped when the lines are not known.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

FORGES: dict[str, str] = {
    "github.com": "{base}/blob/{commit}/{path}#L{first}-L{last}",
    "gitlab.com": "{base}/-/blob/{commit}/{path}#L{first}-{last}",
    "bitbucket.org": "{base}/src/{commit}/{path}#lines-{first}:{last}",
    "codeberg.org": "{base}/src/commit/{commit}/{path}#L{first}-L{last}",
    "gitea.com": "{base}/src/commit/{commit}/{path}#L{first}-L{last}",
}
"""Known forges by host: the file at a commit, at its lines (Codeberg and gitea.com run
Gitea/Forgejo; a self-hosted one takes ``--link-template``)."""
_FIELDS = ("commit", "path", "first", "last")


def forge_template(url: str) -> str | None:
    """The link template of a repository URL on a known forge (its ``{base}`` filled in:
    ``https://host/org/repo``); None for another host or a local repository."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().removeprefix("www.")
    template = FORGES.get(host)
    if template is None:
        return None
    path = parts.path.rstrip("/").removesuffix(".git")
    if path.count("/") < 2:  # no owner/repository: nothing to link to
        return None
    return template.replace("{base}", f"https://{host}{path}")


def check_template(template: str) -> str:
    """``template`` if it names only the known fields (a typo would fail at the first hit
    instead); raises ValueError naming the field otherwise."""
    try:
        template.format(commit="c", path="p", first=1, last=2)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"link template {template!r}: unknown field {exc} (use {{commit}}, {{path}}, "
            "{first}, {last})"
        ) from None
    return template


def render_link(template: str, *, commit: str, path: str, lines: tuple[int, int] | None) -> str:
    """The link of ``path`` at ``commit``, at ``lines`` (first, last; 1-based) when known."""
    if lines is None:
        template = template.split("#", 1)[0]
    first, last = lines if lines is not None else (1, 1)
    return template.format(commit=commit, path=quote(path), first=first, last=last)


def line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The 1-based lines a span of ``text`` covers (its last character's line: a span ending
    in a newline does not reach the next line)."""
    first = text.count("\n", 0, start) + 1
    last = first + text.count("\n", start, max(start, end - 1))
    return first, last
