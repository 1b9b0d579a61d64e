"""Time for a workload run: the scheduler's clock plus the harness's timers, and the
wall-clock budget (:class:`WallBudget`).

Two modes (``run_workload(clock=...)``):

``virtual`` (default): a :class:`~scheduler_core.queue.clock.FakeClock` that moves only by
these documented rules, so the same seed gives the same events, placements and amount of work
on every machine, however fast or loaded it is:

* every scheduling attempt (one ``Scheduler.schedule_one`` that did something) costs
  :data:`ATTEMPT_COST` = 1 ms of virtual time;
* ``createPods`` creates its pods one every :data:`POD_CREATE_COST` = 2 ms of virtual time
  (500 pods/s) from a timer, and the scheduler runs in between, as kube-apiserver and
  kube-scheduler run side by side: the first pods are scheduled while the last are still
  being created. 500 pods/s is about the pace of upstream's own measured phases (its
  thresholds for 5000-node workloads are 400-600 pods/s), so background work (churn, rate-
  limited ops) lands in a measured phase about as often as upstream; and it is slower than a
  1 ms attempt, so the scheduler keeps up: a preemptor's second attempt (after its victims
  are gone, popped from backoffQ when activeQ is empty) comes before the next pod arrives.
  Every pod of the op exists before the op waits for them to be scheduled;
* other API writes made by ops (creating nodes, namespaces, createAny objects, the pods of a
  steady state, churn) cost no virtual time;
* background work (churn ticks, rate-limited deletions and updates, steady-state replacement,
  the end of a ``sleep`` or a steady-state ``duration``) runs from timers at virtual times;
  timers due at the same time fire in the order they were set, and a periodic timer fires
  every period even when several are due at once (no ticks are dropped);
* when the scheduler has nothing to do, the clock jumps to the earliest of: the next timer,
  the next queue flush that moves a pod (backoff expiry, the 5-minute unschedulable leftover
  flush), a Permit timeout, or the end of the current wait.

``real``: :class:`~scheduler_core.queue.clock.RealClock` (``time.monotonic``). Timers fire by
elapsed wall time and an idle scheduler sleeps until the next timer or queue flush, as the
upstream harness would idle. ``createPods`` creates all its pods at once (pacing them by wall
time would cap throughput at the pacing rate).

Throughput is measured on the wall clock in both modes (see workloads/runner/metrics.py).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from itertools import count

from scheduler_core.queue.clock import FakeClock, RealClock

__all__ = [
    "ATTEMPT_COST",
    "CLOCK_MODES",
    "IDLE_SLEEP_MAX",
    "POD_CREATE_COST",
    "RunTimeout",
    "Timeline",
    "TimerFn",
    "WallBudget",
]

ATTEMPT_COST = 0.001  # virtual seconds per scheduling attempt
# virtual seconds between two pods created by createPods (500 pods/s: see the module docstring)
POD_CREATE_COST = 0.002
CLOCK_MODES = ("virtual", "real")
IDLE_SLEEP_MAX = 0.05  # real mode: longest single sleep while idle (keeps timeouts responsive)

# A timer callback returns the time it wants to run next, or None when it is done.
TimerFn = Callable[[], "float | None"]


class Timeline:
    """The run's clock and a heap of timers ordered by (due time, creation order)."""

    __slots__ = ("_seq", "clock", "heap", "now", "virtual")

    def __init__(self, mode: str = "virtual") -> None:
        if mode not in CLOCK_MODES:
            raise ValueError(f"clock must be one of {', '.join(CLOCK_MODES)}, got {mode!r}")
        self.virtual = mode == "virtual"
        self.clock: FakeClock | RealClock = FakeClock() if self.virtual else RealClock()
        self.now: Callable[[], float] = self.clock.now
        self.heap: list[tuple[float, int, TimerFn]] = []
        self._seq = count()

    # ------------------------------------------------------------------ timers
    def call_at(self, due: float, fn: TimerFn) -> None:
        heapq.heappush(self.heap, (due, next(self._seq), fn))

    def call_later(self, delay: float, fn: TimerFn) -> None:
        self.call_at(self.now() + delay, fn)

    def next_due(self) -> float | None:
        return self.heap[0][0] if self.heap else None

    def has_due(self) -> bool:
        heap = self.heap
        return bool(heap) and heap[0][0] <= self.now()

    def fire_due(self) -> int:
        """Run every timer whose time has come (those it re-arms too, if already due)."""
        heap = self.heap
        fired = 0
        now = self.now()
        while heap and heap[0][0] <= now:
            _, _, fn = heapq.heappop(heap)
            nxt = fn()
            fired += 1
            if nxt is not None:
                heapq.heappush(heap, (nxt, next(self._seq), fn))
            now = self.now()
        return fired

    def pending(self) -> int:
        return len(self.heap)

    # ------------------------------------------------------------------ time passing
    def advance_to(self, t: float) -> None:
        """Let time pass until ``t``: jump (virtual) or sleep a bounded while (real)."""
        if self.virtual:
            clock = self.clock
            assert isinstance(clock, FakeClock)
            if t > clock.now():
                clock.set(t)
            return
        delay = t - self.now()
        if delay > 0:
            time.sleep(min(delay, IDLE_SLEEP_MAX))


class RunTimeout(Exception):
    """The run's wall-clock budget is spent (status "timeout")."""


class WallBudget:
    """The wall time a run may take: it starts when the budget is made and is spent at
    ``deadline`` (never, without a timeout). Hot loops compare ``time.perf_counter()`` with
    ``deadline`` themselves and raise :class:`RunTimeout`."""

    __slots__ = ("deadline", "started")

    def __init__(self, timeout: float | None) -> None:
        self.started = time.perf_counter()
        self.deadline = self.started + timeout if timeout is not None else float("inf")

    def check(self) -> None:
        if time.perf_counter() > self.deadline:
            raise RunTimeout
