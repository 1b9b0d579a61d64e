"""Which commits to compare: the newest measured commit of a ref against the previous release.

The store knows commits but not tags, so tags come from a git checkout (``--repo``):
``git rev-list --topo-order REF`` orders the history (newest first) and
``git tag --merged REF`` lists the tags reachable from it. HEAD is the newest commit of that
history with results in the store; BASE is the nearest older commit carrying a release tag
(a tag matching ``tag_pattern``, by default ``v1.2.3``, ``1.2``, ``release-1.2``) with results
in the store. Release tags without results are listed as skipped.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DEFAULT_TAG_PATTERN", "GitHistory", "Release", "ReleaseGitError", "Selection",
           "read_git", "select_commits"]

DEFAULT_TAG_PATTERN = r"^(v|release-)?\d+(\.\d+)*$"
_TIMEOUT = 120


class ReleaseGitError(Exception):
    """The ``--repo`` checkout cannot give the release history (not a git checkout, unknown
    ref, bad tag pattern). Distinct from ``reports.store.GitError`` (the store's commit
    details) and ``bench.compare.worktrees.WorktreeError`` (compare's checkouts)."""


@dataclass(frozen=True)
class Release:
    tag: str  # the tags on the commit, comma-joined when several
    commit: str


@dataclass(frozen=True)
class GitHistory:
    ref: str
    tip: str  # the commit ``ref`` names
    order: tuple[str, ...]  # commits reachable from the tip, newest first
    tags: dict[str, tuple[str, ...]]  # commit -> its release tags (sorted)
    shallow: bool = False


@dataclass(frozen=True)
class Selection:
    head: str | None = None
    base: Release | None = None
    head_behind: int = 0  # commits between the ref's tip and HEAD (HEAD not measured yet)
    skipped: tuple[Release, ...] = field(default=())  # release tags without results
    reason: str = ""  # why there is nothing to compare (empty when head and base are set)


def _git(repo: Path, *args: str) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                              text=True, timeout=_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReleaseGitError(f"--repo {repo}: cannot run git: {exc}") from exc
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["unknown error"])[0]
        raise ReleaseGitError(f"--repo {repo}: git {args[0]} failed: {first}")
    return proc.stdout


def read_git(repo: Path, ref: str = "HEAD",
             tag_pattern: str = DEFAULT_TAG_PATTERN) -> GitHistory:
    """The history of ``ref`` in ``repo`` and its release tags."""
    try:
        pattern = re.compile(tag_pattern)
    except re.error as exc:
        raise ReleaseGitError(f"--tag-pattern {tag_pattern!r} is not a valid regular "
                              f"expression: {exc}") from exc
    if not Path(repo).is_dir():
        raise ReleaseGitError(f"--repo {repo}: no such folder")
    _git(repo, "rev-parse", "--git-dir")
    try:
        tip = _git(repo, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    except ReleaseGitError as exc:
        raise ReleaseGitError(f"--repo {repo}: {ref!r} does not name a commit") from exc
    tip = tip.strip()
    order = tuple(_git(repo, "rev-list", "--topo-order", tip).split())
    tags: dict[str, list[str]] = {}
    listing = _git(repo, "tag", "--merged", tip,
                   "--format=%(refname:short)%00%(objectname)%00%(*objectname)")
    for line in listing.splitlines():
        name, obj, peeled = [*line.split("\0"), "", ""][:3]
        if pattern.search(name):
            tags.setdefault(peeled or obj, []).append(name)
    shallow = _git(repo, "rev-parse", "--is-shallow-repository").strip() == "true"
    return GitHistory(ref=ref, tip=tip, order=order,
                      tags={c: tuple(sorted(t)) for c, t in tags.items()}, shallow=shallow)


def select_commits(git: GitHistory, measured: set[str]) -> Selection:
    """HEAD and BASE among ``measured`` commits (module docstring)."""
    position = next((i for i, c in enumerate(git.order) if c in measured), None)
    if position is None:
        return Selection(reason=f"no commit in the history of {git.ref} has results in the "
                                "store")
    head = git.order[position]
    skipped = []
    for commit in git.order[position + 1:]:
        if commit not in git.tags:
            continue
        release = Release(", ".join(git.tags[commit]), commit)
        if commit in measured:
            return Selection(head=head, base=release, head_behind=position,
                             skipped=tuple(skipped))
        skipped.append(release)
    if skipped:
        reason = ("no release tag older than HEAD has results in the store "
                  f"({len(skipped)} without results)")
    else:
        reason = "no release tag yet"
        if head in git.tags:
            reason += f" before HEAD ({', '.join(git.tags[head])} is HEAD itself)"
        if git.shallow:
            reason += " (the clone is shallow: fetch the whole history, e.g. fetch-depth: 0)"
    return Selection(head=head, head_behind=position, skipped=tuple(skipped), reason=reason)
