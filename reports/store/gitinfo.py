"""What git knows about measured commits: their committer dates and parents (recorded at
ingest) and the history between them (``--repo`` of history, changes and dashboard).

    find_checkout(path)            the git checkout holding ``path`` (a ``.git`` above it)
    commit_details(repo, commits)  {commit: (committer date, parents)} of those in ``repo``
    repo_history(repo, commits)    the topologically ordered history behind ``commits``

Everything is read with plain ``git`` commands (``cat-file --batch-check``, ``log
--topo-order``), commits passed on stdin, so any number of them costs a few processes.
A commit hash names the same commit in every clone, so looking a commit up in several
repositories can only find the right one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from reports.store.schema import CommitInfo

__all__ = ["GitError", "RepoHistory", "check_repo", "commit_details", "find_checkout",
           "repo_history"]

_TIMEOUT = 300
_FORMAT = "--format=%H %ct %P"


class GitError(Exception):
    """A repository cannot be read (not a git checkout, git missing or failing)."""


def _git(repo: Path, *args: str, stdin: str = "") -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], input=stdin,
                              capture_output=True, text=True, timeout=_TIMEOUT, check=False,
                              env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"{repo}: cannot run git: {exc}") from exc
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["unknown error"])[0]
        raise GitError(f"{repo}: git {args[0]} failed: {first}")
    return proc.stdout


def find_checkout(path: Path | str) -> Path | None:
    """The top folder of the git checkout holding ``path`` (a file or folder): the first
    folder from ``path`` up that has a ``.git`` (folder, or file for worktrees); None."""
    here = Path(path).absolute()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def check_repo(repo: Path | str, what: str = "--repo") -> Path:
    """``repo`` if it is a git checkout (or bare repository); else GitError naming it."""
    repo = Path(repo)
    if not repo.is_dir():
        raise GitError(f"{what} {repo}: no such folder")
    try:
        _git(repo, "rev-parse", "--git-dir")
    except GitError as exc:
        raise GitError(f"{what} {repo}: not a git repository") from exc
    return repo


def _resolve(repo: Path, commits: Iterable[str]) -> dict[str, str]:
    """{commit as given: full hash} for the given names that are commits of ``repo``."""
    names = sorted({c for c in commits if c and not c.isspace() and "\n" not in c})
    if not names:
        return {}
    out = _git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)",
               stdin="\n".join(names) + "\n")
    found = {}
    for name, line in zip(names, out.splitlines(), strict=False):
        parts = line.split()
        if len(parts) == 2 and parts[1] == "commit":
            found[name] = parts[0]
    return found


def _parse_log(text: str) -> list[tuple[str, datetime, tuple[str, ...]]]:
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            rows.append((parts[0], datetime.fromtimestamp(int(parts[1]), UTC),
                         tuple(parts[2:])))
    return rows


def commit_details(repo: Path, commits: Iterable[str]) -> dict[str, CommitInfo]:
    """{commit: (committer date, parents)} for the ``commits`` (full or abbreviated hashes)
    that ``repo`` has; the others are left out."""
    full = _resolve(repo, commits)
    if not full:
        return {}
    wanted = sorted(set(full.values()))
    log = _git(repo, "log", "--no-walk=unsorted", "--no-color", _FORMAT, "--stdin",
               stdin="\n".join(wanted) + "\n")
    details = {sha: (when, parents) for sha, when, parents in _parse_log(log)}
    return {name: details[sha] for name, sha in full.items() if sha in details}


@dataclass(frozen=True)
class RepoHistory:
    """The history behind some commits, as ``git log --topo-order`` gives it.

    ``position``: every commit of that history -> its place in git's topological order,
    0 the oldest (no commit comes before one of its ancestors); ``parents`` and ``dates`` of
    those commits; ``names``: {commit as stored: full hash} for the stored commits found.
    """

    repo: Path
    position: dict[str, int] = field(default_factory=dict)
    parents: dict[str, tuple[str, ...]] = field(default_factory=dict)
    dates: dict[str, datetime] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    shallow: bool = False


def repo_history(repo: Path, commits: Iterable[str]) -> RepoHistory:
    """The history of ``repo`` behind those of ``commits`` it has (see :class:`RepoHistory`)."""
    check_repo(repo)
    names = _resolve(repo, commits)
    shallow = _git(repo, "rev-parse", "--is-shallow-repository").strip() == "true"
    if not names:
        return RepoHistory(repo, shallow=shallow)
    log = _git(repo, "log", "--topo-order", "--no-color", _FORMAT, "--stdin",
               stdin="\n".join(sorted(set(names.values()))) + "\n")
    rows = _parse_log(log)
    count = len(rows)
    return RepoHistory(repo, position={sha: count - 1 - i for i, (sha, _, _) in enumerate(rows)},
                       parents={sha: parents for sha, _, parents in rows},
                       dates={sha: when for sha, when, _ in rows}, names=names,
                       shallow=shallow)
