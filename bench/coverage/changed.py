"""What a diff changed, as HEAD statement lines: the lines a coverage map can say something of.

For every Python file under the given folders that ``git diff BASE...HEAD`` touches
(:mod:`bench.coverage.diff`), read at HEAD (``git cat-file blob HEAD:path``, never the working
tree):

* a changed or added line counts through the statement it belongs to: a line of a
  multi-line statement becomes the statement's first line, and lines of no executable
  statement (blank, comment, docstring, excluded) count for nothing;
* a deletion point (lines deleted, none added, after HEAD line ``c``) counts as the
  statements around it: the nearest statement at or before line ``c`` and the nearest one
  after it (:meth:`FileStatements.around`) -- what now runs where the deleted code ran;
* an added file counts with all its statements;
* a deleted file has nothing to cover in HEAD: it is listed as deleted;
* a non-Python file, or one HEAD cannot parse, is listed in ``skipped`` with the reason.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.coverage.diff import (
    ADDED,
    DELETED,
    MODIFIED,
    DiffError,
    FileChange,
    changed_files,
    git_bytes,
    show_path,
)
from bench.coverage.statements import FileStatements, StatementsError, parse_statements

__all__ = ["ChangedStatements", "changed_statements", "read_statements", "statement_lines"]


@dataclass(frozen=True)
class ChangedStatements:
    """The changed HEAD statement lines of a diff, per file (paths relative to the
    repository's top folder)."""

    base: str  # the commits compared (full hashes)
    head: str
    lines: dict[str, frozenset[int]] = field(default_factory=dict)
    statements: dict[str, FileStatements] = field(default_factory=dict)  # HEAD's, per file
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)  # path -> why it has no lines

    @property
    def count(self) -> int:
        """How many changed statement lines there are."""
        return sum(len(v) for v in self.lines.values())


def statement_lines(change: FileChange, statements: FileStatements) -> frozenset[int]:
    """The HEAD statement lines ``change`` touches (see the module docstring)."""
    if change.status == ADDED:
        return statements.statements
    if change.status == DELETED:
        return frozenset()
    lines = statements.statements_of(change.changed)
    for point in change.deletion_points:
        lines |= statements.around(point)
    return frozenset(lines)


def read_statements(repo: Path, commit: str, path: str) -> FileStatements:
    """The statements of ``path`` as commit ``commit`` has it; StatementsError when it is
    not valid Python (or not decodable)."""
    data = git_bytes(repo, ["cat-file", "blob", f"{commit}:{path}"])
    try:
        text = importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise StatementsError(f"{show_path(path)}: cannot decode: {exc}") from exc
    return parse_statements(text, show_path(path))


def _commit(repo: Path, ref: str) -> str:
    if ref.startswith("-"):
        raise DiffError(f"{ref!r} is not a git revision")
    try:
        out = git_bytes(repo, ["rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}"])
    except DiffError as exc:
        raise DiffError(f"{ref!r}: no such commit in {repo}") from exc
    return out.decode("ascii").strip()


def changed_statements(repo: Path | str, base: str, head: str,
                       folders: Sequence[str] = ("scheduler_core",)) -> ChangedStatements:
    """The statement lines of HEAD that ``git diff base...head`` changes under ``folders``
    (see the module docstring). Raises :class:`bench.coverage.diff.DiffError` when git
    fails (an unknown ref, no merge base, not a repository)."""
    repo = Path(repo)
    base_commit, head_commit = _commit(repo, base), _commit(repo, head)
    lines: dict[str, frozenset[int]] = {}
    statements: dict[str, FileStatements] = {}
    skipped: dict[str, str] = {}
    by_status: dict[str, list[str]] = {}
    for change in changed_files(repo, base_commit, head_commit, folders):
        by_status.setdefault(change.status, []).append(change.path)
        if change.status == DELETED:
            continue
        if not change.path.endswith(".py"):
            skipped[change.path] = "not a Python file"
            continue
        try:
            stmts = read_statements(repo, head_commit, change.path)
        except StatementsError as exc:
            skipped[change.path] = str(exc)
            continue
        statements[change.path] = stmts
        touched = statement_lines(change, stmts)
        if touched:
            lines[change.path] = touched
    return ChangedStatements(
        base_commit, head_commit, lines, statements,
        added=tuple(by_status.get(ADDED, ())), modified=tuple(by_status.get(MODIFIED, ())),
        deleted=tuple(by_status.get(DELETED, ())), skipped=skipped)
