"""The scheduling loop: pop → profile → cycle → assume → reserve → permit → bind.

``schedule_one`` runs one scheduling attempt (kube's ScheduleOne): ``_scheduling_cycle``
(schedulingCycle) asks ``schedule_pod`` (``cycle.schedule_pod``: filter, score, select) where
the pod goes, runs PostFilter when no node fits, else assumes the pod there and runs Reserve
and Permit; then the binding cycle. The binding cycle runs synchronously right after the
scheduling cycle (upstream runs it in a goroutine; with an in-memory API the order of events is
the same as upstream's fast path). Failures follow ``handleSchedulingFailure``.

The Scheduler also keeps the informer side (cluster events into the queue), the pods Permit
holds (``PodAtPermit``), the ``Handle`` its plugins get (``_Handle``) and the work plugins hand
off the cycle (``cycle.off_cycle``: asynchronous preemption's evictions), run before a pop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from scheduler_core.api.node import Node
from scheduler_core.api.pod import Pod
from scheduler_core.cluster.events import ADDED, DELETED, MODIFIED, EventType, WatchEvent
from scheduler_core.cluster.store import Cluster
from scheduler_core.cycle.off_cycle import OffCycleWork
from scheduler_core.cycle.placement import PlacementCycle, PlacementStats
from scheduler_core.cycle.pod_group import GroupStats, PodGroupCycle
from scheduler_core.cycle.result import CycleRecord, ScheduleResult
from scheduler_core.cycle.schedule_pod import SchedulePod
from scheduler_core.errors import UnknownSchedulerError
from scheduler_core.extender import ExtenderError, Extenders
from scheduler_core.framework.diagnosis import Diagnosis, FitError
from scheduler_core.framework.interface import (
    PODS_TO_ACTIVATE,
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    FilterError,
    Handle,
    PostFilterResult,
    Status,
)
from scheduler_core.framework.metrics import (
    RESULT_ERROR,
    RESULT_SCHEDULED,
    RESULT_UNSCHEDULABLE,
    MetricsRecorder,
    NoopRecorder,
)
from scheduler_core.framework.runtime import Framework
from scheduler_core.nodetable.accounting import SlotPods
from scheduler_core.plugins.gang_scheduling import EVENT_POD_GROUP_ADD, EVENT_POD_GROUP_UPDATE
from scheduler_core.queue.clock import Clock, FakeClock
from scheduler_core.queue.events import EVENT_ASSIGNED_POD_ADD, EVENT_UNSCHEDULED_POD_ADD
from scheduler_core.queue.scheduling_queue import PriorityQueue

if TYPE_CHECKING:
    from scheduler_core.api.objects import Service
    from scheduler_core.nodetable.table import NodeTable

__all__ = ["AttemptObserver", "CycleRecord", "IgnoredPod", "PodAtPermit", "Scheduler"]

_WAIT = Code.WAIT
_AT_PERMIT = Status(Code.WAIT, ("waiting at Permit",))


@dataclass(frozen=True, slots=True)
class IgnoredPod:
    """A pod whose schedulerName matches no profile: it stays Pending forever."""

    namespace: str
    name: str
    scheduler_name: str


class PodAtPermit:
    """A pod held at Permit until every waiting plugin allows it, one rejects, or time runs
    out (what plugins see of it: ``framework.interface.WaitingPod``)."""

    def __init__(self, pod: Pod, fwk: Framework, state: CycleState, node: str, qpi: Any,
                 deadlines: dict[str, float], timeouts: dict[str, float]) -> None:
        self.pod = pod
        self.framework = fwk
        self.state = state
        self.node = node
        self.qpi = qpi
        self.deadlines = deadlines
        self.timeouts = timeouts
        self.rejection: Status | None = None
        self.started = 0.0  # perf_counter() at the start of its scheduling cycle (metrics)

    @property
    def pending_plugins(self) -> list[str]:
        return sorted(self.deadlines)

    def allow(self, plugin: str) -> None:
        self.deadlines.pop(plugin, None)

    def reject(self, plugin: str, message: str) -> None:
        if self.rejection is None:
            self.rejection = Status(Code.UNSCHEDULABLE, (message,), plugin)


class _Handle:
    """The framework handle plugins receive (``framework.interface.Handle``): read access to
    cluster state, the nominator, Permit's waiting pods, bind, and filtering as the scheduling
    cycle does."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._s = scheduler

    @property
    def table(self) -> NodeTable:
        return self._s.cluster.table

    @property
    def cluster(self) -> Cluster:
        return self._s.cluster

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return self._s.cluster.namespace_labels(namespace)

    def list_services(self, namespace: str) -> list[Service]:
        return self._s.cluster.list_services(namespace)

    @property
    def rng(self) -> np.random.Generator:
        return self._s.rng

    @property
    def generic_workload(self) -> bool:
        return self._s.generic_workload

    @property
    def clock(self) -> Clock:
        return self._s.clock

    @property
    def extenders(self) -> Extenders:
        """The scheduler's HTTP extenders (preemption asks those with a preempt verb)."""
        return self._s.extenders

    def framework_for(self, pod: Pod) -> Framework | None:
        return self._s.profiles.get(pod.scheduler_name)

    def bind(self, pod: Pod, node_name: str) -> None:
        self._s.cluster.bind(pod, node_name)

    def get_waiting_pod(self, uid: str) -> PodAtPermit | None:
        return self._s.waiting.get(uid)

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return self._s.queue.nominated_pods_for_node(node_name)

    def delete_nominated_pod(self, pod: Pod) -> None:
        self._s.queue.delete_nominated_pod(pod)

    def nominated_placement(self, pod: Pod) -> SlotPods:
        """The pods the nominated pass adds while ``pod`` is scheduled, per slot: nominated
        there, of priority >= the pod's, not the pod itself, not bound (memoised for the
        cycle scheduling ``pod``)."""
        return self._s.nominated_placement(pod)

    def run_filter_with_nominated(self, framework: Framework, state: CycleState, pod: Pod,
                                  slot: int) -> Status | None:
        return self._s.filter_one_node(framework, state, pod, slot)

    @property
    def async_preemption(self) -> bool:
        """The SchedulerAsyncPreemption feature gate."""
        return self._s.async_preemption

    def submit_off_cycle(self, task: Callable[[], None]) -> None:
        """Run ``task`` off the scheduling cycle (when: ``cycle.off_cycle``)."""
        self._s.off_cycle.submit(task, self._s.attempts_total)


class AttemptObserver(Protocol):
    """Told of each scheduling attempt: ``before_attempt`` once the pod is popped and its
    profile found, before the scheduling cycle; ``after_attempt`` once the attempt is over
    (bound, held at Permit, or failed and requeued with its nomination set), with the
    cycle's result and the final status (None: bound)."""

    def before_attempt(self, pod: Pod, fwk: Framework) -> None: ...

    def after_attempt(self, pod: Pod, fwk: Framework, result: ScheduleResult,
                      status: Status | None) -> None: ...


class MemberObserver(AttemptObserver, Protocol):
    """An attempt observer that is also told of each evaluation of a pod-group member inside
    a group cycle (``cycle.pod_group``): ``before_member`` with the placement's name ("" for
    every node) and the names of the nodes the evaluation may pick from (None: every node),
    with the members tried before it in this placement assumed; ``after_member`` with its
    result and the node it was assumed on ("" if none; then ``status`` says why)."""

    def before_member(self, pod: Pod, fwk: Framework, placement: str,
                      nodes: list[str] | None) -> None: ...

    def after_member(self, pod: Pod, fwk: Framework, result: ScheduleResult, node: str,
                     status: Status | None) -> None: ...


class Scheduler(SchedulePod, PodGroupCycle, PlacementCycle):
    """One scheduling loop over one cluster, with one framework per profile (schedulerName).

    ``generic_workload`` is the GenericWorkload feature gate (v1.37): on, a pod naming a
    PodGroup is scheduled with its group in the pod-group cycle (``cycle.pod_group``).
    ``topology_aware`` is the TopologyAwareWorkloadScheduling gate: on, the group is tried in
    each placement its PlacementGenerate plugin offers (``cycle.placement``)."""

    def __init__(
        self,
        cluster: Cluster,
        profiles: Mapping[str, Framework] | Callable[[Any], Mapping[str, Framework]],
        *,
        clock: Clock | None = None,
        seed: int = 0,
        recorder: MetricsRecorder | None = None,
        reject_unknown_scheduler: bool = False,
        queueing_hints: bool = True,
        pop_from_backoff: bool = True,
        async_preemption: bool = True,
        pod_initial_backoff: float = 1.0,
        pod_max_backoff: float = 10.0,
        record_cycles: bool = False,
        generic_workload: bool = False,
        topology_aware: bool = False,
        extenders: Extenders | None = None,
    ) -> None:
        self.cluster = cluster
        # HTTP extenders (scheduler_core.extender; empty: none), called by the cycle
        self.extenders = extenders if extenders is not None else Extenders()
        self.generic_workload = generic_workload
        self.topology_aware = topology_aware
        self.placement_stats = PlacementStats()
        self._placement = None
        self.group_stats = GroupStats()
        self.clock: Clock = clock or FakeClock()
        self.rng = np.random.default_rng(seed)
        self.recorder: MetricsRecorder = recorder or NoopRecorder()
        # the SchedulerAsyncPreemption gate (read by plugins through the handle) and the work
        # they hand off the cycle; set before the profiles are built
        self.async_preemption = async_preemption
        self.off_cycle = OffCycleWork()
        self.handle: Handle = _Handle(self)
        self.profiles: dict[str, Framework] = dict(
            profiles(self.handle) if callable(profiles) else profiles)
        if not self.profiles:
            raise ValueError("at least one profile is required")
        for fwk in self.profiles.values():
            fwk.recorder = self.recorder
        self.reject_unknown_scheduler = reject_unknown_scheduler
        first = next(iter(self.profiles.values()))
        sort_plugin = first.queue_sort
        hints: dict[str, Any] = {}
        for fwk in self.profiles.values():
            hints.update(fwk.events_to_register())
        self.queue = PriorityQueue(
            clock=self.clock,
            pre_enqueue=self._pre_enqueue,
            hints=hints,
            queueing_hints_enabled=queueing_hints,
            pop_from_backoff=pop_from_backoff,
            initial_backoff=pod_initial_backoff,
            max_backoff=pod_max_backoff,
            sort_key=sort_plugin.sort_key if sort_plugin is not None else None,
            namespace_labels=cluster.namespace_labels,
        )
        self.next_start_node_index = 0
        self.ignored: dict[str, IgnoredPod] = {}
        self.failures: dict[str, str] = {}  # pod key -> last FitError / error message
        self.attempts_total = 0
        self.record_cycles = record_cycles
        self.cycles: list[CycleRecord] = []
        self.waiting: dict[str, PodAtPermit] = {}
        self._plugin_sample_tick = 99  # the first cycle is sampled
        self._error_retry_generation = -1
        self._cycle_pod: Pod | None = None  # the pod of the scheduling cycle under way
        # told of every scheduling attempt (the fidelity check's lockstep); None: no call
        self.observer: AttemptObserver | None = None
        self._nominated_memo: tuple[Pod, SlotPods] | None = None
        cluster.subscribe(self._on_event)
        if reject_unknown_scheduler:
            cluster.admission_hooks.append(self._admit)
        if cluster.table.num_nodes or cluster.pods:
            self._sync_existing()

    # ------------------------------------------------------------------ informer equivalent
    def _admit(self, pod: Pod) -> None:
        if not pod.node_name and pod.scheduler_name not in self.profiles:
            known = ", ".join(sorted(self.profiles))
            raise UnknownSchedulerError(
                f"pod {pod.key}: spec.schedulerName: unknown scheduler "
                f'"{pod.scheduler_name}" (known: {known})')

    def _sync_existing(self) -> None:
        for pod in list(self.cluster.pods.values()):
            self._on_event(WatchEvent("Pod", EventType.ADDED, None, pod))

    def _pre_enqueue(self, pod: Pod) -> tuple[str, Status] | None:
        fwk = self.profiles.get(pod.scheduler_name)
        return None if fwk is None else fwk.run_pre_enqueue(pod)

    def _on_event(self, ev: WatchEvent) -> None:
        self._nominated_memo = None  # the queue may change nominations
        kind = ev.kind
        q = self.queue
        if kind == "Pod":
            old, new = ev.old, ev.new
            if ev.type is ADDED:
                if new.node_name:
                    q.assigned_pod_added(new)
                elif new.scheduler_name in self.profiles:
                    q.add(new)
                else:
                    self.ignored[new.key] = IgnoredPod(new.namespace, new.name,
                                                       new.scheduler_name)
                if self.generic_workload and new.spec.pod_group:
                    self._group_event(new.group_key, EVENT_ASSIGNED_POD_ADD
                                      if new.node_name else EVENT_UNSCHEDULED_POD_ADD, None, new)
            elif ev.type is MODIFIED:
                if not old.node_name and new.node_name:  # bound
                    q.delete(new)
                    q.assigned_pod_added(new)
                elif new.node_name:
                    q.assigned_pod_updated(old, new)
                elif new.scheduler_name in self.profiles:
                    q.update(old, new)
            else:
                self.ignored.pop(old.key, None)
                if old.node_name:
                    q.delete_nominated_pod(old)
                    q.assigned_pod_deleted(old)
                else:
                    q.delete(old)
                    if old.nominated_node_name:
                        q.nominated_pod_deleted(old)
        elif kind == "Node":
            if ev.type is ADDED:
                q.move_all_to_active_or_backoff(_cluster_event("Node", ActionType.ADD), None,
                                                ev.new)
            elif ev.type is MODIFIED:
                action = node_update_action(ev.old, ev.new)
                if action:
                    q.move_all_to_active_or_backoff(_cluster_event("Node", action), ev.old, ev.new)
            else:
                q.move_all_to_active_or_backoff(_cluster_event("Node", ActionType.DELETE),
                                                ev.old, None)
        else:
            if kind == "PodGroup" and ev.type is not DELETED and self.generic_workload:
                pg = ev.new
                self._group_event(pg.key, EVENT_POD_GROUP_ADD
                                  if ev.type is ADDED else EVENT_POD_GROUP_UPDATE, ev.old, pg)
            if kind == "Namespace" and ev.type is not ADDED:
                index = self.cluster.table.indexes.get("selector-counts")
                if index is not None:
                    index.invalidate_namespace_selectors()
            action = {ADDED: ActionType.ADD, DELETED: ActionType.DELETE}.get(
                ev.type, ActionType.UPDATE)
            q.move_all_to_active_or_backoff(_cluster_event(kind, action), ev.old, ev.new)

    def _group_event(self, key: str, event: ClusterEvent, old: Any, new: Any) -> None:
        """An event that may complete pod group ``key``: its gated pods are asked again (the
        gating plugin's hints decide; upstream's queue keeps them with the group). Skipped
        while the group cannot pass GangScheduling's PreEnqueue anyway (no PodGroup, or fewer
        pods than ``minCount``), so adding the pods of a large gang stays linear."""
        cluster = self.cluster
        members = cluster.group_pods.get(key)
        pg = cluster.pod_groups.get(key)
        if pg is None or (pg.policy.gang and len(members or ()) < pg.policy.min_count):
            return
        if members:
            self.queue.requeue_gated([p.uid for p in members.values() if not p.node_name],
                                     event, old, new)

    # ------------------------------------------------------------------ the loop
    def schedule_one(self) -> bool:
        """Run one attempt. Returns False when no pod could be popped (off-cycle work that
        was due may have run)."""
        if self.waiting:
            self._process_waiting()
        off_cycle = self.off_cycle
        if off_cycle:
            off_cycle.run_due(self.attempts_total)
        qpi = self.queue.pop()
        if qpi is None:
            if not off_cycle:
                return False
            off_cycle.run_all()  # nothing to pop: the off-cycle work finishes meanwhile
            qpi = self.queue.pop()
            if qpi is None:
                return False
        pod: Pod = qpi.pod
        self.attempts_total += 1
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None or pod.deletion_timestamp is not None or pod.node_name:
            self.queue.done(pod.uid)
            return True
        if self.generic_workload and pod.spec.pod_group:
            self.schedule_pod_group(fwk, qpi)
            return True
        rec = self.recorder.enabled
        t0 = perf_counter() if rec else 0.0
        state = CycleState(record_plugin_metrics=rec and self._sample_plugins())
        state.write(PODS_TO_ACTIVATE, {})
        record = CycleRecord(pod, qpi.attempts, fwk.profile_name) if self.record_cycles else None
        observer = self.observer
        if observer is not None:
            observer.before_attempt(pod, fwk)
        result = self._scheduling_cycle(fwk, state, qpi, record)
        status = result.status
        if status is None:
            self._activate(state, clear=True)  # the end of a successful scheduling cycle
            status = self._binding_cycle(fwk, state, pod, result.suggested_host)
        elif status.code == _WAIT:  # Permit holds the pod: its binding cycle runs once allowed
            self._activate(state, clear=True)
            self.waiting[pod.uid].started = t0
            if record is not None:
                self.cycles.append(record)
            if observer is not None:
                observer.after_attempt(pod, fwk, result, status)
            return True
        if record is not None:
            record.status = status
            self.cycles.append(record)
        if status is None:
            if rec:
                now = perf_counter()
                self.recorder.attempt(RESULT_SCHEDULED, fwk.profile_name, now - t0)
                self.recorder.pod_scheduled(
                    pod, qpi.attempts, self.clock.now() - qpi.initial_attempt_timestamp)
            self.failures.pop(pod.key, None)
            self.queue.done(pod.uid)
            if observer is not None:
                observer.after_attempt(pod, fwk, result, None)
            return True
        if rec:
            result_label = RESULT_UNSCHEDULABLE if status.is_rejected else RESULT_ERROR
            self.recorder.attempt(result_label, fwk.profile_name, perf_counter() - t0)
        self._handle_failure(fwk, qpi, status, result.diagnosis, result.nominating_info)
        if observer is not None:
            observer.after_attempt(pod, fwk, result, status)
        return True

    def _sample_plugins(self) -> bool:
        pct = getattr(self.recorder, "plugin_sample_percent", 100)
        if pct <= 0:
            return False
        if pct >= 100:
            return True
        self._plugin_sample_tick += pct
        if self._plugin_sample_tick >= 100:
            self._plugin_sample_tick -= 100
            return True
        return False

    def run_until_idle(self, *, max_attempts: int | None = None,
                       advance_clock: bool = True) -> int:
        """Schedule until nothing can make progress. With a FakeClock and ``advance_clock``, idle
        waits for backoff are skipped in simulated time. Returns the number of attempts."""
        attempts = 0
        while max_attempts is None or attempts < max_attempts:
            if self.schedule_one():
                attempts += 1
                continue
            self.queue.tick()
            if self.waiting:
                self._process_waiting()
            if self.queue.active_count():
                continue
            if not (advance_clock and isinstance(self.clock, FakeClock)):
                break
            nxt = self.next_wakeup()
            if nxt is None:
                break
            self.clock.set(max(nxt, self.clock.now()))
            self.queue.tick()
            if self.waiting:
                self._process_waiting()
            if not self.queue.active_count() and not self.waiting:
                break
        return attempts

    # ------------------------------------------------------------------ scheduling cycle
    def _scheduling_cycle(self, fwk: Framework, state: CycleState, qpi: Any,
                          record: CycleRecord | None) -> ScheduleResult:
        """kube's schedulingCycle: schedulePod (``cycle.schedule_pod``); when no node fits,
        PostFilter; else assume the pod on the chosen node, Reserve and Permit. A rejection
        or error there undoes them (the rejecting plugin is the diagnosis); a Permit wait parks
        the pod in ``waiting`` and the result's status is Wait."""
        pod: Pod = qpi.pod
        # nominated_placement(pod) is memoised for this cycle (any cluster event drops it)
        self._cycle_pod, self._nominated_memo = pod, None
        try:
            result = self.schedule_pod(fwk, state, pod, record)
            node_name = result.suggested_host
            if not node_name:
                if result.status is None and result.diagnosis is not None:  # no node fits
                    return self._post_filter(fwk, state, pod, result.diagnosis)
                return result
            # assume, Reserve, Permit
            status = self._assume_and_reserve(fwk, state, pod, node_name)
            if status is None:
                status, waits = fwk.run_permit(state, pod, node_name)
                if status is None and waits:  # held: the binding cycle runs once allowed
                    now = self.clock.now()
                    deadlines = {name: now + t for name, t in waits.items()}
                    self.waiting[pod.uid] = PodAtPermit(pod, fwk, state, node_name, qpi,
                                                        deadlines, waits)
                    result.status = _AT_PERMIT
                    return result
                if status is not None:
                    self._release(fwk, state, pod, node_name)
            if status is not None:
                return ScheduleResult(status=status, diagnosis=Diagnosis.rejected_by(status))
            return result
        finally:
            self._cycle_pod = self._nominated_memo = None

    def _assume_and_reserve(self, fwk: Framework, state: CycleState, pod: Pod, node: str
                            ) -> Status | None:
        """Assume ``pod`` on ``node`` and run Reserve; a failing Reserve is undone at once
        (``_release``) and its status returned."""
        self.cluster.assume(pod, node)
        status = fwk.run_reserve(state, pod, node)
        if status is not None:
            self._release(fwk, state, pod, node)
        return status

    def _release(self, fwk: Framework, state: CycleState, pod: Pod, node: str) -> None:
        """Undo an assumed and reserved pod: Unreserve, then forget the assumption."""
        fwk.run_unreserve(state, pod, node)
        self.cluster.forget(pod)

    def _hold_at_permit(self, fwk: Framework, state: CycleState, qpi: Any, node: str,
                        waits: dict[str, float], started: float) -> None:
        """Permit said Wait: the pod waits in ``waiting`` (its binding cycle runs once
        allowed; ``_process_waiting``)."""
        now = self.clock.now()
        deadlines = {name: now + t for name, t in waits.items()}
        wp = PodAtPermit(qpi.pod, fwk, state, node, qpi, deadlines, waits)
        wp.started = started
        self.waiting[qpi.pod.uid] = wp

    def _post_filter(self, fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis
                     ) -> ScheduleResult:
        """No node fits: PostFilter (preemption) may make room. The status is the FitError
        text, with PostFilter's reasons; a PostFilter error only adds its message (the attempt
        is still Unschedulable, as upstream's schedulingCycle returns the FitError)."""
        fit_error = FitError(pod.key, diagnosis)
        nomination = None
        if fwk.post_filter_plugins:
            try:
                nomination, pf_status = fwk.run_post_filter(state, pod, diagnosis)
            except FilterError as exc:  # the preemption dry run reached a failing Filter
                return ScheduleResult(status=exc.status, diagnosis=diagnosis)
            if nomination is None:
                # a nil PostFilterResult is kube's ModeNoop: the pod keeps its nomination
                nomination = PostFilterResult(pod.nominated_node_name)
            if pf_status.reasons:  # upstream keeps the message of any PostFilter status
                diagnosis.post_filter_msg = pf_status.message
        status = Status(Code.UNSCHEDULABLE, (fit_error.message,))
        return ScheduleResult(status=status, diagnosis=diagnosis, nominating_info=nomination)

    # ------------------------------------------------------------------ Permit waits
    def _process_waiting(self) -> None:
        """Finish waiting pods that were allowed, rejected or timed out (WaitOnPermit)."""
        now = self.clock.now()
        for uid, wp in list(self.waiting.items()):
            status = wp.rejection
            if status is None and wp.deadlines:
                expired = sorted(n for n, d in wp.deadlines.items() if d <= now)
                if not expired:
                    continue
                name = expired[0]
                status = Status(Code.UNSCHEDULABLE, (
                    f"rejected due to timeout after waiting {_seconds(wp.timeouts[name])} "
                    f"at plugin {name}",), name)
            del self.waiting[uid]
            pod, fwk = wp.pod, wp.framework
            if status is None:
                status = self._binding_cycle(fwk, wp.state, pod, wp.node)
                if status is None:  # scheduled: counted as upstream's bindingCycle counts it
                    if self.recorder.enabled:
                        qpi = wp.qpi
                        self.recorder.attempt(RESULT_SCHEDULED, fwk.profile_name,
                                              perf_counter() - wp.started)
                        self.recorder.pod_scheduled(
                            pod, qpi.attempts, now - qpi.initial_attempt_timestamp)
                    self.failures.pop(pod.key, None)
                    self.queue.done(pod.uid)
                    continue
            else:
                fwk.run_unreserve(wp.state, pod, wp.node)
                if pod.key in self.cluster.assumed:
                    self.cluster.forget(pod)
            self._handle_failure(fwk, wp.qpi, status, Diagnosis.rejected_by(status), None)

    def next_wakeup(self) -> float | None:
        """The earliest simulated time at which something can progress (backoff expiry or a
        Permit timeout), or None.

        Pods that failed with an error (no rejecting plugin, e.g. no nodes at all) retry after
        backoff forever, as upstream. They count here only if the cluster changed since the
        last time such a retry was waited for, so an idle loop ends instead of spinning."""
        times = [d for wp in self.waiting.values() for d in wp.deadlines.values()]
        nxt = self.queue.next_event_time(include_leftover=False, include_errors=False)
        if nxt is not None:
            times.append(nxt)
        elif not times and self.cluster.generation != self._error_retry_generation:
            nxt = self.queue.next_event_time(include_leftover=False, include_errors=True)
            if nxt is not None:
                self._error_retry_generation = self.cluster.generation
                times.append(nxt)
        return min(times) if times else None

    # ------------------------------------------------------------------ binding cycle
    def _binding_cycle(self, fwk: Framework, state: CycleState, pod: Pod, node: str
                       ) -> Status | None:
        status = fwk.run_pre_bind(state, pod, node)
        if status is None:
            binder = self.extenders.binder_for(pod) if self.extenders else None
            if binder is None:
                status = fwk.run_bind(state, pod, node)
            else:
                status = self._extender_bind(binder, state, pod, node)
        if status is not None:
            fwk.run_unreserve(state, pod, node)
            if pod.key in self.cluster.assumed:
                self.cluster.forget(pod)
            return status if status.code != Code.SUCCESS else None
        fwk.run_post_bind(state, pod, node)
        if pod.nominated_node_name:
            pod.nominated_node_name = ""
        self.queue.delete_nominated_pod(pod)
        self._activate(state, clear=False)  # the end of a successful binding cycle
        return None

    def _extender_bind(self, binder: Any, state: CycleState, pod: Pod, node: str
                       ) -> Status | None:
        """kube's extendersBinding: the extender binds the pod instead of the Bind plugins.
        A real extender then writes the Binding to the API server; here the fake cluster
        binds the pod once the extender answered without error."""
        recorder = self.recorder if state.record_plugin_metrics else None
        try:
            self.extenders.bind(binder, pod, node, recorder)
        except ExtenderError as exc:
            return Status.error(str(exc))
        self.cluster.bind(pod, node)
        return None

    def _activate(self, state: CycleState, *, clear: bool) -> None:
        """Move the pods plugins put in the cycle's ``PODS_TO_ACTIVATE`` to activeQ."""
        pods = state.get(PODS_TO_ACTIVATE)
        if pods:
            self.queue.activate(list(pods.values()))
            if clear:
                pods.clear()

    # ------------------------------------------------------------------ failures
    def _handle_failure(self, fwk: Framework, qpi: Any, status: Status,
                        diagnosis: Diagnosis | None, nomination: PostFilterResult | None) -> None:
        """``nomination`` None clears the pod's nomination (kube's clearNominatedNode);
        otherwise its node name overrides it ("" clears)."""
        pod: Pod = qpi.pod
        message = status.message
        if diagnosis is not None and status.is_rejected:
            qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(diagnosis.pending_plugins)
            if status.code == Code.UNSCHEDULABLE and diagnosis.post_filter_msg and \
                    not message.endswith(diagnosis.post_filter_msg):
                message = FitError(pod.key, diagnosis).message
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        self.failures[pod.key] = message
        self.recorder.pod_unschedulable(pod, frozenset(qpi.unschedulable_plugins), message)
        current = self.cluster.pods.get(pod.key)
        if current is not pod or pod.node_name:
            self.queue.done(pod.uid)
            return
        if nomination is not None:
            # ModeOverride: a node name nominates the pod there, "" clears its nomination
            pod.nominated_node_name = nomination.nominated_node_name
            self.queue.add_nominated_pod(pod, nomination.nominated_node_name)
        elif pod.nominated_node_name:
            # clearNominatedNode: every failure that did not go through PostFilter
            pod.nominated_node_name = ""
            self.queue.delete_nominated_pod(pod)
        self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)

    # ------------------------------------------------------------------ reporting
    def pending_reasons(self) -> dict[str, str]:
        """Pod key -> last failure message, for pods still not bound."""
        return {k: v for k, v in self.failures.items()
                if k in self.cluster.pods and not self.cluster.pods[k].node_name}


_EVENTS: dict[tuple[str, int], ClusterEvent] = {}


def _cluster_event(kind: str, action: int) -> ClusterEvent:
    """The one ClusterEvent object per (kind, action): the queue remembers by object whether
    any plugin registered for an event, so every Node event of a kind must be the same one."""
    ev = _EVENTS.get((kind, action))
    if ev is None:
        ev = _EVENTS[(kind, action)] = ClusterEvent(kind, action)
    return ev


def _seconds(value: float) -> str:
    """Go's time.Duration formatting for whole and fractional seconds ("10s", "1.5s")."""
    return f"{value:g}s"


def node_update_action(old: Node, new: Node) -> int:
    """The ActionType bits a node update carries (kube's nodeSchedulingPropertiesChange)."""
    action = 0
    if old.unschedulable != new.unschedulable or old.taints != new.taints:
        action |= ActionType.UPDATE_NODE_TAINT
    if old.allocatable != new.allocatable:
        action |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        action |= ActionType.UPDATE_NODE_LABEL
    return action
