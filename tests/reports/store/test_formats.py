"""Each input format parsed into store rows, checked against the frozen fixtures (written in
the shapes asv 0.6, pytest-benchmark 5.2 and scheduler_perf write) and a real schedperf run."""

from __future__ import annotations

import json
import math
import shutil
from datetime import UTC, datetime

import polars as pl
import pyarrow.parquet as pq
import pytest

from reports.store import STORE_SCHEMA, ingest_paths
from reports.store.ingest_dataitems import split_name
from reports.store.schema import RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION
from tests.reports.store.conftest import (
    ASV_FILE,
    ASV_RESULTS,
    DATAITEMS_FILE,
    DATAITEMS_OLD,
    PYTEST_FILE,
    read_store,
)


def one(df: pl.DataFrame, **where: object) -> dict:
    rows = df.filter(**where).to_dicts()
    assert len(rows) == 1, (where, rows)
    return rows[0]


# --------------------------------------------------------------------------- schedperf run


def test_run_folder_is_one_run_and_lossless(run_dir, store):
    report = ingest_paths([run_dir], store)
    assert [(o.path.name, o.kind) for o in report.ingested] == [("results.parquet", "run")]
    original = pq.read_table(run_dir / "results.parquet")
    stored = read_store(store)
    assert stored.height == original.num_rows
    assert stored["source"].unique().to_list() == ["run"]
    assert stored["run_id"].n_unique() == 1
    assert sorted(stored["round"].unique().to_list()) == [1, 2]
    keys = ["round", "test_case", "workload", "metric", "bucket", "item_labels"]
    back = stored.select(RESULTS_SCHEMA.names).sort(keys, nulls_last=True)
    expected = pl.from_arrow(original).sort(keys, nulls_last=True)
    assert back.equals(expected, null_equal=True)


def test_run_rows_keep_results_types(run_dir, store):
    ingest_paths([run_dir], store)
    schema = pq.read_schema(next(store.rglob("*.parquet")))
    assert schema.remove_metadata().equals(STORE_SCHEMA)


# --------------------------------------------------------------------------- asv


@pytest.fixture
def asv_rows(store):
    report = ingest_paths([ASV_FILE], store)
    assert not report.errors and report.ingested[0].kind == "asv"
    return read_store(store)


@pytest.mark.parametrize(("workload", "value", "status"), [
    ("nodes=500,profile=default", 0.412, "ok"),
    ("nodes=500,profile=spread", 0.53, "ok"),
    ("nodes=5000,profile=default", 4.01, "ok"),
    ("nodes=5000,profile=spread", None, "unsupported"),  # NaN: skipped
], ids=["500-default", "500-spread", "5000-default", "5000-spread-skipped"])
def test_asv_params_become_workloads_in_product_order(asv_rows, workload, value, status):
    row = one(asv_rows, metric="time_schedule_pods", workload=workload, bucket="Value")
    assert row["test_case"] == "bench_scheduling.SchedulingBasic"
    assert row["value"] == value and row["status"] == status
    assert row["unit"] == "s"  # benchmarks.json "seconds"
    nodes, profile = workload.replace("nodes=", "").split(",profile=")
    assert json.loads(row["params"]) == {"nodes": int(nodes), "profile": profile}


def test_asv_machine_commit_and_labels(asv_rows):
    row = one(asv_rows, metric="time_schedule_pods", workload="nodes=500,profile=default",
              bucket="Value")
    assert row["commit"] == "4f2a9c1e0b7d3a5f6e8c9d0a1b2c3d4e5f607182"
    assert row["machine"] == "ci-runner" and row["python"] == "3.11"
    assert row["cpu_model"] == "AMD EPYC 7763 64-Core Processor" and row["cpu_count"] == 4
    assert row["timestamp"] == datetime.fromtimestamp(1745410000, UTC)
    assert row["run_id"] == "asv-ci-runner-4f2a9c1e-virtualenv-py3.11-numpy"
    labels = json.loads(row["item_labels"])
    assert labels["benchmark"] == "bench_scheduling.SchedulingBasic.time_schedule_pods"
    assert labels["type"] == "time" and labels["env_name"] == "virtualenv-py3.11-numpy"
    assert row["source"] == "asv" and row["schema_version"] == RESULTS_SCHEMA_VERSION


def test_asv_stats_buckets(asv_rows):
    buckets = {r["bucket"]: (r["value"], r["unit"]) for r in asv_rows.filter(
        metric="time_schedule_pods", workload="nodes=500,profile=default").to_dicts()}
    assert buckets == {"Value": (0.412, "s"), "ci_99_a": (0.40, "s"), "ci_99_b": (0.43, "s"),
                       "q_25": (0.408, "s"), "q_75": (0.417, "s"),
                       "number": (1.0, "iterations"), "repeat": (10.0, "samples")}
    infinite = asv_rows.filter(metric="time_add_nodes", bucket="ci_99_b")["value"].item()
    assert math.isinf(infinite)


@pytest.mark.parametrize(("metric", "test_case", "unit", "value", "status"), [
    ("peakmem_schedule_pods", "bench_scheduling.SchedulingBasic", "bytes", 121634816.0, "ok"),
    ("track_pods_per_second", "bench_scheduling", "pods/s", 1180.5, "ok"),
    ("time_add_nodes", "bench_nodetable", "s", 0.0312, "ok"),
    ("time_broken", "bench_nodetable", "s", None, "failed"),
], ids=["peakmem", "track-unit", "unparameterised", "failed-null"])
def test_asv_benchmark_kinds(asv_rows, metric, test_case, unit, value, status):
    row = asv_rows.filter(metric=metric, bucket="Value").sort("workload").row(0, named=True)
    assert (row["test_case"], row["unit"], row["value"], row["status"]) == (
        test_case, unit, value, status)


def test_asv_without_benchmarks_json_guesses_names_and_units(tmp_path, store):
    lone = tmp_path / "ci-runner"
    lone.mkdir()
    shutil.copy(ASV_FILE, lone)
    report = ingest_paths([lone / ASV_FILE.name], store)
    assert "no benchmarks.json" in report.ingested[0].message
    df = read_store(store)
    assert set(df.filter(metric="time_schedule_pods")["workload"]) == {
        "param1=500,param2=default", "param1=500,param2=spread",
        "param1=5000,param2=default", "param1=5000,param2=spread"}
    assert one(df, metric="peakmem_schedule_pods", bucket="Value",
               workload="param1=500,param2=default")["unit"] == "bytes"
    assert one(df, metric="track_pods_per_second", bucket="Value")["unit"] == "unit"


def test_asv_results_folder_walk_skips_metadata(store):
    report = ingest_paths([ASV_RESULTS], store)
    assert sorted(o.path.name for o in report.ingested) == [
        "4f2a9c1e-virtualenv-py3.11-numpy.json", "9b3c5d7e-virtualenv-py3.11-numpy.json"]
    assert not report.errors


# --------------------------------------------------------------------------- pytest-benchmark


@pytest.fixture
def pytest_rows(store):
    report = ingest_paths([PYTEST_FILE], store)
    assert not report.errors and report.ingested[0].kind == "pytest-benchmark"
    return read_store(store)


@pytest.mark.parametrize(("test_case", "metric", "workload", "mean"), [
    ("tests/bench/test_micro.py", "test_filter_fit", "500", 2.1e-4),
    ("tests/bench/test_micro.py", "test_filter_fit", "5000", 1.9e-3),
    ("tests/bench/test_micro.py::TestScore", "test_balanced", "", 3.4e-7),
], ids=["param-500", "param-5000", "class-no-params"])
def test_pytest_names_map(pytest_rows, test_case, metric, workload, mean):
    row = one(pytest_rows, test_case=test_case, metric=metric, workload=workload,
              bucket="mean")
    assert row["value"] == pytest.approx(mean) and row["unit"] == "s"


def test_pytest_stats_units_and_environment(pytest_rows):
    rows = pytest_rows.filter(metric="test_filter_fit", workload="500")
    units = dict(zip(rows["bucket"], rows["unit"], strict=True))
    assert units["ops"] == "ops/s" and units["rounds"] == "rounds"
    assert units["iterations"] == "iterations" and units["median"] == "s"
    assert "outliers" not in units and "data" not in units  # text / raw samples left out
    row = one(rows, bucket="rounds")
    assert row["value"] == 4120
    assert row["commit"] == "4f2a9c1e0b7d3a5f6e8c9d0a1b2c3d4e5f607182"
    assert row["branch"] == "main" and row["machine"] == "ci-runner"
    assert row["python"] == "3.11.7" and row["cpu_count"] == 4
    assert row["cpu_model"] == "AMD EPYC 7763 64-Core Processor"
    assert row["timestamp"] == datetime(2025, 4, 23, 12, 0, 3, 123456, UTC)
    assert json.loads(row["params"]) == {"nodes": 500}
    labels = json.loads(row["item_labels"])
    assert labels["extra_info"] == {"pods": 100} and labels["dirty"] is False
    assert row["status"] == "ok"


def test_pytest_unversioned_commit_is_null(tmp_path, store):
    doc = json.loads(PYTEST_FILE.read_text())
    doc["commit_info"] = {"id": "unversioned", "time": None, "author_time": None,
                          "dirty": False, "project": "x", "branch": "(unknown)"}
    path = tmp_path / "out.json"
    path.write_text(json.dumps(doc))
    ingest_paths([path], store)
    df = read_store(store)
    assert df["commit"].null_count() == df.height and df["branch"].null_count() == df.height


# --------------------------------------------------------------------------- DataItems


@pytest.mark.parametrize(("name", "expected"), [
    ("BenchmarkPerfScheduling/SchedulingBasic/5000Nodes_10000Pods/namespace-2",
     ("SchedulingBasic", "5000Nodes_10000Pods")),
    ("SchedulingBasic/5000Nodes/namespace-2", ("SchedulingBasic", "5000Nodes")),
    ("BenchmarkPerfScheduling/PreemptionAsync/5kNodes/100Init/10kPods/namespace-3",
     ("PreemptionAsync", "5kNodes/100Init/10kPods")),
    ("SchedulingBasic/5000Nodes", ("SchedulingBasic", "5000Nodes")),
    ("SchedulingBasic", ("SchedulingBasic", None)),
], ids=["newest", "older-no-prefix", "slashes-in-workload", "no-namespace", "test-case-only"])
def test_dataitems_name_label(name, expected):
    assert split_name(name) == expected


@pytest.fixture
def dataitems_rows(store):
    report = ingest_paths([DATAITEMS_FILE], store)
    assert not report.errors and report.ingested[0].kind == "dataitems"
    return read_store(store)


def test_dataitems_rows(dataitems_rows):
    tp = dataitems_rows.filter(metric="SchedulingThroughput", workload="5000Nodes_10000Pods")
    assert dict(zip(tp["bucket"], tp["value"], strict=True)) == {
        "Average": 1146.62, "Perc50": 1173.11, "Perc90": 1236.06, "Perc95": 1236.06,
        "Perc99": 1236.06, "AverageThreshold": 270.0}
    row = tp.row(0, named=True)
    assert row["test_case"] == "SchedulingBasic" and row["unit"] == "pods/s"
    assert row["topic"] == "misc"
    assert row["timestamp"] == datetime(2025, 4, 23, 11, 53, 49, tzinfo=UTC)
    assert row["commit"] is None and row["status"] is None and row["machine"] is None
    labels = json.loads(row["item_labels"])
    assert labels["Name"].endswith("/namespace-2") and "Metric" not in labels
    fit = one(dataitems_rows, metric="scheduler_plugin_execution_duration_seconds",
              bucket="Average")
    assert json.loads(fit["item_labels"])["plugin"] == "NodeResourcesFit"
    assert one(dataitems_rows, test_case="PreemptionAsync", bucket="Average")["workload"] == (
        "5kNodes/100Init/10kPods")
    # the item without data (throughput not measured) has no rows
    assert dataitems_rows.filter(workload="500Nodes").is_empty()
    assert dataitems_rows.height == 6 + 5 + 5 + 5


def test_dataitems_old_file_name_has_no_topic(store):
    ingest_paths([DATAITEMS_OLD], store)
    df = read_store(store)
    assert df["topic"].null_count() == df.height
    assert df["timestamp"].unique().to_list() == [datetime(2023, 6, 1, 10, tzinfo=UTC)]
    assert set(zip(df["test_case"], df["workload"], strict=True)) == {
        ("SchedulingBasic", "5000Nodes")}


def test_dataitems_without_time_in_name_use_modification_time(tmp_path, store):
    path = tmp_path / "perf.json"
    shutil.copy(DATAITEMS_FILE, path)
    ingest_paths([path], store)
    df = read_store(store)
    when = df["timestamp"].unique().item()
    assert abs(when.timestamp() - path.stat().st_mtime) < 1
    assert df["topic"].null_count() == df.height


def test_dataitems_from_a_run_match_its_results(run_dir, store, tmp_path):
    """The run's own DataItems copy, ingested alone, gives the same metric rows as its
    results.parquet: the two formats meet in one schema."""
    files = sorted(run_dir.glob("BenchmarkPerfScheduling_*.json"))
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(files[0], lone)
    ingest_paths([lone], store)
    items = read_store(store)
    run = pl.from_arrow(pq.read_table(run_dir / "results.parquet")).filter(
        (pl.col("round") == 1) & pl.col("item_labels").is_not_null())
    key = ["test_case", "workload", "metric", "bucket", "item_labels", "value", "unit"]
    assert items.select(key).sort(key).equals(run.select(key).sort(key))
