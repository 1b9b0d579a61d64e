"""Results writers: DataItems JSON (name, labels, uniqueness, atomicity) and Parquet files."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from workloads.output import (
    RESULTS_SCHEMA_VERSION,
    atomic_write_bytes,
    dataitems_file_name,
    environment_fingerprint,
    git_info,
    progress_file_stem,
    write_dataitems,
    write_decisions_parquet,
    write_placements_parquet,
    write_progress_files,
    write_results_parquet,
)
from workloads.result import DataItem, Decision, Placement, WorkloadResult

WHEN = datetime(2025, 4, 23, 11, 53, 49, tzinfo=UTC)


def item(metric: str, **labels: str) -> DataItem:
    return DataItem(data={"Average": 12.5, "Perc50": 10.0}, unit="pods/s",
                    labels={"Metric": metric, "Name": "Case/w/namespace-1", **labels})


def make_result(workload: str = "w", status: str = "ok", decisions: bool = False,
                **kw) -> WorkloadResult:
    r = WorkloadResult(test_case="Case", workload=workload, topic="misc",
                       params={"nodes": 3, "pods": 2}, labels=("performance", "short"),
                       status=status, reason=None if status == "ok" else "why", **kw)
    r.data_items = [item("SchedulingThroughput"),
                    item("scheduler_plugin_execution_duration_seconds", plugin="NodeAffinity",
                         extension_point="Filter")]
    r.placements = [Placement("namespace-1", "p-0", "node-0", 1, None),
                    Placement("namespace-1", "p-1", None, 3, "0/3 nodes are available")]
    r.scheduled_pods, r.attempts, r.wall_seconds = 1, 4, 0.5
    r.peak_rss_bytes, r.unschedulable_pods = 123456, 1
    if decisions:
        r.decisions = [Decision("namespace-1", "p-0", 1, "node-0", "Score", "NodeAffinity",
                                "Success", None, 50, 50, 100, True),
                       Decision("namespace-1", "p-1", 1, None, "PostFilter", "DefaultPreemption",
                                "Unschedulable", "no victims", None, None, None, False)]
    return r


# --------------------------------------------------------------------------- DataItems


def test_file_name_is_upstream_format_in_utc():
    local = WHEN.astimezone(timezone(timedelta(hours=2)))
    assert dataitems_file_name("misc", local) == (
        "BenchmarkPerfScheduling_benchmark_misc_2025-04-23T11:53:49Z.json")


def test_dataitems_round_trip_fills_every_label_key(tmp_path):
    result = make_result()
    path = write_dataitems([result], tmp_path, "misc", WHEN)
    text = path.read_text()
    assert text.startswith('{\n  "version": "v1",\n  "dataItems": [\n    {')  # 2-space indent
    doc = json.loads(text)
    assert doc["version"] == "v1"
    assert [d["labels"] for d in doc["dataItems"]] == [
        {"Metric": "SchedulingThroughput", "Name": "Case/w/namespace-1",
         "plugin": "not applicable", "extension_point": "not applicable"},
        {"Metric": "scheduler_plugin_execution_duration_seconds", "Name": "Case/w/namespace-1",
         "plugin": "NodeAffinity", "extension_point": "Filter"},
    ]
    assert doc["dataItems"][0]["data"] == {"Average": 12.5, "Perc50": 10.0}
    assert doc["dataItems"][0]["unit"] == "pods/s"
    # the result's own DataItems are left as they were
    assert "plugin" not in result.data_items[0].labels


def test_same_second_files_get_counter_suffixes(tmp_path):
    names = [write_dataitems([make_result()], tmp_path, "misc", WHEN).name for _ in range(3)]
    assert names == [
        "BenchmarkPerfScheduling_benchmark_misc_2025-04-23T11:53:49Z.json",
        "BenchmarkPerfScheduling_benchmark_misc_2025-04-23T11:53:49Z_1.json",
        "BenchmarkPerfScheduling_benchmark_misc_2025-04-23T11:53:49Z_2.json",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)  # no temp files left


def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path):
    target = tmp_path / "sub" / "f.bin"
    atomic_write_bytes(target, b"old")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in target.parent.iterdir()] == ["f.bin"]


def test_failed_atomic_write_keeps_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "f.bin"
    atomic_write_bytes(target, b"old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


# --------------------------------------------------------------------------- Parquet


@pytest.fixture(scope="module")
def env():
    return environment_fingerprint(clock="virtual", seed=7)


def test_results_parquet_round_trip(tmp_path, env):
    results = [(1, make_result("w")), (2, make_result("w", status="threshold-missed"))]
    path = write_results_parquet(tmp_path / "results.parquet", results, env, run_id="r1",
                                 timestamp=WHEN)
    df = pl.read_parquet(path)
    assert df["schema_version"].unique().to_list() == [RESULTS_SCHEMA_VERSION]
    assert df.schema["value"] == pl.Float64
    assert df["timestamp"].dtype == pl.Datetime("us", "UTC")
    r1 = df.filter(pl.col("round") == 1)
    got = {(m, b): v for m, b, v in r1.select("metric", "bucket", "value").iter_rows()}
    assert got[("SchedulingThroughput", "Average")] == 12.5
    assert got[("attempts_per_scheduled_pod", "Value")] == 4.0
    assert got[("peak_rss_bytes", "Value")] == 123456.0
    assert got[("unschedulable_pods", "Value")] == 1.0
    assert got[("workload_status", "ok")] == 1.0
    assert {"cpu_seconds", "wall_seconds", "harness_seconds", "ignored_pods"} <= {
        m for m, _ in got}
    status2 = df.filter((pl.col("round") == 2) & (pl.col("metric") == "workload_status"))
    assert status2.select("bucket", "value", "status_reason").row(0) == (
        "threshold-missed", 0.0, "why")
    row = r1.row(0, named=True)
    assert json.loads(row["params"]) == {"nodes": 3, "pods": 2}
    assert row["labels"] == "performance,short"
    assert row["seed"] == 7 and row["clock"] == "virtual"
    assert row["numpy_version"] == np.__version__
    assert Path(row["scheduler_core_path"]).name == "scheduler_core"
    assert row["cpu_count"] == os.cpu_count()


def test_placements_and_decisions_parquet(tmp_path):
    results = [make_result(decisions=True)]
    placements = pq.read_table(write_placements_parquet(tmp_path / "p.parquet", results))
    assert placements.select(["test_case", "workload", "namespace", "pod", "node", "attempts",
                              "reason"]).to_pylist() == [
        {"test_case": "Case", "workload": "w", "namespace": "namespace-1", "pod": "p-0",
         "node": "node-0", "attempts": 1, "reason": None},
        {"test_case": "Case", "workload": "w", "namespace": "namespace-1", "pod": "p-1",
         "node": None, "attempts": 3, "reason": "0/3 nodes are available"}]
    path = write_decisions_parquet(tmp_path / "d.parquet", results)
    df = pl.read_parquet(path)
    assert df.height == 2
    assert df.filter(pl.col("selected"))["weighted_score"].to_list() == [100]
    assert df["score"].null_count() == 1


def test_no_decisions_file_when_not_recorded(tmp_path):
    assert write_decisions_parquet(tmp_path / "d.parquet", [make_result()]) is None
    assert not (tmp_path / "d.parquet").exists()


@pytest.mark.parametrize("inside", [True, False], ids=["git-checkout", "plain-folder"])
def test_git_info(tmp_path, inside):
    repo = Path(__file__).resolve().parents[2]
    commit, branch = git_info(repo if inside else tmp_path)
    if inside and (repo / ".git").exists():
        assert commit is not None and len(commit) == 40
    elif not inside:
        assert (commit, branch) == (None, None)


# --------------------------------------------------------------------------- .dat progress


def test_progress_files_upstream_layout(tmp_path):
    r = WorkloadResult(test_case="SchedulingBasic", workload="5000Nodes_10000Pods",
                       topic="misc", params={}, labels=())
    r.progress_samples = {"SchedulingBasic/5000Nodes_10000Pods/namespace-2": [
        (0.1, 300, 310), (0.25, 700, 720)]}
    empty = WorkloadResult(test_case="T", workload="nothing", topic="misc", params={},
                           labels=())
    when = datetime(2025, 4, 23, 11, 53, 49, tzinfo=UTC)
    paths = write_progress_files([r, empty], tmp_path, when)
    assert [p.name for p in paths] == [
        "SchedulingBasic_5000Nodes_10000Pods_misc_2025-04-23T11:53:49Z.dat"]
    assert paths[0].read_text().splitlines() == [
        "0.1s 300 310 300 3000.000000", "0.2s 700 720 700 2800.000000"]
    again = write_progress_files([r], tmp_path, when)  # same second: counter suffix
    assert again[0].name.endswith("Z_1.dat")


def test_progress_file_stem_replaces_slashes():
    r = WorkloadResult(test_case="A/B", workload="w/1", topic="t", params={}, labels=())
    assert progress_file_stem(r, datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)) == \
        "A_B_w_1_t_2025-01-02T03:04:05Z"
