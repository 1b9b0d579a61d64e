"""The dashboard's engines page (``engines.html``): the rows of :mod:`reports.engine_ratios`
(scheduler_core and the kube-scheduler engine side by side, with their ratio) over the store.
"""

from __future__ import annotations

from pathlib import Path

from reports.dashboard.layout import SiteContext, empty, esc, page, table
from reports.engine_ratios import EngineRow, engine_rows
from reports.store import scan_store

__all__ = ["EngineRow", "load_engine_rows", "render_engines"]


def load_engine_rows(store: Path | str) -> list[EngineRow]:
    """The rows of the page, by workload then GOMAXPROCS (empty: no run measured both)."""
    return engine_rows(scan_store(store))


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
