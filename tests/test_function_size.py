"""No function body over 80 lines in scheduler_core/, workloads/, reports/ and bench/.

A function's body is counted from its first statement after the docstring to its last line
(the signature and the docstring are not counted; a nested function counts in its own right
and in the function around it). The functions that are longer today are ALLOWED below, each
with its length today as a ceiling and the reason; the list is meant to shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.layers import LAYERS
from tests.shared import REPO_ROOT

LIMIT = 80

# "path::qualified.name": (body lines today, the ceiling; why it is still this long).
# THIS LIST MUST ONLY SHRINK: split a function, then delete its entry; never raise a ceiling.
ALLOWED: dict[str, tuple[int, str]] = {}


def body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the function's last line."""
    body = fn.body
    if ast.get_docstring(fn) is not None and len(body) > 1:
        body = body[1:]
    assert fn.end_lineno is not None
    return fn.end_lineno - body[0].lineno + 1


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, body lines) of every function and method in ``tree``, nested ones
    too (``outer.inner``, ``Class.method``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, body_lines(node)
            yield from functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        else:
            yield from functions(node, prefix)


def sizes(root: Path) -> dict[str, int]:
    """``"path::name"`` -> body lines, for every function of the four packages."""
    out: dict[str, int] = {}
    for top in LAYERS:
        for path in sorted((root / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            rel = path.relative_to(root).as_posix()
            for name, n in functions(tree):
                out[f"{rel}::{name}"] = max(n, out.get(f"{rel}::{name}", 0))
    return out


def too_long(found: Mapping[str, int], allowed: Mapping[str, tuple[int, str]] = ALLOWED,
             limit: int = LIMIT) -> list[str]:
    """One line per function over ``limit`` (or over its ceiling, when allowed)."""
    out = []
    for name, n in sorted(found.items()):
        ceiling = allowed[name][0] if name in allowed else limit
        if n > max(limit, ceiling):
            out.append(f"{name}: {n} lines (limit {max(limit, ceiling)})")
    return out


LONG = "\n".join(f"    x{i} = {i}" for i in range(81))


def test_a_long_function_method_or_nested_function_is_reported(tmp_path: Path) -> None:
    pkg = tmp_path / "workloads"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text(
        f'def long():\n    """Doc.\n\n    More doc.\n    """\n{LONG}\n\n'
        f'def short():\n    """{"doc line " * 10}\n{chr(10) * 100}"""\n    return 1\n\n'
        f"class Op:\n    def run(self):\n{LONG.replace('    ', '        ')}\n\n"
        f"def outer():\n    def inner():\n{LONG.replace('    ', '        ')}\n    return inner\n")
    found = sizes(tmp_path)
    assert found == {"workloads/ops.py::long": 81, "workloads/ops.py::short": 1,
                     "workloads/ops.py::Op.run": 81, "workloads/ops.py::outer": 83,
                     "workloads/ops.py::outer.inner": 81}
    assert too_long(found, {}) == ["workloads/ops.py::Op.run: 81 lines (limit 80)",
                                   "workloads/ops.py::long: 81 lines (limit 80)",
                                   "workloads/ops.py::outer: 83 lines (limit 80)",
                                   "workloads/ops.py::outer.inner: 81 lines (limit 80)"]
    # an allowed function may stay as long as it is, not grow
    allowed = {"workloads/ops.py::outer": (83, "test"), "workloads/ops.py::long": (80, "t")}
    assert too_long({"workloads/ops.py::outer": 83, "workloads/ops.py::long": 81},
                    allowed) == ["workloads/ops.py::long: 81 lines (limit 80)"]


def test_no_function_body_over_80_lines() -> None:
    found = sizes(REPO_ROOT)
    assert len(found) > 1000  # the scan saw the four packages
    long = too_long(found)
    assert not long, ("function bodies over 80 lines (split them; ALLOWED in "
                      "tests/test_function_size.py may only shrink):\n" + "\n".join(long))
