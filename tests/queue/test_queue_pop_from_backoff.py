"""SchedulerPopFromBackoffQ (KEP-5142, on by default since v1.33): with activeQ empty, Pop takes
the head of the backoff heap of plugin-rejected pods; backoff ends are aligned to the 1 s flush
windows, and pods of one window leave in activeQ order."""

from __future__ import annotations

from scheduler_core.framework.interface import ClusterEventWithHint
from scheduler_core.queue import PriorityQueue
from tests.queue.queue_helpers import NODE_ADD, QUEUE, Hints, fail, make_queue, mkpod


def _rejected_into_backoff(q: PriorityQueue, name: str, prio: int = 0) -> str:
    """Add, pop and reject a pod by plugin A while a NodeAdd event is in flight: with A's
    hint saying Queue it goes to backoffQ (still backing off). Returns its uid."""
    q.add(mkpod(name, prio))
    qpi = q.pop()
    assert qpi is not None and qpi.pod.name == name
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert fail(q, qpi, "A") == "backoff"
    return qpi.uid


def _queue(**kw):
    h = Hints()
    return make_queue({"A": [ClusterEventWithHint(NODE_ADD, h.fn("A", QUEUE))]}, **kw)


def test_pop_takes_a_rejected_pod_from_backoff_when_active_is_empty():
    q, _clock = _queue(pop_from_backoff=True)
    uid = _rejected_into_backoff(q, "p")
    qpi = q.pop()
    assert qpi is not None and qpi.uid == uid
    assert qpi.attempts == 2 and q.where(uid) == "in_flight"
    assert q.backoff_count() == 0


def test_without_the_gate_backoff_is_left_only_through_the_flush():
    q, clock = _queue(pop_from_backoff=False)
    uid = _rejected_into_backoff(q, "p")
    assert q.pop() is None
    clock.set(1.0)
    q.tick()
    assert q.where(uid) == "active"


def test_active_pods_come_before_backing_off_ones():
    q, _clock = _queue(pop_from_backoff=True)
    _rejected_into_backoff(q, "old")
    q.add(mkpod("new"))
    first = q.pop()
    assert first is not None and first.pod.name == "new"
    q.done(first.uid)
    second = q.pop()
    assert second is not None and second.pod.name == "old"


def test_a_pod_that_failed_with_an_error_is_not_popped_early():
    q, clock = _queue(pop_from_backoff=True)
    q.add(mkpod("err"))
    qpi = q.pop()
    assert fail(q, qpi) == "backoff"  # no rejector plugin: the error backoff heap
    assert q.pop() is None
    clock.set(2.0)  # its window (1 s) has passed: the flush releases it
    q.tick()
    popped = q.pop()
    assert popped is not None and popped.uid == qpi.uid


def test_backoff_ends_are_aligned_to_flush_windows():
    q, clock = _queue(pop_from_backoff=True)
    clock.set(0.5)
    uid = _rejected_into_backoff(q, "p")  # backoff ends at 1.5, in the window [1, 2)
    qpi = q.get(uid)
    assert q.backoff_expiry(qpi) == 1.0
    clock.set(1.7)
    assert q.is_backing_off(qpi)  # still backing off within the window it ends in
    assert q.next_event_time() == 2.0
    assert q.flush_backoff_completed() == 0
    clock.set(2.0)
    assert not q.is_backing_off(qpi)
    assert q.flush_backoff_completed() == 1 and q.where(uid) == "active"


def test_pods_of_one_window_pop_in_priority_order():
    q, clock = _queue(pop_from_backoff=True)
    clock.set(0.1)
    _rejected_into_backoff(q, "low", prio=1)
    clock.set(0.2)
    _rejected_into_backoff(q, "high", prio=10)  # later, but the same window
    first = q.pop()
    assert first is not None and first.pod.name == "high"
    q.done(first.uid)
    second = q.pop()
    assert second is not None and second.pod.name == "low"
