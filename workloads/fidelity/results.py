"""``fidelity.parquet``: what a fidelity check compared and found.

One row per compared attempt (``kind`` attempt: the pod, for a pod-group member's evaluation
inside a group cycle the placement it was tried in (``*``: every node), both outcomes, how
many differences and how many of them are undocumented), one per difference (``kind``
difference: the attempt, stage, plugin, node, field, both values, and the known deviation
that documents it, if one does) and one per profile difference (``kind`` profile, attempt
0). Every row carries the workload and the SHA-256 and Kubernetes version of the reference
binary it ran with. Written atomically after each workload, so an interrupted check keeps the
finished ones.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workloads.fidelity.compare import Difference
from workloads.fidelity.deviations import Deviation, match
from workloads.fidelity.lockstep import WorkloadFidelity
from workloads.output.dataitems import atomic_write_bytes

__all__ = ["FIDELITY_FILE", "SCHEMA", "FidelityWriter", "WorkloadSummary", "summarize"]

FIDELITY_FILE = "fidelity.parquet"
SCHEMA = pa.schema([
    ("kind", pa.string()),
    ("workload", pa.string()),
    ("attempt", pa.int64()),
    ("pod", pa.string()),
    ("placement", pa.string()),
    ("core_outcome", pa.string()),
    ("reference_outcome", pa.string()),
    ("stage", pa.string()),
    ("plugin", pa.string()),
    ("node", pa.string()),
    ("field", pa.string()),
    ("core", pa.string()),
    ("reference", pa.string()),
    ("differences", pa.int64()),
    ("undocumented", pa.int64()),
    ("deviation", pa.string()),
    ("reference_sha256", pa.string()),
    ("kubernetes", pa.string()),
])


@dataclass
class WorkloadSummary:
    """One workload's counts: attempts compared and agreed (no difference), attempts whose
    differences are all documented, attempts with an undocumented one; the differences by
    (stage, plugin, field) with an example each, and which deviations were seen."""

    name: str
    status: str  # compared, unsupported, error
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    attempts_run: int = 0
    attempts: int = 0
    agreed: int = 0
    documented: int = 0
    disagreed: int = 0
    by_plugin: dict[tuple[str, str, str], tuple[int, str]] = field(default_factory=dict)
    deviations_seen: dict[str, int] = field(default_factory=dict)


def _describe(d: Difference, pod: str) -> str:
    where = f" on {d.node}" if d.node else ""
    return f"{pod}{where}: core {d.core!r}, reference {d.reference!r}"


def summarize(wf: WorkloadFidelity, deviations: Sequence[Deviation]
              ) -> tuple[WorkloadSummary, list[dict[str, Any]]]:
    """The workload's summary and its rows (without the binary's columns)."""
    status = "error" if wf.error else "unsupported" if wf.unsupported else "compared"
    s = WorkloadSummary(wf.name, status, wf.error or wf.unsupported, list(wf.notes),
                        wf.attempts_run)
    rows: list[dict[str, Any]] = []

    def note(d: Difference, pod: str, attempt: int, kind: str) -> bool:
        dev = match(deviations, wf.name, d)
        rows.append({"kind": kind, "workload": wf.name, "kubernetes": wf.kubernetes,
                     "attempt": attempt, "pod": pod,
                     "stage": d.stage, "plugin": d.plugin, "node": d.node, "field": d.field,
                     "core": d.core, "reference": d.reference,
                     "deviation": dev.id if dev else None})
        if dev is not None:
            s.deviations_seen[dev.id] = s.deviations_seen.get(dev.id, 0) + 1
            return True
        key = (d.stage, d.plugin, d.field)
        n, example = s.by_plugin.get(key, (0, _describe(d, pod)))
        s.by_plugin[key] = (n + 1, example)
        return False

    profile_bad = sum(not note(d, "", 0, "profile") for d in wf.profile_differences)
    if profile_bad:
        s.disagreed += 1
    for a in wf.attempts:
        undocumented = sum(not note(d, a.pod, a.number, "difference") for d in a.differences)
        rows.append({"kind": "attempt", "workload": wf.name, "kubernetes": wf.kubernetes,
                     "attempt": a.number,
                     "pod": a.pod, "placement": a.placement, "core_outcome": a.core_outcome,
                     "reference_outcome": a.reference_outcome,
                     "differences": len(a.differences), "undocumented": undocumented})
        s.attempts += 1
        if not a.differences:
            s.agreed += 1
        elif undocumented:
            s.disagreed += 1
        else:
            s.documented += 1
    return s, rows


class FidelityWriter:
    """Accumulates rows and rewrites ``<out>/fidelity.parquet`` after each workload."""

    def __init__(self, out: Path) -> None:
        self.path = out / FIDELITY_FILE
        self.rows: list[dict[str, Any]] = []

    def add(self, rows: Iterable[dict[str, Any]], *, reference_sha256: str) -> None:
        """One workload's rows, compared with the reference binary of that SHA-256 (each
        workload runs on the pinned release it needs)."""
        for row in rows:
            self.rows.append({**dict.fromkeys(SCHEMA.names), **row,
                              "reference_sha256": reference_sha256})
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(self.rows, schema=SCHEMA), buf)
        atomic_write_bytes(self.path, buf.getvalue())
