"""The documentation site: built with ``mkdocs build --strict`` (0 warnings: broken links and
anchors fail it), offline, and its generated references equal to what the code says."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from docs.site import DOCS, code_blocks, mkdocs_build, mkdocs_or_skip, reference_module

from conftest import REPO


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    mkdocs_or_skip()
    out = tmp_path_factory.mktemp("site")
    built = mkdocs_build(REPO / "mkdocs.yml", out)
    assert built.returncode == 0, built.stderr
    # --strict already fails on a warning; say which if one ever slips through as text.
    assert "WARNING" not in built.stderr, built.stderr
    return out


def _config() -> dict[str, Any]:
    # A `!!python/name:` tag, should the config ever hold one, is read as plain text.
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("!!", "")
    config: dict[str, Any] = yaml.safe_load(text)
    return config


def _page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_every_page_in_docs_is_built_and_in_the_navigation(site: Path) -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    config = _config()

    def listed(nav: object) -> set[str]:
        if isinstance(nav, str):
            return {nav}
        if isinstance(nav, list):
            return set().union(*(listed(x) for x in nav))
        if isinstance(nav, dict):
            return set().union(*(listed(x) for x in nav.values()))
        return set()

    assert listed(config["nav"]) == pages
    for page in pages:
        name = page.removesuffix(".md")
        built = site / ("index.html" if name == "index" else f"{name}/index.html")
        assert built.is_file(), page


def test_the_site_fetches_nothing_from_the_network(site: Path) -> None:
    config = _config()
    assert config["theme"]["font"] is False  # no Google Fonts
    external = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//")
    for page in site.rglob("*.html"):
        if page.parent.name == "api":
            continue  # pdoc's page: a plain link to pdoc.dev, no resource
        found = external.findall(page.read_text(encoding="utf-8"))
        assert not found, (page, found)


def _broken_site(tmp: Path, page: str) -> subprocess.CompletedProcess[str]:
    config = _config()
    docs = tmp / "docs"
    docs.mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\n## Present\n", encoding="utf-8")
    (docs / "other.md").write_text(page, encoding="utf-8")
    config.update(docs_dir=str(docs), nav=["index.md", "other.md"])
    config.pop("hooks")
    (tmp / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return mkdocs_build(tmp / "mkdocs.yml", tmp / "site")


@pytest.mark.parametrize(
    ("page", "complaint"),
    [
        ("# Other\n\n[gone](missing.md)\n", "missing.md"),
        ("# Other\n\n[no such heading](index.md#absent)\n", "#absent"),
        ("# Other\n\n[no such heading here](#nowhere)\n", "#nowhere"),
    ],
)
def test_a_broken_link_or_anchor_fails_the_build(tmp_path: Path, page: str, complaint: str) -> None:
    mkdocs_or_skip()
    built = _broken_site(tmp_path, page)
    assert built.returncode != 0
    assert complaint in built.stderr


def test_the_same_small_site_with_good_links_builds(tmp_path: Path) -> None:
    mkdocs_or_skip()
    built = _broken_site(tmp_path, "# Other\n\n[fine](index.md#present) [here](#other)\n")
    assert built.returncode == 0, built.stderr


def test_the_cli_reference_is_every_commands_help(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from narezka.cli import main

    reference = reference_module()
    blocks = code_blocks(_page(site, "reference/cli"))
    blocks = [b.rstrip() for b in blocks if b.startswith("Usage:")]
    paths = list(reference.commands())
    assert ("index",) in paths and ("cache", "clear") in paths
    monkeypatch.setenv("COLUMNS", reference.HELP_COLUMNS)

    def printed(path: tuple[str, ...]) -> str:
        # Loaded commands change what `narezka --help` lists: only a fresh process says.
        if not path:
            return _console_help(path)
        with pytest.raises(SystemExit) as exit_:
            main([*path, "--help"])  # the console script's entry point
        assert exit_.value.code == 0
        return capsys.readouterr().out.rstrip()

    assert blocks == [printed(path) for path in paths]
    # A few through the installed console script itself, as a user runs them.
    for path in [("index",), ("cache", "clear")]:
        assert _console_help(path) in blocks
    page = _page(site, "reference/cli")
    for path in paths:
        assert f'id="{reference.anchor(path)}"' in page, path


def _console_help(path: tuple[str, ...]) -> str:
    env = {**os.environ, "COLUMNS": reference_module().HELP_COLUMNS}
    script = shutil.which("narezka")
    command = [script] if script else [sys.executable, "-m", "narezka"]
    run = subprocess.run(
        [*command, *path, "--help"], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == 0, (path, run.stderr)
    return run.stdout.rstrip()


def test_the_http_reference_is_the_openapi_document(site: Path) -> None:
    from narezka.serve.openapi import openapi_document

    document = openapi_document()
    page = _page(site, "reference/http")
    blocks = [b for b in code_blocks(page) if b.lstrip().startswith("{")]
    assert [json.loads(b) for b in blocks] == [document]
    for route, methods in document["paths"].items():
        for method, op in methods.items():
            assert f"{method.upper()} {route}" in page
            for param in op.get("parameters", []):
                assert f"<code>{param['name']}</code>" in page, (route, param["name"])


def test_the_python_reference_lists_every_public_name(site: Path) -> None:
    import narezka

    page = _page(site, "reference/python")
    for name in narezka.__all__:
        if not name.startswith("_"):
            assert f'href="../../api/narezka.html#{name}"' in page, name
    assert (site / "api" / "narezka.html").is_file()
