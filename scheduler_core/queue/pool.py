"""The unschedulable pool: pods rejected with no event yet that could help them, and pods gated
by a PreEnqueue plugin (docs/scheduling-model.md, "Requeueing and queueing hints").

Cluster events move pods out of the pool through their rejector plugins' queueing hints (the
caller, ``PriorityQueue``, does that); a gated pod leaves only when PreEnqueue lets it through
(docs/scheduling-model.md, "Scheduling gates"). A non-gated pod that stayed longer than
``max_duration`` (5 minutes by default) is taken by the leftover flush every 30 s.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler_core.queue.flush_grid import FlushGrid
    from scheduler_core.queue.queued_pod import QueuedPodInfo

__all__ = [
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "UNSCHEDULABLE_FLUSH_PERIOD",
    "UnschedulablePool",
]

DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0


class UnschedulablePool:
    """The pool, keyed by pod uid.

    ``pods`` holds every member and ``ungated`` the non-gated ones in pool order (the gated
    ones are the rest): cluster events scan only these, and the gated pods only for an event
    a gating plugin registered (thousands of gated pods must not cost every bind a scan). The
    owner may read both dicts but changes them only through ``put`` and ``remove``. A lazy heap
    of (timestamp, counter, qpi) of the non-gated members serves the leftover flush, which runs
    on ``grid``; ``counter`` is shared with the owner's other heaps.
    """

    def __init__(self, counter: Iterator[int], max_duration: float, grid: FlushGrid) -> None:
        self._counter = counter
        self._max_duration = float(max_duration)
        self._grid = grid
        self.pods: dict[str, QueuedPodInfo] = {}
        self.ungated: dict[str, QueuedPodInfo] = {}
        self._leftover_heap: list[tuple[float, int, QueuedPodInfo]] = []

    def put(self, qpi: QueuedPodInfo) -> None:
        """Add the pod, or record that a member's gating changed."""
        uid = qpi.pod.uid
        prev = self.pods.get(uid)
        self.pods[uid] = qpi
        if qpi.gated:
            self.ungated.pop(uid, None)
            return
        self.ungated[uid] = qpi
        if prev is not qpi:
            heap = self._leftover_heap
            heapq.heappush(heap, (qpi.timestamp, next(self._counter), qpi))
            if len(heap) > 2 * len(self.pods) + 64:
                self._leftover_heap = [(q.timestamp, next(self._counter), q)
                                       for q in self.ungated.values()]
                heapq.heapify(self._leftover_heap)

    def remove(self, uid: str) -> bool:
        """Drop the pod; False if it was not in the pool."""
        if self.pods.pop(uid, None) is None:
            return False
        self.ungated.pop(uid, None)
        return True

    def pop_overdue(self, now: float) -> list[QueuedPodInfo]:
        """The non-gated pods that stayed longer than ``max_duration`` at ``now``, oldest
        first; they stay in the pool (the owner moves them) but leave the leftover heap."""
        limit = self._max_duration
        heap = self._leftover_heap
        due: dict[str, QueuedPodInfo] = {}
        while heap:
            ts, _, qpi = heap[0]
            if not self._leftover_live(ts, qpi):
                heapq.heappop(heap)
                continue
            if not now - ts > limit:
                break
            heapq.heappop(heap)
            due[qpi.pod.uid] = qpi
        return list(due.values())

    def next_flush_time(self) -> float | None:
        """The first leftover flush that will take a pod (None if no non-gated pod waits)."""
        heap = self._leftover_heap
        while heap:
            ts, _, qpi = heap[0]
            if self._leftover_live(ts, qpi):
                return self._grid.first_over(ts, self._max_duration)
            heapq.heappop(heap)
        return None

    def _leftover_live(self, ts: float, qpi: QueuedPodInfo) -> bool:
        return (not qpi.gated and qpi.timestamp == ts
                and self.pods.get(qpi.pod.uid) is qpi)
