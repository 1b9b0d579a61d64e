"""A real git repository for tests of git order: empty commits with chosen committer dates
(and merges), made with the git command line and no user or system configuration."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

__all__ = ["START", "git", "make_repo"]

START = datetime(2025, 3, 1, tzinfo=UTC)


def git(repo: Path, *args: str, when: datetime | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when.isoformat()
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def make_repo(repo: Path, n: int, *, tags: dict[str, int] | None = None,
              dates: list[datetime] | None = None) -> list[str]:
    """A repository of ``n`` empty commits on ``main`` (oldest first; committed on
    ``dates[i]``, by default one day apart from START) with ``tags`` {name: index}."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commits = []
    for i in range(n):
        when = dates[i] if dates is not None else START + timedelta(days=i)
        git(repo, "commit", "-q", "--allow-empty", "-m", f"c{i}", when=when)
        commits.append(git(repo, "rev-parse", "HEAD"))
    for name, index in (tags or {}).items():
        git(repo, "tag", "-a", "-m", name, name, commits[index])
    return commits
