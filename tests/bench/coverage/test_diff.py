"""bench.coverage.diff and bench.coverage.changed on a real git repository: three-dot diffs,
hostile file names (data, never shell text), added / deleted / renamed files, deletion-only
hunks and multi-line statements."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from bench.coverage.changed import changed_statements
from bench.coverage.diff import ADDED, DELETED, MODIFIED, DiffError, changed_files, hunk_lines

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
       "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

MAIN = textwrap.dedent("""\
    import os


    def total(values):
        result = sum(
            values,
            0)
        return result


    def first(values):
        if not values:
            return None
        head = values[0]
        return head


    def last(values):
        return values[-1]
    """)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          env=ENV).stdout.decode("utf-8", "replace").strip()


def write(repo: Path, rel: str | bytes, text: str) -> Path:
    path = Path(os.fsdecode(os.path.join(os.fsencode(repo), os.fsencode(rel))))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def line(text: str, source: str) -> int:
    return next(i for i, x in enumerate(source.splitlines(), 1) if x.strip() == text)


# names that break naive parsing: a space, a newline, quotes, a glob character, a leading dash
HOSTILE = ["scheduler_core/with space.py", "scheduler_core/new\nline.py",
           "scheduler_core/quo\"te's.py", "scheduler_core/star*.py", "scheduler_core/-dash.py"]
NON_UTF8 = b"scheduler_core/bad\xff.py"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "scheduler_core/main.py", MAIN)
    write(repo, "scheduler_core/gone.py", "X = 1\n")
    write(repo, "scheduler_core/moved.py", "def f():\n    return 1\n")
    write(repo, "scheduler_core/starX.py", "A = 1\n")  # star*.py must not match it
    write(repo, "other/outside.py", "A = 1\n")
    for name in HOSTILE:
        write(repo, name, "A = 1\nB = 2\n")
    commit(repo, "base")
    return repo


def non_utf8_ok(repo: Path) -> bool:
    try:
        write(repo, NON_UTF8, "A = 1\nB = 2\n")
    except OSError:
        return False
    return True


def test_hostile_names_are_data(repo: Path) -> None:
    has_bad = non_utf8_ok(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    git(repo, "checkout", "-q", "-b", "topic")
    for name in HOSTILE:
        write(repo, name, "A = 1\nB = 3\n")  # line 2 changed
    if has_bad:
        write(repo, NON_UTF8, "A = 1\nB = 3\n")
    commit(repo, "change")
    changes = {c.path: c for c in changed_files(repo, "main", "topic")}
    expected = set(HOSTILE) | ({os.fsdecode(NON_UTF8)} if has_bad else set())
    assert set(changes) == expected  # starX.py is untouched: star*.py is no pattern
    for c in changes.values():
        assert (c.status, c.changed, c.deletion_points) == (MODIFIED, (2,), ())


def test_three_dots_diff_from_the_merge_base(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, "scheduler_core/main.py", MAIN.replace("return values[-1]", "return values[-2]"))
    commit(repo, "topic change")
    git(repo, "checkout", "-q", "main")
    write(repo, "scheduler_core/gone.py", "X = 2\n")  # after the fork: not the topic's change
    commit(repo, "main moves on")
    changes = changed_files(repo, "main", "topic")
    assert [(c.path, c.changed) for c in changes] == [
        ("scheduler_core/main.py", (line("return values[-1]", MAIN),))]


def test_added_deleted_renamed_and_outside_files(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    (repo / "scheduler_core/gone.py").unlink()
    git(repo, "mv", "scheduler_core/moved.py", "scheduler_core/renamed.py")
    write(repo, "scheduler_core/added.py", "def g():\n    return 2\n")
    write(repo, "scheduler_core/data.yaml", "a: 1\n")
    write(repo, "other/outside.py", "A = 2\n")
    commit(repo, "files")
    changes = {c.path: c.status for c in changed_files(repo, "main", "topic")}
    assert changes == {"scheduler_core/gone.py": DELETED, "scheduler_core/moved.py": DELETED,
                       "scheduler_core/renamed.py": ADDED, "scheduler_core/added.py": ADDED,
                       "scheduler_core/data.yaml": ADDED}
    got = changed_statements(repo, "main", "topic")
    assert got.lines == {"scheduler_core/renamed.py": {1, 2}, "scheduler_core/added.py": {1, 2}}
    assert set(got.deleted) == {"scheduler_core/gone.py", "scheduler_core/moved.py"}
    assert got.skipped == {"scheduler_core/data.yaml": "not a Python file"}
    assert got.head == git(repo, "rev-parse", "topic")


def test_multi_line_statements_and_deletion_only_hunks(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    head = (MAIN.replace("        0)", "        1)")        # inside sum(...)
                .replace("    if not values:\n        return None\n", ""))  # deleted only
    write(repo, "scheduler_core/main.py", head)
    commit(repo, "edit")
    (change,) = changed_files(repo, "main", "topic")
    assert change.changed == (line("1)", head),)
    assert change.deletion_points == (line("def first(values):", head),)
    got = changed_statements(repo, "main", "topic")
    assert got.lines == {"scheduler_core/main.py": {
        line("result = sum(", head),           # the statement's first line, not line 7
        line("def first(values):", head),      # before the deletion point
        line("head = values[0]", head),        # after it
    }}


def test_changes_to_blank_lines_and_comments_count_for_nothing(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, "scheduler_core/main.py", MAIN.replace("\n\ndef last", "\n# a note\ndef last"))
    commit(repo, "comment")
    got = changed_statements(repo, "main", "topic")
    assert got.lines == {} and got.modified == ("scheduler_core/main.py",)


def test_hunk_headers_only() -> None:
    diff = (b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -3 +3 @@ def f\n-a\n+b\n"
            b"@@ -10,2 +9,0 @@\n-c\n-d\n@@ -20,0 +19,3 @@\n+@@ -1 +1 @@ not a header\n+e\n+f\n")
    assert hunk_lines(diff) == ((3, 19, 20, 21), (9,))


def test_unknown_refs_and_option_like_refs_are_errors(repo: Path) -> None:
    with pytest.raises(DiffError, match="no-such-ref"):
        changed_statements(repo, "main", "no-such-ref")
    with pytest.raises(DiffError, match="not a git revision"):
        changed_files(repo, "--output=/tmp/x", "main")
