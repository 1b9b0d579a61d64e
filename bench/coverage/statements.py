"""A Python source text's executable statement lines, the ones outside error-raising branches,
and its functions' header lines and bodies.

**Statements** are coverage.py's own: :class:`coverage.parser.PythonParser` gives the first
line of every executable statement (a multi-line statement counts once, at its first line;
docstrings, blank and comment lines are no statements; lines matching coverage.py's default
exclusions, such as ``# pragma: no cover`` and ``if TYPE_CHECKING:`` blocks, are left out as
coverage.py leaves them out of its reports).

**Outside error-raising branches** (the denominator that is not diluted by error handling
no benchmark should exercise): every statement except

* ``raise`` statements themselves, and
* every statement (nested ones included) of a block whose last statement is a ``raise``, where
  a block is the body of an ``if``, ``elif`` or ``else``, of an ``except`` handler, of a
  ``with``, ``for`` or ``while`` (and their ``else``), or of a ``match`` case.

The header of such a block (``if x:``, ``except E:``) is kept: it runs on the normal path too.
A ``try`` body and a function body are no such blocks (``def f(): raise NotImplementedError``
loses only its ``raise``).

**Functions**: the header lines of a function (its ``def`` statement and decorators) run when
the module is imported; a workload *runs the function* when it executes a line of its body
(:class:`FunctionSpan`), and the coverage map attributes the header lines to those workloads.
"""

from __future__ import annotations

import ast
import bisect
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from coverage.config import DEFAULT_EXCLUDE
from coverage.exceptions import CoverageException
from coverage.parser import PythonParser

__all__ = ["FileStatements", "FunctionSpan", "StatementsError", "error_branch_lines",
           "parse_statements"]

_EXCLUDE = "(?:" + ")|(?:".join(DEFAULT_EXCLUDE) + ")"
# node type -> its fields that hold a block of statements (see the module docstring)
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.ExceptHandler: ("body",),
    ast.match_case: ("body",),
}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class StatementsError(ValueError):
    """The source text cannot be parsed (a syntax error, a bad encoding)."""


@dataclass(frozen=True)
class FunctionSpan:
    """One function (methods and nested functions too): ``header`` are the statement lines
    of its decorators and ``def``; its body spans lines ``body_start``..``body_end``."""

    name: str  # qualified: Class.method, outer.<locals>.inner
    header: frozenset[int]
    body_start: int
    body_end: int

    def contains(self, line: int) -> bool:
        return self.body_start <= line <= self.body_end


@dataclass(frozen=True)
class FileStatements:
    """The statement lines of one source text (see the module docstring)."""

    statements: frozenset[int]
    outside_error: frozenset[int]
    functions: tuple[FunctionSpan, ...] = ()
    # line of a multi-line statement -> its first line (lines of one-line statements absent)
    first_lines: dict[int, int] = field(default_factory=dict)
    _sorted: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sorted", tuple(sorted(self.statements)))

    @property
    def sorted(self) -> tuple[int, ...]:
        """The statement lines in order."""
        return self._sorted

    def statement_of(self, line: int) -> int | None:
        """The first line of the statement ``line`` belongs to, None when it belongs to none
        (blank, comment, docstring, excluded)."""
        first = self.first_lines.get(line, line)
        return first if first in self.statements else None

    def statements_of(self, lines: Iterable[int]) -> set[int]:
        """The statement (first) lines of ``lines``; lines of no statement are dropped."""
        out = set()
        for line in lines:
            first = self.statement_of(line)
            if first is not None:
                out.add(first)
        return out

    def around(self, after_line: int) -> set[int]:
        """The statements around a deletion after line ``after_line`` (0: at the file's
        start): the nearest statement at or before it and the nearest one after it."""
        out = set()
        for line in range(after_line, 0, -1):
            first = self.statement_of(line)
            if first is not None:
                out.add(first)
                break
        i = bisect.bisect_right(self._sorted, after_line)
        # a statement holding after_line + 1 may start at or before after_line
        nxt = self.statement_of(after_line + 1)
        if nxt is not None:
            out.add(nxt)
        elif i < len(self._sorted):
            out.add(self._sorted[i])
        return out

    def function_at(self, line: int) -> FunctionSpan | None:
        """The innermost function whose body holds ``line`` (None: module or class level)."""
        best = None
        for fn in self.functions:
            if fn.contains(line) and (best is None or fn.body_start >= best.body_start):
                best = fn
        return best


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)])


def _blocks(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for name in _BLOCK_FIELDS.get(type(node), ()):
            block = getattr(node, name)
            if block:
                yield block


def error_branch_lines(tree: ast.AST) -> set[int]:
    """Every line of the ``raise`` statements and of the blocks that end in one (see the
    module docstring); intersect with the statements to get statement lines."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for block in _blocks(tree):
        if isinstance(block[-1], ast.Raise):
            end = block[-1].end_lineno or block[-1].lineno
            lines.update(range(_first_line(block[0]), end + 1))
    return lines


def _functions(tree: ast.AST, statements: frozenset[int],
               first_lines: dict[int, int]) -> tuple[FunctionSpan, ...]:
    spans = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTIONS):
                name = prefix + child.name
                header = {first_lines.get(n, n) for n in
                          [child.lineno, *(d.lineno for d in child.decorator_list)]}
                spans.append(FunctionSpan(
                    name, frozenset(header & statements), _first_line(child.body[0]),
                    child.end_lineno or child.lineno))
                visit(child, name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(spans)


# CPython 3.11 builds the Python objects of an AST with interpreter-wide recursion bookkeeping:
# two threads calling ast.parse at once can fail with "SystemError: AST constructor recursion
# depth mismatch". Maps computed by several coverage processes attribute lines in threads.
_PARSE_LOCK = threading.Lock()


def parse_statements(text: str, filename: str = "<source>") -> FileStatements:
    """The statements of a source text (:class:`FileStatements`); raises
    :class:`StatementsError` when it is not valid Python."""
    try:
        with _PARSE_LOCK:
            parser = PythonParser(text=text, filename=filename, exclude=_EXCLUDE)
            parser.parse_source()
            tree = ast.parse(text, filename=filename)
    except (SyntaxError, ValueError, CoverageException) as exc:
        raise StatementsError(f"{filename}: not valid Python: {exc}") from exc
    statements = frozenset(parser.statements)
    first_lines = {line: first for line, first in parser.multiline_map.items()
                   if line != first}
    errors = error_branch_lines(tree)
    outside = frozenset(s for s in statements if s not in errors)
    return FileStatements(statements, outside, _functions(tree, statements, first_lines),
                          first_lines)
