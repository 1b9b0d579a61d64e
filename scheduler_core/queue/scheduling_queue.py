"""The scheduling queue, kube's ``backend/queue/scheduling_queue.go``
(docs/scheduling-model.md, "Scheduling queue").

Pods waiting to be scheduled live in exactly one of three places:

- **activeQ** (``active_queue.py``): a heap ordered by the QueueSort key; ``pop`` takes its
  head.
- **backoffQ** (``backoff.py``): heaps ordered by backoff expiry; ``flush_backoff_completed``
  (every 1 s) moves expired pods to activeQ. With ``pop_from_backoff`` (the
  SchedulerPopFromBackoffQ gate, on by default since v1.33) expiries are aligned to the 1 s
  flush windows, pods of one window are ordered as activeQ orders them, and ``pop`` takes the
  head of the plugin-rejected backoff heap when activeQ is empty (never a pod that failed
  with an error).
- **unschedulable pool** (``pool.py``): a dict keyed by pod uid. Pods rejected with no event
  yet that could help them, and pods gated by a PreEnqueue plugin. Cluster events
  (``move_all_to_active_or_backoff``) ask the *rejector* plugins' queueing hints
  (``hints.py``) whether the event may help; ``flush_unschedulable_leftover`` (every 30 s)
  moves pods that waited more than 5 minutes.

A popped pod is *in flight* until ``done`` (called by ``add_unschedulable_if_not_present`` or
by the scheduler after a successful bind). With queueing hints on, events that arrive while a
pod is in flight are kept and replayed when the pod comes back rejected.

Nothing here blocks or sleeps: ``pop`` returns None on an empty activeQ, and the caller drives
time through the injected clock, ``tick()`` and ``next_event_time()`` (the flush grids of
``flush_grid.py``). Every per-pod operation is O(log n) (heaps with lazy deletion); cluster
events iterate the pool, which is inherent, but ask only the rejector plugins' hint functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scheduler_core.api.pod import Pod
from scheduler_core.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Status,
)
from scheduler_core.queue.active_queue import ActiveQueue, SortKeyFn, default_sort_key
from scheduler_core.queue.backoff import (
    BACKOFF_FLUSH_PERIOD,
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    BackoffQueue,
    backoff_duration,
)
from scheduler_core.queue.clock import Clock, RealClock
from scheduler_core.queue.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_DELETE,
    EVENT_UNSCHEDULED_POD_UPDATE,
    REGISTER_ALL_EVENTS,
    pod_scheduling_properties_change,
    pod_updated,
)
from scheduler_core.queue.flush_grid import FlushGrid
from scheduler_core.queue.hints import QueueingHints, QueueingStrategy, cross_topology_pods
from scheduler_core.queue.nominator import Nominator
from scheduler_core.queue.pool import (
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    UNSCHEDULABLE_FLUSH_PERIOD,
    UnschedulablePool,
)
from scheduler_core.queue.queued_pod import QueuedPodInfo

__all__ = [
    "ACTIVE_Q",
    "BACKOFF_FLUSH_PERIOD",
    "BACKOFF_Q",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_FORCE_ACTIVATE",
    "EVENT_UNSCHEDULABLE_TIMEOUT",
    "EVENT_UNSCHEDULED_POD_ADD",
    "EVENT_UNSCHEDULED_POD_DELETE",
    "EVENT_UNSCHEDULED_POD_UPDATE",
    "IN_FLIGHT",
    "REGISTER_ALL_EVENTS",
    "UNSCHEDULABLE_FLUSH_PERIOD",
    "UNSCHEDULABLE_PODS",
    "PreEnqueueFn",
    "PriorityQueue",
    "QueueingStrategy",
    "SortKeyFn",
    "backoff_duration",
    "default_sort_key",
    "pod_scheduling_properties_change",
]

# where a pod is (return values of the requeue operations)
ACTIVE_Q = "active"
BACKOFF_Q = "backoff"
UNSCHEDULABLE_PODS = "unschedulable"
IN_FLIGHT = "in_flight"

# move reasons that are not cluster events (only the nominator looks at them)
_SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
_BACKOFF_COMPLETE = "BackoffComplete"
_FORCE_ACTIVATE = "ForceActivate"
_POD_ADD = "UnscheduledPodAdd"
_POD_UPDATE = "UnscheduledPodUpdate"

PreEnqueueFn = Callable[[Pod], tuple[str, Status] | None]


_SKIP = QueueingStrategy.SKIP
_AFTER_BACKOFF = QueueingStrategy.AFTER_BACKOFF
_IMMEDIATELY = QueueingStrategy.IMMEDIATELY


# --------------------------------------------------------------------------- the queue
class PriorityQueue(ActiveQueue):
    """kube's ``PriorityQueue``: activeQ, backoffQ, unschedulable pool, in-flight tracking
    and the nominator, with an injected clock.

    It extends ``ActiveQueue`` (activeQ, the in-flight pods, ``pop`` and ``done``) and holds a
    ``BackoffQueue``, an ``UnschedulablePool``, the plugins' ``QueueingHints`` and a
    ``Nominator``; it moves pods between the sub-queues.

    Parameters
    ----------
    clock : Clock
        ``FakeClock`` in tests and simulations; ``RealClock`` by default.
    pre_enqueue : callable, optional
        ``pod -> (plugin name, Status) | None``: runs the PreEnqueue plugins of the pod's
        profile and names the first that refused it. None = every pod passes.
    hints : mapping, optional
        Plugin name -> its registered ``ClusterEventWithHint`` list (``EventsToRegister``).
        A hint of None means Queue. A rejector plugin absent from the mapping counts as
        registered for every event with no hint (kube's default for plugins without
        EnqueueExtensions); pass ``REGISTER_ALL_EVENTS`` for such plugins so that events are
        judged "of interest" from the start.
    queueing_hints_enabled : bool
        The SchedulerQueueingHints feature gate. Off: hint functions are not called (every
        matching registration counts as Queue), no in-flight events are kept, and a pod that
        failed goes to backoffQ only if a move request arrived during its cycle.
    initial_backoff, max_backoff, max_in_unschedulable : float
        Seconds; the defaults are upstream's (docs/scheduling-model.md, "Backoff").
    sort_key : callable, optional
        The QueueSort plugin's ``sort_key(pod, timestamp, seq)``; ``default_sort_key``
        (PrioritySort) when omitted.
    namespace_labels : callable, optional
        ``namespace -> labels``, for namespaceSelector terms when an assigned pod is added.
    pop_from_backoff : bool
        The SchedulerPopFromBackoffQ feature gate (KEP-5142; beta and on by default since
        v1.33). Off: backoffQ is only left through the periodic flush.
    """

    def __init__(
        self,
        clock: Clock | None = None,
        *,
        pre_enqueue: PreEnqueueFn | None = None,
        hints: Mapping[str, Sequence[ClusterEventWithHint]] | None = None,
        queueing_hints_enabled: bool = True,
        initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        sort_key: SortKeyFn | None = None,
        namespace_labels: Callable[[str], Mapping[str, str]] | None = None,
        backoff_flush_period: float = BACKOFF_FLUSH_PERIOD,
        unschedulable_flush_period: float = UNSCHEDULABLE_FLUSH_PERIOD,
        pop_from_backoff: bool = False,
    ) -> None:
        if not initial_backoff > 0:
            raise ValueError(f"initial_backoff must be > 0 seconds, got {initial_backoff}")
        if max_backoff < initial_backoff:
            raise ValueError(f"max_backoff ({max_backoff}) must be >= initial_backoff "
                             f"({initial_backoff})")
        if not max_in_unschedulable > 0:
            raise ValueError("max_in_unschedulable must be > 0 seconds, got "
                             f"{max_in_unschedulable}")
        if not (backoff_flush_period > 0 and unschedulable_flush_period > 0):
            raise ValueError("flush periods must be > 0 seconds")
        super().__init__(clock if clock is not None else RealClock(),
                         sort_key or default_sort_key, queueing_hints_enabled)
        self._pre_enqueue = pre_enqueue
        self._hints = QueueingHints(hints or {}, queueing_hints_enabled)
        self._namespace_labels = namespace_labels
        self._pop_from_backoff = pop_from_backoff
        self._nominator = Nominator()
        self._gating_plugins: set[str] = set()  # PreEnqueue plugins that ever gated a pod

        # flush schedules: runs at t0 + k * period (kube's wait.Until starts immediately)
        t0 = self._clock.now()
        self._backoff_grid = FlushGrid(t0, backoff_flush_period)
        self._leftover_grid = FlushGrid(t0, unschedulable_flush_period)
        # backoffQ and the unschedulable pool; ``_backoff`` is backoffQ's dict of live
        # entries, ``_pool`` the pool's dict of members and ``_ungated`` of non-gated ones
        self._backoffq = BackoffQueue(
            self._clock, self._backoff_grid, initial=initial_backoff, maximum=max_backoff,
            pop_from_backoff=pop_from_backoff, sort_key=self._sort_key, counter=self._counter)
        self._backoff = self._backoffq.entries
        self._unschedulable = UnschedulablePool(self._counter, max_in_unschedulable,
                                                self._leftover_grid)
        self._pool = self._unschedulable.pods
        self._ungated = self._unschedulable.ungated
        if pop_from_backoff:
            self._pop_when_empty = self._backoffq.pop_rejected

    # ------------------------------------------------------------------ read-only views
    def backoff_count(self) -> int:
        return len(self._backoff)

    def unschedulable_count(self) -> int:
        """Pods in the unschedulable pool, gated ones included."""
        return len(self._pool)

    def gated_count(self) -> int:
        return len(self._pool) - len(self._ungated)

    def __len__(self) -> int:
        """Pending pods: activeQ + backoffQ + unschedulable pool (not the in-flight ones)."""
        return len(self._active) + len(self._backoff) + len(self._pool)

    def counts(self) -> dict[str, int]:
        return {ACTIVE_Q: len(self._active), BACKOFF_Q: len(self._backoff),
                UNSCHEDULABLE_PODS: len(self._pool), "gated": self.gated_count(),
                IN_FLIGHT: len(self._in_flight)}

    def where(self, uid: str) -> str | None:
        """Which sub-queue holds the pod: ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_PODS, or IN_FLIGHT
        (in-flight pods are tracked only with queueing hints on, as upstream)."""
        if uid in self._active:
            return ACTIVE_Q
        if uid in self._backoff:
            return BACKOFF_Q
        if uid in self._pool:
            return UNSCHEDULABLE_PODS
        if uid in self._in_flight:
            return IN_FLIGHT
        return None

    def get(self, uid: str) -> QueuedPodInfo | None:
        """The queued pod info of a pending pod (not of an in-flight one)."""
        entry = self._active.get(uid) or self._backoff.get(uid)
        if entry is not None:
            return entry[2]
        return self._pool.get(uid)

    def pending_pods(self) -> list[Pod]:
        """activeQ in pop order, then backoffQ by expiry, then the unschedulable pool."""
        out = [e[2].pod for e in sorted(self._active.values(), key=lambda e: (e[0], e[1]))]
        out += [e[2].pod for e in sorted(self._backoff.values(), key=lambda e: (e[0], e[1]))]
        out += [q.pod for q in self._pool.values()]
        return out

    def pending_summary(self) -> str:
        return (f"activeQ:{len(self._active)}; backoffQ:{len(self._backoff)}; "
                f"unschedulablePods:{len(self._pool)}")

    @property
    def pop_from_backoff(self) -> bool:
        return self._pop_from_backoff

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        """When the pod's backoff ends; with pop_from_backoff, the start of the flush window
        it ends in (upstream's ``getBackoffTime`` truncated to the ordering window)."""
        return self._backoffq.expiry(qpi)

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """A gated pod never counts as backing off. With pop_from_backoff a pod whose backoff
        ends in the current flush window is still backing off
        (docs/scheduling-model.md, "Backoff")."""
        return self._backoffq.is_backing_off(qpi)

    # ------------------------------------------------------------------ nominator
    def add_nominated_pod(self, pod: Pod, node_name: str | None = None) -> None:
        """Nominate ``pod`` to ``node_name`` (None: its ``nominated_node_name``; "": clear)."""
        self._nominator.add(pod, node_name)

    def delete_nominated_pod(self, pod: Pod) -> None:
        self._nominator.delete(pod)

    def update_nominated_pod(self, old_pod: Pod | None, new_pod: Pod) -> None:
        self._nominator.update(old_pod, new_pod)

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        """Pods nominated to the node, in nomination order, each in its latest queued version."""
        out = []
        for pod in self._nominator.pods_for_node(node_name):
            qpi = self.get(pod.uid)
            out.append(qpi.pod if qpi is not None else pod)
        return out

    def nominated_node_of(self, uid: str) -> str | None:
        return self._nominator.node_of(uid)

    def has_nominated_pods(self) -> bool:
        return len(self._nominator) > 0

    def nominated_node_names(self) -> list[str]:
        """Nodes with at least one nominated pod."""
        return self._nominator.nodes()

    # ------------------------------------------------------------------ adding and popping
    def add(self, pod: Pod) -> str:
        """A new unscheduled pod: activeQ, or the unschedulable pool if PreEnqueue refuses it.
        Returns where it went."""
        qpi = QueuedPodInfo(pod, self._clock.now(), next(self._seq))
        return ACTIVE_Q if self._move_to_active(qpi, _POD_ADD) else UNSCHEDULABLE_PODS

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo,
                                         scheduling_cycle: int) -> str | None:
        """Put a pod back after a failed attempt; ``done`` is called in every case
        (docs/scheduling-model.md, "Requeueing and queueing hints").

        Set ``qpi.unschedulable_plugins`` / ``pending_plugins`` first (empty = the failure
        was an error). Refreshes the timestamp. Returns where the pod went, or None if it is
        already queued (upstream's error: the pod is left where it is).
        """
        uid = qpi.pod.uid
        try:
            if uid in self._pool or uid in self._active or uid in self._backoff:
                return None
            if qpi.unschedulable_plugins or qpi.pending_plugins:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors = 0
            else:  # an error: no plugin rejected the pod
                qpi.consecutive_errors += 1
            qpi.timestamp = self._clock.now()
            self._hints.note_unregistered(qpi)
            if not self._hints_enabled:
                if (self._move_request_cycle >= scheduling_cycle
                        or not (qpi.unschedulable_plugins or qpi.pending_plugins)):
                    self._backoffq.add(qpi)  # not in the pool: checked above
                    return BACKOFF_Q
                self._unschedulable.put(qpi)
                return UNSCHEDULABLE_PODS
            strategy = self._hints.strategy_for_in_flight(
                qpi, self._in_flight.get(uid), self._events, self._events_base)
            return self._requeue(qpi, strategy, _SCHEDULE_ATTEMPT_FAILURE)
        finally:
            self.done(uid)

    # ------------------------------------------------------------------ cluster events
    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: Any = None,
        new: Any = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> int:
        """A cluster event: requeue the unschedulable pods it may help
        (docs/scheduling-model.md, "Requeueing and queueing hints"). A gated pod is asked
        only about the events its gating plugin registered. Returns how many pods left the
        pool."""
        if not self._hints.is_event_of_interest(event):
            return 0
        pool = self._ungated
        if pre_check is None:
            pods = list(pool.values())
        else:
            pods = [q for q in pool.values() if pre_check(q.pod)]
        gated = self._gated_for(event)
        if gated:
            pods += gated if pre_check is None else [q for q in gated if pre_check(q.pod)]
        return self._move_pods(pods, event, old, new)

    def _gated_for(self, event: ClusterEvent) -> list[QueuedPodInfo]:
        """The gated pods whose gating plugin registered ``event`` (upstream asks a gated pod
        only about its gating plugin's events), in pool order; none without such a plugin."""
        if not self._gating_plugins or len(self._pool) == len(self._ungated):
            return []
        fns = self._hints.fns_for_event(event)
        plugins = self._gating_plugins.intersection(fns)
        if not plugins:
            return []
        return [q for q in self._pool.values() if q.gated and q.gating_plugin in plugins]

    def assigned_pod_added(self, pod: Pod) -> int:
        """A bound pod appeared. With queueing hints every unschedulable pod is asked (its
        rejectors' hints decide), as the scheduler's event handler does; in legacy mode only
        pods with a required pod-affinity term matching it, or rejected by PodTopologySpread
        in its namespace, are considered."""
        if self._hints_enabled:
            return self.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, pod)
        if not self._hints.is_event_of_interest(EVENT_ASSIGNED_POD_ADD):
            return 0
        return self._move_pods(cross_topology_pods(self._ungated.values(), pod,
                                                   self._namespace_labels),
                               EVENT_ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod) -> int:
        """A bound pod changed: one move per event the change makes. With queueing hints every
        unschedulable pod is asked; in legacy mode a request scale-down may help any pod and
        other updates only pods with cross-topology terms (as ``assigned_pod_added``)."""
        moved = 0
        for event in pod_scheduling_properties_change(new_pod, old_pod):
            if self._hints_enabled or event.action == ActionType.UPDATE_POD_SCALE_DOWN:
                moved += self.move_all_to_active_or_backoff(event, old_pod, new_pod)
            elif self._hints.is_event_of_interest(event):
                pods = cross_topology_pods(self._ungated.values(), new_pod,
                                           self._namespace_labels)
                moved += self._move_pods(pods, event, old_pod, new_pod)
        return moved

    def assigned_pod_deleted(self, pod: Pod) -> int:
        return self.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)

    def nominated_pod_deleted(self, pod: Pod) -> int:
        """An unscheduled pod nominated to a node was deleted: pods of lower or equal priority
        counted it as if it were placed there, so they are asked as for an assigned pod's
        deletion (upstream's deletePodFromSchedulingQueue)."""
        priority = pod.priority
        return self.move_all_to_active_or_backoff(
            EVENT_ASSIGNED_POD_DELETE, pod, None, lambda p: p.priority <= priority)

    # ------------------------------------------------------------------ pod changes
    def update(self, old_pod: Pod | None, new_pod: Pod) -> str | None:
        """An unscheduled pod changed: updated where it is, or, in the unschedulable pool,
        requeued if the update may help it. Returns where it is afterwards
        (docs/scheduling-model.md, "Requeueing and queueing hints")."""
        uid = new_pod.uid
        events: list[ClusterEvent] = []
        if self._hints_enabled:
            events = (pod_scheduling_properties_change(new_pod, old_pod)
                      if old_pod is not None else [EVENT_UNSCHEDULED_POD_UPDATE])
            if uid in self._in_flight:
                # replayed if the pod comes back rejected
                self._events.extend((e, old_pod, new_pod) for e in events)
                return IN_FLIGHT
        if old_pod is not None:
            entry = self._active.get(uid)
            if entry is not None:
                qpi = entry[2]
                qpi.pod = new_pod
                self._push_active(qpi)  # the sort key may have changed
                self._nominator.update(old_pod, new_pod)
                return ACTIVE_Q
            bentry = self._backoff.get(uid)
            if bentry is not None:
                bentry[2].pod = new_pod
                self._nominator.update(old_pod, new_pod)
                return BACKOFF_Q
        qpi = self._pool.get(uid)
        if qpi is not None:
            qpi.pod = new_pod
            self._nominator.update(old_pod, new_pod)
            if self._hints_enabled:
                strategy = _SKIP
                for event in events:
                    s = self._hints.worth(qpi, event, old_pod, new_pod)
                    if s > strategy:
                        strategy = s
                        if s == _IMMEDIATELY:
                            break
                return self._requeue(qpi, strategy, _POD_UPDATE)
            if pod_updated(old_pod, new_pod):
                if self._backoffq.is_backing_off(qpi):
                    self._unschedulable.remove(uid)
                    self._backoffq.add(qpi)
                    return BACKOFF_Q
                return ACTIVE_Q if self._move_to_active(qpi, _POD_UPDATE) else UNSCHEDULABLE_PODS
            return UNSCHEDULABLE_PODS
        qpi = QueuedPodInfo(new_pod, self._clock.now(), next(self._seq))
        return ACTIVE_Q if self._move_to_active(qpi, _POD_UPDATE) else UNSCHEDULABLE_PODS

    def delete(self, pod: Pod) -> bool:
        """Remove the pod from every sub-queue and from the nominator. True if it was queued."""
        self._nominator.delete(pod)
        uid = pod.uid
        if self._active.pop(uid, None) is not None:
            return True
        if self._backoff.pop(uid, None) is not None:
            return True
        return self._unschedulable.remove(uid)

    def activate(self, pods: Iterable[Pod]) -> int:
        """Force pods from the pool or backoffQ into activeQ (PodsToActivate). An in-flight
        pod gets a ForceActivate event so it is requeued when it comes back. Returns how many
        were activated."""
        activated = 0
        for pod in pods:
            uid = pod.uid
            qpi = self._pool.get(uid)
            if qpi is None:
                entry = self._backoff.pop(uid, None)
                qpi = entry[2] if entry is not None else None
            if qpi is not None and self._move_to_active(qpi, _FORCE_ACTIVATE):
                activated += 1
                continue
            if self._hints_enabled and uid in self._in_flight:
                self._events.append((EVENT_FORCE_ACTIVATE, None, pod))
            self._move_request_cycle = self._cycle
        return activated

    # ------------------------------------------------------------------ pod groups
    def take_members(self, uids: Iterable[str]) -> list[QueuedPodInfo]:
        """Pop the pending pods ``uids`` (members of a pod group whose first pod was just
        popped) from activeQ, backoffQ or the pool (gated pods stay): they join that pod's
        attempt, in flight, as the members of upstream's queued pod-group entity do. In the
        order of ``uids`` (the caller sorts them with the popped pod: ``sort_key``)."""
        out: list[QueuedPodInfo] = []
        for uid in uids:
            entry = self._active.pop(uid, None)
            if entry is None:
                entry = self._backoff.pop(uid, None)
            if entry is not None:
                qpi = entry[2]
            else:
                qpi = self._ungated.get(uid)
                if qpi is None:
                    continue
                self._unschedulable.remove(uid)
            qpi.attempts += 1
            if self._hints_enabled:
                self._in_flight[uid] = (self._events_base + len(self._events), qpi.pod)
            qpi.unschedulable_plugins.clear()
            qpi.pending_plugins.clear()
            out.append(qpi)
        return out

    def requeue_gated(self, uids: Iterable[str], event: ClusterEvent, old: Any,
                      new: Any) -> int:
        """An event that may complete a pod group: the gated pods ``uids`` (that group's)
        whose gating plugin's hint says Queue run PreEnqueue again. Returns how many reached
        activeQ."""
        moved = 0
        pool = self._pool
        worth = self._hints.worth
        for uid in uids:
            qpi = pool.get(uid)
            if qpi is None or not qpi.gated:
                continue
            if worth(qpi, event, old, new) == _SKIP:
                continue
            qpi.unschedulable_plugins.discard(qpi.gating_plugin)
            if self._move_to_active(qpi, event.label):
                moved += 1
        return moved

    # ------------------------------------------------------------------ time
    def flush_backoff_completed(self) -> int:
        """Move every pod whose backoff expired to activeQ (via PreEnqueue). Returns how many
        reached activeQ."""
        due = self._backoffq.pop_completed(self._clock.now())
        return sum(1 for qpi in due if self._move_to_active(qpi, _BACKOFF_COMPLETE))

    def flush_unschedulable_leftover(self) -> int:
        """Pods that stayed in the pool longer than the limit are moved as if the wildcard
        UnschedulableTimeout event occurred. Returns how many left the pool."""
        due = self._unschedulable.pop_overdue(self._clock.now())
        if not due:
            return 0
        return self._move_pods(due, EVENT_UNSCHEDULABLE_TIMEOUT, None, None)

    def tick(self) -> int:
        """Run each periodic flush whose time has come (backoff every 1 s, leftover every
        30 s, on a grid starting at construction). Returns how many pods moved."""
        now = self._clock.now()
        moved = 0
        if self._backoff_grid.due(now):
            moved += self.flush_backoff_completed()
            self._backoff_grid.ran(now)
        if self._leftover_grid.due(now):
            moved += self.flush_unschedulable_leftover()
            self._leftover_grid.ran(now)
        return moved

    def next_event_time(self, *, include_leftover: bool = True,
                        include_errors: bool = True) -> float | None:
        """The earliest clock time at which ``tick()`` will move a pod out of backoffQ or the
        unschedulable pool (a flush time, not a raw expiry). None if no pod waits on time.
        A value <= now means ``tick()`` would move a pod right away.

        A simulated-time driver that jumps to this time whenever activeQ is empty never
        stops while some pod keeps failing, because failed pods are always retried:
        ``include_leftover=False`` ignores the 5-minute leftover flush (pods no event has
        helped), ``include_errors=False`` ignores pods backing off after an error (no
        rejector plugins, e.g. "no nodes available"), which upstream retries forever."""
        times = [self._backoffq.next_flush_time(include_errors)]
        if include_leftover:
            times.append(self._unschedulable.next_flush_time())
        candidates = [t for t in times if t is not None]
        return min(candidates) if candidates else None

    # ------------------------------------------------------------------ internals: moves
    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> None:
        result = self._pre_enqueue(qpi.pod) if self._pre_enqueue is not None else None
        if result is None:
            qpi.gated = False
            qpi.gating_plugin = ""
            return
        plugin = result[0]
        qpi.unschedulable_plugins.add(plugin)
        qpi.gated = True
        qpi.gating_plugin = plugin
        self._gating_plugins.add(plugin)
        hints = self._hints
        if plugin not in hints.registrations:
            hints.unregistered_seen = True

    def _move_to_active(self, qpi: QueuedPodInfo, reason: str) -> bool:
        """kube's ``moveToActiveQ``: PreEnqueue, then activeQ, or the pool if gated."""
        self._run_pre_enqueue(qpi)
        uid = qpi.pod.uid
        if qpi.gated:
            if uid in self._active or uid in self._backoff:
                return False
            self._unschedulable.put(qpi)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()
        self._unschedulable.remove(uid)
        self._backoff.pop(uid, None)
        self._push_active(qpi)
        if reason in (_POD_ADD, _POD_UPDATE):
            self._nominator.add(qpi.pod, None)
        return True

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy, reason: str) -> str:
        """kube's ``requeuePodWithQueueingStrategy``."""
        if strategy == _SKIP:
            self._unschedulable.put(qpi)
            return UNSCHEDULABLE_PODS
        if strategy == _AFTER_BACKOFF and self._backoffq.is_backing_off(qpi):
            if self._pop_from_backoff:
                # kube's moveToBackoffQ: PreEnqueue runs on entering backoffQ (a pod popped
                # from there when activeQ is empty does not pass it again)
                self._run_pre_enqueue(qpi)
                if qpi.gated:
                    self._unschedulable.put(qpi)
                    return UNSCHEDULABLE_PODS
            self._unschedulable.remove(qpi.pod.uid)
            self._backoffq.add(qpi)
            return BACKOFF_Q
        return ACTIVE_Q if self._move_to_active(qpi, reason) else UNSCHEDULABLE_PODS

    def _move_pods(self, qpis: list[QueuedPodInfo], event: ClusterEvent, old: Any,
                   new: Any) -> int:
        """kube's ``movePodsToActiveOrBackoffQueue`` over pool members ``qpis``."""
        if not self._hints.is_event_of_interest(event):
            return 0
        moved = 0
        worth = self._hints.worth
        for qpi in qpis:
            if qpi.gated and qpi.gating_plugin not in self._hints.fns_for_event(event):
                continue  # the event does not interest the plugin that gated the pod
            strategy = worth(qpi, event, old, new)
            if strategy == _SKIP:
                continue
            self._unschedulable.remove(qpi.pod.uid)
            if self._requeue(qpi, strategy, event.label) != UNSCHEDULABLE_PODS:
                moved += 1
        self._move_request_cycle = self._cycle
        if self._hints_enabled and self._in_flight:
            self._events.append((event, old, new))
        return moved
