"""backoffQ: pods waiting out their backoff after a failed attempt
(docs/scheduling-model.md, "Backoff").

The backoff of a pod is 0 before its first attempt, then the initial backoff doubling per
attempt up to the maximum (1, 2, 4, 8, 10, 10, ... s with the defaults), counted from the time
it was put back. ``BackoffQueue`` keeps two heaps sharing one dict, as upstream's newer
podBackoffQ / podErrorBackoffQ: pods rejected by plugins, and pods that failed with an error
(no rejector plugins). With ``pop_from_backoff`` (the SchedulerPopFromBackoffQ gate) expiries
are aligned to the backoff flush windows, pods of one window are ordered as activeQ orders
them, and the scheduler may pop the head of the plugin-rejected heap when activeQ is empty.

The caller (``PriorityQueue``) owns the pod's move: it takes the pod out of the unschedulable
pool before ``add``, and moves what ``pop_completed`` returns to activeQ.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scheduler_core.api.pod import Pod
    from scheduler_core.queue.clock import Clock
    from scheduler_core.queue.flush_grid import FlushGrid
    from scheduler_core.queue.queued_pod import QueuedPodInfo

__all__ = [
    "BACKOFF_FLUSH_PERIOD",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "BackoffQueue",
    "backoff_duration",
]

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
BACKOFF_FLUSH_PERIOD = 1.0

# (expiry, tie-break, qpi): the tie-break is an insertion counter, or with pop_from_backoff
# (activeQ sort key, counter), so that pods of one window pop in activeQ order
BackoffEntry = tuple[float, Any, "QueuedPodInfo"]


def backoff_duration(count: int, initial: float = DEFAULT_POD_INITIAL_BACKOFF,
                     maximum: float = DEFAULT_POD_MAX_BACKOFF) -> float:
    """0 before any failure, then initial doubling per failure counted
    (``QueuedPodInfo.backoff_count``), capped at ``maximum``: 1, 2, 4, 8, 10, 10, ... s with
    the defaults (docs/scheduling-model.md, "Backoff")."""
    if count == 0:
        return 0.0
    d = initial
    for _ in range(1, count):
        if d > maximum - d:
            return maximum
        d += d
    return d


def _backoff_kind(qpi: QueuedPodInfo) -> int:
    """0: rejected by plugins, 1: failed with an error (no rejector plugins)."""
    return 0 if qpi.unschedulable_plugins or qpi.pending_plugins else 1


class BackoffQueue:
    """backoffQ: two heaps of ``BackoffEntry`` with lazy deletion and the live entry per uid.

    ``entries`` is the dict of live entries (a heap entry is live iff it is that dict's value);
    the owner may read it and drop entries from it. ``grid`` is the backoff flush grid, whose
    windows align expiries with ``pop_from_backoff``. ``sort_key`` and ``counter`` are
    activeQ's, shared so that tie-breaks are numbered in one sequence.
    """

    def __init__(self, clock: Clock, grid: FlushGrid, *, initial: float, maximum: float,
                 pop_from_backoff: bool, sort_key: Callable[[Pod, float, int], Any],
                 counter: Iterator[int]) -> None:
        self._clock = clock
        self._grid = grid
        self._initial = float(initial)
        self._maximum = float(maximum)
        self._pop_from_backoff = pop_from_backoff
        self._sort_key = sort_key
        self._counter = counter
        self.entries: dict[str, BackoffEntry] = {}
        self._heaps: tuple[list[BackoffEntry], ...] = ([], [])

    def expiry(self, qpi: QueuedPodInfo) -> float:
        """When the pod's backoff ends; with pop_from_backoff, the start of the flush window
        it ends in (upstream's ``getBackoffTime`` truncated to the ordering window)."""
        count = qpi.backoff_count
        expiry = qpi.timestamp + backoff_duration(count, self._initial, self._maximum)
        if self._pop_from_backoff and count:
            return self._grid.window(expiry)
        return expiry

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """A gated pod never counts as backing off. With pop_from_backoff a pod whose backoff
        ends in the current flush window is still backing off."""
        if qpi.gated:
            return False
        now = self._clock.now()
        if self._pop_from_backoff:
            return qpi.backoff_count > 0 and self.expiry(qpi) >= self._grid.window(now)
        return self.expiry(qpi) > now

    def add(self, qpi: QueuedPodInfo) -> None:
        """Queue the pod by its expiry (replacing its entry if it has one)."""
        tie: Any = next(self._counter)
        if self._pop_from_backoff:
            tie = (self._sort_key(qpi.pod, qpi.timestamp, qpi.seq), tie)
        entry = (self.expiry(qpi), tie, qpi)
        self.entries[qpi.pod.uid] = entry
        heaps = self._heaps
        heapq.heappush(heaps[_backoff_kind(qpi)], entry)
        if len(heaps[0]) + len(heaps[1]) > 2 * len(self.entries) + 64:
            rebuilt: tuple[list[BackoffEntry], ...] = ([], [])
            for e in self.entries.values():
                rebuilt[_backoff_kind(e[2])].append(e)
            for heap in rebuilt:
                heapq.heapify(heap)
            self._heaps = rebuilt

    def pop_rejected(self) -> QueuedPodInfo | None:
        """Take the head of the plugin-rejected heap, backing off or not (None if empty)."""
        heap = self._heaps[0]
        entries = self.entries
        while heap:
            entry = heapq.heappop(heap)
            qpi = entry[2]
            uid = qpi.pod.uid
            if entries.get(uid) is entry:
                del entries[uid]
                return qpi
        return None

    def pop_completed(self, now: float) -> list[QueuedPodInfo]:
        """Take every pod whose backoff is over at ``now``, rejected ones first."""
        if self._pop_from_backoff:
            # aligned expiries: a pod is done once its window is before the current one
            grid = self._grid
            now = grid.window(now) - grid.period / 2
        entries = self.entries
        due = []
        for heap in self._heaps:
            while heap:
                entry = heap[0]
                qpi = entry[2]
                uid = qpi.pod.uid
                if entries.get(uid) is not entry:
                    heapq.heappop(heap)
                    continue
                if entry[0] > now:
                    break
                heapq.heappop(heap)
                del entries[uid]
                due.append(qpi)
        return due

    def next_flush_time(self, include_errors: bool = True) -> float | None:
        """The first backoff flush that will release a pod (of the plugin-rejected pods only
        without ``include_errors``); None if backoffQ holds none."""
        heads = [self._head(0)]
        if include_errors:
            heads.append(self._head(1))
        expiries = [h[0] for h in heads if h is not None]
        if not expiries:
            return None
        expiry = min(expiries)
        grid = self._grid
        if self._pop_from_backoff:  # released by the flush after its window
            expiry = grid.window(expiry) + grid.period
        return grid.first_at_or_after(expiry)

    def _head(self, kind: int) -> BackoffEntry | None:
        heap = self._heaps[kind]
        while heap:
            entry = heap[0]
            if self.entries.get(entry[2].pod.uid) is entry:
                return entry
            heapq.heappop(heap)
        return None
