"""The engines side by side (``schedperf run --engine both``): per workload and round,
scheduler_core's pods/s and CPU per pod next to the kube-scheduler engine's at each GOMAXPROCS
it ran with, and the ratio core / kube-scheduler of pods/s.

pods/s is SchedulingThroughput's Average (the mean over the measured windows); CPU per pod is
``schedperf_cpu_seconds`` PerScheduledPodMs: for scheduler_core this process's CPU time, for
the kube-scheduler engine the Go process's (docs/reference-scheduler.md, "Engine mode").
"""

from __future__ import annotations

import statistics
from typing import Any

from rich.table import Table

from workloads.result import ENGINE_CORE, ENGINE_KUBE, STATUS_OK, WorkloadResult

__all__ = ["comparison_rows", "comparison_table", "cpu_ms_per_pod", "engine_label",
           "pods_per_second"]


def pods_per_second(r: WorkloadResult) -> float | None:
    values = [d.data["Average"] for d in r.data_items
              if d.labels.get("Metric") == "SchedulingThroughput" and "Average" in d.data]
    return statistics.fmean(values) if values else None


def cpu_ms_per_pod(r: WorkloadResult) -> float | None:
    """CPU milliseconds per scheduled pod over the measured windows (their total CPU over
    their scheduled pods); None when no window scheduled a pod."""
    cpu = pods = 0.0
    for d in r.data_items:
        metric = d.labels.get("Metric")
        if metric == "schedperf_cpu_seconds":
            cpu += d.data.get("Total", 0.0)
        elif metric == "schedperf_pods":
            pods += d.data.get("Scheduled", 0.0)
    return cpu / pods * 1000 if pods else None


def engine_label(r: WorkloadResult) -> str:
    if r.engine == ENGINE_KUBE:
        return f"{ENGINE_KUBE} GOMAXPROCS={r.engine_gomaxprocs}"
    return r.engine


def comparison_rows(results: list[tuple[int, WorkloadResult]]) -> list[dict[str, Any]]:
    """One row per (workload, round) that ran on the kube-scheduler engine: core's numbers,
    and per GOMAXPROCS the engine's with the ratio (None where a side is missing, not ok or
    measured no throughput; ``*_status`` says which)."""
    groups: dict[tuple[str, int], dict[str, Any]] = {}
    for round_no, r in results:
        row = groups.setdefault((r.name, round_no), {
            "workload": r.name, "round": round_no, "core_status": None,
            "core_pods_per_s": None, "core_cpu_ms_per_pod": None, "kube": []})
        ok = r.status == STATUS_OK
        pods_s = pods_per_second(r) if ok else None
        cpu = cpu_ms_per_pod(r) if ok else None
        if r.engine == ENGINE_CORE:
            row.update(core_status=r.status, core_pods_per_s=pods_s, core_cpu_ms_per_pod=cpu)
        else:
            row["kube"].append({"gomaxprocs": r.engine_gomaxprocs, "status": r.status,
                                "reason": r.reason, "pods_per_s": pods_s,
                                "cpu_ms_per_pod": cpu, "clock": r.clock,
                                "kubernetes_version": r.kubernetes_version})
    rows = []
    for row in groups.values():
        if not row["kube"]:
            continue
        for k in row["kube"]:
            core, kube = row["core_pods_per_s"], k["pods_per_s"]
            k["ratio"] = core / kube if core is not None and kube else None
        rows.append(row)
    return rows


def _num(v: float | None, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def comparison_table(rows: list[dict[str, Any]]) -> Table:
    """The rich table: one line per workload, round and kube-scheduler GOMAXPROCS."""
    table = Table(title="engines side by side (ratio = core pods/s / kube-scheduler pods/s)")
    for name, justify in (("workload", "left"), ("core pods/s", "right"),
                          ("core CPU ms/pod", "right"), ("kube-scheduler", "left"),
                          ("pods/s", "right"), ("CPU ms/pod", "right"), ("ratio", "right")):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in rows:
        name = row["workload"] if row["round"] == 1 else f"{row['workload']} #{row['round']}"
        core = _num(row["core_pods_per_s"], ".1f")
        if row["core_status"] not in (None, STATUS_OK):
            core = row["core_status"]
        for i, k in enumerate(row["kube"]):
            kube = _num(k["pods_per_s"], ".1f") if k["status"] == STATUS_OK else k["status"]
            table.add_row(name if i == 0 else "", core if i == 0 else "",
                          _num(row["core_cpu_ms_per_pod"], ".3f") if i == 0 else "",
                          f"GOMAXPROCS={k['gomaxprocs']}", kube,
                          _num(k["cpu_ms_per_pod"], ".3f"), _num(k["ratio"], ".1f") + (
                              "x" if k["ratio"] is not None else ""))
    return table
