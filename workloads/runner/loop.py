"""The scheduling loop: schedule (and fire timers) until a condition holds, a time is reached,
nothing can change any more, or a time limit passes. Every wait of an op runs here.

Per scheduling attempt it also collects decision records, advances the virtual clock by
:data:`~workloads.runner.clocks.ATTEMPT_COST`, flushes the queue, samples throughput, lets a
pacer take its turn and reports progress. When the active queue is empty, time moves to the
next timer, backoff expiry or queue event.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from workloads.ops.errors import WorkloadError
from workloads.runner.clocks import ATTEMPT_COST, RunTimeout

if TYPE_CHECKING:
    from workloads.runner.run import Run

__all__ = ["SCAN_EVERY", "WAIT_LIMIT", "run_until", "throttled"]

WAIT_LIMIT = 600.0  # upstream's 10-minute wait for pods (virtual seconds in virtual mode)
# a barrier with a label selector or the Attempted stage scans pods; it is re-checked after
# this many attempts (and whenever the scheduler is idle)
SCAN_EVERY = 64


def run_until(run: Run, done: Callable[[], bool] | None, *, until: float | None = None,
              what: str = "", describe: Callable[[], str] | None = None,
              limited: bool = False) -> None:
    """Schedule (and fire timers) until ``done()`` or the clock reaches ``until``.

    Raises WorkloadError when nothing can make progress any more, or (``limited``) when the
    wait exceeds WAIT_LIMIT seconds on the run's clock, like upstream's 10-minute poll
    timeout; RunTimeout when the wall-clock budget is spent.
    """
    if run.extenders is not None:
        run.extenders.flush()  # built-in node caches see the nodes before any cycle
    tl = run.timeline
    now, heap = tl.now, tl.heap
    sched = run.scheduler
    queue = sched.queue
    schedule_one, tick = sched.schedule_one, queue.tick
    advance = tl.clock.advance if tl.virtual else None  # type: ignore[union-attr]
    perf = time.perf_counter
    deadline = run.wall.deadline
    post = run.decisions.collect if run.decisions is not None else None
    give_up = now() + WAIT_LIMIT if limited else None
    force = getattr(done, "force", done)
    w = run.windows.current  # windows open and close only between ops
    sample = w.throughput.tick if w is not None and w.throughput is not None else None
    pace = run.options.pacer
    busy = 0.0  # seconds inside schedule_one
    n = 0
    try:
        while True:
            if heap and heap[0][0] <= now():
                tl.fire_due()
            if until is not None and now() >= until:
                return
            if done is not None and done():
                return
            t0 = perf()
            if t0 > deadline:
                raise RunTimeout
            did = schedule_one()
            t1 = perf()
            if did:
                busy += t1 - t0
                if post is not None:
                    post(sched)
                if advance is not None:
                    advance(ATTEMPT_COST)
                tick()
                if sample is not None:
                    sample()
                if pace is not None:
                    pace()
                n += 1
                if not n & 1023:
                    run.report_progress(t1)
                continue
            # activeQ is empty
            tick()
            if queue.active_count():
                continue
            if force is not None and force():
                return
            t_now = now()
            candidates = [t for t in (tl.next_due(), sched.next_wakeup(),
                                      queue.next_event_time(), until) if t is not None]
            nxt = min(candidates) if candidates else None
            if nxt is None or (give_up is not None and nxt > give_up):
                raise _stuck(run, nxt, what, describe)
            if tl.virtual and nxt <= t_now:
                nxt = t_now + ATTEMPT_COST
            tl.advance_to(nxt)
            if run.progress_fn is not None:
                run.report_progress(perf())
    finally:
        run.scheduler_seconds += busy
        if w is not None:
            w.scheduler_seconds += busy


def _stuck(run: Run, nxt: float | None, what: str,
           describe: Callable[[], str] | None) -> WorkloadError:
    """The error of a wait that cannot end: nothing can change the state any more (``nxt``
    None), or the next change is past the wait's limit."""
    if nxt is None:
        why = "nothing is left that could change it (no queued pod, timer or event)"
    else:
        clock = "virtual" if run.timeline.virtual else "wall"
        why = f"timed out after {WAIT_LIMIT:g} s of {clock} time"
    detail = describe() if describe is not None else "waiting"
    return WorkloadError(f"{what}: {detail}: {why}" if what else f"{detail}: {why}")


def throttled(run: Run, check: Callable[[], bool]) -> Callable[[], bool]:
    """A predicate evaluated only every SCAN_EVERY attempts (and when asked while idle)."""
    sched = run.scheduler
    last = [-SCAN_EVERY]

    def done(force: bool = False) -> bool:
        n = sched.attempts_total
        if not force and n - last[0] < SCAN_EVERY:
            return False
        last[0] = n
        return check()

    done.force = lambda: done(True)  # type: ignore[attr-defined]
    return done
