"""The commit of the checkout holding a scheduler_core, read from .git files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.measure.coreinfo import git_head
from tests.builders import git, two_commit_core_repo


@pytest.fixture
def repo(tmp_path):
    return two_commit_core_repo(tmp_path / "repo")


def layouts(repo: Path, tmp: Path) -> dict[str, tuple[Path, str]]:
    """folder -> commit git rev-parse gives, for each way a ref can be stored."""
    out = {"loose-branch-ref": (repo / "scheduler_core", git(repo, "rev-parse", "HEAD"))}
    wt = tmp / "wt"
    git(repo, "worktree", "add", "--detach", "--quiet", str(wt), "HEAD~1")
    out["linked-worktree-detached"] = (wt / "scheduler_core", git(wt, "rev-parse", "HEAD"))
    return out


@pytest.mark.parametrize("case", ["loose-branch-ref", "linked-worktree-detached"])
def test_head_matches_git_rev_parse(repo, tmp_path, case):
    folder, want = layouts(repo, tmp_path)[case]
    assert git_head(folder, allow_subprocess=False) == want


def test_packed_refs_and_branch_worktree(repo, tmp_path):
    git(repo, "branch", "side", "HEAD~1")
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert git_head(repo, allow_subprocess=False) == git(repo, "rev-parse", "HEAD")
    wt = tmp_path / "side"
    git(repo, "worktree", "add", "--quiet", str(wt), "side")
    assert git_head(wt / "scheduler_core", allow_subprocess=False) == git(
        repo, "rev-parse", "side")


def test_outside_a_checkout_there_is_no_commit(tmp_path):
    assert git_head(tmp_path, allow_subprocess=False) is None
