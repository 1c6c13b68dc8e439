"""The package's shape: packages import only downward (the floors below, drawn in
docs/architecture.md), no import circles between modules, and the split stage never reaches
the embed stage (the chunk runs pass embed functions in)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, *, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from narezka import runs`` imports the module narezka.runs, not the package's
            # __init__ names (its __init__ runs, as every parent package's does, but that is
            # no arrow: it imports nothing from the modules below).
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]
            named = [m for m in submodules if (SRC / (m.replace(".", "/") + ".py")).is_file()]
            named += [m for m in submodules if (SRC / m.replace(".", "/")).is_dir()]
            found.update(named)
            if len(named) < len(submodules):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.If) and top_level_only:  # TYPE_CHECKING blocks do not run
            continue
    return {m for m in found if m == "narezka" or m.startswith("narezka.")}


def _graph(*, top_level_only: bool) -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in (SRC / "narezka").rglob("*.py")}
    # A compiled module (the native core) is known by its stub: it imports nothing of ours.
    for stub in (SRC / "narezka").rglob("*.pyi"):
        modules.setdefault(_module_name(stub), stub)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path, top_level_only=top_level_only):
            # ``from narezka.x import y`` may name a module x.y or a name in x.
            target = imported if imported in modules else imported.rpartition(".")[0]
            if target in modules and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            # A package's __init__ importing its own submodules is how packages work.
            if node.startswith(nxt + "."):
                continue
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circle_between_modules() -> None:
    graph = _graph(top_level_only=False)  # lazy imports count: they still make a circle
    assert _cycle(graph) is None, " → ".join(_cycle(graph) or [])


def test_the_split_stage_never_imports_the_embed_stage() -> None:
    graph = _graph(top_level_only=False)
    leaks = {
        (module, target)
        for module, targets in graph.items()
        if module.startswith("narezka.split")
        for target in targets
        if target.startswith("narezka.embed")
    }
    assert not leaks


def test_parse_exports_exactly_its_all() -> None:
    import narezka.parse as parse

    public = {n for n in vars(parse) if not n.startswith("_") and callable(getattr(parse, n))}
    assert set(parse.__all__) == public


FLOORS: tuple[tuple[str, ...], ...] = (
    (
        "types",
        "_lazy",
        "_forward",
        "_native",
        "_core",
        "errors",
        "globs",
        "diskspace",
        "sqlite_cache",
        "pages",
        "defaults",
        "environment",
        "formats",
    ),
    ("tokens", "parse"),
    ("convert",),
    ("discover",),
    ("split",),
    ("embed",),
    ("enrich",),
    ("config", "sources"),
    ("store",),
    ("search", "evaluate"),
    ("runs",),
    ("settings",),
    ("index",),
    ("api",),
    ("inspector",),
    ("serve", "integrations"),
    ("__init__",),
    ("cli",),
    ("__main__",),
)
"""narezka's packages and top-level modules from the ground up: each may import those on its
own floor and the floors below it only (circles are caught above). docs/architecture.md draws
the same floors."""

FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}


def _unit(module: str) -> str:
    """The package or top-level module of narezka that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_package_has_a_floor() -> None:
    units = {_unit(name) for name in _graph(top_level_only=False)}
    assert units == set(FLOOR), (units - set(FLOOR), set(FLOOR) - units)


def test_packages_import_only_downward() -> None:
    # Lazy imports count too: an import inside a function is still an arrow up.
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _graph(top_level_only=False).items()
        for target in targets
        if FLOOR[_unit(target)] > FLOOR[_unit(module)]
    )
    assert not upward, "\n".join(upward)


def test_the_architecture_document_draws_these_floors() -> None:
    drawing = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for level, units in enumerate(FLOORS):
        row = f"| {level} | " + ", ".join(f"`{u}`" for u in units) + " |"
        assert row in drawing, f"docs/architecture.md lacks the row {row!r}"


def test_commands_reach_no_lower_than_the_package_faces() -> None:
    # A command imports narezka's public names, a package's face (narezka.index, not
    # narezka.index.syncing) and its own package: never a module below a face.
    faces = {f"narezka.{unit}" for unit in FLOOR if unit not in ("__init__", "__main__")}
    below = sorted(
        f"{module} -> {target}"
        for module, targets in _graph(top_level_only=False).items()
        if module.startswith("narezka.cli")
        for target in targets
        if target != "narezka" and target not in faces and not target.startswith("narezka.cli")
    )
    assert not below, "\n".join(below)


def test_every_name_the_commands_take_from_a_face_is_in_its_all() -> None:
    # A face loads most names on first use (__getattr__), so a type checker reading its
    # TYPE_CHECKING imports cannot catch a name it does not export: a missing one would fail
    # only when its command runs.
    import importlib

    taken: dict[str, set[str]] = {}
    for path in (SRC / "narezka" / "cli").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("narezka.")
                and not node.module.startswith("narezka.cli")
            ):
                taken.setdefault(node.module, set()).update(a.name for a in node.names)
    assert len(taken) > 8  # the reader sees the commands' imports at all
    missing = {}
    for face, names in taken.items():
        module = importlib.import_module(face)
        # A top-level module without __all__ (errors, settings) exports its public names.
        public = {n for n in dir(module) if not n.startswith("_")}
        exported = set(getattr(module, "__all__", public))
        if lacking := {n for n in names if n not in exported}:
            missing[face] = lacking
        assert all(getattr(module, n) is not None for n in names & exported)
    assert missing == {}
