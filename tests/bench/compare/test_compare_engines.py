"""The compare report's engines section: a recorded side from ``schedperf run --engine both``
carries core and kube-scheduler pods/s per workload and GOMAXPROCS with their ratio into
report.json, report.md and report.html, and ``schedperf report`` renders it again. The results
files are written here (no Go, nothing timed)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from reports.render import load_report
from tests.bench.compare.test_recorded import NOISE, invoke, results_file
from workloads.result import ENGINE_CORE, ENGINE_KUBE


def _engine_rows(workload: str, gomaxprocs: int, pods_s: float, cpu: float) -> list[dict]:
    test_case, name = workload.split("/")
    common = {"run_id": "20240101T000000Z-0000abcd", "round": 1, "commit": "d" * 40,
              "machine": "ci", "test_case": test_case, "workload": name,
              "labels": "performance", "status": "ok", "status_reason": None,
              "engine": ENGINE_KUBE, "engine_gomaxprocs": gomaxprocs,
              "kubernetes_version": "v1.34.4"}
    return [{**common, "metric": "SchedulingThroughput", "bucket": "Average", "value": pods_s},
            {**common, "metric": "schedperf_cpu_seconds", "bucket": "Total", "value": cpu},
            {**common, "metric": "schedperf_pods", "bucket": "Scheduled", "value": 100.0}]


def _with_engines(folder: Path) -> Path:
    """``folder``'s results as a run --engine both wrote them: the core rows marked as such
    (with CPU and pods for round 1), and the kube-scheduler engine on Basic/100Nodes at
    GOMAXPROCS 1 and 2."""
    core = pl.read_parquet(folder / "results.parquet").with_columns(
        engine=pl.lit(ENGINE_CORE), engine_gomaxprocs=pl.lit(None, pl.Int64),
        kubernetes_version=pl.lit(None, pl.String))
    first = core.filter((pl.col("round") == 1) & (pl.col("metric") == "workload_status"))
    extra = pl.concat([first.with_columns(metric=pl.lit("schedperf_cpu_seconds"),
                                          bucket=pl.lit("Total"), value=pl.lit(0.01)),
                       first.with_columns(metric=pl.lit("schedperf_pods"),
                                          bucket=pl.lit("Scheduled"), value=pl.lit(100.0))])
    kube = pl.DataFrame(_engine_rows("Basic/100Nodes", 1, 40.0, 0.2)
                        + _engine_rows("Basic/100Nodes", 2, 50.0, 0.3),
                        schema_overrides={"engine_gomaxprocs": pl.Int64})
    when = pl.lit(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    frame = pl.concat([core, extra, kube], how="diagonal_relaxed").with_columns(timestamp=when)
    frame.write_parquet(folder / "results.parquet")
    return folder


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    return (results_file(tmp_path / "base", {}),
            _with_engines(results_file(tmp_path / "head", {}, commit="d" * 40)))


def test_head_engines_and_ratio_reach_every_report_form(sides, tmp_path):
    base, head = sides
    out = tmp_path / "out"
    result = invoke("compare", "--base-results", str(base), "--head-results", str(head),
                    "--out", str(out))
    assert result.exit_code == 0, result.output
    report = load_report(out / "report.json")
    got = [(e.side, e.row.workload, e.row.gomaxprocs, e.row.kube_pods_per_s,
            round(e.row.ratio or 0, 6), round(e.row.kube_cpu_ms_per_pod or 0, 6))
           for e in report.engines]
    core_pods_s = 1000.0 * sum(NOISE) / len(NOISE)  # the mean over the run's rounds
    assert got == [("head", "Basic/100Nodes", 1, 40.0, round(core_pods_s / 40, 6), 2.0),
                   ("head", "Basic/100Nodes", 2, 50.0, round(core_pods_s / 50, 6), 3.0)]
    section = (out / "report.md").read_text().split(
        "#### scheduler_core and the real kube-scheduler")[1].split("####")[0]
    assert "| HEAD | Basic/100Nodes | 1 | 1000.3 | 40.0 | 25.0x | 0.100 | 2.000 |" in section
    assert "| HEAD | Basic/100Nodes | 2 | 1000.3 | 50.0 | 20.0x | 0.100 | 3.000 |" in section
    assert "25.0x" in (out / "report.html").read_text()
    # the kube-scheduler rows are not compared as a side of the verdict
    assert {r.head.n for r in report.results if r.workload == "Basic/100Nodes"} == {6}

    again = invoke("report", str(out / "report.json"), "--format", "json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["engines"] == json.loads(
        (out / "report.json").read_text())["engines"]


def test_name_selection_drops_the_other_workloads_engine_rows(sides, tmp_path):
    base, head = sides
    out = tmp_path / "out"
    result = invoke("compare", "--base-results", str(base), "--head-results", str(head),
                    "--name", "500Nodes", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert load_report(out / "report.json").engines == ()
    assert "real kube-scheduler" not in (out / "report.md").read_text()


def test_a_bad_engines_entry_is_named(sides, tmp_path):
    base, head = sides
    out = tmp_path / "out"
    assert invoke("compare", "--base-results", str(base), "--head-results", str(head),
                  "--out", str(out)).exit_code == 0
    data = json.loads((out / "report.json").read_text())
    data["engines"][1]["kube_pods_per_s"] = "fast"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    result = invoke("report", str(bad))
    assert result.exit_code == 2
    assert "engines[1].kube_pods_per_s" in result.output
    assert "expected a number" in result.output
