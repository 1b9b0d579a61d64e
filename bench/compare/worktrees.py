"""Git refs of the project checked out side by side, never mixing code.

Every ref is validated with ``git rev-parse --verify`` and checked out (detached) in its own
``git worktree`` under a temporary folder that is removed again on success, error, Ctrl-C or
SIGTERM (under bench.interrupt.handle_signals, which the CLI installs: adding a worktree and
removing them all are not interrupted half-way, a signal waits for them). Git always gets
argument lists, never a shell string, so a ref cannot inject commands.

The system under test is ``scheduler_core``: :func:`core_path_entry` makes a folder whose only
entry is a link to one worktree's ``scheduler_core``. Put it first on a subprocess's
``PYTHONPATH`` (and start Python with ``-P`` from a neutral working directory) and that process
imports that ref's scheduler while the harness (workloads, bench) stays the one that measures
both sides identically.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.interrupt import deferred_signals

__all__ = [
    "Side",
    "WorktreeError",
    "checked_out",
    "core_path_entry",
    "is_ancestor",
    "repo_root",
    "resolve_ref",
]

CORE_PACKAGE = "scheduler_core"


class WorktreeError(Exception):
    """A git command failed or a ref does not name a commit (bad input: exit 2)."""


def _git(repo: Path, *args: str) -> str:
    try:
        # a session of its own: a terminal's Ctrl-C goes to schedperf, which lets a started
        # git command finish (clean-up must not lose a half-removed worktree)
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=False, start_new_session=True)
    except FileNotFoundError as exc:
        raise WorktreeError("git is not installed (needed to compare refs)") from exc
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()
        raise WorktreeError(f"git {' '.join(args)}: {detail[-1] if detail else 'failed'}")
    return proc.stdout.strip()


def repo_root(path: Path) -> Path:
    """The top folder of the git checkout holding ``path``."""
    try:
        return Path(_git(path, "rev-parse", "--show-toplevel"))
    except WorktreeError as exc:
        raise WorktreeError(f"{path} is not inside a git checkout: comparing refs needs the "
                       "schedperf repository (or pass --base-results/--head-results)") from exc


def is_ancestor(repo: Path, commit: str, of: str) -> bool:
    """Whether ``commit`` is in the history of ``of`` (False when git cannot tell)."""
    try:
        _git(repo, "merge-base", "--is-ancestor", commit, of)
    except WorktreeError:
        return False
    return True


def resolve_ref(repo: Path, ref: str) -> str:
    """The full commit hash ``ref`` names; WorktreeError naming the ref when there is none."""
    if not ref or ref.startswith("-"):
        raise WorktreeError(f"{ref!r} is not a git ref")
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options",
                    f"{ref}^{{commit}}")
    except WorktreeError:
        raise WorktreeError(f"unknown git ref {ref!r} in {repo} (git rev-parse --verify found no "
                       "commit by that name)") from None


@dataclass(frozen=True)
class Side:
    """One checked-out ref: its name as given, commit, and worktree folder."""

    ref: str
    commit: str
    worktree: Path

    @property
    def core(self) -> Path:
        return self.worktree / CORE_PACKAGE


@contextlib.contextmanager
def checked_out(repo: Path, refs: list[str]) -> Iterator[list[Side]]:
    """Check every ref out in its own detached worktree; all removed on exit, whatever
    happens (the temporary folder too, and git's worktree list is pruned)."""
    commits = [resolve_ref(repo, ref) for ref in refs]
    added: list[Path] = []
    tmp: Path | None = None
    try:
        with deferred_signals():  # made <=> cleaned up below
            tmp = Path(tempfile.mkdtemp(prefix="schedperf-compare-"))
        sides = []
        for i, (ref, commit) in enumerate(zip(refs, commits, strict=True)):
            path = tmp / f"side{i}-{commit[:12]}"
            with deferred_signals():  # registered in git <=> in ``added``
                added.append(path)
                _git(repo, "worktree", "add", "--detach", "--quiet", str(path), commit)
            if not (path / CORE_PACKAGE).is_dir():
                raise WorktreeError(f"{ref} ({commit[:12]}) has no {CORE_PACKAGE}/ folder: "
                               "not a schedperf commit")
            sides.append(Side(ref, commit, path))
        yield sides
    finally:
        with deferred_signals():
            for path in added:
                with contextlib.suppress(WorktreeError):
                    _git(repo, "worktree", "remove", "--force", str(path))
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            with contextlib.suppress(WorktreeError):
                _git(repo, "worktree", "prune")


def core_path_entry(core: Path, folder: Path, also: Sequence[Path] = ()) -> Path:
    """Make ``folder`` hold only a link named scheduler_core to ``core`` (and one link per
    folder of ``also``, under its own name: out-of-tree packages of the same checkout that
    this side imports from it too); returns ``folder`` (the PYTHONPATH entry that selects
    this scheduler_core)."""
    folder.mkdir(parents=True, exist_ok=True)
    for target, name in [(core, CORE_PACKAGE), *((p, p.name) for p in also)]:
        link = folder / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target.resolve(), target_is_directory=True)
    return folder
