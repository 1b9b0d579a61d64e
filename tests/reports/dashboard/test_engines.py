"""The dashboard's engines page: the newest run that measured a workload on both engines,
pods/s and CPU per pod per side and their ratio, from results.parquet rows (no Go needed)."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq

from reports.dashboard.engines import load_engine_rows, render_engines
from reports.dashboard.layout import SiteContext
from reports.store import ingest_paths
from workloads.output.parquet import RESULTS_SCHEMA, result_rows
from workloads.result import ENGINE_CORE, ENGINE_KUBE, DataItem, WorkloadResult


def _result(engine: str, pods_s: float, cpu: float, gomaxprocs: int | None = None,
            ) -> WorkloadResult:
    name = "T/w/ns"
    r = WorkloadResult("T", "w", "misc", {}, ("performance",), engine=engine,
                       engine_gomaxprocs=gomaxprocs,
                       kubernetes_version="v1.34.4" if engine == ENGINE_KUBE else None)
    r.data_items = [
        DataItem({"Average": pods_s}, "pods/s", {"Name": name, "Metric": "SchedulingThroughput"}),
        DataItem({"Total": cpu}, "s", {"Name": name, "Metric": "schedperf_cpu_seconds"}),
        DataItem({"Scheduled": 100.0}, "pods", {"Name": name, "Metric": "schedperf_pods"})]
    return r


def _run(folder, run_id: str, when: datetime, results: list[WorkloadResult]) -> None:
    folder.mkdir(parents=True)
    rows = result_rows(results, {"machine": "m"}, run_id=run_id, timestamp=when)
    pq.write_table(pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA), folder / "results.parquet")


def test_newest_run_with_both_engines_and_its_ratio(tmp_path):
    old, new = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)
    _run(tmp_path / "old", "r1", old, [_result(ENGINE_CORE, 1000, 0.01),
                                       _result(ENGINE_KUBE, 10, 0.2, 1)])
    _run(tmp_path / "new", "r2", new, [_result(ENGINE_CORE, 3000, 0.02),
                                       _result(ENGINE_KUBE, 100, 0.3, 1),
                                       _result(ENGINE_KUBE, 150, 0.4, 2)])
    _run(tmp_path / "core-only", "r3", new, [_result(ENGINE_CORE, 5000, 0.02)])
    store = tmp_path / "store"
    ingest_paths([tmp_path / "old", tmp_path / "new", tmp_path / "core-only"], store)
    rows = load_engine_rows(store)
    assert [(r.run_id, r.gomaxprocs, r.core_pods_per_s, r.kube_pods_per_s) for r in rows] == [
        ("r2", 1, 3000, 100), ("r2", 2, 3000, 150)]
    assert [round(r.ratio, 6) for r in rows] == [30.0, 20.0]
    assert [round(r.kube_cpu_ms_per_pod, 6) for r in rows] == [3.0, 4.0]
    html = render_engines(SiteContext("t", "now", str(store), False), rows)
    assert "30.0x" in html and "20.0x" in html and "T/w" in html


def test_no_run_with_both_engines_says_so(tmp_path):
    _run(tmp_path / "core-only", "r3", datetime(2026, 2, 1, tzinfo=UTC),
         [_result(ENGINE_CORE, 5000, 0.02)])
    store = tmp_path / "store"
    ingest_paths([tmp_path / "core-only"], store)
    assert load_engine_rows(store) == []
    html = render_engines(SiteContext("t", "now", str(store), False), [])
    assert "No run in the store measured a workload on both engines." in html
