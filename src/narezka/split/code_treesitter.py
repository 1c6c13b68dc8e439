"""Outlines of JavaScript, TypeScript, Go, Rust and Java through tree-sitter grammars.

The grammars come from PyPI wheels (``pip install 'narezka[code]'``). One walker serves every
language: the items of a block are the named children of block-like nodes (statement blocks,
class bodies, impl declaration lists, switch bodies…) reached without crossing another such
node, so ``if``/``else`` chains, callbacks and nested classes all yield their statements.
Only the tables below differ per language: which nodes are blocks, which are definitions and
what they are called, and which attach to the item below them (comments, attributes).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from narezka.errors import MissingDependencyError
from narezka.split.code_outline import Item, LineIndex, Outline

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


@dataclass(frozen=True, slots=True)
class Grammar:
    module: str
    function: str

    @property
    def package(self) -> str:
        """The PyPI name of the grammar's wheel."""
        return self.module.replace("_", "-")


GRAMMARS = {
    "javascript": Grammar("tree_sitter_javascript", "language"),
    "typescript": Grammar("tree_sitter_typescript", "language_typescript"),
    "tsx": Grammar("tree_sitter_typescript", "language_tsx"),
    "go": Grammar("tree_sitter_go", "language"),
    "rust": Grammar("tree_sitter_rust", "language"),
    "java": Grammar("tree_sitter_java", "language"),
}

# Node type names differ enough between grammars that one union of them serves all.
BLOCKS = frozenset(
    """
    statement_block class_body switch_body switch_case switch_default
    interface_body enum_body object_type block statement_list field_declaration_list
    interface_type expression_switch_statement type_switch_statement select_statement
    declaration_list enum_variant_list match_block constructor_body switch_block
    switch_block_statement_group annotation_type_body object
    """.split()
)
"""Nodes whose named children are the items of a block."""
LEADING = frozenset("comment line_comment block_comment attribute_item decorator".split())
"""Nodes that belong to the item directly below them."""
DEFINITIONS = frozenset(
    """
    class_declaration abstract_class_declaration class function_declaration
    generator_function_declaration function_signature method_definition method_signature
    abstract_method_signature interface_declaration enum_declaration type_alias_declaration
    internal_module module function_item function_signature_item struct_item enum_item
    union_item trait_item mod_item macro_definition record_declaration
    annotation_type_declaration constructor_declaration compact_constructor_declaration
    method_declaration
    """.split()
)
"""Nodes named by their ``name`` field."""
_FUNCTION_VALUES = frozenset(
    "arrow_function function_expression function generator_function class object".split()
)
"""Values that make a variable a definition: ``const api = {get() {…}}`` is ``api``."""


def parser_for(language: str) -> Parser:
    """A tree-sitter parser for one of GRAMMARS' languages.

    Raises MissingDependencyError naming ``pip install 'narezka[code]'`` when tree-sitter or
    the language's grammar wheel is not installed.
    """
    grammar = GRAMMARS[language]
    try:
        import tree_sitter
    except ImportError as exc:
        raise MissingDependencyError("tree-sitter", "code") from exc
    try:
        module = import_module(grammar.module)
    except ImportError as exc:
        raise MissingDependencyError(grammar.package, "code") from exc
    return tree_sitter.Parser(tree_sitter.Language(getattr(module, grammar.function)()))


def treesitter_outline(text: str, language: str) -> Outline | None:
    """The outline of a source file in one of GRAMMARS' languages; None when its blocks
    nest too deeply to walk (hundreds of levels: generated code).

    tree-sitter recovers from syntax errors, so nearly every file gets an outline; cuts
    around an ERROR node are still line starts, only less well chosen.
    """
    tree = parser_for(language).parse(text.encode("utf-8", "surrogatepass"))
    lines = LineIndex(text)
    outline = Outline(lines)
    try:
        _Walker(lines, outline).block(tree.root_node.named_children, 0, (), glued=False)
    except RecursionError:
        return None
    return outline


def _last_row(node: Node) -> int:
    # A Rust line comment ends at column 0 of the next row (it holds its newline).
    end = node.end_point
    return end.row if end.column or end.row == node.start_point.row else end.row - 1


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _type_name(node: Node | None) -> str:
    """``Cart`` for ``*Cart``, ``&mut Cart<T>``, ``fmt::Cart``, ``Cart[T]``."""
    text = _text(node)
    for mark in ("<", "["):
        text = text.split(mark, 1)[0]
    text = text.replace("&", "").replace("*", "").replace("mut ", "").strip()
    return text.rsplit("::", 1)[-1].strip()


class _Walker:
    def __init__(self, lines: LineIndex, outline: Outline) -> None:
        self.lines = lines
        self.outline = outline

    def block(
        self, children: list[Node], level: int, path: tuple[str, ...], *, glued: bool
    ) -> None:
        """Record the items among ``children`` (a block's named children), then their own."""
        items: list[Item] = []
        nodes: list[tuple[Node, tuple[str, ...]]] = []
        lead: list[Node] = []

        def flush() -> None:
            if lead:
                items.append(Item(lead[0].start_point.row, True))
                lead.clear()

        for node in self._flatten(children):
            row = node.start_point.row
            starts = self.lines.starts_line(row, node.start_point.column)
            if node.type in LEADING:
                if not starts:
                    continue  # a comment after code on its line: part of that item
                if lead and row > _last_row(lead[-1]) + 1:
                    flush()
                lead.append(node)
                continue
            if lead and row == _last_row(lead[-1]) + 1 and starts:
                first, starts = lead[0].start_point.row, True
                lead.clear()
            else:
                flush()
                first = row
            own = self._path(node, path)
            items.append(Item(first, starts, own if own != path else None))
            nodes.append((node, own))
        flush()
        self.outline.add_block(items, level, path, glued=glued)
        for node, own in nodes:
            self.descend(node, level + 1, own)

    def descend(self, node: Node, level: int, path: tuple[str, ...]) -> None:
        """Walk the blocks inside one item. A later block whose clause opens a line of its
        own (``else {`` under a closing brace) is cut before, and its first item stays with
        that line; one opening mid-line (``} else {``) leaves that line to the block before.
        """
        previous_end = -1
        for k, block in enumerate(self._blocks(node)):
            head = block
            while (
                k
                and head.parent is not None
                and head.parent != node
                and head.parent.start_point.row > previous_end
            ):
                head = head.parent
            opening = head.start_point
            own_line = (
                k > 0
                and opening.row > previous_end
                and self.lines.starts_line(opening.row, opening.column)
            )
            if own_line:
                self.outline.add_block([Item(opening.row, True)], level, path)
            self.block(block.named_children, level, path, glued=k == 0 or own_line)
            previous_end = block.end_point.row

    def _blocks(self, node: Node) -> list[Node]:
        """Block-like nodes under ``node`` that no other block-like node encloses."""
        found: list[Node] = []
        stack = list(reversed(node.named_children))
        while stack:
            child = stack.pop()
            if child.start_point.row == child.end_point.row:
                continue  # a one-line node holds no line to cut at
            if child.type in BLOCKS:
                found.append(child)
            else:
                stack.extend(reversed(child.named_children))
        return found

    def _flatten(self, children: list[Node]) -> list[Node]:
        # Go's block holds a statement_list, a Java enum its declarations after the
        # constants: what they hold are the block's items.
        out: list[Node] = []
        for child in children:
            if child.type in ("statement_list", "enum_body_declarations"):
                out.extend(self._flatten(child.named_children))
            else:
                out.append(child)
        return out

    def _path(self, node: Node, path: tuple[str, ...]) -> tuple[str, ...]:
        """The node's section path: ``path`` plus its qualified name if it is a definition."""
        kind = node.type
        parent = path[-1] + "." if path else ""
        if kind == "export_statement":
            declaration = node.child_by_field_name("declaration")
            return self._path(declaration, path) if declaration is not None else path
        if kind in ("lexical_declaration", "variable_declaration", "field_definition"):
            return self._bound_function(node, path)
        if kind == "public_field_definition":
            value = node.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                return (*path, parent + _text(node.child_by_field_name("name")))
            return path
        if kind == "method_declaration" and node.child_by_field_name("receiver") is not None:
            return self._go_method(node, path)
        if kind == "type_declaration":
            specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
            if len(specs) == 1:
                return (*path, parent + _text(specs[0].child_by_field_name("name")))
            return path
        if kind == "impl_item":
            return (*path, parent + _type_name(node.child_by_field_name("type")))
        if kind in DEFINITIONS:
            name = _text(node.child_by_field_name("name")).strip("\"'`")
            return (*path, parent + name) if name else path
        return path

    def _go_method(self, node: Node, path: tuple[str, ...]) -> tuple[str, ...]:
        """Go: ``func (s *Store) Add(...)`` belongs to Store wherever it is written."""
        receiver = node.child_by_field_name("receiver")
        declared = receiver.named_children if receiver is not None else []
        owner = _type_name(declared[0].child_by_field_name("type")) if declared else ""
        name = _text(node.child_by_field_name("name"))
        parent = path[-1] + "." if path else ""
        return (owner, f"{owner}.{name}") if owner else (*path, parent + name)

    def _bound_function(self, node: Node, path: tuple[str, ...]) -> tuple[str, ...]:
        """``const total = () => …`` and ``handle = () => …`` name what they hold."""
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        target = declarators[0] if len(declarators) == 1 else node
        value = target.child_by_field_name("value")
        name = target.child_by_field_name("name") or target.child_by_field_name("property")
        if value is None or value.type not in _FUNCTION_VALUES or name is None:
            return path
        return (*path, (path[-1] + "." if path else "") + _text(name))
