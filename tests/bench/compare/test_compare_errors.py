"""A side that fails is an error, never "inconclusive": schedperf compare end to end with a HEAD
whose scheduler_core does not import (a SyntaxError in a plugin module) or breaks on one
workload only. Exit status 2 with or without --fail-on-regression, verdict ERROR, and every
report (md, html, json, the PR comment) opens with which side, which workloads and the end of
the error. No timing is asserted: the outcomes do not depend on how fast the machine is."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli.main import cli
from reports.render import load_report
from tests.builders import git, tiny_config

ROOT = Path(__file__).resolve().parents[3]
NODE_PORTS = Path("scheduler_core") / "plugins" / "node_ports.py"
NODE_NAME = Path("scheduler_core") / "plugins" / "node_name.py"
# three tiny workloads, in this order; HEAD's broken NodeName fails the 13-node one only
CONFIG = tiny_config(("10Nodes", [], 10, 5, 20), ("13Nodes", [], 13, 5, 20),
                     ("11Nodes", [], 11, 5, 20), labels="compare, compare-time")
WORKLOADS = ["Tiny/10Nodes", "Tiny/13Nodes", "Tiny/11Nodes"]


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "configs" / "misc"
    folder.mkdir(parents=True)
    (folder / "performance-config.yaml").write_text(CONFIG)
    return folder.parent


def core_repo(root: Path, change: Callable[[Path], None]) -> Path:
    """A repository holding a copy of this scheduler_core: commit "base" as is, then commit
    "head" after ``change(root)`` edited it (branch main: main~1 is BASE, main is HEAD)."""
    shutil.copytree(ROOT / "scheduler_core", root / "scheduler_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    git(root, "init", "--quiet", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "base")
    change(root)
    git(root, "commit", "--quiet", "-am", "head")
    return root


def _append(relative: Path, text: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / relative
        path.write_text(path.read_text() + text)
    return change


def _replace(relative: Path, old: str, new: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        path = root / relative
        source = path.read_text()
        assert old in source, f"{relative} changed: update this test's edit"
        path.write_text(source.replace(old, new, 1))
    return change


def _sections(markdown: str) -> list[str]:
    """report.md cut at its ``#### `` headings: [headline part, first section, ...]."""
    return markdown.split("\n#### ")


def _comment_module():
    path = ROOT / ".github" / "scripts" / "bench_comment.py"
    spec = importlib.util.spec_from_file_location("bench_comment", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_head_with_a_syntax_error_is_an_error_and_the_report_says_why(config, tmp_path):
    repo = core_repo(tmp_path / "repo", _append(NODE_PORTS, "\n\ndef broken(:\n    pass\n"))
    out = tmp_path / "out"
    result = invoke("compare", "main~1", "main", "--repo", str(repo), "--config", str(config),
                    "--no-select-changed",
                    "--measure", "time", "--repeat", "2", "--out", str(out))
    # no --fail-on-regression: a failed side still fails the command
    assert result.exit_code == 2, result.output
    assert "HEAD failed" in result.output and "SyntaxError" in result.output

    data = json.loads((out / "report.json").read_text())
    assert data["verdict"] == "error"
    (failure,) = data["failures"]
    assert (failure["side"], failure["mode"], failure["workloads"], failure["rounds"]) == (
        "head", "time", WORKLOADS, [1, 2])
    assert "SyntaxError: invalid syntax" in failure["error"]
    assert "def broken(:" in failure["error"]
    # the file is named as in the repository, not in a temporary folder
    assert f'File "{NODE_PORTS}", line' in failure["error"]
    # BASE was measured; nothing about these workloads is judged
    report = load_report(out / "report.json")
    assert report.results and {r.verdict for r in report.results} == {"error"}
    assert {r.workload for r in report.results} == set(WORKLOADS)

    markdown = (out / "report.md").read_text()
    head, first, *rest = _sections(markdown)
    assert head.startswith("### schedperf: ERROR — HEAD failed on 3 workloads")
    assert first.startswith("HEAD failed")
    assert "SyntaxError: invalid syntax" in first and "def broken(:" in first
    assert all("SyntaxError" not in section for section in rest)
    assert rest[0].startswith("Regressions and improvements")

    html = (out / "report.html").read_text()
    assert "SyntaxError: invalid syntax" in html
    assert html.index("HEAD failed") < html.index("<h2>Compared</h2>")

    comment = _comment_module().comment_text(markdown, "2", head_sha="b" * 40)
    assert comment.index("a side failed") < comment.index("HEAD failed on 3 workloads")
    assert "SyntaxError: invalid syntax" in comment


BREAK_13 = ("        wanted = pod.spec.node_name\n        if not wanted:\n",
            "        if len(table) == 13:\n{action}\n"
            "        wanted = pod.spec.node_name\n        if not wanted:\n")


@pytest.mark.parametrize(("action", "error", "lost"), [
    # an exception in a plugin: the runner reports that workload failed, the worker goes on
    ("            raise RuntimeError('boom on 13 nodes')", "RuntimeError: boom on 13 nodes",
     ["Tiny/13Nodes"]),
    # the worker process dies: the workloads before it are kept, it and the rest are lost
    ("            import os; os._exit(3)", "worker exited with status 3",
     ["Tiny/13Nodes", "Tiny/11Nodes"]),
], ids=["raises", "process-exits"])
def test_a_head_that_breaks_on_one_workload_fails_that_workload_only(config, tmp_path, action,
                                                                     error, lost):
    old, new = BREAK_13
    repo = core_repo(tmp_path / "repo", _replace(NODE_NAME, old, new.format(action=action)))
    out = tmp_path / "out"
    result = invoke("compare", "main~1", "main", "--repo", str(repo), "--config", str(config),
                    "--no-select-changed",
                    "--measure", "time", "--repeat", "1", "--out", str(out))
    assert result.exit_code == 2, result.output
    data = json.loads((out / "report.json").read_text())
    assert data["verdict"] == "error"
    broke = [f for f in data["failures"] if error in f["error"]]
    assert len(broke) == 1, data["failures"]
    assert (broke[0]["side"], broke[0]["workloads"]) == ("head", lost)
    # nothing else failed on BASE or HEAD (a missing throughput sample would be "no data")
    assert all(f["status"] == "no data" for f in data["failures"] if f is not broke[0])
    # the workloads HEAD ran are still judged: their cpu_per_pod has a verdict
    judged = {r["workload"]: r["verdict"] for r in data["results"]
              if r["metric"] == "cpu_per_pod"}
    for name in WORKLOADS:
        assert (judged[name] == "error") == (name in lost), judged
    first = _sections((out / "report.md").read_text())[1]
    assert first.startswith("HEAD failed") and error in first


def test_a_failed_side_fails_with_and_without_the_regression_gate(tmp_path):
    """Recorded sides: a compare folder whose HEAD failed, compared again (no worker runs)."""
    folder = tmp_path / "recorded"
    folder.mkdir()
    import polars as pl

    from bench.compare.samples import outcome_row, outcomes_frame

    rows = [{"side": side, "mode": "time", "workload": w, "metric": "cpu_per_pod",
             "unit": "s/pod", "round": rnd, "value": 1e-4 * (1 + rnd / 100)}
            for side in ("base", "head") for w in ("T/ok",) for rnd in (1, 2, 3)]
    pl.DataFrame(rows).write_parquet(folder / "samples.parquet")
    outcomes_frame(
        [outcome_row(s, "time", "T/ok", r, "ok", None, "compare") for s in ("base", "head")
         for r in (1, 2, 3)]
        + [outcome_row("base", "time", "T/bad", r, "ok", None, "compare") for r in (1, 2, 3)]
        + [outcome_row("head", "time", "T/bad", r, "timeout", "timed out after 60 s", "compare")
           for r in (1, 2, 3)]).write_parquet(folder / "outcomes.parquet")
    for i, gate in enumerate(([], ["--fail-on-regression"])):
        out = tmp_path / f"o{i}"
        result = invoke("compare", "--base-results", f"{folder}#base", "--head-results",
                        f"{folder}#head", *gate, "--out", str(out))
        assert result.exit_code == 2, result.output
        data = json.loads((out / "report.json").read_text())
        assert data["verdict"] == "error"
        assert [(f["side"], f["status"], f["workloads"], f["rounds"]) for f in
                data["failures"]] == [("head", "timeout", ["T/bad"], [1, 2, 3])]
        assert "timed out after 60 s" in (out / "report.md").read_text()
        assert {r["workload"]: r["verdict"] for r in data["results"]}["T/ok"] != "error"
