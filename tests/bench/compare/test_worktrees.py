"""Refs checked out in their own worktrees; each subprocess imports its own scheduler_core."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.compare.worktrees import (
    WorktreeError,
    checked_out,
    core_path_entry,
    is_ancestor,
    repo_root,
    resolve_ref,
)
from tests.builders import git, two_commit_core_repo


@pytest.fixture
def repo(tmp_path):
    return two_commit_core_repo(tmp_path / "repo")


def test_resolve_ref_gives_full_commits(repo):
    assert resolve_ref(repo, "one") == git(repo, "rev-parse", "one")
    assert resolve_ref(repo, "HEAD~1") == resolve_ref(repo, "one")
    assert len(resolve_ref(repo, "main")) == 40


@pytest.mark.parametrize("ref", ["nope", "one..two", "--help", "", "$(touch x)", "one;ls"])
def test_unknown_refs_are_clear_errors(repo, ref):
    with pytest.raises(WorktreeError, match=r"git ref"):
        resolve_ref(repo, ref)
    assert not (repo / "x").exists()


def test_repo_root_outside_a_checkout(tmp_path):
    with pytest.raises(WorktreeError, match="not inside a git checkout"):
        repo_root(tmp_path)


def _import_version(entry: Path, cwd: Path) -> tuple[str, str]:
    code = ("import os, scheduler_core as c; "
            "print(c.VERSION, os.path.realpath(os.path.dirname(c.__file__)))")
    env = {**os.environ, "PYTHONPATH": str(entry)}
    out = subprocess.run([sys.executable, "-P", "-c", code], cwd=cwd, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return out[0], out[1]


def test_each_side_imports_its_own_worktree(repo, tmp_path):
    with checked_out(repo, ["one", "two"]) as sides:
        assert [s.commit for s in sides] == [git(repo, "rev-parse", r) for r in ("one", "two")]
        seen = []
        for i, side in enumerate(sides):
            entry = core_path_entry(side.core, tmp_path / f"entry{i}")
            version, path = _import_version(entry, tmp_path)
            seen.append(version)
            assert Path(path) == side.core.resolve()
        assert seen == ["one", "two"]
        folders = [s.worktree for s in sides]
        assert all(f.is_dir() for f in folders)
    assert not any(f.exists() for f in folders)
    assert git(repo, "worktree", "list").count("\n") == 0  # only the main checkout


def test_worktrees_removed_when_the_body_fails(repo):
    with pytest.raises(KeyboardInterrupt), checked_out(repo, ["one"]) as sides:
        folder = sides[0].worktree
        raise KeyboardInterrupt
    assert not folder.exists()
    assert git(repo, "worktree", "list").count("\n") == 0


def test_unknown_ref_creates_nothing(repo):
    with pytest.raises(WorktreeError, match="unknown git ref 'nope'"), \
            checked_out(repo, ["one", "nope"]):
        pass
    assert git(repo, "worktree", "list").count("\n") == 0


def test_commit_without_scheduler_core_is_rejected(repo):
    git(repo, "rm", "-r", "--quiet", "scheduler_core")
    git(repo, "commit", "--quiet", "-m", "gone")
    with pytest.raises(WorktreeError, match="has no scheduler_core/ folder"), \
            checked_out(repo, ["HEAD"]):
        pass
    assert git(repo, "worktree", "list").count("\n") == 0


def test_is_ancestor(repo):
    assert is_ancestor(repo, "one", "two")
    assert not is_ancestor(repo, "two", "one")
    assert not is_ancestor(repo, "nope", "two")
