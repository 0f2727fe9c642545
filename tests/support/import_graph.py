"""The import graph of a package, read from the ``ast`` of its modules (nothing is imported).

Every ``import`` counts as an edge wherever it stands: at module level, inside a
function, or under ``if TYPE_CHECKING:``. Relative imports are resolved, and
``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one
(to ``pkg`` itself otherwise). ``importlib.import_module("literal")`` counts too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool
    lines: int
    tree: ast.Module


@dataclass(frozen=True)
class Import:
    """``source`` imports ``target`` at ``line``; ``internal`` when the target is in the tree."""

    source: str
    target: str
    line: int
    internal: bool


@dataclass(frozen=True)
class Use:
    """A use of a private name: where, and the code that does it."""

    module: str
    line: int
    code: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.code}"


@dataclass(frozen=True)
class Cycle:
    """Modules that import each other (``members``) and one loop through them."""

    members: list[str]
    loop: list[str]


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class ImportGraph:
    """The modules of one package (by dotted name) and every import among them."""

    def __init__(self, modules: Mapping[str, Module]) -> None:
        self.modules = dict(modules)
        self.imports = [imp for module in self.modules.values() for imp in self._imports_of(module)]

    # -- edges ----------------------------------------------------------------
    def _imports_of(self, module: Module) -> Iterator[Import]:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield self._edge(module.name, alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(module, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in self.modules else base
                    yield self._edge(module.name, target, node.lineno)
            elif isinstance(node, ast.Call) and _is_import_module(node):
                first = node.args[0]
                assert isinstance(first, ast.Constant) and isinstance(first.value, str)
                yield self._edge(module.name, first.value, node.lineno)

    def _absolute(self, module: Module, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = module.name.split(".")
        if not module.is_package:
            parts = parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        return ".".join([*parts, node.module] if node.module else parts)

    def _edge(self, source: str, target: str, line: int) -> Import:
        """An edge to the deepest module of the tree named by ``target`` (a missing
        submodule's import runs its package)."""
        name = target
        while name and name not in self.modules:
            name = name.rpartition(".")[0]
        return Import(source, name or target, line, internal=bool(name))

    def internal(self) -> dict[str, dict[str, int]]:
        """Module -> {imported module of the tree: first line that imports it}."""
        out: dict[str, dict[str, int]] = {name: {} for name in self.modules}
        for imp in self.imports:
            if imp.internal:
                lines = out[imp.source]
                lines[imp.target] = min(lines.get(imp.target, imp.line), imp.line)
        return out

    # -- checks ---------------------------------------------------------------
    def cycles(self) -> list[Cycle]:
        """Each group of modules that import each other, with one shortest loop through it."""
        edges = self.internal()
        return [Cycle(group, _shortest_loop(group, edges)) for group in _strongly_connected(edges)]

    def describe(self, cycle: Cycle) -> str:
        """The loop with the line of each import, and the rest of its group if any."""
        edges = self.internal()
        loop = cycle.loop
        hops = [f"{a} (line {edges[a][b]})" for a, b in zip(loop, loop[1:], strict=False)]
        text = " -> ".join([*hops, loop[-1]])
        rest = sorted(set(cycle.members) - set(loop))
        return f"{text}; in the same tangle: {', '.join(rest)}" if rest else text

    def upward(self, layers: Sequence[Sequence[str]], root: str) -> list[Import]:
        """Imports from a module to a module of a higher layer."""
        out = []
        for imp in self.imports:
            low, high = layer_of(imp.source, layers, root), layer_of(imp.target, layers, root)
            if imp.internal and low is not None and high is not None and high > low:
                out.append(imp)
        return out

    def importers(self, prefix: str, forbidden: Sequence[str]) -> list[Import]:
        """Imports by modules under ``prefix`` of any module under one of ``forbidden``."""
        return [
            imp
            for imp in self.imports
            if within(imp.source, prefix) and any(within(imp.target, f) for f in forbidden)
        ]

    def private_uses(self, allowed: Mapping[str, str]) -> list[Use]:
        """Uses of another module's ``_private`` names; ``allowed`` maps code to a reason."""
        uses = [u for m in self.modules.values() for u in _private_uses(m) if u.code not in allowed]
        return sorted(uses, key=lambda u: (u.module, u.line))

    def longer_than(self, limit: int) -> list[Module]:
        return sorted((m for m in self.modules.values() if m.lines > limit), key=lambda m: m.name)


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str, layers: Sequence[Sequence[str]], root: str) -> int | None:
    """The index of the layer holding ``name`` (its longest matching entry); the root
    package's entry holds the root's ``__init__`` only."""
    best: tuple[int, int] | None = None
    for index, entries in enumerate(layers):
        for entry in entries:
            hit = name == entry if entry == root else within(name, entry)
            if hit and (best is None or len(entry) > best[0]):
                best = (len(entry), index)
    return None if best is None else best[1]


def scan(package_dir: Path) -> ImportGraph:
    """Read every module under ``package_dir`` (a package directory)."""
    root = package_dir.name
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [root, *path.relative_to(package_dir).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        text = path.read_text(encoding="utf-8")
        name = ".".join(parts)
        tree = ast.parse(text, filename=str(path))
        modules[name] = Module(name, path, is_package, len(text.splitlines()), tree)
    return ImportGraph(modules)


# -- helpers ------------------------------------------------------------------
def _is_import_module(node: ast.Call) -> bool:
    func = node.func
    named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in {"import_module", "__import__"}
    )
    return (
        named
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def _strongly_connected(edges: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """Tarjan's algorithm: the groups of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in edges[node]:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(groups)


def _shortest_loop(group: Sequence[str], edges: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The shortest path from the group's first module back to itself (breadth first)."""
    start, members = group[0], set(group)
    parent: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(edges[node]):
                if nxt == start:
                    path = [node]
                    while (before := parent[path[-1]]) is not None:
                        path.append(before)
                    return [*reversed(path), start]
                if nxt in members and nxt not in parent:
                    parent[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no loop through {start}")


def _own_privates(tree: ast.Module) -> set[str]:
    """The ``_names`` a module defines for its classes: class-body names and attributes
    it assigns on ``self``/``cls``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    names.update(t.id for t in item.targets if isinstance(t, ast.Name))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and _is_self(node.value)
        ):
            names.add(node.attr)
    return names


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in {"self", "cls"}


def _is_super(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _private_uses(module: Module) -> Iterator[Use]:
    """``from x import _name``; ``obj._name`` unless ``obj`` is ``self``/``cls``/``super()``
    and this module defines ``_name``; ``getattr(obj, "_name")`` likewise."""
    own = _own_privates(module.tree)
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if is_private(alias.name):
                    dots = "." * node.level
                    yield Use(
                        module.name,
                        node.lineno,
                        f"from {dots}{node.module or ''} import {alias.name}",
                    )
        elif isinstance(node, ast.Attribute) and is_private(node.attr):
            mine = _is_self(node.value) or _is_super(node.value)
            if not (mine and node.attr in own):
                yield Use(module.name, node.lineno, ast.unparse(node))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "setattr", "hasattr", "delattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and is_private(node.args[1].value)
        ):
            mine = _is_self(node.args[0]) and node.args[1].value in own
            if not mine:
                yield Use(module.name, node.lineno, ast.unparse(node))
