"""Decision records: what every scheduling attempt evaluated, one row per (attempt, node,
plugin, extension point), from the scheduler's ``CycleRecord`` (``record_cycles=True``).

Rows of one attempt, in order:

* ``PreFilter``, node null: one row per PreFilter plugin that ran (``Skip`` when the plugin
  skipped its Filter; the rejecting plugin with its code and message; plugins after a final
  rejection did not run and have no row);
* ``Filter``, per examined node (in the order the scheduler examined them, which stops at
  numFeasibleNodesToFind): ``Success`` rows for the plugins the node passed, up to and
  including the first plugin that rejected it (with its code and message, as kube's
  ``explain`` gives them at cycle time); plugins skipped by PreFilter have no row;
* ``PreScore``, node null: one row per PreScore plugin (``Skip`` or ``Success``, or the
  failing plugin's ``Error``), only when more than one node was feasible;
* ``Score``, per feasible node and score plugin: raw, normalised and weighted score.

``selected`` is true on every row of the node the pod was assigned to. Codes are upstream's
names (``Success``, ``Unschedulable``, ``UnschedulableAndUnresolvable``, ``Skip``, ...).

The CycleRecord keeps the examined slots and each node's first failing Filter plugin, but
not per-plugin PreFilter/PreScore statuses nor the rejected nodes' statuses (they are only
computed when a cycle fails). :class:`DecisionFramework`, a Framework subclass used only when
decisions are recorded, captures them at cycle time; a PreFilter plugin's own code is
inferred from the cycle's final status and skip set (when two PreFilter plugins both return a
non-final ``Unschedulable``, only the first is reported as such).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from scheduler_core.framework.interface import Code, CycleState, Status
from scheduler_core.framework.runtime import Framework
from scheduler_core.nodetable.table import NodeTable
from scheduler_core.scheduler import CycleRecord, Scheduler
from workloads.result import Decision

__all__ = ["DecisionFramework", "DecisionLog"]

_FINAL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR)
Row = tuple[str, str, str | None]  # plugin, code, reason


class _Capture:
    """What the current attempt's DecisionFramework saw."""

    __slots__ = ("filter", "pre_filter", "pre_score", "skip_filter")

    def __init__(self) -> None:
        self.pre_filter: list[Row] = []
        self.skip_filter: frozenset[str] = frozenset()
        self.filter: dict[int, Status] = {}
        self.pre_score: list[Row] = []

    def reset(self) -> None:
        self.pre_filter = []
        self.skip_filter = frozenset()
        self.filter = {}
        self.pre_score = []


def _slots(idx: Any, n: int) -> np.ndarray:
    if isinstance(idx, slice):
        return np.arange(idx.start, idx.start + n, dtype=np.int64)
    return np.asarray(idx, dtype=np.int64).reshape(-1)


class DecisionFramework(Framework):
    """A Framework that also captures per-plugin statuses for decision records."""

    capture: _Capture

    @classmethod
    def of(cls, fwk: Framework, capture: _Capture) -> DecisionFramework:
        kw = {f.name: getattr(fwk, f.name) for f in dataclasses.fields(Framework)}
        out = cls(**kw)
        out.capture = capture
        return out

    def run_pre_filter(self, state: CycleState, pod: Any, table: NodeTable) -> Any:
        cap = self.capture
        cap.reset()
        result, status, narrowing = super().run_pre_filter(state, pod, table)
        skip = frozenset(state.skip_filter)
        rows: list[Row] = []
        for p in self.pre_filter_plugins:
            if p.name in skip:
                rows.append((p.name, "Skip", None))
            elif status is not None and p.name == status.plugin:
                rows.append((p.name, status.code.upstream_name, status.message or None))
                if status.code in _FINAL:
                    break
            else:
                note = None
                if p.name in narrowing and result is not None and result.node_names is not None:
                    note = f"PreFilterResult: {len(result.node_names)} node(s)"
                rows.append((p.name, "Success", note))
        cap.pre_filter = rows
        cap.skip_filter = skip
        return result, status, narrowing

    def run_filter(self, state: CycleState, pod: Any, table: NodeTable, idx: Any,
                   n: int) -> Any:
        mask, first_fail = super().run_filter(state, pod, table, idx, n)
        if first_fail is not None:
            rejected = np.flatnonzero(first_fail >= 0)
            if len(rejected):
                slots = _slots(idx, n)[rejected]
                rid, statuses = self.explain_filter(state, pod, table, slots,
                                                    first_fail[rejected])
                captured = self.capture.filter
                for slot, r in zip(slots.tolist(), np.asarray(rid).tolist(), strict=True):
                    captured.setdefault(slot, statuses[r])
        return mask, first_fail

    def run_pre_score(self, state: CycleState, pod: Any, table: NodeTable, idx: Any) -> Any:
        status = super().run_pre_score(state, pod, table, idx)
        rows: list[Row] = []
        for p in self.pre_score_plugins:
            if status is not None and p.name == status.plugin:
                rows.append((p.name, status.code.upstream_name, status.message or None))
                break
            rows.append((p.name, "Skip" if p.name in state.skip_score else "Success", None))
        self.capture.pre_score = rows
        return status


class DecisionLog:
    """Turns each attempt's CycleRecord (plus the capture) into Decision rows."""

    def __init__(self) -> None:
        self.capture = _Capture()
        self.rows: list[Decision] = []

    def wrap(self, frameworks: Mapping[str, Framework]) -> dict[str, Framework]:
        return {name: DecisionFramework.of(fwk, self.capture)
                for name, fwk in frameworks.items()}

    def collect(self, scheduler: Scheduler) -> None:
        """Call right after every ``schedule_one`` (the node table must not have changed)."""
        cycles = scheduler.cycles
        if cycles:
            table = scheduler.cluster.table
            for record in cycles:
                self.rows.extend(self.rows_for(record, table))
            cycles.clear()
        self.capture.reset()

    def rows_for(self, rec: CycleRecord, table: NodeTable) -> list[Decision]:
        cap = self.capture
        pod = rec.pod
        ns, name, attempt = pod.namespace, pod.name, rec.attempt
        selected = table.node(rec.selected).name if rec.selected is not None else None

        def row(node: str | None, point: str, plugin: str, code: str, reason: str | None,
                score: tuple[int, int, int] | None = None) -> Decision:
            raw, norm, weighted = score if score is not None else (None, None, None)
            return Decision(ns, name, attempt, node, point, plugin, code, reason, raw, norm,
                            weighted, node is not None and node == selected)

        out = [row(None, "PreFilter", p, c, r) for p, c, r in cap.pre_filter]
        status = rec.pre_filter_status
        if status is not None and status.is_rejected:
            return out
        skip = cap.skip_filter
        for slots, first_fail in rec.examined:
            ff = first_fail.tolist() if first_fail is not None else None
            for j, slot in enumerate(np.asarray(slots).tolist()):
                node = table.node(slot).name
                fail = -1 if ff is None else ff[j]
                for i, plugin in enumerate(rec.filter_plugins):
                    if plugin in skip:
                        continue
                    if i == fail:
                        st = cap.filter.get(slot)
                        if st is not None and st.plugin == plugin:
                            out.append(row(node, "Filter", plugin, st.code.upstream_name,
                                           st.message or None))
                        else:
                            out.append(row(node, "Filter", plugin, "Unschedulable", None))
                        break
                    out.append(row(node, "Filter", plugin, "Success", None))
        out.extend(row(None, "PreScore", p, c, r) for p, c, r in cap.pre_score)
        if rec.scores and rec.feasible is not None:
            for j, slot in enumerate(np.asarray(rec.feasible).tolist()):
                node = table.node(slot).name
                for b in rec.scores:
                    norm = int(b.normalized[j])
                    out.append(row(node, "Score", b.plugin, "Success", None,
                                   (int(b.raw[j]), norm, norm * b.weight)))
        return out
