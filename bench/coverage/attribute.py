"""coverage.py's data of a :mod:`bench.coverage.child` run -> a :class:`CoverageMap`.

Files are named relative to the folder their top-level package was imported from (for
scheduler_core in a checkout: relative to the checkout, as git names them). For every file of
the mapped packages (only the ``include`` files, when given) the statements are parsed
(:mod:`bench.coverage.statements`) and, per context:

* executed lines become statement lines: the first line of their statement, lines of no
  statement dropped;
* a function's header lines (``def``, decorators) belong to the contexts that ran a line of
  its body, and to no other (they also run at import);
* the empty context (imports, between workloads) and the config loading context are
  :data:`IMPORT_TIME`; every other context is the workload of that name;
* arcs are kept as coverage.py recorded them.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import coverage
import polars as pl
import pyarrow as pa

from bench.coverage.child import LOAD_CONTEXT
from bench.coverage.statements import FileStatements, StatementsError, parse_statements
from reports.store.coverage import (
    IMPORT_TIME,
    KIND_ARC,
    KIND_LINE,
    LINES_SCHEMA,
    STATEMENTS_SCHEMA,
    WORKLOADS_SCHEMA,
    CoverageMap,
)

__all__ = ["Outcome", "attribute_lines", "build_map", "package_files", "read_source"]


@dataclass(frozen=True)
class Outcome:
    """What the child says of one workload."""

    name: str
    labels: tuple[str, ...]
    status: str
    error: str | None
    cost_seconds: float


def read_source(path: Path) -> str:
    """A Python file's text, decoded as Python decodes it (coding cookie, BOM)."""
    return importlib.util.decode_source(path.read_bytes())


def package_files(packages: Sequence[str], roots: Mapping[str, str]) -> dict[str, Path]:
    """{file key: its path} of every ``.py`` file of ``packages`` (a module: that file), the
    key being the path relative to the package's root (see the module docstring)."""
    files = {}
    for pkg in packages:
        root = Path(roots[pkg])
        base = root.joinpath(*pkg.split("."))
        candidates = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
        for path in candidates:
            if path.is_file() and "__pycache__" not in path.parts:
                files[path.relative_to(root).as_posix()] = path
    return files


def attribute_lines(lines: Iterable[int], stmts: FileStatements) -> set[int]:
    """Executed lines -> statement lines, with function headers by body (module docstring)."""
    raw = set(lines)
    out = stmts.statements_of(raw)
    for fn in stmts.functions:
        out -= fn.header
    for fn in stmts.functions:
        if any(fn.contains(x) for x in raw):
            out |= fn.header
    return out


def _context_name(context: str) -> str:
    return IMPORT_TIME if context in ("", LOAD_CONTEXT) else context


def _line_rows(data: coverage.CoverageData, path: str, key: str,
               stmts: FileStatements) -> list[tuple[str, str, str, int, None]]:
    by_context: dict[str, set[int]] = {}
    for line, contexts in data.contexts_by_lineno(path).items():
        for context in contexts:
            by_context.setdefault(_context_name(context), set()).add(line)
    return [(name, key, KIND_LINE, line, None)
            for name in sorted(by_context)
            for line in sorted(attribute_lines(by_context[name], stmts))]


def _arc_rows(data: coverage.CoverageData, paths: Mapping[str, str],
              ) -> list[tuple[str, str, str, int, int]]:
    rows: set[tuple[str, str, str, int, int]] = set()
    for context in sorted(data.measured_contexts()):
        data.set_query_contexts(["^" + re.escape(context) + "$"])
        name = _context_name(context)
        for path, key in paths.items():
            for a, b in data.arcs(path) or ():
                rows.add((name, key, KIND_ARC, a, b))
    data.set_query_contexts(None)
    return sorted(rows)


def _frame(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pl.DataFrame:
    """Rows of ``schema`` without its leading ``commit`` column as a frame."""
    empty = pl.from_arrow(schema.empty_table())
    assert isinstance(empty, pl.DataFrame)
    columns = empty.drop("commit").schema
    return pl.DataFrame(rows, schema=columns, orient="row") if rows else pl.DataFrame(
        schema=columns)


def build_map(data_file: Path, *, roots: Mapping[str, str], packages: Sequence[str],
              include: Sequence[str] | None, outcomes: Sequence[Outcome], commit: str,
              dirty: bool, meta: Mapping[str, Any] | None = None,
              ) -> tuple[CoverageMap, dict[str, str]]:
    """The map of a child's run, and {file key: why it has no statements} for the files
    that could not be parsed."""
    files = package_files(packages, roots)
    if include is not None:
        files = {k: p for k, p in files.items() if k in set(include)}
    statements: dict[str, FileStatements] = {}
    problems = {}
    for key, path in files.items():
        try:
            statements[key] = parse_statements(read_source(path), key)
        except (OSError, SyntaxError, UnicodeDecodeError, StatementsError) as exc:
            problems[key] = str(exc)
    data = coverage.CoverageData(str(data_file))
    data.read()
    by_path = {str(files[k].resolve()): k for k in statements}
    measured = {p: by_path[str(Path(p).resolve())] for p in data.measured_files()
                if str(Path(p).resolve()) in by_path}
    line_rows = [row for path, key in sorted(measured.items())
                 for row in _line_rows(data, path, key, statements[key])]
    lines = _frame([*line_rows, *_arc_rows(data, measured)], LINES_SCHEMA)
    stmt_rows = [(key, line, line in s.outside_error)
                 for key, s in sorted(statements.items()) for line in s.sorted]
    workloads = _frame([(o.name, list(o.labels), o.cost_seconds, o.status, o.error)
                        for o in outcomes], WORKLOADS_SCHEMA)
    cmap = CoverageMap(
        commit=commit, dirty=dirty, lines=lines, workloads=workloads,
        statements=_frame(stmt_rows, STATEMENTS_SCHEMA),
        packages=tuple(packages), include=None if include is None else tuple(include),
        meta=dict(meta or {}))
    return cmap, problems
