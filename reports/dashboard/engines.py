"""The dashboard's engines page (``engines.html``): for every workload that a run measured on
both scheduler_core and the kube-scheduler engine (``schedperf run --engine both``), the
newest such run's pods/s and CPU per pod on each side and the ratio core / kube-scheduler of
pods/s, per GOMAXPROCS of the engine.

pods/s is SchedulingThroughput's Average (mean over the run's windows and rounds); CPU per
pod is ``schedperf_cpu_seconds`` Total over ``schedperf_pods`` Scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from reports.dashboard.layout import SiteContext, empty, esc, page, table
from reports.store import scan_store
from workloads.result import ENGINE_CORE, ENGINE_KUBE

__all__ = ["EngineRow", "load_engine_rows", "render_engines"]


@dataclass(frozen=True)
class EngineRow:
    """One workload and GOMAXPROCS of the newest run that measured both engines."""

    workload: str  # <test case>/<workload>
    run_id: str
    machine: str | None
    kubernetes_version: str | None
    gomaxprocs: int | None
    core_pods_per_s: float | None
    kube_pods_per_s: float | None
    core_cpu_ms_per_pod: float | None
    kube_cpu_ms_per_pod: float | None

    @property
    def ratio(self) -> float | None:
        if self.core_pods_per_s is None or not self.kube_pods_per_s:
            return None
        return self.core_pods_per_s / self.kube_pods_per_s


_KEYS = ["run_id", "test_case", "workload", "engine", "engine_gomaxprocs"]


def _per_run(lf: pl.LazyFrame) -> pl.DataFrame:
    """Per run, workload, engine and GOMAXPROCS: pods/s, CPU seconds, pods scheduled."""
    rows = lf.filter(pl.col("engine").is_not_null()).filter(
        ((pl.col("metric") == "SchedulingThroughput") & (pl.col("bucket") == "Average"))
        | ((pl.col("metric") == "schedperf_cpu_seconds") & (pl.col("bucket") == "Total"))
        | ((pl.col("metric") == "schedperf_pods") & (pl.col("bucket") == "Scheduled")))
    return (rows.group_by(_KEYS).agg(
        pods_s=pl.col("value").filter(pl.col("metric") == "SchedulingThroughput").mean(),
        cpu=pl.col("value").filter(pl.col("metric") == "schedperf_cpu_seconds").sum(),
        pods=pl.col("value").filter(pl.col("metric") == "schedperf_pods").sum(),
        timestamp=pl.col("timestamp").max(), machine=pl.col("machine").first(),
        k8s=pl.col("kubernetes_version").drop_nulls().first()).collect())


def load_engine_rows(store: Path | str) -> list[EngineRow]:
    """The rows of the page, by workload then GOMAXPROCS (empty: no run measured both)."""
    frame = _per_run(scan_store(store))
    if frame.is_empty():
        return []
    core = frame.filter(pl.col("engine") == ENGINE_CORE)
    kube = frame.filter(pl.col("engine") == ENGINE_KUBE)
    both = kube.join(core.select("run_id", "test_case", "workload", "pods_s", "cpu", "pods"),
                     on=["run_id", "test_case", "workload"], suffix="_core")
    if both.is_empty():
        return []
    newest = both.group_by("test_case", "workload").agg(pl.col("timestamp").max())
    both = both.join(newest, on=["test_case", "workload", "timestamp"]).sort(
        "test_case", "workload", "engine_gomaxprocs")
    out = []
    for r in both.iter_rows(named=True):
        out.append(EngineRow(
            workload=f"{r['test_case']}/{r['workload']}", run_id=r["run_id"],
            machine=r["machine"], kubernetes_version=r["k8s"], gomaxprocs=r["engine_gomaxprocs"],
            core_pods_per_s=r["pods_s_core"], kube_pods_per_s=r["pods_s"],
            core_cpu_ms_per_pod=r["cpu_core"] / r["pods_core"] * 1000 if r["pods_core"] else None,
            kube_cpu_ms_per_pod=r["cpu"] / r["pods"] * 1000 if r["pods"] else None))
    return out


def _num(v: float | None, fmt: str) -> str:
    return "-" if v is None else esc(format(v, fmt))


def render_engines(ctx: SiteContext, rows: list[EngineRow]) -> str:
    body = ["<h1>scheduler_core and the real kube-scheduler</h1>",
            "<p>The newest run of each workload on both engines (<code>schedperf run --engine "
            "both</code>): pods/s (SchedulingThroughput Average), CPU per pod (the measured "
            "windows' CPU time per pod scheduled; the kube-scheduler engine's is its Go "
            "process's) and the ratio core / kube-scheduler of pods/s.</p>"]
    if not rows:
        body.append(empty("No run in the store measured a workload on both engines."))
    else:
        body.append(table(
            ["workload", "GOMAXPROCS", "core pods/s", "kube-scheduler pods/s", "ratio",
             "core CPU ms/pod", "kube-scheduler CPU ms/pod", "Kubernetes", "machine", "run"],
            [[esc(r.workload), _num(r.gomaxprocs, "d"), _num(r.core_pods_per_s, ".1f"),
              _num(r.kube_pods_per_s, ".1f"), _num(r.ratio, ".1f") + ("x" if r.ratio else ""),
              _num(r.core_cpu_ms_per_pod, ".3f"), _num(r.kube_cpu_ms_per_pod, ".3f"),
              esc(r.kubernetes_version or "-"), esc(r.machine or "-"), esc(r.run_id)]
             for r in rows], numeric=range(1, 7)))
    return page(ctx, "Engines", body, here="engines")
