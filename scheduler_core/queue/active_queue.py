"""activeQ and the pods in flight, kube's ``activeQueue``
(docs/scheduling-model.md, "Scheduling queue").

activeQ is a heap ordered by the QueueSort key (docs/scheduling-model.md, "Queue ordering");
``pop`` takes its head, and the pod is *in flight* until ``done``. With queueing hints on,
the cluster events that arrive while some pod is in flight are kept in an event log, to be
replayed when that pod comes back rejected; ``done`` drops the events no remaining in-flight
pod needs.

``PriorityQueue`` extends this class with backoffQ, the unschedulable pool and the nominator
rather than holding it, so that ``pop``, ``done`` and the activeQ push, which run once or more
per pod, stay one Python call each.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import count
from typing import TYPE_CHECKING, Any

from scheduler_core.api.pod import Pod

if TYPE_CHECKING:
    from scheduler_core.framework.interface import ClusterEvent
    from scheduler_core.queue.clock import Clock
    from scheduler_core.queue.queued_pod import QueuedPodInfo

__all__ = ["ActiveQueue", "SortKeyFn", "default_sort_key"]

SortKeyFn = Callable[[Pod, float, int], tuple]


def default_sort_key(pod: Pod, timestamp: float, seq: int) -> tuple:
    """PrioritySort (docs/scheduling-model.md, "Queue ordering"): higher priority first, then
    earlier timestamp, then creation."""
    return (-pod.priority, timestamp, seq)


class ActiveQueue:
    """activeQ, the pods in flight, their event log and the scheduling cycle.

    Parameters
    ----------
    clock : Clock
        The queue's clock.
    sort_key : callable
        The QueueSort plugin's ``sort_key(pod, timestamp, seq)``.
    queueing_hints_enabled : bool
        The SchedulerQueueingHints feature gate. Off: in-flight pods and events are not
        tracked (as upstream).
    """

    def __init__(self, clock: Clock, sort_key: SortKeyFn,
                 queueing_hints_enabled: bool) -> None:
        self._clock = clock
        self._sort_key = sort_key
        self._hints_enabled = queueing_hints_enabled
        # a heap of (key, counter, qpi) with lazy deletion; the dict holds the live entry per
        # uid, a heap entry is live iff it is that dict's value.
        self._active_heap: list[tuple[Any, int, QueuedPodInfo]] = []
        self._active: dict[str, tuple[Any, int, QueuedPodInfo]] = {}
        self._counter = count()  # tie-breaks of every heap of the queue, in one sequence
        self._seq = count()  # creation order of QueuedPodInfos
        # in flight: uid -> (position in the event log when popped, pod); insertion order is
        # pop order, so the first value has the smallest position.
        self._in_flight: dict[str, tuple[int, Pod]] = {}
        self._events: list[tuple[ClusterEvent, Any, Any]] = []
        self._events_base = 0  # log position of self._events[0]
        self._cycle = 0
        self._move_request_cycle = -1
        # with SchedulerPopFromBackoffQ, where pop takes pods from when activeQ is empty
        # (backoffQ's pop_rejected; None: nowhere)
        self._pop_when_empty: Callable[[], QueuedPodInfo | None] | None = None

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def sort_key(self) -> SortKeyFn:
        """The QueueSort plugin's ``sort_key(pod, timestamp, seq)``."""
        return self._sort_key

    @property
    def scheduling_cycle(self) -> int:
        """Incremented by every ``pop``; pass it to ``add_unschedulable_if_not_present``."""
        return self._cycle

    @property
    def move_request_cycle(self) -> int:
        """The scheduling cycle of the last cluster-event move request (-1: none yet)."""
        return self._move_request_cycle

    @property
    def queueing_hints_enabled(self) -> bool:
        return self._hints_enabled

    def active_count(self) -> int:
        return len(self._active)

    def in_flight_count(self) -> int:
        return len(self._in_flight)

    def in_flight_pods(self) -> list[Pod]:
        return [pod for _, pod in self._in_flight.values()]

    def in_flight_events(self) -> list[ClusterEvent]:
        """The cluster events kept for in-flight pods, oldest first."""
        return [e for e, _, _ in self._events]

    def pop(self) -> QueuedPodInfo | None:
        """The head of activeQ, now in flight (None if activeQ is empty; never blocks).

        Increments the pod's attempts and the scheduling cycle, and clears its unschedulable
        and pending plugins (the scheduler sets them again from the Diagnosis on failure).
        With SchedulerPopFromBackoffQ an empty activeQ gives the head of backoffQ's
        plugin-rejected pods, backing off or not (pods that failed with an error wait).
        """
        heap = self._active_heap
        active = self._active
        take = self._pop_when_empty
        while True:  # one body for both sources: no extra call per popped pod
            if heap:
                entry = heapq.heappop(heap)
                qpi = entry[2]
                uid = qpi.pod.uid
                if active.get(uid) is not entry:
                    continue
                del active[uid]
            elif take is not None and (qpi := take()) is not None:
                uid = qpi.pod.uid
            else:
                return None
            # the pod starts its attempt: attempts and the cycle count up, it is in flight and
            # its rejector plugins are cleared; a pod already in flight (tracked twice) is
            # discarded, as upstream discards the popped duplicate
            qpi.attempts += 1
            if self._hints_enabled:
                if uid in self._in_flight:
                    continue
                self._in_flight[uid] = (self._events_base + len(self._events), qpi.pod)
            self._cycle += 1
            qpi.unschedulable_plugins.clear()
            qpi.pending_plugins.clear()
            return qpi

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over (bound, or handed back). Drops the in-flight
        events no remaining in-flight pod needs. No-op with queueing hints off."""
        if self._in_flight.pop(uid, None) is None:
            return
        if not self._in_flight:
            self._events_base += len(self._events)
            self._events.clear()
            return
        first = next(iter(self._in_flight.values()))[0]
        drop = first - self._events_base
        if drop > 0:
            del self._events[:drop]
            self._events_base = first

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        entry = (self._sort_key(pod, qpi.timestamp, qpi.seq), next(self._counter), qpi)
        self._active[pod.uid] = entry
        heap = self._active_heap
        heapq.heappush(heap, entry)
        if len(heap) > 2 * len(self._active) + 64:
            self._active_heap = list(self._active.values())
            heapq.heapify(self._active_heap)
