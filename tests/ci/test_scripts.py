"""The helper scripts of .github/scripts, run as the workflows run them (as programs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ci.conftest import ROOT, git

SCRIPTS = ROOT / ".github" / "scripts"
HEAD = "c" * 40
BASE = "b" * 40


def script(name: str, *args: str, cwd: Path | None = None,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os

    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True,
                          text=True, cwd=cwd, env=full_env, timeout=120, check=False)


# --------------------------------------------------------------------------- bench_comment


def prepare(tmp_path: Path, exit_code: str, report: str | None, *extra: str,
            pr: str = "12", head: str = HEAD) -> subprocess.CompletedProcess:
    compare_out = tmp_path / "compare-out"
    compare_out.mkdir(exist_ok=True)
    if report is not None:
        (compare_out / "report.md").write_text(report)
    return script("bench_comment.py", "prepare", "--compare-out", str(compare_out),
                  "--exit-code", exit_code, "--pr", pr, "--head-sha", head,
                  "--base-sha", BASE, "--run-url", "https://ci.example/run/1",
                  "--out", str(tmp_path / "comment"), *extra)


@pytest.mark.parametrize(("exit_code", "report", "expect", "absent"), [
    ("0", "# NO CHANGE\n", ["# NO CHANGE"], ["regression", "did not"]),
    ("1", "# REGRESSION\n", ["found a regression", "# REGRESSION"], ["did not"]),
    ("2", None, ["bad input", "exit 2"], ["report.md", "side failed"]),
    ("2", "### schedperf: ERROR — HEAD failed on 1 workload\n",
     ["a side failed** (exit 2)", "HEAD failed on 1 workload"], ["bad input"]),
    ("", None, ["did not finish"], []),
    ("137", None, ["failed** (exit 137)"], []),
    ("0", None, ["without writing report.md"], []),
], ids=["no-change", "regression", "bad-input", "side-failed", "not-run", "killed",
        "no-report"])
def test_prepare_writes_the_comment_files(tmp_path: Path, exit_code: str, report: str | None,
                                          expect: list[str], absent: list[str]) -> None:
    proc = prepare(tmp_path, exit_code, report)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "comment"
    text = (out / "comment.md").read_text()
    for needle in expect:
        assert needle in text
    for needle in absent:
        assert needle not in text
    assert f"BASE `{BASE[:12]}`" in text and f"HEAD `{HEAD[:12]}`" in text
    assert "[workflow run](https://ci.example/run/1)" in text
    assert (out / "pr-number").read_text() == "12\n"
    assert (out / "head-sha").read_text() == HEAD + "\n"
    assert (out / "exit-code").read_text() == exit_code + "\n"


def test_prepare_appends_the_same_text_to_the_step_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    proc = prepare(tmp_path, "0", "# NO CHANGE\n", "--summary", str(summary))
    assert proc.returncode == 0, proc.stderr
    comment = (tmp_path / "comment" / "comment.md").read_text()
    assert summary.read_text() == "earlier step\n" + comment


def test_prepare_truncates_a_huge_report_below_the_limit(tmp_path: Path) -> None:
    report = "".join(f"| row {i} | {'é' * 40} |\n" for i in range(3000))
    proc = prepare(tmp_path, "0", report)
    assert proc.returncode == 0, proc.stderr
    data = (tmp_path / "comment" / "comment.md").read_bytes()
    assert len(data) <= 60_000
    text = data.decode()  # still valid UTF-8
    assert "report truncated" in text and text.rstrip().endswith("</sub>")


@pytest.mark.parametrize(("pr", "head", "message"), [
    ("12; rm -rf /", HEAD, "--pr"), ("0", HEAD, "--pr"), ("12", "abc", "--head-sha"),
    ("12", HEAD.upper(), "--head-sha"),
], ids=["injection", "zero", "short-sha", "upper-case-sha"])
def test_prepare_refuses_bad_identifiers(tmp_path: Path, pr: str, head: str,
                                         message: str) -> None:
    proc = prepare(tmp_path, "0", "# x\n", pr=pr, head=head)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not (tmp_path / "comment").exists()


@pytest.mark.parametrize(("exit_code", "status", "message"), [
    ("0", 0, None), ("1", 1, "regression"), ("2", 2, "a side failed or bad input"),
    ("", 1, "did not finish"),
    ("137", 137, "exit status 137"), ("x", 1, "exit status x"),
], ids=["ok", "regression", "bad-input", "not-run", "killed", "garbage"])
def test_verdict_exits_like_compare_with_an_annotation(exit_code: str, status: int,
                                                       message: str | None) -> None:
    proc = script("bench_comment.py", "verdict", "--exit-code", exit_code)
    assert proc.returncode == status
    if message is None:
        assert "::error" not in proc.stdout
    else:
        assert proc.stdout.startswith("::error title=schedperf compare::")
        assert message in proc.stdout


# --------------------------------------------------------------------------- data_branch


def test_data_branch_round_trip(git_origin: tuple[Path, Path], tmp_path: Path) -> None:
    origin, clone = git_origin
    path = clone / ".asv" / "results"
    proc = script("data_branch.py", "restore", "--branch", "asv-results", "--path", str(path),
                  cwd=clone)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "starts empty" in proc.stdout
    assert [p.name for p in path.iterdir()] == [".git"]  # no file of main leaked in

    (path / "machine").mkdir()
    (path / "machine" / "r.json").write_text("{}")
    (path / "_ingest.lock").write_text("")
    proc = script("data_branch.py", "persist", "--branch", "asv-results", "--path", str(path),
                  "--message", "first results", "--ignore", "_ingest.lock", cwd=clone)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = git(origin, "ls-tree", "-r", "--name-only", "asv-results").splitlines()
    assert sorted(files) == [".gitignore", "machine/r.json"]
    assert git(origin, "log", "-1", "--format=%an <%ae>|%s", "asv-results") == \
        "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>|" \
        "first results"
    assert git(origin, "rev-list", "--count", "main") == "3"  # main untouched

    # nothing new: no commit
    proc = script("data_branch.py", "persist", "--branch", "asv-results", "--path", str(path),
                  "--message", "again", "--ignore", "_ingest.lock", cwd=clone)
    assert proc.returncode == 0 and "nothing changed" in proc.stdout
    assert git(origin, "rev-list", "--count", "asv-results") == "1"

    # a fresh clone gets the data back, and adds to it
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "--quiet", str(origin), str(other)], check=True,
                   capture_output=True)
    restored = other / "store"
    proc = script("data_branch.py", "restore", "--branch", "asv-results", "--path",
                  str(restored), cwd=other)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (restored / "machine" / "r.json").read_text() == "{}"
    (restored / "machine" / "s.json").write_text("[]")
    proc = script("data_branch.py", "persist", "--branch", "asv-results", "--path",
                  str(restored), "--message", "second", cwd=other)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(origin, "rev-list", "--count", "asv-results") == "2"
    assert "machine/s.json" in git(origin, "ls-tree", "-r", "--name-only", "asv-results")


def test_data_branch_push_race_fails_with_a_message(git_origin: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    """Two jobs (two clones) restore the same state; the second to push loses."""
    origin, clone = git_origin
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "--quiet", str(origin), str(other)], check=True,
                   capture_output=True)
    first, second = clone / "data", other / "data"
    for repo, path in ((clone, first), (other, second)):
        assert script("data_branch.py", "restore", "--branch", "data", "--path", str(path),
                      cwd=repo).returncode == 0
    (first / "x").write_text("1")
    assert script("data_branch.py", "persist", "--branch", "data", "--path", str(first),
                  "--message", "one", cwd=clone).returncode == 0
    (second / "y").write_text("2")
    proc = script("data_branch.py", "persist", "--branch", "data", "--path", str(second),
                  "--message", "two", cwd=other)
    assert proc.returncode == 1
    assert proc.stdout.startswith("::error title=data_branch persist::pushing data failed")
    assert git(origin, "ls-tree", "-r", "--name-only", "data") == "x"


@pytest.mark.parametrize(("args", "message"), [
    (["restore", "--branch=-x", "--path", "p"], "not a valid branch name"),
    (["restore", "--branch", "a..b", "--path", "p"], "not a valid branch name"),
    (["restore", "--branch", "d", "--path", "busy"], "exists and is not empty"),
    (["persist", "--branch", "d", "--path", "busy", "--message", "m"], "not a worktree"),
], ids=["dash", "dots", "busy-folder", "persist-without-restore"])
def test_data_branch_bad_input(git_origin: tuple[Path, Path], args: list[str],
                               message: str) -> None:
    _, clone = git_origin
    (clone / "busy").mkdir()
    (clone / "busy" / "f").write_text("x")
    proc = script("data_branch.py", *args, cwd=clone)
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr


# --------------------------------------------------------------------------- asv_commits


def _result(results: Path, machine: str, commit: str) -> None:
    folder = results / machine
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{commit[:8]}-virtualenv-py3.11.json").write_text(
        json.dumps({"commit_hash": commit, "version": 2}))
    (folder / "machine.json").write_text(json.dumps({"machine": machine}))


@pytest.mark.parametrize(("measured", "limit", "expected"), [
    ([], 3, [0, 1, 2]),
    ([], 2, [0, 1]),
    ([1], 3, [0]),
    ([0], 3, []),
    ([2], 5, [0, 1]),
], ids=["nothing-measured", "capped", "one-new", "up-to-date", "two-new"])
def test_asv_commits_stops_at_the_first_measured(git_origin: tuple[Path, Path],
                                                 tmp_path: Path, measured: list[int],
                                                 limit: int, expected: list[int]) -> None:
    _, clone = git_origin
    history = git(clone, "rev-list", "HEAD").split()  # newest first
    results = tmp_path / "results"
    for i in measured:
        _result(results, "github-actions", history[i])
    _result(results, "elsewhere", history[0])  # another machine's results do not count
    (results / "github-actions").mkdir(parents=True, exist_ok=True)
    (results / "github-actions" / "broken.json").write_text("{not json")
    out = tmp_path / "commits.txt"
    github_output = tmp_path / "github_output"
    proc = script("asv_commits.py", "--results", str(results), "--machine", "github-actions",
                  "--max", str(limit), "--out", str(out), cwd=clone,
                  env={"GITHUB_OUTPUT": str(github_output)})
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().split() == [history[i] for i in expected]
    assert github_output.read_text() == f"count={len(expected)}\n"


def test_asv_commits_rejects_a_zero_limit(tmp_path: Path) -> None:
    proc = script("asv_commits.py", "--results", str(tmp_path), "--machine", "m", "--max", "0",
                  "--out", str(tmp_path / "c"))
    assert proc.returncode == 2 and "--max" in proc.stderr
