"""The changed and added lines of ``git diff BASE...HEAD`` (three dots: from the merge base of
BASE and HEAD to HEAD, what HEAD's branch changed), per file under given folders.

File names are data, never shell text: the files come from
``git diff --name-status -z --no-renames`` (NUL-separated raw bytes: spaces, newlines, quotes
and non-UTF-8 bytes pass unchanged) and are decoded with :func:`os.fsdecode` (undecodable bytes
become surrogate escapes, and :mod:`subprocess` turns them back into the same bytes). Each
file's hunks come from its own
``git -c core.quotePath=false --literal-pathspecs diff -U0 --no-color --no-ext-diff
--no-textconv --no-renames BASE...HEAD -- <path>`` (an argument list, no shell; literal
pathspecs, so ``*`` or ``[`` in a name is no pattern), of which only the ``@@ -a,b +c,d @@``
hunk headers are read: a hunk with ``d > 0`` changed or added HEAD lines ``c..c+d-1``; one
with ``d = 0`` deleted lines after HEAD line ``c`` and added none (a *deletion point*).

Without ``--no-renames`` git would pair a renamed file's old and new names; here a rename is a
deleted file and an added one.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ADDED", "DELETED", "MODIFIED", "DiffError", "FileChange", "changed_files",
           "git_bytes", "hunk_lines", "show_path"]

ADDED = "added"
MODIFIED = "modified"
DELETED = "deleted"
_STATUS = {b"A": ADDED, b"M": MODIFIED, b"T": MODIFIED, b"D": DELETED}
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class DiffError(RuntimeError):
    """git failed (not a repository, an unknown ref, no merge base) or printed something
    this parser does not know."""


@dataclass(frozen=True)
class FileChange:
    """One file of the diff: its path (relative to the repository's top folder, as git
    prints it), ``status`` (:data:`ADDED`, :data:`MODIFIED`, :data:`DELETED`), the HEAD
    lines it changed or added, and the HEAD lines after which it only deleted lines."""

    path: str
    status: str
    changed: tuple[int, ...] = ()
    deletion_points: tuple[int, ...] = ()


def show_path(path: str) -> str:
    """A path for messages: printable, with newlines and undecodable bytes escaped."""
    raw = os.fsencode(path)
    text = raw.decode("utf-8", errors="backslashreplace")
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


def git_bytes(repo: Path, args: Sequence[str]) -> bytes:
    """``git <args>`` in ``repo`` (an argument list: no shell), its standard output as bytes;
    raises :class:`DiffError` naming the command and git's message when it fails."""
    try:
        proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False,
                              timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise DiffError(f"git {args[0] if args else ''}: {exc}") from exc
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "backslashreplace").strip().splitlines()
        raise DiffError(f"git {' '.join(show_path(a) for a in args[:6])} failed in {repo}: "
                        f"{message[-1] if message else f'exit {proc.returncode}'}")
    return proc.stdout


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _name_status(repo: Path, spec: str) -> list[tuple[str, str]]:
    out = git_bytes(repo, ["-c", "core.quotePath=false", "diff", "--name-status", "-z",
                           "--no-renames", "--no-ext-diff", "--no-textconv", spec])
    fields = out.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    if len(fields) % 2:
        raise DiffError(f"git diff --name-status -z {spec}: odd number of fields")
    pairs = []
    for code, name in zip(fields[0::2], fields[1::2], strict=True):
        status = _STATUS.get(code[:1])
        if status is None:
            raise DiffError(f"git diff --name-status {spec}: status {code!r} of "
                            f"{show_path(os.fsdecode(name))} is not one this parser knows")
        pairs.append((os.fsdecode(name), status))
    return pairs


def hunk_lines(diff: bytes) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(changed or added HEAD lines, deletion points) of a ``-U0`` diff of one file: only
    the ``@@`` hunk headers are read."""
    changed: list[int] = []
    points: list[int] = []
    for line in diff.split(b"\n"):
        if not line.startswith(b"@@ -"):
            continue
        m = _HUNK.match(line)
        if m is None:
            raise DiffError(f"not a hunk header: {line[:80]!r}")
        start, count = int(m.group(1)), int(m.group(2) or b"1")
        if count == 0:
            points.append(start)
        else:
            changed.extend(range(start, start + count))
    return tuple(changed), tuple(points)


def changed_files(repo: Path | str, base: str, head: str,
                  folders: Sequence[str] = ("scheduler_core",)) -> list[FileChange]:
    """The files under ``folders`` (paths relative to the repository's top folder) that
    ``git diff base...head`` changes, sorted by path, each with its changed HEAD lines and
    deletion points (none for a deleted file). ``repo`` is any folder of the repository."""
    top = Path(os.fsdecode(git_bytes(Path(repo), ["rev-parse", "--show-toplevel"]).rstrip(b"\n")))
    for ref in (base, head):
        if ref.startswith("-"):
            raise DiffError(f"{ref!r} is not a git revision")
    spec = f"{base}...{head}"
    changes = []
    for path, status in sorted(_name_status(top, spec)):
        if not _under(path, folders):
            continue
        if status == DELETED:
            changes.append(FileChange(path, status))
            continue
        diff = git_bytes(top, ["-c", "core.quotePath=false", "--literal-pathspecs", "diff",
                               "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
                               "--no-renames", spec, "--", path])
        changed, points = hunk_lines(diff)
        changes.append(FileChange(path, status, changed, points))
    return changes
