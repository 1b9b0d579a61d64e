"""Reading the store into workloads: names per source, the headline metric and its
fallbacks, the uncommon flag and topic borrowed by asv catalog benchmarks, page names."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reports.dashboard import load_workloads, page_name
from reports.store import SOURCE_ASV, SOURCE_PYTEST, SOURCE_RUN
from reports.store.dataset import write_parts
from reports.store.schema import table_from_rows

T0 = datetime(2025, 5, 1, tzinfo=UTC)


def _row(source: str, test_case: str, workload: str, metric: str, value: float | None, *,
         bucket: str = "Value", unit: str = "s", commit: str = "a" * 40, day: int = 0,
         **extra: Any) -> dict[str, Any]:
    return {"run_id": f"{source}-{commit[:4]}", "round": 1,
            "timestamp": T0 + timedelta(days=day), "commit": commit, "machine": "m",
            "test_case": test_case, "workload": workload, "metric": metric, "bucket": bucket,
            "value": value, "unit": unit, "status": "ok", **extra}


def _store(tmp_path: Path, rows_by_source: dict[str, list[dict[str, Any]]]) -> Path:
    store = tmp_path / "store"
    write_parts(store, [table_from_rows(rows, source=source, sha256=source)
                        for source, rows in rows_by_source.items()])
    return store


def _by_name(store: Path) -> dict[tuple[str, str], Any]:
    return {(w.source, w.name): w for w in load_workloads(store)}


def test_asv_catalog_benchmarks_join_their_run_workload(tmp_path: Path) -> None:
    params = json.dumps({"workload": "Rare/Churn"})
    store = _store(tmp_path, {
        SOURCE_RUN: [_row(SOURCE_RUN, "Rare", "Churn", "SchedulingThroughput", 300.0,
                          bucket="Average", unit="pods/s", topic="uncommon",
                          labels="uncommon,performance")],
        SOURCE_ASV: [
            _row(SOURCE_ASV, "scheduling.WorkloadThroughput", "workload=Rare/Churn",
                 "track_throughput", 290.0, unit="pods/s", params=params),
            _row(SOURCE_ASV, "scheduling.WorkloadAttempts", "workload=Rare/Churn",
                 "track_attempts_per_pod", 1.1, unit="attempts/pod", params=params),
            _row(SOURCE_ASV, "plugins.PluginFilter", "plugin='fit',nodes=500", "time_filter",
                 1e-4, params=json.dumps({"plugin": "fit", "nodes": 500})),
        ],
    })
    found = _by_name(store)
    asv = found[(SOURCE_ASV, "Rare/Churn")]
    assert asv.headline.metric == "track_throughput"
    assert [h.metric for h in asv.others] == ["track_attempts_per_pod"]
    assert asv.uncommon and asv.topic == "uncommon" and asv.labels == ()
    assert found[(SOURCE_RUN, "Rare/Churn")].labels == ("uncommon", "performance")
    plugin = found[(SOURCE_ASV, "plugins.PluginFilter/plugin='fit',nodes=500")]
    assert not plugin.uncommon and plugin.topic is None


@pytest.mark.parametrize(("metrics", "headline"), [
    ([("SchedulingThroughput", "Average", "pods/s"), ("cpu_seconds", "Value", "s")],
     "SchedulingThroughput"),
    ([("track_throughput", "Value", "pods/s"), ("time_x", "Value", "s")], "track_throughput"),
    ([("attempts_per_scheduled_pod", "Value", "attempts/pod"), ("wall_seconds", "Value", "s"),
      ("cpu_seconds", "Value", "s"), ("SchedulingDuration", "Duration", "s")], "cpu_seconds"),
    ([("a_count", "Value", "pods"), ("time_b", "Value", "s")], "time_b"),
    ([("a_count", "Value", "pods"), ("b_count", "Value", "pods")], "a_count"),
], ids=["throughput", "rate", "cpu-seconds", "a-time", "alphabetical"])
def test_headline_metric(tmp_path: Path, metrics: list[tuple[str, str, str]],
                         headline: str) -> None:
    rows = [_row(SOURCE_RUN, "T", "w", m, 1.0, bucket=b, unit=u) for m, b, u in metrics]
    (w,) = load_workloads(_store(tmp_path, {SOURCE_RUN: rows}))
    assert w.headline.metric == headline
    assert sorted([w.headline.metric, *(h.metric for h in w.others)]) == sorted(
        m for m, _, _ in metrics)


def test_metric_without_values_is_not_the_headline(tmp_path: Path) -> None:
    rows = [_row(SOURCE_RUN, "T", "w", "SchedulingThroughput", None, bucket="Average",
                 unit="pods/s"),
            _row(SOURCE_RUN, "T", "w", "cpu_seconds", 0.5)]
    (w,) = load_workloads(_store(tmp_path, {SOURCE_RUN: rows}))
    assert w.headline.metric == "cpu_seconds"


def test_failed_rounds_are_problems_not_values(tmp_path: Path) -> None:
    rows = [_row(SOURCE_RUN, "T", "w", "cpu_seconds", 0.5, day=0),
            {**_row(SOURCE_RUN, "T", "w", "cpu_seconds", 0.0, commit="b" * 40, day=1),
             "status": "failed"}]
    (w,) = load_workloads(_store(tmp_path, {SOURCE_RUN: rows}))
    assert [p.values for p in w.headline.points] == [(0.5,), ()]
    assert [p.problems for p in w.headline.points] == ["", "failed"]


def test_pytest_benchmarks_are_named_by_test(tmp_path: Path) -> None:
    rows = [_row(SOURCE_PYTEST, "tests/t.py::TestX", "500", "test_f", 2e-3, bucket="median"),
            _row(SOURCE_PYTEST, "tests/t.py::TestX", "500", "test_g", 3e-3, bucket="median"),
            _row(SOURCE_PYTEST, "tests/t.py", "", "test_h", 1e-3, bucket="median")]
    names = {w.name: w.headline.metric
             for w in load_workloads(_store(tmp_path, {SOURCE_PYTEST: rows}))}
    assert names == {"tests/t.py::TestX::test_f[500]": "test_f",
                     "tests/t.py::TestX::test_g[500]": "test_g",
                     "tests/t.py::test_h": "test_h"}


def test_per_plugin_metrics_are_not_shown(tmp_path: Path) -> None:
    rows = [_row(SOURCE_RUN, "T", "w", "SchedulingThroughput", 10.0, bucket="Average",
                 unit="pods/s")]
    rows += [_row(SOURCE_RUN, "T", "w", "scheduler_plugin_execution_duration_seconds", v,
                  bucket="Average", unit="ms", item_labels=json.dumps({"plugin": p}))
             for p, v in (("A", 1.0), ("B", 2.0))]
    (w,) = load_workloads(_store(tmp_path, {SOURCE_RUN: rows}))
    assert w.others == ()
    assert w.not_shown == ("scheduler_plugin_execution_duration_seconds",)


@pytest.mark.parametrize(("key", "stem"), [
    (("run", "SchedulingBasic/5000Nodes", "ci"), "SchedulingBasic-5000Nodes"),
    (("run", "<script>alert(1)</script>", "ci"), "script-alert-1-script"),
    (("asv", "a b/../c?d#e", ""), "a-b-..-c-d-e"),
    (("run", "/..", ""), "workload"),
    (("run", "x" * 200, ""), "x" * 60),
], ids=["plain", "markup", "url-chars", "nothing-left", "long"])
def test_page_names_are_safe(key: tuple[str, str, str], stem: str) -> None:
    name = page_name(*key)
    assert name.startswith(stem + "-") and name.endswith(".html")
    assert len(name) == len(stem) + len("-12345678.html")
    assert all(c.isalnum() or c in "._-" for c in name)


def test_page_names_differ_per_source_machine_and_case() -> None:
    names = {page_name("run", "A/b", "m"), page_name("asv", "A/b", "m"),
             page_name("run", "A/b", "n"), page_name("run", "a/b", "m"),
             page_name("run", "A-b", "m")}
    assert len({n.lower() for n in names}) == 5
