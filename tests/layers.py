"""The package layering of a checkout, read from the source with ``ast``: upward imports and
import cycles.

Layers, lowest first: ``scheduler_core`` < ``workloads`` < ``reports`` < ``bench``; a module
may import only its own package and the packages below it. What counts is a *runtime* import:
``import x`` and ``from x import y`` anywhere in the module, in a function body too (a lazy
import still ties the two modules together); imports under ``if TYPE_CHECKING:`` (or
``typing.TYPE_CHECKING``) are left out. ``from x import y`` imports ``x`` and, when ``x.y`` is a
module, ``x.y``; a relative import is resolved against the module's package.

An import cycle is a strongly connected component of more than one module in the graph "module
imports module" (an import of ``a.b.name`` is an edge to the deepest module of that path: ``a.b``
itself, or the package ``a``). A package's ``__init__`` is the module named like the package.

Same rule as ../shared/tools/layers.py, kept here so the suite does not depend on that copy.
Used by tests/test_layers.py; ``python -m tests.layers [ROOT]`` prints the breaches.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LAYERS", "LayerScan", "import_graph", "module_files", "runtime_imports", "scan"]

LAYERS = ("scheduler_core", "workloads", "reports", "bench")


@dataclass(frozen=True)
class LayerScan:
    """What :func:`scan` found: ``upward`` as ``"<module> imports <name>"`` lines (the name as
    written, e.g. ``workloads.output.parquet.STATUS_METRIC``) and ``cycles`` as sorted tuples
    of module names, over ``modules`` modules."""

    upward: frozenset[str]
    cycles: frozenset[tuple[str, ...]]
    modules: int


def module_files(root: Path, layers: Sequence[str] = LAYERS) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under the layer packages."""
    out: dict[str, Path] = {}
    for top in layers:
        for f in sorted((root / top).rglob("*.py")):
            rel = f.relative_to(root).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out[".".join(parts)] = f
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _absolute(module: str | None, level: int, name: str, is_package: bool) -> str | None:
    """The absolute module a ``from`` import of ``level`` dots names in module ``name``."""
    if level == 0:
        return module
    parts = name.split(".") if is_package else name.split(".")[:-1]
    if level - 1 > len(parts) - 1:
        return None  # above the top-level package: not ours to resolve
    base = parts[:len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)


def runtime_imports(tree: ast.Module, name: str = "", is_package: bool = False) -> set[str]:
    """Every dotted name the module ``name`` imports at run time (see the module docstring)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for sub in node.body:
                skip.update(id(n) for n in ast.walk(sub))
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, name, is_package)
            if module:
                out.add(module)
                out.update(f"{module}.{a.name}" for a in node.names if a.name != "*")
    return out


def _deepest_module(imported: str, modules: Mapping[str, Path]) -> str | None:
    while imported and imported not in modules:
        imported = imported.rpartition(".")[0]
    return imported or None


def import_graph(root: Path, layers: Sequence[str] = LAYERS
                 ) -> tuple[dict[str, set[str]], set[str]]:
    """(module -> the modules it imports, the upward imports as ``"<m> imports <name>"``)."""
    modules = module_files(root, layers)
    graph: dict[str, set[str]] = {}
    upward: set[str] = set()
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        mine = layers.index(name.split(".")[0])
        deps: set[str] = set()
        for imported in runtime_imports(tree, name, path.name == "__init__.py"):
            top = imported.split(".")[0]
            if top in layers and layers.index(top) > mine:
                upward.add(f"{name} imports {imported}")
            target = _deepest_module(imported, modules)
            if target is not None and target != name:
                deps.add(target)
        graph[name] = deps
    return graph, upward


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[tuple[str, ...]]:
    """The components of more than one node (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(tuple(sorted(comp)))
    return found


def scan(root: Path, layers: Sequence[str] = LAYERS) -> LayerScan:
    """The upward imports and the import cycles of the checkout at ``root``."""
    graph, upward = import_graph(root, layers)
    return LayerScan(frozenset(upward), frozenset(strongly_connected(graph)), len(graph))


def main(argv: Sequence[str]) -> int:
    found = scan(Path(argv[0] if argv else "."))
    for line in sorted(found.upward):
        print("UPWARD", line)
    for cycle in sorted(found.cycles):
        print("CYCLE", ", ".join(cycle))
    print(f"{len(found.upward)} upward imports, {len(found.cycles)} import cycles over "
          f"{found.modules} modules (layers {' < '.join(LAYERS)})")
    return 0 if not found.upward and not found.cycles else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
