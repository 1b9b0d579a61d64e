"""The compare report's engines section: when a recorded side (``--base-results`` /
``--head-results`` of a ``schedperf run --engine both`` folder) measured workloads on both
scheduler_core and the real kube-scheduler, the report carries each workload's pods/s on both
engines and their ratio (core / kube-scheduler), per side and GOMAXPROCS of the Go process.

In report.json this is the optional ``engines`` list; each entry is read here with its field
path named on a bad value, and written back in the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reports.engine_ratios import EngineRow
from reports.render._json_reader import Obj, fail, join

__all__ = ["ENGINE_HEADER", "ENGINE_INTRO", "ENGINE_NUMERIC", "EngineRatio", "engine_cells",
           "engine_dicts", "engine_ratios_of", "read_engines"]

SIDES = ("base", "head")


@dataclass(frozen=True)
class EngineRatio:
    """One side's workload at one GOMAXPROCS: pods/s and CPU per pod on both engines."""

    side: str  # base | head
    row: EngineRow
    extra: Mapping[str, Any] = field(default_factory=dict)


def engine_ratios_of(side: str, rows: Sequence[EngineRow]) -> list[EngineRatio]:
    return [EngineRatio(side=side, row=r) for r in rows]


def _read_one(o: Obj) -> EngineRatio:
    side = o.choice("side", SIDES)
    row = EngineRow(
        workload=o.text("workload"), run_id=o.text("run_id"),
        machine=o.text("machine", nullable=True, required=False),
        kubernetes_version=o.text("kubernetes_version", nullable=True, required=False),
        gomaxprocs=o.whole("gomaxprocs", required=False, minimum=1),
        core_pods_per_s=o.number("core_pods_per_s", nullable=True),
        kube_pods_per_s=o.number("kube_pods_per_s", nullable=True),
        core_cpu_ms_per_pod=o.number("core_cpu_ms_per_pod", required=False),
        kube_cpu_ms_per_pod=o.number("kube_cpu_ms_per_pod", required=False))
    o.number("ratio", required=False)  # derived from the two pods/s: checked, not kept
    return EngineRatio(side=side, row=row, extra=o.extra())


def read_engines(items: list[Any], path: str = "engines") -> tuple[EngineRatio, ...]:
    """The ``engines`` list of report.json (Invalid naming the field on a bad entry)."""
    out: list[EngineRatio] = []
    seen: dict[tuple[str, str, int | None], int] = {}
    for i, raw in enumerate(items):
        entry = _read_one(Obj(raw, join(path, i)))
        key = (entry.side, entry.row.workload, entry.row.gomaxprocs)
        if key in seen:
            fail(join(path, i), f"duplicate of {path}[{seen[key]}] (same side, workload and "
                                "gomaxprocs)")
        seen[key] = i
        out.append(entry)
    return tuple(out)


def engine_dicts(entries: Sequence[EngineRatio]) -> list[dict[str, Any]]:
    out = []
    for e in entries:
        r = e.row
        known = {"side": e.side, "workload": r.workload, "gomaxprocs": r.gomaxprocs,
                 "core_pods_per_s": r.core_pods_per_s, "kube_pods_per_s": r.kube_pods_per_s,
                 "ratio": r.ratio, "core_cpu_ms_per_pod": r.core_cpu_ms_per_pod,
                 "kube_cpu_ms_per_pod": r.kube_cpu_ms_per_pod, "run_id": r.run_id,
                 "machine": r.machine, "kubernetes_version": r.kubernetes_version}
        known.update({k: e.extra[k] for k in sorted(e.extra)})
        out.append(known)
    return out


ENGINE_HEADER = ("side", "workload", "GOMAXPROCS", "core pods/s", "kube-scheduler pods/s",
                 "core / kube-scheduler", "core CPU ms/pod", "kube-scheduler CPU ms/pod")
ENGINE_NUMERIC = range(2, len(ENGINE_HEADER))
ENGINE_INTRO = ("The workloads a recorded side measured on both scheduler_core and the real "
                "kube-scheduler (`schedperf run --engine both`): pods/s is SchedulingThroughput's "
                "Average; the ratio is core pods/s over kube-scheduler pods/s at the Go "
                "process's GOMAXPROCS.")


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def engine_cells(e: EngineRatio) -> list[str]:
    """Plain-text cells of one row (the renderers escape them)."""
    r = e.row
    return [e.side.upper(), r.workload, _num(r.gomaxprocs, "d"), _num(r.core_pods_per_s, ".1f"),
            _num(r.kube_pods_per_s, ".1f"),
            "-" if r.ratio is None else f"{r.ratio:.1f}x",
            _num(r.core_cpu_ms_per_pod, ".3f"), _num(r.kube_cpu_ms_per_pod, ".3f")]
