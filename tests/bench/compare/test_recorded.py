"""Recorded sides (``--base-results`` / ``--head-results``): the uncommon section is filled from
the workloads' labels, ``--label`` and ``--name`` select workloads, and a workload that failed
in a recorded run is an error. The results files are written here, so nothing depends on how
fast the machine is."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from bench.cli.main import cli
from bench.compare.recorded import load_recorded, select_recorded
from reports.render import load_report

ROUNDS = (1, 2, 3, 4, 5, 6)
NOISE = (1.0, 1.01, 0.99, 1.005, 0.995, 1.002)
# name -> labels (test case's and own, as results.parquet joins them)
WORKLOADS = {"Edge/GatedPods": "performance,uncommon", "Basic/100Nodes": "performance,short",
             "Basic/500Nodes": "performance"}


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def results_file(path: Path, factors: dict[str, float], *,
                 failed: dict[str, str] | None = None, commit: str = "c" * 40) -> Path:
    """A results.parquet with SchedulingThroughput Average rows (1000 pods/s x factor x
    noise per round) and a workload_status row per workload and round; ``failed`` maps a
    workload to the reason it failed (no throughput then)."""
    failed = failed or {}
    rows = []
    for name, labels in WORKLOADS.items():
        test_case, workload = name.split("/")
        for rnd, noise in zip(ROUNDS, NOISE, strict=True):
            reason = failed.get(name)
            common = {"run_id": "20240101T000000Z-0000abcd", "round": rnd, "commit": commit,
                      "machine": "ci", "test_case": test_case, "workload": workload,
                      "labels": labels, "status": "failed" if reason else "ok",
                      "status_reason": reason}
            rows.append({**common, "metric": "workload_status",
                         "bucket": "failed" if reason else "ok",
                         "value": 0.0 if reason else 1.0})
            if not reason:
                rows.append({**common, "metric": "SchedulingThroughput", "bucket": "Average",
                             "value": 1000.0 * factors.get(name, 1.0) * noise})
    path.mkdir(parents=True)
    pl.DataFrame(rows).write_parquet(path / "results.parquet")
    return path


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    base = results_file(tmp_path / "base", {})
    head = results_file(tmp_path / "head", {"Edge/GatedPods": 0.85}, commit="d" * 40)
    return base, head


def test_uncommon_scenarios_come_from_the_labels(runs, tmp_path):
    base, head = runs
    out = tmp_path / "out"
    result = invoke("compare", "--base-results", str(base), "--head-results", str(head),
                    "--out", str(out))
    assert result.exit_code == 0, result.output
    report = load_report(out / "report.json")
    assert {r.workload: r.uncommon for r in report.results} == {
        "Edge/GatedPods": True, "Basic/100Nodes": False, "Basic/500Nodes": False}
    flagged = next(r for r in report.results if r.workload == "Edge/GatedPods")
    assert flagged.verdict == "regression"
    markdown = (out / "report.md").read_text()
    uncommon = markdown.split("#### Uncommon scenarios")[1].split("####")[0]
    assert "1 uncommon scenario checked" in uncommon and "Edge/GatedPods" in uncommon
    html = (out / "report.html").read_text()
    assert "1 uncommon scenario checked: Edge/GatedPods" in html


@pytest.mark.parametrize(("args", "expected", "label"), [
    (["--label", "uncommon"], {"Edge/GatedPods"}, "uncommon"),
    (["--label", "performance,-uncommon"], {"Basic/100Nodes", "Basic/500Nodes"},
     "performance,-uncommon"),
    (["--name", "Nodes$"], {"Basic/100Nodes", "Basic/500Nodes"}, None),
    (["--label", "performance", "--name", "^Basic/1"], {"Basic/100Nodes"}, "performance"),
], ids=["label", "label-minus", "name", "both"])
def test_label_and_name_select_recorded_workloads(runs, tmp_path, args, expected, label):
    base, head = runs
    out = tmp_path / "out"
    result = invoke("compare", "--base-results", str(base), "--head-results", str(head),
                    *args, "--out", str(out))
    assert result.exit_code == 0, result.output
    report = load_report(out / "report.json")
    assert {r.workload for r in report.results} == expected
    assert report.settings.label == label


@pytest.mark.parametrize(("args", "message"), [
    (["--label", "no-such-label"], "no workload matches label filter 'no-such-label'"),
    (["--name", "^Nothing"], "no workload matches --name '^Nothing'"),
    (["--name", "("], "not a valid regular expression"),
], ids=["label", "name", "bad-regex"])
def test_a_selection_that_leaves_nothing_is_bad_input(runs, tmp_path, args, message):
    base, head = runs
    result = invoke("compare", "--base-results", str(base), "--head-results", str(head),
                    *args, "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert message in result.output


def test_a_workload_that_failed_in_a_recorded_run_is_an_error(runs, tmp_path):
    base, _ = runs
    head = results_file(tmp_path / "broken", {"Edge/GatedPods": 0.85},
                        failed={"Basic/500Nodes": "internal error: KeyError: 'zone'"})
    out = tmp_path / "out"
    result = invoke("compare", "--base-results", str(base), "--head-results", str(head),
                    "--out", str(out))
    assert result.exit_code == 2, result.output
    data = json.loads((out / "report.json").read_text())
    assert data["verdict"] == "error"
    assert [(f["side"], f["status"], f["workloads"], f["rounds"]) for f in data["failures"]] == [
        ("head", "failed", ["Basic/500Nodes"], list(ROUNDS))]
    verdicts = {r["workload"]: r["verdict"] for r in data["results"]}
    assert verdicts == {"Edge/GatedPods": "regression", "Basic/100Nodes": "no change",
                        "Basic/500Nodes": "error"}
    first = (out / "report.md").read_text().split("\n#### ")[1]
    assert first.startswith("HEAD failed") and "KeyError: 'zone'" in first
    # the failed workload left out by --name: nothing failed among those compared
    result = invoke("compare", "--base-results", str(base), "--head-results", str(head),
                    "--name", "GatedPods", "--out", str(tmp_path / "o2"))
    assert result.exit_code == 0, result.output


def test_a_compare_folder_keeps_its_labels_and_failures(runs, tmp_path):
    base, head = runs
    broken = results_file(tmp_path / "broken", {},
                          failed={"Basic/500Nodes": "timed out after 60 s"})
    first = tmp_path / "first"
    assert invoke("compare", "--base-results", str(base), "--head-results", str(broken),
                  "--out", str(first)).exit_code == 2
    assert (first / "outcomes.parquet").is_file()
    # its HEAD side again, against a good run: the failure is still HEAD's
    out = tmp_path / "out"
    result = invoke("compare", "--base-results", str(head), "--head-results", f"{first}#head",
                    "--out", str(out))
    assert result.exit_code == 2, result.output
    data = json.loads((out / "report.json").read_text())
    assert [(f["side"], f["workloads"]) for f in data["failures"]] == [
        ("head", ["Basic/500Nodes"])]
    assert "timed out after 60 s" in data["failures"][0]["error"]
    # labels came along: --label and the uncommon flags work on a compare folder too
    out = tmp_path / "out2"
    result = invoke("compare", "--base-results", f"{first}#base", "--head-results",
                    f"{first}#head", "--label", "uncommon", "--out", str(out))
    assert result.exit_code == 0, result.output
    (r,) = load_report(out / "report.json").results
    assert (r.workload, r.uncommon) == ("Edge/GatedPods", True)


def test_an_old_compare_folder_without_labels_refuses_a_label_filter(runs, tmp_path):
    base, head = runs
    first = tmp_path / "first"
    assert invoke("compare", "--base-results", str(base), "--head-results", str(head),
                  "--out", str(first)).exit_code == 0
    (first / "outcomes.parquet").unlink()  # as written before outcomes.parquet existed
    rec = load_recorded(f"{first}#head", "head")
    assert rec.labels is None and rec.uncommon == {"Edge/GatedPods"}  # from report.json
    assert select_recorded(rec, None, "Gated").workloads() == {"Edge/GatedPods"}
    result = invoke("compare", "--base-results", f"{first}#base", "--head-results",
                    f"{first}#head", "--label", "short", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "records no workload labels" in result.output
