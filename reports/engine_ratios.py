"""scheduler_core next to the real kube-scheduler: for every workload that a run measured on
both engines (``schedperf run --engine both``), the newest such run's pods/s and CPU per pod on
each side and the ratio core / kube-scheduler of pods/s, per GOMAXPROCS of the Go process.

pods/s is SchedulingThroughput's Average (mean over the run's windows and rounds); CPU per pod
is ``schedperf_cpu_seconds`` Total over ``schedperf_pods`` Scheduled. The dashboard's engines
page and the compare report's engines section both read these rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from workloads.result import ENGINE_CORE, ENGINE_KUBE

__all__ = ["EngineRow", "engine_rows"]


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
        """core pods/s over kube-scheduler pods/s (None when either is missing or zero)."""
        if not self.core_pods_per_s or not self.kube_pods_per_s:
            return None
        return self.core_pods_per_s / self.kube_pods_per_s


_KEYS = ["run_id", "test_case", "workload", "engine", "engine_gomaxprocs"]
_NEEDED = {*_KEYS, "metric", "bucket", "value", "timestamp", "machine", "kubernetes_version"}


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


def _per_pod_ms(cpu: float | None, pods: float | None) -> float | None:
    return cpu / pods * 1000 if cpu is not None and pods else None


def engine_rows(lf: pl.LazyFrame) -> list[EngineRow]:
    """The newest both-engine measurement of every workload in the results ``lf``, by
    workload then GOMAXPROCS (empty: no run there measured a workload on both engines, or
    the results predate the engine columns)."""
    if not set(lf.collect_schema().names()) >= _NEEDED:
        return []
    frame = _per_run(lf)
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
    return [EngineRow(
        workload=f"{r['test_case']}/{r['workload']}", run_id=r["run_id"],
        machine=r["machine"], kubernetes_version=r["k8s"], gomaxprocs=r["engine_gomaxprocs"],
        core_pods_per_s=r["pods_s_core"], kube_pods_per_s=r["pods_s"],
        core_cpu_ms_per_pod=_per_pod_ms(r["cpu_core"], r["pods_core"]),
        kube_cpu_ms_per_pod=_per_pod_ms(r["cpu"], r["pods"])) for r in both.iter_rows(named=True)]
