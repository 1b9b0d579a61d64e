"""The pod-group scheduling cycle (kube v1.37's schedule_one_podgroup.go, GenericWorkload gate),
mixed into the Scheduler::

    schedule_pod_group         scheduleOnePodGroup: the popped pod's pending group members
    ├── _group_algorithm       podGroupSchedulingDefaultAlgorithm: each pod in queue order
    │                          through schedule_pod (the vectorised filter/score), assumed and
    │                          reserved; PlacementFeasible after each; everything reverted
    │                          when the group is unschedulable
    └── _submit_group          submitPodGroupAlgorithmResult: on success each placed pod (still
                               assumed and reserved) goes through Permit (GangScheduling: the
                               quorum) and is bound; otherwise every member fails

A group is placed all or nothing: when ``minCount`` cannot be met the assumptions the
algorithm made are undone and no pod binds (``GroupStats.wasted_pods`` counts them).

Under the TopologyAwareWorkloadScheduling gate ``cycle.placement`` (upstream's
podGroupSchedulingPlacementAlgorithm) runs ``_group_algorithm`` once per placement and keeps the
best one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any

from scheduler_core.cycle.result import CycleRecord
from scheduler_core.framework.diagnosis import Diagnosis, FitError
from scheduler_core.framework.interface import (
    PODS_TO_ACTIVATE,
    Code,
    CycleState,
    PostFilterResult,
    Status,
)
from scheduler_core.framework.metrics import RESULT_ERROR, RESULT_SCHEDULED, RESULT_UNSCHEDULABLE
from scheduler_core.plugins.names import GANG_SCHEDULING

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod
    from scheduler_core.api.podgroup import PodGroup
    from scheduler_core.cycle.result import ScheduleResult
    from scheduler_core.framework.runtime import Framework

__all__ = ["GROUP_UNSCHEDULABLE", "GroupStats", "MemberResult", "PodGroupCycle"]

GROUP_UNSCHEDULABLE = "pod group is unschedulable"


@dataclass
class GroupStats:
    """What the pod-group cycles did (read by the workload layer's collectors)."""

    cycles: int = 0
    scheduled: int = 0  # group cycles that placed their group
    # groups whose first successful cycle has happened (upstream's PodGroupInitiallyScheduled
    # condition turning True): their number is what groups/s counts
    initially_scheduled: set[str] = field(default_factory=set)
    unschedulable: int = 0
    errors: int = 0
    wasted_pods: int = 0  # pods assumed by the algorithm, released because the group failed
    # seconds (scheduler clock) from a group's first attempt to its last bind, per group
    latencies: list[float] = field(default_factory=list)
    # (result, wall seconds) of each pod-group cycle, when the recorder is enabled (upstream's
    # scheduler_podgroup_scheduling_attempt_duration_seconds)
    attempt_seconds: list[tuple[str, float]] = field(default_factory=list)
    first_attempt: dict[str, float] = field(default_factory=dict)  # group key -> clock time


@dataclass(slots=True)
class MemberResult:
    """One pod's outcome in the algorithm (upstream's algorithmResult)."""

    qpi: Any
    node: str = ""
    status: Status | None = None  # None: placed on ``node``
    diagnosis: Diagnosis | None = None
    state: CycleState | None = None  # the pod's cycle state (assumed and reserved with it)


class PodGroupCycle:
    """The pod-group cycle, as methods of the Scheduler."""

    group_stats: GroupStats

    def schedule_pod_group(self: Any, fwk: Framework, first: Any) -> None:
        """One attempt of the group of the popped pod ``first``: its pending members join
        (upstream's queued pod-group entity), then the algorithm, then the result."""
        cluster, queue = self.cluster, self.queue
        key = first.pod.group_key
        uid = first.pod.uid
        others = [p.uid for p in cluster.group_pods.get(key, {}).values()
                  if p.uid != uid and not p.node_name]
        members = [first, *queue.take_members(others)] if others else [first]
        if len(members) > 1:
            sk = queue.sort_key
            members.sort(key=lambda q: sk(q.pod, q.timestamp, q.seq))
        live = []
        for q in members:  # skipPodGroupPodSchedule: deleted or already placed
            pod = q.pod
            if (pod.deletion_timestamp is not None or pod.node_name
                    or cluster.pods.get(pod.key) is not pod):
                queue.done(pod.uid)
            else:
                live.append(q)
        self.attempts_total += len(members) - 1  # one attempt per pod, as upstream counts
        if not live:
            return
        stats = self.group_stats
        stats.cycles += 1
        stats.first_attempt.setdefault(key, self.clock.now())
        pg = cluster.pod_groups.get(key)
        if pg is None:  # deleted since its pods were queued: they wait for it again
            stats.unschedulable += 1
            status = Status.unresolvable(
                f'waiting for pods\'s pod group "{first.pod.spec.pod_group}" to appear in '
                "scheduling queue", plugin=GANG_SCHEDULING)
            for q in live:
                self._handle_failure(fwk, q, status, Diagnosis.rejected_by(status), None)
            return
        error = _validate(pg, key, live)
        if error is not None:
            stats.errors += 1
            for q in live:
                self._handle_failure(fwk, q, error, None, None)
            return
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        algorithm = self._placement_algorithm if self.topology_aware else self._group_algorithm
        results, status = algorithm(fwk, pg, live)
        self._submit_group(fwk, key, live, results, status, t0)
        if rec:
            result = (RESULT_SCHEDULED if status is None else
                      RESULT_UNSCHEDULABLE if status.is_rejected else RESULT_ERROR)
            stats.attempt_seconds.append((result, perf_counter() - t0))

    # ------------------------------------------------------------------ the algorithm
    def _group_algorithm(self: Any, fwk: Framework, pg: PodGroup, live: list[Any]
                         ) -> tuple[list[MemberResult], Status | None]:
        """podGroupSchedulingDefaultAlgorithm over the whole node table. Returns each tried
        pod's result (in order; the loop stops early when ``minCount`` is out of reach) and
        the group's status (None: schedulable). When the group is not schedulable every
        assumption is undone before it returns; when it is, the placed pods stay assumed and
        reserved for ``_submit_group`` (upstream reverts them and assumes and reserves them
        again on the same nodes: the same state, one Reserve instead of Reserve, Unreserve,
        Reserve)."""
        cluster = self.cluster
        feasible = fwk.placement_feasible
        scheduled = cluster.group_scheduled.get(pg.key, 0)
        remaining = len(live)
        status = feasible(pg, scheduled, remaining)
        results: list[MemberResult] = []
        reverts: list[tuple[CycleState, Pod, str]] = []
        any_placed = False
        if status is None or status.code == Code.WAIT:
            for q in live:
                res = self._place_member(fwk, q)
                results.append(res)
                if res.status is None:
                    assert res.state is not None
                    reverts.append((res.state, q.pod, res.node))
                elif not res.status.is_rejected:  # an error ends the algorithm
                    status = Status(Code.ERROR, (
                        f"failed to schedule other pod from a pod group: {res.status.message}",))
                    break
                remaining -= 1
                if res.status is None:
                    scheduled += 1
                    any_placed = True
                status = feasible(pg, scheduled, remaining)
                if status is not None and status.code == Code.UNSCHEDULABLE:
                    break
        if status is not None and status.code == Code.WAIT:
            status = Status(Code.UNSCHEDULABLE, status.reasons, status.plugin)
        if status is None and not any_placed:
            status = Status(Code.UNSCHEDULABLE, (GROUP_UNSCHEDULABLE,))
        if status is not None:
            for state, pod, node in reversed(reverts):  # revertFns, last in first out
                self._release(fwk, state, pod, node)
            self.group_stats.wasted_pods += len(reverts)
        return results, status

    def _place_member(self: Any, fwk: Framework, q: Any) -> MemberResult:
        """podGroupPodSchedulingAlgorithm: schedule_pod, then assume and Reserve (no PostFilter
        for a pod of a group, as upstream)."""
        pod = q.pod
        state = CycleState()
        state.write(PODS_TO_ACTIVATE, {})
        record = CycleRecord(pod, q.attempts, fwk.profile_name) if self.record_cycles else None
        observer = self.observer if hasattr(self.observer, "before_member") else None
        if observer is not None:
            placement = self._placement
            if placement is None:
                observer.before_member(pod, fwk, "", None)
            else:
                observer.before_member(pod, fwk, placement.name,
                                       self.cluster.table.names_of(placement.slots))
        self._cycle_pod, self._nominated_memo = pod, None
        try:
            result: ScheduleResult = self.schedule_pod(fwk, state, pod, record)
        finally:
            self._cycle_pod = self._nominated_memo = None
        if record is not None:  # the decisions log: this pod's evaluation in the group
            self.cycles.append(record)
        out = self._member_result(fwk, q, state, result, record)
        if observer is not None:
            observer.after_member(pod, fwk, result, out.node, out.status)
        return out

    def _member_result(self: Any, fwk: Framework, q: Any, state: CycleState,
                       result: ScheduleResult, record: CycleRecord | None) -> MemberResult:
        """The member assumed and reserved on the node ``result`` found, or why it has none."""
        pod = q.pod
        node = result.suggested_host
        if not node:
            status = result.status
            if status is None:  # no node fits
                status = Status(Code.UNSCHEDULABLE, (FitError(pod.key, result.diagnosis).message,))
            if record is not None:
                record.status = status
            return MemberResult(q, "", status, result.diagnosis)
        status = self._assume_and_reserve(fwk, state, pod, node)
        if status is not None:
            return MemberResult(q, "", status, Diagnosis.rejected_by(status))
        return MemberResult(q, node, state=state)

    # ------------------------------------------------------------------ the result
    def _submit_group(self: Any, fwk: Framework, key: str, live: list[Any],
                      results: list[MemberResult], status: Status | None, t0: float) -> None:
        """submitPodGroupAlgorithmResult: bind the placed pods of a schedulable group (through
        Reserve and Permit again), send every other member back to the queue."""
        stats = self.group_stats
        tried = {id(r.qpi): r for r in results}
        if status is None:
            stats.scheduled += 1
            stats.initially_scheduled.add(key)
            for q in live:
                res = tried.get(id(q))
                if res is not None and res.status is None:
                    assert res.state is not None
                    self._commit_member(fwk, q, res.node, res.state, t0)
                else:
                    self._member_failed(fwk, q, res, None)
            if self.waiting:
                self._process_waiting()
            members = self.cluster.group_pods.get(key, {}).values()
            if all(p.node_name and p.key not in self.cluster.assumed for p in members):
                first = stats.first_attempt.pop(key, None)
                if first is not None:
                    stats.latencies.append(self.clock.now() - first)
            return
        if status.is_rejected:
            stats.unschedulable += 1
        else:
            stats.errors += 1
        plugins: set[str] = set()
        for res in results:
            if res.diagnosis is not None:
                plugins |= res.diagnosis.unschedulable_plugins
        if status.plugin:
            plugins.add(status.plugin)
        for q in live:
            self._member_failed(fwk, q, tried.get(id(q)), status, plugins)

    def _member_failed(self: Any, fwk: Framework, q: Any, res: MemberResult | None,
                       group_status: Status | None, plugins: set[str] | None = None) -> None:
        """A member goes back to the queue: with its own failure if it had one, else with the
        group's (rejected by the plugins that rejected its fellow members)."""
        if res is not None and res.status is not None and (
                group_status is None or group_status.is_rejected):
            keep = PostFilterResult(q.pod.nominated_node_name)
            self._handle_failure(fwk, q, res.status, res.diagnosis, keep)
            return
        status = group_status or Status(Code.UNSCHEDULABLE, (GROUP_UNSCHEDULABLE,))
        if status.is_rejected:
            status = Status(Code.UNSCHEDULABLE, (status.message,))
            d = Diagnosis(0)
            d.unschedulable_plugins |= plugins or set()
            self._handle_failure(fwk, q, status, d, None)
        else:
            self._handle_failure(fwk, q, status, None, None)

    def _commit_member(self: Any, fwk: Framework, q: Any, node: str, state: CycleState,
                       t0: float) -> None:
        """prepareForBindingCycle (the pod is still assumed and reserved on ``node``: Permit)
        and the binding cycle for one placed pod."""
        pod = q.pod
        status, waits = fwk.run_permit(state, pod, node)
        if status is None and waits:
            self._hold_at_permit(fwk, state, q, node, waits, t0)
            return
        if status is not None:
            self._release(fwk, state, pod, node)
            self._handle_failure(fwk, q, status, Diagnosis.rejected_by(status), None)
            return
        self._activate(state, clear=True)
        status = self._binding_cycle(fwk, state, pod, node)
        if status is not None:
            self._handle_failure(fwk, q, status, Diagnosis.rejected_by(status), None)
            return
        if self.recorder.enabled:
            self.recorder.attempt(RESULT_SCHEDULED, fwk.profile_name, perf_counter() - t0)
            self.recorder.pod_scheduled(pod, q.attempts,
                                        self.clock.now() - q.initial_attempt_timestamp)
        self.failures.pop(pod.key, None)
        self.queue.done(pod.uid)


def _validate(pg: PodGroup, key: str, live: list[Any]) -> Status | None:
    """validatePodGroup: the group's pods share one schedulerName."""
    names = {q.pod.scheduler_name for q in live}
    if len(names) > 1:
        return Status(Code.ERROR, (
            f"pods of pod group {key} have different scheduler names: "
            f"{', '.join(sorted(names))}",))
    return None
