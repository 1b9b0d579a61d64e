"""kube's schedulePod and what it calls, top-down as in upstream's schedule_one.go, mixed into
the Scheduler::

    schedule_pod                          schedulePod: no nodes / find / score / select
    ├── _find_nodes_that_fit              findNodesThatFitPod: PreFilter, the nominated node
    │   ├── _find_nodes_that_pass_filters findNodesThatPassFilters: Filter, nominated pass
    │   │   └── diagnose                  NodeToStatus, only when no node passed
    │   └── _pass_extenders               findNodesThatPassExtenders: HTTP extenders' filter
    ├── _prioritize_nodes                 prioritizeNodes: PreScore, Score, extenders' scores
    └── _select_host                      selectHost

The Scheduler's ``_scheduling_cycle`` (schedulingCycle) calls ``schedule_pod``, then PostFilter
when no node fits, or Reserve and Permit on the chosen node.

The search runs over the node table's columns: each step filters a chunk of nodes with one
call per Filter plugin and keeps, per examined node, only the index of its first failing
plugin; the statuses of rejected nodes are asked for (``diagnose``) only when no node fits.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np

from scheduler_core.cycle.diagnose import NominatedRejections, diagnose
from scheduler_core.cycle.nominated import NominatedPass
from scheduler_core.cycle.result import CycleRecord, FeasibleNodes, ScheduleResult
from scheduler_core.extender import EXTENDER_NAME, ExtenderError, Extenders
from scheduler_core.framework.diagnosis import NO_NODES_AVAILABLE, Diagnosis
from scheduler_core.framework.interface import CycleState, FilterError, Status
from scheduler_core.framework.runtime import ScoreBreakdown

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod
    from scheduler_core.framework.placement import Placement
    from scheduler_core.framework.runtime import Framework
    from scheduler_core.nodetable.table import NodeTable

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "SchedulePod",
    "num_feasible_nodes_to_find",
    "slots_in_list_order",
]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
_MAX = np.maximum.reduce
_NO_SCORES = np.zeros(0, dtype=np.int64)  # with the status of a failed PreScore


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes the filter search stops at (kube's numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    k = num_all_nodes * pct // 100
    return max(k, MIN_FEASIBLE_NODES_TO_FIND)


class SchedulePod(NominatedPass):
    """schedulePod and its steps, as methods of the Scheduler (``next_start_node_index``: where
    the next filter search starts in the node list, as upstream's nextStartNodeIndex)."""

    rng: np.random.Generator
    next_start_node_index: int
    extenders: Extenders  # the scheduler's HTTP extenders (empty: none)
    # the pod-group cycle's current placement (None: every node), as upstream's
    # Snapshot.AssumePlacement: only the node candidates are restricted to it, plugins still
    # see the whole table
    _placement: Placement | None = None

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod,
                     record: CycleRecord | None) -> ScheduleResult:
        """kube's schedulePod: the node to place ``pod`` on, or the status that says why there
        is none; when no node fits, only the diagnosis (see ``ScheduleResult``)."""
        table = self.cluster.table
        if not table.slot_of:  # (no property call: this runs every cycle)
            return ScheduleResult(status=Status.unresolvable(NO_NODES_AVAILABLE),
                                  diagnosis=Diagnosis(0))
        feasible, diagnosis, evaluated, error = self._find_nodes_that_fit(fwk, state, pod, record)
        if error is not None:
            return ScheduleResult(status=error)
        n = len(feasible)
        if n == 0:
            return ScheduleResult(diagnosis=diagnosis)
        if n == 1:
            chosen = int(feasible[0])
            if record is not None:
                record.feasible = feasible
                record.selected = chosen
        else:
            total, status = self._prioritize_nodes(fwk, state, pod, feasible, record)
            if status is not None:
                return ScheduleResult(status=status)
            chosen = self._select_host(feasible, total, record)
        return ScheduleResult(table.node(chosen).name, evaluated, n)

    # ------------------------------------------------------------------ filtering
    def _find_nodes_that_fit(self, fwk: Framework, state: CycleState, pod: Pod,
                             record: CycleRecord | None) -> FeasibleNodes:
        """kube's findNodesThatFitPod: PreFilter; then the pod's nominated node alone (set by an
        earlier preemption) if the pod fits there; else the nodes PreFilter left (all, or the
        ones it named) through the filters."""
        table = self.cluster.table
        placement = self._placement
        diagnosis = Diagnosis(len(table.slot_of) if placement is None else len(placement))
        pre_res, status, narrowing = fwk.run_pre_filter(state, pod, table)
        if record is not None:
            record.pre_filter_status = status
            record.filter_plugins = fwk.filter_names
        if status is not None:
            if not status.is_rejected:
                return np.zeros(0, dtype=np.int64), diagnosis, 0, status
            diagnosis.reject_everywhere(status)
            return np.zeros(0, dtype=np.int64), diagnosis, 0, None
        try:
            if pod.nominated_node_name:
                slot = table.slot_of.get(pod.nominated_node_name)
                if placement is not None and slot is not None and not placement.mask[slot]:
                    slot = None  # outside the placement (GetNodeInPlacement fails)
                if slot is not None and self.filter_one_node(fwk, state, pod, slot) is None:
                    nominated = np.asarray([slot], dtype=np.int64)
                    if self.extenders:  # evaluateNominatedNode: an error there is only logged
                        try:
                            nominated, _ = self._pass_extenders(state, pod, diagnosis,
                                                                nominated)
                        except ExtenderError:
                            nominated = nominated[:0]
                    if len(nominated):
                        return nominated, diagnosis, 1, None
            if pre_res is not None and pre_res.node_names is not None:
                candidates, identity = slots_in_list_order(table, pre_res.node_names), False
                if placement is not None:
                    candidates = candidates[placement.mask[candidates]]
                diagnosis.narrow(narrowing)
            elif placement is not None:
                candidates, identity = placement.slots, False
            else:
                candidates, identity = table.order(), table.order_is_identity
            feasible, evaluated, undiagnosed = self._find_nodes_that_pass_filters(
                fwk, state, pod, diagnosis, candidates, identity, record)
            if self.extenders and len(feasible):
                feasible, error = self._after_extenders(fwk, state, pod, diagnosis, feasible,
                                                        undiagnosed)
                if error is not None:
                    return feasible, diagnosis, 0, error
        except FilterError as exc:  # a Filter plugin failed: the cycle ends with its error
            return np.zeros(0, dtype=np.int64), diagnosis, 0, exc.status
        return feasible, diagnosis, evaluated, None

    def _after_extenders(self, fwk: Framework, state: CycleState, pod: Pod,
                         diagnosis: Diagnosis, feasible: np.ndarray, undiagnosed: Any
                         ) -> tuple[np.ndarray, Status | None]:
        """The feasible slots the extenders leave, or none and the error of one that failed.
        When they leave none, the Filter plugins' rejections (``undiagnosed``: the search's
        failed parts and nominated pass) are diagnosed too, before the extenders' own."""
        try:
            feasible, narrowed = self._pass_extenders(state, pod, diagnosis, feasible)
        except ExtenderError as exc:
            return np.zeros(0, dtype=np.int64), Status.error(str(exc))
        if narrowed:
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        if not len(feasible) and undiagnosed is not None:
            extender_rejected = (diagnosis.slots, diagnosis.statuses)
            diagnose(fwk, state, pod, self.cluster.table, diagnosis, *undiagnosed)
            diagnosis.add_rejections(*extender_rejected)
        return feasible, None

    def _pass_extenders(self, state: CycleState, pod: Pod, diagnosis: Diagnosis,
                        feasible: np.ndarray) -> tuple[np.ndarray, bool]:
        """kube's findNodesThatPassExtenders: the feasible slots the extenders keep (in their
        order) and whether they narrowed them; the nodes they failed are recorded in
        ``diagnosis`` with the extender's message (before any Filter rejection is). Raises
        ExtenderError when a non-ignorable extender fails."""
        table = self.cluster.table
        nodes = [table.node(int(s)) for s in feasible]
        recorder = self.recorder if state.record_plugin_metrics else None
        kept, failed, narrowed = self.extenders.filter(pod, nodes, recorder)
        slot_of = table.slot_of
        if failed:
            known = [(slot_of[name], msg, unresolvable)
                     for name, (msg, unresolvable) in failed.items() if name in slot_of]
            diagnosis.add_rejections(
                np.asarray([k[0] for k in known], dtype=np.int64),
                [Status.unresolvable(msg) if unresolvable else Status.unschedulable(msg)
                 for _, msg, unresolvable in known])
        return np.asarray([slot_of[n.name] for n in kept], dtype=np.int64), narrowed

    def _find_nodes_that_pass_filters(
        self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis,
        cand: np.ndarray, identity: bool, record: CycleRecord | None,
    ) -> tuple[np.ndarray, int, Any]:
        """kube's findNodesThatPassFilters over the candidate slots ``cand`` (in list order;
        ``identity``: ``cand[i] == i``): from ``next_start_node_index`` on, wrapping around, in
        chunks that double, until ``num_feasible_nodes_to_find`` nodes pass. A node holding
        nominated pods passes only if the nominated pass does too. Returns the slots that
        passed and how many nodes were examined, and moves ``next_start_node_index`` past
        those; when none passed, ``diagnose`` records why each examined node failed. Third:
        when some passed but extenders may still reject them all, what ``diagnose`` would
        need (the failed parts and the nominated pass), else None."""
        table = self.cluster.table
        m = len(cand)
        ext = self.extenders
        k = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, m) \
            if fwk.has_score_plugins or ext.has_filters or ext.has_prioritizers else 1
        if m == 0:
            return np.zeros(0, dtype=np.int64), 0, None
        start = self.next_start_node_index % m
        feasible_parts: list[np.ndarray] = []
        failed_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (slots, first failing plugin)
        found = processed = pos = 0
        chunk = max(2 * k, 128)
        # statuses of the nodes the nominated pass rejects, when there are nominated pods
        pass1 = NominatedRejections() if self.queue.has_nominated_pods() else None
        while pos < m and found < k:
            end = min(pos + chunk, m)
            a, b = start + pos, start + end
            slots: np.ndarray | None
            if identity and b <= m:
                idx: Any = slice(a, b)
                slots = None  # slots a..b-1: materialised only when needed
            elif b <= m:
                idx = slots = cand[a:b]
            elif a >= m:
                idx = slots = cand[a - m:b - m]
            else:
                idx = slots = np.concatenate((cand[a:], cand[:b - m]))
            width = end - pos
            if fwk.has_filter_plugins:
                mask, first_fail = fwk.run_filter(state, pod, table, idx, width)
            else:
                mask, first_fail = None, None
            if pass1 is not None:
                if slots is None:
                    slots = np.arange(a, b, dtype=np.int64)
                mask, first_fail = self._apply_nominated(fwk, state, pod, slots, mask, first_fail,
                                                         pass1)
            need = k - found
            if mask is None:  # every node passed: the first ``need`` of them are taken
                cut = min(width, need)
                found += cut
                feasible_parts.append(np.arange(a, a + cut, dtype=np.int64) if slots is None
                                      else slots[:cut].copy())
            else:
                passing = mask.nonzero()[0]
                cut = width
                if len(passing) >= need:
                    passing = passing[:need]
                    cut = int(passing[-1]) + 1
                found += len(passing)
                feasible_parts.append(passing + a if slots is None else slots[passing])
            processed += cut
            if first_fail is not None or record is not None:
                if slots is None:
                    slots = np.arange(a, b, dtype=np.int64)
                if first_fail is not None:
                    failed_parts.append((slots[:cut], first_fail[:cut]))
                if record is not None:
                    record.examined.append((slots[:cut], None if first_fail is None
                                            else first_fail[:cut].copy()))
            pos = end
            chunk *= 2
        placement = self._placement  # the index wraps at the placement's size, as upstream's
        n_all = len(table.slot_of) if placement is None else len(placement)
        self.next_start_node_index = (self.next_start_node_index + processed) % n_all
        feasible = (feasible_parts[0] if len(feasible_parts) == 1
                    else np.concatenate(feasible_parts))
        if len(feasible) == 0 and failed_parts:
            diagnose(fwk, state, pod, table, diagnosis, failed_parts, pass1)
        elif ext.has_filters and failed_parts:  # extenders may still reject every node left
            return feasible, processed, (failed_parts, pass1)
        return feasible, processed, None

    # ------------------------------------------------------------------ scoring
    def _prioritize_nodes(self, fwk: Framework, state: CycleState, pod: Pod,
                          feasible: np.ndarray, record: CycleRecord | None
                          ) -> tuple[np.ndarray, Status | None]:
        """kube's prioritizeNodes: each feasible node's weighted total score (PreScore, Score,
        NormalizeScore; all 1 without Score plugins), or the status of a plugin that failed."""
        n = len(feasible)
        ext = self.extenders
        if not fwk.has_score_plugins and not ext:
            return np.ones(n, dtype=np.int64), None
        table = self.cluster.table
        if fwk.has_score_plugins:
            idx = _as_run(table, feasible, n)
            status = fwk.run_pre_score(state, pod, table, idx)
            if status is not None:
                return _NO_SCORES, status
            breakdown: list[ScoreBreakdown] | None = [] if record is not None else None
            total, status = fwk.run_score(state, pod, table, idx, n, breakdown=breakdown)
            if status is not None:
                return total, status
            if record is not None and breakdown is not None:
                record.scores = breakdown
        else:
            total = np.zeros(n, dtype=np.int64)
        if ext.has_prioritizers:
            nodes = [table.node(int(s)) for s in feasible]
            recorder = self.recorder if state.record_plugin_metrics else None
            extra = ext.prioritize(pod, nodes, recorder)
            if extra:
                total = total + np.fromiter((extra.get(nd.name, 0) for nd in nodes),
                                            dtype=np.int64, count=n)
        return total, None

    def _select_host(self, feasible: np.ndarray, total: np.ndarray, record: CycleRecord | None
                     ) -> int:
        """kube's selectHost: the slot of the node with the highest total, ties broken at
        random (the scheduler's seeded generator)."""
        best = _MAX(total)  # total.max() without the method's Python-level wrapper
        ties = (total == best).nonzero()[0]
        pick = int(ties[0]) if len(ties) == 1 else int(ties[self.rng.integers(len(ties))])
        chosen = int(feasible[pick])
        if record is not None:
            record.feasible = feasible
            record.total = total
            record.selected = chosen
        return chosen


def slots_in_list_order(table: NodeTable, names: Collection[str]) -> np.ndarray:
    """The slots of the nodes named (names of no node left out), in node list order."""
    slot_of = table.slot_of
    wanted = np.fromiter((s for name in names if (s := slot_of.get(name)) is not None),
                         dtype=np.int64)
    order = table.order()
    position = np.empty(table.high, dtype=np.int64)
    position[order] = np.arange(len(order))
    return wanted[np.argsort(position[wanted], kind="stable")]


def _as_run(table: Any, feasible: np.ndarray, n: int) -> Any:
    """``feasible`` as ``slice(first, first + n)`` when it is that run of slots, else itself:
    plugins then read their columns as views instead of gathering them.

    When the table's list order is the slot order, the search visits candidates in
    ascending slot order, wrapping around at most once (to slots below the first one), so
    the feasible slots are unique and ascending unless wrapped, and then the last is below
    the first: ``last - first == n - 1`` means exactly the run."""
    if n > 1 and table.order_is_identity:
        first = int(feasible[0])
        if int(feasible[-1]) - first == n - 1:
            return slice(first, first + n)
    return feasible
