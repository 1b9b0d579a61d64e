"""The github-script steps of the PR workflows, run with node against a fake GitHub API.

The scripts are taken from the workflow files themselves, so what is tested is what runs.
Skipped when node is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.ci.test_workflows import load, steps

NODE = shutil.which("node")
HARNESS = Path(__file__).with_name("github_script_harness.js")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

REPO = {"owner": "acme", "repo": "sched"}
HEAD = "a" * 40
MARKER = "<!-- schedperf-report -->"


def script_of(workflow: str, job: str, step_id: str | None = None) -> str:
    chosen = [s for s in steps(load(workflow)["jobs"][job]) if "script" in s.get("with", {})
              and (step_id is None or s.get("id") == step_id)]
    return chosen[-1]["with"]["script"]


def run_script(script: str, scenario: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    assert NODE is not None
    script_file = tmp_path / "script.js"
    script_file.write_text(script)
    scenario_file = tmp_path / "scenario.json"
    scenario_file.write_text(json.dumps(scenario))
    proc = subprocess.run([NODE, str(HARNESS), str(script_file), str(scenario_file)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def pr(number: int = 12, *, sha: str = HEAD, repo: str | None = "acme/sched",
       state: str = "open") -> dict[str, Any]:
    return {"number": number, "state": state, "base": {"ref": "main"},
            "head": {"sha": sha, "repo": None if repo is None else {"full_name": repo}}}


def names(result: dict[str, Any]) -> list[str]:
    return [c["name"] for c in result["calls"]]


# --------------------------------------------------------------------------- comment upsert


def upsert(tmp_path: Path, *, number: str = "12", body: str = "## report\n",
           comments: list[dict[str, Any]] | None = None, current_sha: str = HEAD,
           workflow: str = "pr-benchmark") -> dict[str, Any]:
    report = tmp_path / "report"
    report.mkdir(exist_ok=True)
    (report / "pr-number").write_text(number + "\n")
    (report / "comment.md").write_text(body)
    job = "comment"
    scenario = {"context": {"eventName": "workflow_run", "payload": {}, "repo": REPO},
                "env": {"REPORT_DIR": str(report), "EXPECTED_HEAD_SHA": HEAD},
                "pulls": {"12": pr(sha=current_sha)}, "comments": comments or []}
    return run_script(script_of(workflow, job), scenario, tmp_path)


@pytest.mark.parametrize("workflow", ["pr-benchmark", "pr-comment"])
def test_first_report_creates_one_comment_with_the_marker(tmp_path: Path,
                                                          workflow: str) -> None:
    result = upsert(tmp_path, workflow=workflow)
    assert result["failed"] is None
    assert names(result) == ["pulls.get", "issues.listComments", "issues.createComment"]
    params = result["calls"][-1]["params"]
    assert params["issue_number"] == 12 and params["owner"] == "acme"
    assert params["body"] == f"{MARKER}\n## report\n"


def test_later_reports_edit_the_bots_comment_only(tmp_path: Path) -> None:
    comments = [
        {"id": 5, "user": {"login": "mallory"}, "body": f"quoting {MARKER}"},
        {"id": 6, "user": {"login": "github-actions[bot]"}, "body": "another bot comment"},
        {"id": 7, "user": {"login": "github-actions[bot]"}, "body": f"{MARKER}\nold"},
    ]
    result = upsert(tmp_path, body="new\n", comments=comments)
    assert names(result) == ["pulls.get", "issues.listComments", "issues.updateComment"]
    assert result["calls"][-1]["params"]["comment_id"] == 7
    assert result["calls"][-1]["params"]["body"] == f"{MARKER}\nnew\n"


def test_a_pull_request_that_moved_on_is_left_alone(tmp_path: Path) -> None:
    result = upsert(tmp_path, current_sha="b" * 40)
    assert names(result) == ["pulls.get"]
    assert result["failed"] is None
    assert any("the newer run comments" in n for n in result["notices"])


@pytest.mark.parametrize("number", ["0", "12abc", "1e3", "", "-1", "12\n13", "0x1f",
                                    "123456789012"],
                         ids=["zero", "suffix", "exponent", "empty", "negative", "two-lines",
                              "hex", "too-long"])
def test_an_untrusted_pr_number_is_refused_before_any_call(tmp_path: Path,
                                                           number: str) -> None:
    result = upsert(tmp_path, number=number)
    assert result["calls"] == []
    assert result["failed"] is not None and "pr-number" in result["failed"]


def test_an_oversized_body_is_cut_below_githubs_limit(tmp_path: Path) -> None:
    result = upsert(tmp_path, body="x" * 80_000)
    body = result["calls"][-1]["params"]["body"]
    assert body.startswith(MARKER) and len(body) <= 65_536
    assert body.rstrip().endswith("*(truncated)*")


# --------------------------------------------------------------------------- gate


def gate(tmp_path: Path, event: str, the_pr: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = {"pull_request": the_pr} if event == "pull_request" else {
        "issue": {"number": the_pr["number"], "pull_request": {}},
        "comment": {"body": "/benchmark", "author_association": "MEMBER"}}
    scenario = {"context": {"eventName": event, "payload": payload, "repo": REPO},
                "pulls": {str(the_pr["number"]): the_pr}}
    return run_script(script_of("pr-benchmark", "gate", "pr"), scenario, tmp_path)


@pytest.mark.parametrize(("event", "the_pr", "run", "same_repo", "api_calls"), [
    ("pull_request", pr(), "true", "true", []),
    ("pull_request", pr(repo="fork/sched"), "true", "false", []),
    ("pull_request", pr(repo=None), "true", "false", []),
    ("pull_request", pr(state="closed"), "false", "true", []),
    ("issue_comment", pr(), "true", "true", ["pulls.get"]),
    ("issue_comment", pr(repo="fork/sched"), "false", "false", ["pulls.get"]),
], ids=["same-repo", "labelled-fork", "deleted-fork", "closed", "comment-same-repo",
        "comment-on-fork"])
def test_gate_decides_and_reports_the_head(tmp_path: Path, event: str, the_pr: dict[str, Any],
                                           run: str, same_repo: str,
                                           api_calls: list[str]) -> None:
    result = gate(tmp_path, event, the_pr)
    assert result["failed"] is None
    assert names(result) == api_calls
    assert result["outputs"] == {"run": run, "pr": "12", "head-sha": HEAD, "base-ref": "main",
                                 "same-repo": same_repo}
    if event == "issue_comment" and same_repo == "false":
        assert any("benchmark\" label" in n for n in result["notices"])


# --------------------------------------------------------------------------- pr-comment find


@pytest.mark.parametrize(("artifacts", "found"), [
    ([{"name": "schedperf-comment", "expired": False}], "true"),
    ([{"name": "schedperf-compare", "expired": False}], "false"),
    ([{"name": "schedperf-comment", "expired": True}], "false"),
    ([], "false"),
], ids=["present", "other-artifact", "expired", "none"])
def test_pr_comment_looks_for_the_artifact_first(tmp_path: Path, artifacts: list,
                                                 found: str) -> None:
    scenario = {"context": {"eventName": "workflow_run", "payload": {}, "repo": REPO},
                "env": {"RUN_ID": "4242"}, "artifacts": artifacts}
    result = run_script(script_of("pr-comment", "comment", "find"), scenario, tmp_path)
    assert result["outputs"] == {"found": found}
    assert result["calls"][0]["params"]["run_id"] == 4242

