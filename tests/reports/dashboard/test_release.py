"""HEAD and the previous release: git reading and the choice among measured commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports.dashboard.release import (
    GitHistory,
    Release,
    Selection,
    read_git,
    select_commits,
)
from tests.reports.dashboard.conftest import make_repo

# history newest first: c5 (tip) ... c0
ORDER = tuple(f"c{i}" for i in range(5, -1, -1))


@pytest.mark.parametrize(("tags", "measured", "expected"), [
    ({"c1": ("v1.0",)}, {"c5", "c1"}, Selection(head="c5", base=Release("v1.0", "c1"))),
    ({"c1": ("v1.0",), "c3": ("v1.1",)}, {"c5", "c3", "c1"},
     Selection(head="c5", base=Release("v1.1", "c3"))),
    ({"c1": ("v1.0",), "c3": ("v1.1",)}, {"c5", "c1"},
     Selection(head="c5", base=Release("v1.0", "c1"), skipped=(Release("v1.1", "c3"),))),
    ({"c1": ("v1.0",)}, {"c3", "c1"},
     Selection(head="c3", base=Release("v1.0", "c1"), head_behind=2)),
    ({"c5": ("v2.0",), "c1": ("v1.0",)}, {"c5", "c1"},
     Selection(head="c5", base=Release("v1.0", "c1"))),
    ({}, {"c5"}, Selection(head="c5", reason="no release tag yet")),
    ({"c5": ("v2.0",)}, {"c5"},
     Selection(head="c5", reason="no release tag yet before HEAD (v2.0 is HEAD itself)")),
    ({"c1": ("v1.0",)}, {"c5"},
     Selection(head="c5", skipped=(Release("v1.0", "c1"),),
               reason="no release tag older than HEAD has results in the store "
                      "(1 without results)")),
    ({"c1": ("v1.0",)}, {"other"},
     Selection(reason="no commit in the history of main has results in the store")),
], ids=["release", "nearest-release", "skips-unmeasured-release", "head-behind-tip",
        "head-is-a-release", "no-tags", "only-head-tagged", "release-not-measured",
        "nothing-measured"])
def test_select_commits(tags: dict[str, tuple[str, ...]], measured: set[str],
                        expected: Selection) -> None:
    git = GitHistory(ref="main", tip="c5", order=ORDER, tags=tags)
    assert select_commits(git, measured) == expected


def test_shallow_clone_is_mentioned() -> None:
    git = GitHistory(ref="main", tip="c5", order=("c5",), tags={}, shallow=True)
    assert "shallow" in select_commits(git, {"c5"}).reason


def test_read_git(tmp_path: Path) -> None:
    commits = make_repo(tmp_path / "repo", n=4,
                        tags={"v1.0": 0, "release-1.1": 1, "v1.2": 1, "nightly": 2})
    git = read_git(tmp_path / "repo")
    assert git.tip == commits[-1] and git.order == tuple(reversed(commits))
    assert git.tags == {commits[0]: ("v1.0",), commits[1]: ("release-1.1", "v1.2")}
    assert read_git(tmp_path / "repo", tag_pattern="^nightly$").tags == {
        commits[2]: ("nightly",)}
    older = read_git(tmp_path / "repo", ref=commits[1])
    assert older.order == (commits[1], commits[0])
